// What a native completion callback needs to report a command, in reusable
// slots (no allocation per command once the pool has grown to the session's
// working size).
//
// A callback only turns its slot into a small record (a completion for the
// control writer, a finished read for the bulk writer, freed staging for a
// write) and returns the slot. The slot holds a shared_ptr to the session's
// core, so the core outlives every callback still to come, even after the
// session has ended.
//
// Platforms whose callbacks do not report failed commands faithfully (see
// native::callback_behaviour) get repairs:
//  - callbacks that pass CL_COMPLETE for a failed command (NVIDIA): delivery
//    reads the event's own status (verify_status);
//  - callbacks that never run for a failed command (PoCL 3.1): arm() checks a
//    command's status before registering, and sweep_failures() finds
//    outstanding commands that failed (after a user event was set to an
//    error) and reports them itself (sweepable). A slot's `state` makes sure
//    that exactly one of the native callback and the sweep delivers it. The
//    sweep is only safe where callbacks of failed commands never run.
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "protocol/messages.hpp"
#include "server/native/api.hpp"
#include "server/native/catalog.hpp"
#include "server/native/mapping.hpp"

namespace ferry::server {

struct session_core;
class deferred_step;
struct pipelined_read;

enum class callback_kind : uint8_t {
  completion,  ///< report the command's completion
  write,       ///< free the write's staging; report completion if asked or failed
  read,        ///< hand the data to the bulk writer, which then reports completion
  read_piece,  ///< hand one piece of a large read to the bulk writer (pipelined_read.hpp)
  migrate,     ///< migrate_out's read into a pinned block (or map): hand the bytes to the peer link, which then reports completion
  exported,    ///< export_event: send the event's status on the peer link
  gate,        ///< a deferred migrate_in write: the control writer sets `gate` to its status
  step,        ///< the control writer runs `then` with the event's status
};

struct callback_slot {
  std::shared_ptr<session_core> core;
  protocol::object_id command = 0;
  cl_event event = nullptr;     // one reference, owned by the slot until delivery
  uint8_t* staging = nullptr;   // read: the data; migrate: the 8-byte content size (or null); owned until delivery
  native::mapping mapped;       // migrate: the mapped range, owned until delivery
  uint64_t size = 0;            // read, migrate: bytes
  uint64_t transfer = 0;        // write, migrate: the transfer id; exported: the event's id
  uint64_t offset = 0;          // migrate: the buffer offset the bytes start at
  uint32_t peer = 0;            // migrate, exported: the peer link
  uint64_t* content_size = nullptr;  // read: the size buffer's value (new, owned until delivery), or null
  std::shared_ptr<pipelined_read> piece_of;  // read_piece: the read; `offset` and `size` say which piece
  cl_event gate = nullptr;      // gate: the user event to set (one reference, owned)
  std::shared_ptr<deferred_step> then;  // step: what runs once the event has ended
  /// completion: a file command's outcome, reported in place of the event's
  /// success when negative (file_copier.hpp).
  std::shared_ptr<const std::atomic<cl_int>> outcome;
  callback_kind kind = callback_kind::completion;
  bool notify = false;          // report success too (failures are always reported)
  bool profiling = false;       // the queue records profiling counters
  bool printf = false;          // a kernel that may print
  bool sweepable = false;       // its platform runs no callbacks for failed commands
  bool verify_status = false;   // its platform's callbacks may pass CL_COMPLETE for a failure
  bool polled = false;          // the completion poller delivers it (completion_poller.hpp)
  // generation << 2 | missed (2) | claimed (1); see callback_pool.cpp.
  std::atomic<uint64_t> state{0};
  cl_int missed_status = 0;
  callback_slot* prev = nullptr;
  callback_slot* next = nullptr;

  /// How its event's platform reports completions: by a callback (repaired
  /// where the platform needs it) or by polling, which reads the true status.
  void follow(const native::callback_behaviour& platform) {
    polled = platform.polled;
    sweepable = !polled && !platform.runs_on_failure;
    verify_status = !polled && !platform.reports_failure;
  }
};

class callback_pool {
 public:
  callback_pool();
  ~callback_pool();
  callback_pool(const callback_pool&) = delete;
  callback_pool& operator=(const callback_pool&) = delete;

  /// A clean slot, counted as outstanding until delivered.
  callback_slot* acquire();

  /// Registers the slot's delivery as the CL_COMPLETE callback of its event
  /// (or delivers a failure at once where the platform would not), or hands
  /// a polled slot to the completion poller. Returns
  /// the clSetEventCallback error, after delivering that error itself.
  static cl_int arm(const native::api& api, callback_slot* slot);

  /// Sessions whose control outbox took records without waking its writer;
  /// each must then be sent: control_outbox::send_or_wake.
  using quiet_sessions = std::vector<std::shared_ptr<session_core>>;
  /// Delivers what the callback would have, with `status`: used when a
  /// command fails before it can be armed. With `quiet` (the completion
  /// poller, which then sends them itself) a record for the control writer
  /// is queued without waking it and its session is added to `quiet` (once).
  static void deliver(callback_slot* slot, cl_int status, quiet_sessions* quiet = nullptr);

  /// Reports outstanding commands of sweepable platforms that have failed.
  /// Returns how many it found. The platform may fail the commands behind a
  /// failed one later, on its own threads (PoCL does), so this also asks for
  /// follow-up sweeps (follow_up) for a while.
  size_t sweep_failures(const native::api& api);

  /// Whether follow-up sweeps are due (a failure was swept recently and
  /// commands are outstanding); the control writer then sweeps every
  /// follow_up_interval while it has nothing else to do.
  bool wants_follow_up() const;
  /// One follow-up sweep.
  void follow_up(const native::api& api);
  static constexpr std::chrono::milliseconds follow_up_interval{10};

  size_t outstanding() const;

 private:
  void release(callback_slot* slot);
  static void CL_CALLBACK on_native_event(cl_event event, cl_int status, void* user);

  mutable std::mutex mutex_;  // guards free_, outstanding_ list, chunks_, count_
  std::vector<std::unique_ptr<callback_slot[]>> chunks_;
  callback_slot* free_ = nullptr;
  callback_slot head_;  // sentinel of the outstanding list
  size_t count_ = 0;
  /// Follow-up sweeps still due; each one counts down, each failure sweep
  /// starts over (about two seconds of them).
  std::atomic<int> follow_ups_{0};
  static constexpr int follow_up_rounds = 200;
  size_t sweep_now(const native::api& api);
};

}  // namespace ferry::server
