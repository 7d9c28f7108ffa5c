// Every thread's stack, written to a file descriptor: how a process that
// hangs says where (ferryd on SIGQUIT, tests whose request times out).
//
// Each thread is interrupted in turn with SIGUSR2 and writes its own
// backtrace (glibc's backtrace_symbols_fd: addresses, and names where the
// binary exports them) from the signal handler. Frames of libraries without
// symbols show as library+offset, which addr2line or a debugger resolves.
#pragma once

namespace ferry {

/// Writes "--- thread TID (NAME)" and the stack of every thread of this
/// process to `fd`. Threads that block SIGUSR2 are skipped silently.
void write_thread_stacks(int fd);

}  // namespace ferry
