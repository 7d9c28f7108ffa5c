// The bulk stream's outgoing side: buffer contents that native reads produced,
// sent as bulk_data frames, each followed (after its last chunk is written) by
// the read's completion on the control stream, so that a client that sees the
// completion knows the data went out before it.
//
// A large read comes in pieces (pipelined_read.hpp), each sent as soon as its
// native read is done. To a client on the same host (a plain Unix socket)
// that shared a read window (read_window_offer), large chunks go through that
// window's slots: the writer copies a chunk into the next slot and sends only
// read_window_chunk; the client copies it out and releases the slot.
#pragma once

#include <CL/cl.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "common/bulk_window.hpp"
#include "common/stream.hpp"
#include "protocol/messages.hpp"
#include "server/daemon/link_stats.hpp"
#include "server/native/api.hpp"
#include "server/transport/kept_frames.hpp"
#include "server/transport/pipelined_read.hpp"
#include "server/transport/read_window_handoff.hpp"
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
  /// One piece of a large read (then `data` is null): the read it belongs
  /// to, and where the piece's `size` bytes start in it.
  std::shared_ptr<pipelined_read> whole;
  uint64_t piece_offset = 0;
  /// The executor's last job of a read in pieces (size 0, no event): its
  /// status is the enqueueing's outcome, and `never_enqueued` counts pieces
  /// that could not be enqueued (and so have no job of their own).
  bool seal = false;
  uint64_t never_enqueued = 0;
  /// Bytes that no OpenCL read produced (a CUDA copy back): the `size` bytes
  /// at `bytes`, kept alive by `keeper` until the client has them all. After
  /// the last is written (or the stream failed: they wait for the next one)
  /// `after_sent` runs on the writer thread, in place of a read's completion.
  std::shared_ptr<const void> keeper;
  const uint8_t* bytes = nullptr;
  std::function<void()> after_sent;

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
    whole = std::move(other.whole);
    piece_offset = other.piece_offset;
    seal = other.seal;
    never_enqueued = other.never_enqueued;
    keeper = std::move(other.keeper);
    bytes = other.bytes;
    after_sent = std::move(other.after_sent);
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
  /// Whether the writer of `generation` must stop (closed, or retired): for
  /// a writer that waits for something else than a job (a read window slot).
  bool stopped(uint64_t generation);

  /// Pops the next piece of a large read (bulk_job::whole, not the seal) or
  /// CUDA copy back (bulk_job::after_sent) for a bulk lane's writer; false
  /// once closed or `stop` is set (then wake_all()).
  bool pop_piece(bulk_job& job, const std::atomic<bool>& stop);
  /// Wakes every writer waiting for a job (a lane's writer to stop).
  void wake_all();

  /// What the bulk stream sent and the client has not acknowledged.
  kept_frames& kept() { return kept_; }

 private:
  void discard(bulk_job& job);

  const native::api& api_;
  std::mutex mutex_;  // guards jobs_, closed_ and generation_
  std::condition_variable ready_;         // a job for the bulk stream's writer
  std::condition_variable pieces_ready_;  // a piece for a bulk lane's writer
  std::deque<bulk_job> jobs_;
  bool closed_ = false;
  uint64_t generation_ = 0;

  kept_frames kept_;
};

/// Frames write_bulk uses for `size` bytes.
uint64_t bulk_frames(uint64_t size);

/// Writes one bulk_data frame: `chunk` bytes (at most max_bulk_chunk) at
/// `bytes`, which are [offset, offset + chunk) of transfer `transfer` of
/// `total` bytes; header and prefix in the same system call as the chunk.
/// Counts the frame. False when the socket fails.
bool write_bulk_frame(stream* fd, uint64_t transfer, uint64_t offset, uint64_t total, const uint8_t* bytes,
                      uint64_t chunk, link_counter* counter);

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
        kept_(&jobs.kept()),
        control_(control),
        api_(api),
        broken_(std::move(broken)),
        counter_(counter),
        resume_from_(resume_from),
        generation_(generation) {}

  /// Large chunks may go through the read window the client offers on this
  /// stream (`handoff`, filled by the stream's bulk reader). A client that
  /// breaks the window's rules is reported to `violated`, which ends the
  /// session (the writer then returns).
  void use_read_windows(std::shared_ptr<read_window_handoff> handoff,
                        std::function<void(const std::string&)> violated) {
    handoff_ = std::move(handoff);
    violated_ = std::move(violated);
  }

  /// Makes this the writer of a bulk lane (docs/protocol.md, "Bulk lanes"):
  /// it sends the pieces of large reads only, whichever it finds first, keeps
  /// their frames in the lane's `kept`, and stops once `stop` is set (and
  /// the outbox woken) instead of when retired. `generation` is then unused.
  void serve_lane(kept_frames& kept, const std::atomic<bool>& stop) {
    kept_ = &kept;
    lane_stop_ = &stop;
  }

  /// The bulk writer thread's body; returns when the outbox closes or the
  /// socket fails (jobs still queued wait for the next connection).
  void run();

  /// Chunks of at least this many bytes go through a read window
  /// (bulk_window::small_chunk): a smaller one costs less on the socket.
  static constexpr uint64_t window_chunk_from = bulk_window::small_chunk;

 private:
  /// How sending went: on, the socket failed, or the client broke the rules.
  enum class sent { ok, broken, violation };
  /// Sends a whole finished read (not a piece) and reports it.
  sent send_read(bulk_job& job);
  /// Sends one piece of a large read; after its last piece, reports the read.
  sent send_piece(bulk_job& job);
  /// Sends bytes of a job that is no OpenCL read, then runs its after_sent.
  sent send_foreign(bulk_job& job);
  /// Sends [base, base + size) of a transfer of `total` bytes, held at `data`.
  sent send_range(uint64_t transfer, const uint8_t* data, uint64_t base, uint64_t size, uint64_t total);
  /// One chunk: through the read window when it is large and there is one,
  /// else as bulk_data on the socket.
  sent send_chunk(uint64_t transfer, uint64_t offset, uint64_t total, const uint8_t* bytes, uint64_t chunk);
  /// The read window, once the client has offered one.
  bulk_window* read_window();
  /// Stops after a failure: tells the session why.
  void report(sent how, const std::string& why);

  stream* fd_;
  bulk_outbox& jobs_;
  kept_frames* kept_;                            // where sent frames wait for the client's ack
  const std::atomic<bool>* lane_stop_ = nullptr;  // a lane's writer: set when it must stop
  control_outbox& control_;
  const native::api& api_;
  std::function<void(const std::string&)> broken_;
  link_counter* counter_;
  uint64_t resume_from_;
  uint64_t generation_;  // of this writer: a later one retires it
  std::shared_ptr<read_window_handoff> handoff_;
  std::function<void(const std::string&)> violated_;
  std::unique_ptr<bulk_window> window_;
  std::string violation_;  // why the client broke the window's rules
};

}  // namespace ferry::server
