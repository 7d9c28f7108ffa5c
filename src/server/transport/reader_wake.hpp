// Keeps a session's control reader awake for the client's next command after
// a completion went out.
//
// A program that waits for its kernel (clFinish, a blocking read) sends its
// next commands a few tens of microseconds after the completion reaches it.
// The control reader has been asleep in recv for the whole kernel by then,
// and a thread woken from deep idle on a GPU host takes 50-60 µs to run
// (issue 22: of the 180 µs a 0.7 ms kernel step cost through Ferry, the
// daemon took 61-85 µs from the client's send to the kernel's enqueue). So
// when the control writer sends completions, it wakes the reader at once, in
// parallel with the client's own work, and the reader polls its socket for a
// while (the spin window) before it sleeps again.
//
// Polling costs a core, so the window is 300 µs only where the host has cores
// to spare (at least 8 hardware threads) and 0 elsewhere (this VM's 2 cores
// run the client and the daemon both); FERRY_READER_SPIN_US in the daemon's
// environment sets it (a measuring aid). Only plain streams take part: a TLS
// stream may hold decrypted bytes the socket no longer shows.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "common/socket.hpp"

namespace ferry::server {

class reader_wake {
 public:
  /// `spin`: the window (0: never polls, wait_readable returns at once).
  explicit reader_wake(std::chrono::microseconds spin = window());
  reader_wake(const reader_wake&) = delete;
  reader_wake& operator=(const reader_wake&) = delete;

  /// The spin window of this process (see above).
  static std::chrono::microseconds window();

  /// Completions went out (control writer): the reader polls for the next
  /// window, woken now if it sleeps.
  void completions_sent();

  /// The reader's wait for `socket` to become readable: polls it while the
  /// window lasts, then sleeps in poll() until it is readable or
  /// completions_sent() wakes it (then it polls again). Returns false on a
  /// poll() failure (errno set). Without an eventfd (none could be had) it
  /// returns at once and the caller's blocking read does the waiting.
  bool wait_readable(int socket);

  /// Times completions_sent() woke a sleeping reader (tests).
  uint64_t wakes() const { return wakes_.load(); }

 private:
  using clock = std::chrono::steady_clock;
  const std::chrono::microseconds spin_;
  unique_fd event_;
  std::atomic<uint64_t> wakes_{0};
  std::atomic<int64_t> spin_until_{0};  // clock ticks
  std::atomic<bool> sleeping_{false};
};

}  // namespace ferry::server
