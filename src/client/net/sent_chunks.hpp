// One bulk connection's replay log with what guards it: the chunks the client
// sent on the bulk stream or on one bulk lane that the server has not
// acknowledged (bulk_log), the writers that wait for an acknowledgement, and
// whether any chunk borrows the application's memory. The bulk sender has one
// for the bulk stream and each bulk lane one of its own (bulk_lane.hpp).
//
// Locks: mutex_ guards log_ (acked_cv_ waits with it). It nests inside the
// connection's send mutex; the resumer holds it (mutex()) while it sends the
// log again or forgets it.
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "client/net/bulk_log.hpp"
#include "common/stream.hpp"
#include "protocol/messages.hpp"

namespace ferry::client {

class sent_chunks {
 public:
  /// Keeps one chunk (bulk_log::append): its number goes to `number`; the
  /// bytes to write are returned, and stay put until written(number).
  const uint8_t* append(protocol::object_id transfer, uint64_t offset, uint64_t total, const uint8_t* data,
                        uint64_t size, bulk_log::hold how, const std::shared_ptr<const void>& keeper,
                        protocol::object_id queue, uint64_t& number);
  /// The writer is done with the chunks up to `number` (bulk_log::written).
  void written(uint64_t number);
  /// No more chunks of `transfer` come to this log (bulk_log::end_transfer).
  void end_transfer(protocol::object_id transfer);
  /// The server has the first `received` chunks; false for a claim beyond
  /// what was sent.
  bool acknowledge(uint64_t received);
  /// Waits until the server has acknowledged chunk `number`, or `over()`.
  template <class Over>
  void wait_acknowledged(uint64_t number, Over&& over) {
    std::unique_lock lock(mutex_);
    acked_cv_.wait(lock, [&] { return over() || log_.acknowledged() >= number; });
  }
  /// Command `command` of `queue` (0: the queue its write borrowed for)
  /// ended with `status`: borrowed chunks it lets the application reuse are
  /// copied (bulk_log::settle, settle_all for a failure). Returns the bytes
  /// copied.
  uint64_t settle_borrowed(protocol::object_id queue, protocol::object_id command, cl_int status);
  /// Wakes the writers waiting for an acknowledgement (the session ended).
  void wake_waiters();

  /// For the resumer, which holds mutex() around the calls below.
  std::mutex& mutex() { return mutex_; }
  bulk_log& log_locked() { return log_; }
  /// Sends the chunks after `received` again on `to`.
  bool replay_locked(uint64_t received, stream* to) const;
  /// Forgets everything of a session that ended.
  void reset_locked();

 private:
  std::mutex mutex_;  // guards log_; acked_cv_ waits with it
  std::condition_variable acked_cv_;
  bulk_log log_;
  std::atomic<bool> borrowing_{false};  // log_.borrowing(), read without the lock on each completion
};

}  // namespace ferry::client
