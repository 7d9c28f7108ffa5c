// The bulk stream's outgoing side: buffer contents that native reads produced,
// sent as bulk_data frames, each followed (after its last chunk is written) by
// the read's completion on the control stream, so that a client that sees the
// completion knows the data went out before it.
#pragma once

#include <CL/cl.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "common/stream.hpp"
#include "protocol/messages.hpp"
#include "server/daemon/link_stats.hpp"
#include "server/native/api.hpp"
#include "server/transport/staging.hpp"

namespace ferry::server {

class control_outbox;

/// One finished native read.
struct bulk_job {
  protocol::object_id command = 0;
  staging_ptr data;  // the staging the native read filled
  uint64_t size = 0;
  cl_int status = CL_COMPLETE;     // negative: the read failed, send no data
  cl_event event = nullptr;        // owned, may be null
  bool profiling = false;          // the completion carries the event's profiling counters
  bool verify = false;             // the callback may have said CL_COMPLETE for a failure
  /// cl_pocl_content_size: the size buffer's value, read before the data
  /// (null: none), and where in the buffer the read began. Only the part of
  /// the range below the value is sent.
  std::unique_ptr<uint64_t> content_size;
  uint64_t offset = 0;

  /// The bytes to send.
  uint64_t sent_size() const {
    if (!content_size) return size;
    return *content_size > offset ? std::min(size, *content_size - offset) : 0;
  }

  bulk_job() = default;
  bulk_job(bulk_job&& other) noexcept { *this = std::move(other); }
  bulk_job& operator=(bulk_job&& other) noexcept {
    command = other.command;
    data = std::move(other.data);
    size = other.size;
    status = other.status;
    event = std::exchange(other.event, nullptr);
    profiling = other.profiling;
    verify = other.verify;
    content_size = std::move(other.content_size);
    offset = other.offset;
    return *this;
  }
};

/// Finished reads waiting for the bulk writer. Filled by native callbacks
/// (possibly before the bulk connection exists); guarded by mutex_. Jobs
/// still here when it is destroyed are freed then (never in a callback).
class bulk_outbox {
 public:
  explicit bulk_outbox(const native::api& api) : api_(api) {}
  ~bulk_outbox();
  void push(bulk_job&& job);
  /// Waits for the next job for the writer of `generation`; false once
  /// closed, or once that writer is retired.
  bool pop(bulk_job& job, uint64_t generation);
  void close();
  /// Which writer pops now; a new writer takes the current generation.
  uint64_t writer_generation();
  /// Stops the writer of a bulk stream that broke (its pop returns false)
  /// while jobs keep coming for the writer of the next stream.
  void retire_writer();

  /// Keeps the bytes of a transfer about to be sent until the client
  /// acknowledges its frames (a resumed session sends them again). Returns
  /// the number of its last frame.
  uint64_t keep(uint64_t transfer, staging_ptr data, uint64_t size);
  /// The writer is done with the frames up to `frame` (written, or failed).
  /// Only those are freed when acknowledged: the client may acknowledge a
  /// frame before the writer's write call returns.
  void written(uint64_t frame);
  /// The client received the first `received` bulk frames. False when it
  /// claims more than were kept.
  bool acknowledge(uint64_t received);
  /// Sends again every kept frame after the first `received`. False when
  /// the socket fails or those frames are gone.
  bool resend(stream* fd, uint64_t received, link_counter* counter);

 private:
  void discard(bulk_job& job);

  const native::api& api_;
  std::mutex mutex_;  // guards jobs_, closed_ and generation_
  std::condition_variable ready_;
  std::deque<bulk_job> jobs_;
  bool closed_ = false;
  uint64_t generation_ = 0;

  struct kept_transfer {
    uint64_t first_frame = 0;  // number of its first frame
    uint64_t frames = 0;
    uint64_t transfer = 0;
    staging_ptr data;
    uint64_t size = 0;
  };
  /// Moves the transfers both acknowledged and written into `done` (freed by
  /// the caller outside the lock). Called with kept_mutex_ held.
  void take_done(std::deque<kept_transfer>& done);

  std::mutex kept_mutex_;  // guards kept_, frames_kept_, frames_acknowledged_, frames_written_
  std::deque<kept_transfer> kept_;
  uint64_t frames_kept_ = 0;
  uint64_t frames_acknowledged_ = 0;
  uint64_t frames_written_ = 0;
};

/// Frames write_bulk uses for `size` bytes.
uint64_t bulk_frames(uint64_t size);

/// Writes `size` bytes of `data` as bulk transfer `transfer`, in bulk_data
/// frames of at most max_bulk_chunk bytes (one empty frame when `size` is 0),
/// each header and prefix in the same system call as its chunk. Counts the
/// frames. False when the socket fails.
bool write_bulk(stream* fd, uint64_t transfer, const uint8_t* data, uint64_t size, link_counter* counter);
/// One frame of write_bulk: the chunk at `offset` (peer links interleave
/// other frames between chunks). Advances `offset`.
bool write_bulk_chunk(stream* fd, uint64_t transfer, const uint8_t* data, uint64_t size, uint64_t& offset,
                      link_counter* counter);

class bulk_writer {
 public:
  /// `generation`: the outbox's writer generation when `fd` became the
  /// session's bulk stream, read under the same lock as the retirement of
  /// that stream's writer. Read later (here, say), it could already be the
  /// next stream's, and a retirement in between would never stop this writer.
  /// `resume_from`: bulk frames the client has received already (a resumed
  /// session); the writer first sends again those that follow.
  bulk_writer(stream* fd, bulk_outbox& jobs, uint64_t generation, control_outbox& control, const native::api& api,
              std::function<void(const std::string&)> broken, link_counter* counter = nullptr,
              uint64_t resume_from = 0)
      : fd_(fd),
        jobs_(jobs),
        control_(control),
        api_(api),
        broken_(std::move(broken)),
        counter_(counter),
        resume_from_(resume_from),
        generation_(generation) {}

  /// The bulk writer thread's body; returns when the outbox closes or the
  /// socket fails (jobs still queued wait for the next connection).
  void run();

 private:
  stream* fd_;
  bulk_outbox& jobs_;
  control_outbox& control_;
  const native::api& api_;
  std::function<void(const std::string&)> broken_;
  link_counter* counter_;
  uint64_t resume_from_;
  uint64_t generation_;  // of this writer: a later one retires it
};

}  // namespace ferry::server
