// Keeps a connection's reader thread polling its socket while an answer is
// near, and wakes it when it sleeps.
//
// A thread woken from deep idle on a GPU host takes 50-60 µs to run (issue
// 22: of the 180 µs a 0.7 ms kernel step cost through Ferry, the daemon took
// 61-85 µs from the client's send to the kernel's enqueue). So whoever expects
// bytes soon opens a *window*: the reader polls its socket while it lasts
// (woken at once, through an eventfd, if it sleeps), then sleeps in poll()
// until the socket is readable or the next window opens.
//
// The daemon's control reader gets a window of 300 µs whenever completions go
// out (the client answers them with its next commands), where the host has
// cores to spare (at least 8 hardware threads) and none elsewhere (this VM's
// 2 cores run the client and the daemon both); FERRY_READER_SPIN_US in the
// daemon's environment sets it (a measuring aid). The client's reader gets
// one whenever a thread starts to wait for an answer (control_channel::
// waiting), as long as that thread waits. Only plain streams take part: a
// TLS stream may hold decrypted bytes the socket no longer shows.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

#include "common/socket.hpp"

namespace ferry {

class reader_wake {
 public:
  /// `spin`: the window open_window() opens (0: never polls, and
  /// wait_readable returns at once).
  explicit reader_wake(std::chrono::microseconds spin = window());
  reader_wake(const reader_wake&) = delete;
  reader_wake& operator=(const reader_wake&) = delete;

  /// The daemon's control reader's window (see above).
  static std::chrono::microseconds window();

  /// Bytes may come soon: the reader polls for the constructor's window from
  /// now, woken at once if it sleeps.
  void open_window() { open_window(spin_); }
  /// The same for `length` from now (a window already longer stays); with
  /// `wake_now` false the caller calls wake() later (after its request went
  /// out: the wake's system call is then not in the request's way).
  void open_window(std::chrono::microseconds length, bool wake_now = true);
  /// Wakes the reader if it sleeps, so that it sees the open window.
  void wake();
  /// Whether the reader should poll now: a window lasts and `keep_polling`
  /// (when given) says so.
  bool polling(const std::function<bool()>& keep_polling = {}) const;

  /// The reader's wait for `socket` to become readable: polls it while a
  /// window lasts and `keep_polling` (when given) says so, then sleeps in
  /// poll() until it is readable or open_window() wakes it (then it polls
  /// again). Returns false on a poll() failure (errno set). Without an
  /// eventfd (spin 0, or none could be had) it returns at once and the
  /// caller's blocking read does the waiting.
  bool wait_readable(int socket, const std::function<bool()>& keep_polling = {});

  /// Times open_window() woke a sleeping reader (tests).
  uint64_t wakes() const { return wakes_.load(); }

 private:
  using clock = std::chrono::steady_clock;
  const std::chrono::microseconds spin_;
  unique_fd event_;
  std::atomic<uint64_t> wakes_{0};
  std::atomic<int64_t> spin_until_{0};  // clock ticks
  std::atomic<bool> sleeping_{false};
  std::atomic<bool> wake_sent_{false};  // an eventfd write the reader has not read yet
};

}  // namespace ferry
