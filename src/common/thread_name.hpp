// Names for threads, so that a stack dump (gdb's "info threads", top -H,
// /proc/PID/task/*/comm) says what each one does and for whom.
//
// Linux keeps 15 bytes of a thread's name. A thread that serves one peer
// (a client's threads per server, a daemon's per session or peer link) is
// named "role@peer"; when that is too long, the end of the peer is kept, since
// that is where addresses differ (a port, the last digits of a host).
#pragma once

#include <string>
#include <string_view>

namespace ferry {

/// Bytes of a thread name the kernel keeps.
inline constexpr size_t max_thread_name = 15;

/// "role@peer", shortened to max_thread_name by dropping the start of `peer`
/// (and, if even that is not enough, the end of `role`). `peer` empty: `role`.
std::string thread_name(std::string_view role, std::string_view peer = {});

/// Names the calling thread (the first max_thread_name bytes of `name`).
void name_this_thread(std::string_view name);

}  // namespace ferry
