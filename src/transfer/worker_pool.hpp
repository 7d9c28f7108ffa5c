// Threads that run non-blocking transfers. A transfer may wait a long time
// (for its wait list, a slow file, an MPI peer), so a task never waits for a
// free thread: an idle thread takes it, or a new one starts. Threads that stay
// idle for a while end. (The paper starts a thread per command; keeping idle
// ones spares the start for the next.)
#pragma once

#include <functional>

namespace ferry::transfer {

/// Runs `task` on a thread of the library's pool; false when no thread can
/// be started (the caller then runs it itself).
bool run_in_background(std::function<void()> task);

/// Runs `task` after every earlier task of the same `key`, on one pool thread
/// per key at a time. Transfers of one in-order queue run one after another
/// anyway (each waits for the one before): a hundred non-blocking ones then
/// take one thread, not a hundred. When no thread can be started, the
/// caller's thread runs the chain.
void run_after(const void* key, std::function<void()> task);

}  // namespace ferry::transfer
