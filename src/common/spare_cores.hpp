// Whether this host has cores to spare for threads that poll instead of
// sleeping. On a GPU host a thread that sleeps through a long kernel wakes
// 30-60 µs late from deep idle (issue 22), so the client's waiting threads,
// the daemon's control reader and its completion poller poll there; on a
// small machine (this project's 2-core CI VM runs the program and the daemon
// both) polling would take the CPU from the threads that do the work. CUDA's
// default scheduling decides alike: it spins only while cores outnumber the
// waiting contexts.
#pragma once

#include <thread>

namespace ferry {

/// Asked once: hardware_concurrency() reads /sys, and waits ask on every call.
inline bool host_has_spare_cores() {
  static const bool spare = std::thread::hardware_concurrency() >= 8;
  return spare;
}

}  // namespace ferry
