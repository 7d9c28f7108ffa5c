// Learns that native commands have finished by polling their events, for
// platforms whose completion callbacks come late.
//
// NVIDIA's OpenCL (driver 580) calls back at once for a command that ends
// within about 0.1 ms of being flushed, and otherwise only on a 20 ms tick:
// a 1 MiB write, a 0.2 ms kernel or an unmap is reported 20 ms after it
// ended, while clGetEventInfo already says CL_COMPLETE (docs/performance.md,
// "Completions on NVIDIA"). Every write, read, migration and notified
// command of a session waits on such a report, so the daemon asks instead.
//
// One thread serves the whole daemon. A watched slot is delivered
// (callback_pool::deliver) as soon as its event's status is CL_COMPLETE or
// an error; nothing else delivers it (no native callback is registered and
// the failure sweep passes it by), so no claim is needed. The thread polls
// at once while commands end in quick succession and backs off towards the
// longest pause as the wait grows, so a short command is seen within
// microseconds and a long kernel costs a poll every 5 µs on a host with
// cores to spare (at least 8 hardware threads), every 0.2 ms elsewhere. Longer
// pauses let the thread's core fall into deep idle, and it then wakes tens of
// microseconds late: on an H200 host a 0.7 ms kernel step cost 40 µs more with
// 0.2 ms pauses than with 20 µs ones, and 18 µs more with 20 µs pauses than
// with 5 µs ones (A/B, two rounds each; issue 22).
#pragma once

#include <CL/cl.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "server/native/api.hpp"

namespace ferry::server {

struct callback_slot;
struct session_core;

class completion_poller {
 public:
  /// The daemon's poller: started on first use, never stopped (slots of
  /// sessions that are ending still come through it).
  static completion_poller& instance();

  completion_poller();
  /// Stops the thread; slots still watched are dropped undelivered (tests).
  ~completion_poller();
  completion_poller(const completion_poller&) = delete;
  completion_poller& operator=(const completion_poller&) = delete;

  /// Delivers `slot` once its event has ended, with the event's status.
  void watch(const native::api& api, callback_slot* slot);

  /// Slots watched and not yet delivered.
  size_t watched() const;

  /// Polling pauses: none until `eager` has passed without a command
  /// ending, then a sixteenth of the time since, within [min_pause,
  /// longest_pause()]. FERRY_POLL_MAX_PAUSE_US in the daemon's environment
  /// sets the longest (a measuring aid: docs/performance.md, "Long kernels").
  static constexpr std::chrono::microseconds eager{50};
  static constexpr std::chrono::microseconds min_pause{5};
  static constexpr std::chrono::microseconds max_pause{200};
  static constexpr std::chrono::microseconds max_pause_many_cores{5};
  static std::chrono::microseconds longest_pause();

 private:
  struct entry {
    const native::api* api;
    callback_slot* slot;
  };
  void run();
  /// Delivers the slots of `active` whose events have ended; keeps the rest.
  bool poll(std::vector<entry>& active);

  mutable std::mutex mutex_;  // guards incoming_, count_, stop_
  std::condition_variable wake_;
  std::vector<entry> incoming_;
  size_t count_ = 0;
  bool stop_ = false;
  std::vector<cl_int> statuses_;  // poll()'s, kept to spare an allocation per round
  std::vector<std::shared_ptr<session_core>> quiet_;  // poll()'s: sessions to send to
  std::thread thread_;
};

}  // namespace ferry::server
