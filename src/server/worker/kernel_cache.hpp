// Where a session worker's native driver keeps compiled kernels
// (docs/workers.md, "The kernel cache").
//
// PoCL compiles a program into a shared object in its cache directory and
// loads it; a later build of the same source loads it again (about 0.05 s
// here instead of 0.9 s). A cache that workers share is fast, but a worker
// can write into it, so a client that runs code in its worker could leave a
// shared object that another session's worker later loads: sessions are
// isolated from each other's memory, not from a shared cache. Hence the
// choice (ferryd --kernel-cache):
//   shared   one cache for every worker of the daemon (the default): builds
//            are as fast as they are for a single process;
//   private  a directory per worker, made before it is confined and removed
//            when it ends: every session compiles its own kernels.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace ferry::server::worker {

enum class kernel_cache_mode : uint8_t { shared = 0, isolated = 1 };

/// Parses "shared" or "private".
bool parse_kernel_cache(const std::string& text, kernel_cache_mode& out);

/// Main process, when workers run as another user: the shared cache directory
/// that user owns, made if missing (/var/tmp/ferryd-kernels-UID, mode 0700),
/// unless POCL_CACHE_DIR says where it is. Null with a reason when the
/// directory exists but is not a directory of that user's alone.
std::optional<std::string> shared_cache_for(uid_t uid, gid_t gid, std::string& error);

/// Main process, before it starts a worker: a new directory for that worker
/// alone under $TMPDIR (/tmp for a worker of another user, which may not pass
/// through the daemon's), owned by `uid` when that is not -1; with `mode`
/// isolated, a "kernels" directory in it too. The main process removes it
/// once the worker has ended, however it ended. Empty with a reason on failure.
std::string make_scratch_directory(kernel_cache_mode mode, uid_t uid, gid_t gid, std::string& error);

/// Worker: its scratch directory becomes its TMPDIR (the daemon's may not be
/// writable by the workers' user, and a session's build files are nobody
/// else's business), and with `mode` isolated its "kernels" POCL_CACHE_DIR.
void use_scratch_directory(kernel_cache_mode mode, const std::string& path);

/// Worker, confined and as its own user: when the driver's cache directory
/// (POCL_CACHE_DIR) is one this user cannot write, for instance the daemon
/// user's own, its "kernels" scratch directory takes its place: the driver
/// would otherwise find no device at all. The reason when it did, else empty.
std::string fall_back_from_unusable_cache(const std::string& scratch);

/// Removes a scratch directory and everything in it (not following links).
void remove_scratch_directory(const std::string& path);

}  // namespace ferry::server::worker
