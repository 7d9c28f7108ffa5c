// Waking the threads that wait for a flag another thread set without their
// lock (the connection's atomics: stopping, ended, alive, epoch).
#pragma once

#include <condition_variable>
#include <mutex>

namespace ferry::client {

/// Wakes every thread waiting on `cv` with `m`. Taking `m` once first means
/// that a waiter between checking its condition and waiting has begun to
/// wait, so it cannot miss a change made before this call.
inline void wake_all(std::mutex& m, std::condition_variable& cv) {
  {
    std::lock_guard lock(m);
  }
  cv.notify_all();
}

}  // namespace ferry::client
