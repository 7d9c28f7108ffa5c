// The control stream's outgoing side: a queue of records (completions,
// replies, printf text) and the writer thread that turns everything pending
// into one send.
//
// Native completion callbacks and the control reader only append a small
// record under a short lock; the writer takes the whole batch at once (two
// batches swap, so steady state allocates nothing) and does the rest on its
// own thread: reads the true status where the platform's callbacks may not
// tell it, frees a finished write's staging, queries profiling counters where
// the queue has them, releases the native event, packs consecutive
// completions into one `completions` frame, and writes the lot with one
// system call. No OpenCL call ever runs inside a native callback.
//
// The completion poller (completion_poller.hpp) queues its records quietly
// and then sends them itself when the writer is idle (send_or_wake): on
// NVIDIA that spares every reported command the writer's wake-up, about
// 7 us of a `noop` round trip. It never waits on the socket there: what the
// socket does not take at once is left to the writer thread.
#pragma once

#include <CL/cl.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/stream.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/messages.hpp"
#include "protocol/replay_log.hpp"
#include "server/daemon/link_stats.hpp"
#include "server/native/api.hpp"
#include "server/native/mapping.hpp"
#include "common/reader_wake.hpp"

namespace ferry::server {

class callback_pool;
class control_writer;
class printf_capture;
class transfer_table;

/// Work that must wait for a native event and then call OpenCL, which a
/// native callback may not: the event's slot (callback_kind::step) hands it
/// to the control writer, whose thread runs it with the event's status.
class deferred_step {
 public:
  virtual ~deferred_step() = default;
  /// `status`: CL_COMPLETE, or the event's (negative) error.
  virtual void run(cl_int status) = 0;
};

/// What a finished command reports to the writer.
struct command_record {
  protocol::object_id command = 0;
  /// Owned reference, may be null; released by the writer.
  cl_event event = nullptr;
  cl_int status = CL_COMPLETE;
  bool notify = true;        ///< report success too (failures are always reported)
  bool profiling = false;    ///< ask `event` for its profiling counters
  /// The counters (queued, submit, start, end) where no one event has them:
  /// a read in pieces spans its first piece's start to its last piece's end.
  std::optional<std::array<cl_ulong, 4>> counters;
  bool drain_printf = false; ///< a kernel that may print: send pending printf text first
  bool verify = false;       ///< the callback may have said CL_COMPLETE for a failure
  bool write = false;        ///< a bulk write: free the staging of `transfer`
  uint64_t transfer = 0;
  /// A deferred migrate_in write finished: set this user event to its
  /// status (owned reference, released by the writer). Reports nothing itself.
  cl_event gate = nullptr;
  /// A migration's source range, sent: unmap it (the writer does).
  native::mapping unmap;
  /// Run with the event's status; reports nothing itself.
  std::shared_ptr<deferred_step> then;
  /// A file command's outcome: reported instead of the event's success when
  /// negative (the event itself never fails; file_copier.hpp).
  std::shared_ptr<const std::atomic<cl_int>> outcome;
};

class control_outbox {
 public:
  explicit control_outbox(const native::api& api) : api_(api) {
    pending_.records.reserve(256);
    pending_.frames.reserve(4096);
  }
  /// Releases the events of records never processed.
  ~control_outbox();
  control_outbox(const control_outbox&) = delete;
  control_outbox& operator=(const control_outbox&) = delete;

  /// Queues a finished (or failed) command. Never calls OpenCL: safe from a
  /// native callback. After close() records still queue (their events are
  /// released when the outbox is destroyed) but nothing is sent.
  void push(const command_record& record);
  /// Queues a record without waking the writer: the caller must call
  /// send_or_wake() after its last push.
  void push_quietly(const command_record& record);
  /// Sends everything queued on the calling thread if the writer is idle
  /// and the connection is plain, else wakes the writer. Runs OpenCL calls
  /// (the writer's processing): never from a native callback.
  void send_or_wake();
  /// A failure found before anything was enqueued.
  void push_failure(protocol::object_id command, cl_int status) {
    command_record r;
    r.command = command;
    r.status = status;
    push(r);
  }
  /// Queues one message (a reply), encoded now.
  template <class T>
  void push_message(const T& message) {
    push_message_locked(message, true);
  }
  /// The same without waking the writer: the caller calls send_or_wake()
  /// after its last one (a thread that answers several at once).
  template <class T>
  void push_message_quietly(const T& message) {
    push_message_locked(message, false);
  }
  /// Queues kernel printf output (from printf_capture). It goes out ahead of
  /// everything else pending, and a writer about to send the completion of a
  /// kernel that may print takes it at once (take_printf), so text read from
  /// the pipe never trails the completion of the kernel that printed it.
  void push_printf(const uint8_t* text, size_t size);
  /// Appends the queued printf frames to `out` and forgets them.
  void take_printf(std::vector<uint8_t>& out);
  /// Asks the writer to tell the client soon how much it has received
  /// (`ack`), even with nothing else to send.
  void request_ack();
  /// Stops the writer.
  void close();
  bool closed() const;
  /// Records waiting to be processed (tests).
  size_t pending() const;

 private:
  friend class control_writer;
  enum class record_kind : uint8_t { command, frame };
  struct record {
    command_record command;
    uint32_t frame_offset = 0;
    uint32_t frame_size = 0;
    record_kind kind = record_kind::command;
  };
  struct batch {
    std::vector<record> records;
    std::vector<uint8_t> frames;  // encoded replies the records point into
  };
  template <class T>
  void push_message_locked(const T& message, bool wake) {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    size_t at = pending_.frames.size();
    protocol::append_frame(pending_.frames, message);
    record r;
    r.kind = record_kind::frame;
    r.frame_offset = static_cast<uint32_t>(at);
    r.frame_size = static_cast<uint32_t>(pending_.frames.size() - at);
    push_record_locked(r, wake);
  }
  void push_record_locked(const record& r, bool wake = true);
  /// Wakes the writer thread when there is something for it.
  void wake();

  const native::api& api_;
  mutable std::mutex mutex_;  // guards pending_, printf_frames_ and closed_
  std::condition_variable ready_;
  batch pending_;
  std::vector<uint8_t> printf_frames_;  // encoded printf_output frames
  bool ack_requested_ = false;
  bool send_requested_ = false;  // bytes the socket did not take wait in the writer
  bool closed_ = false;
  /// Held by whoever takes a batch and sends it: the writer thread, or
  /// send_or_wake's caller. `drainer_` is the writer (null once it has
  /// stopped).
  std::mutex drain_mutex_;
  control_writer* drainer_ = nullptr;
};

/// Where the writer's `ack` frames take their counts from.
struct received_counts {
  const std::atomic<uint64_t>* control = nullptr;
  const std::atomic<uint64_t>* bulk = nullptr;
  /// The bulk lanes' counts (lane_ack): lanes[k] is lane k's, for k from 1
  /// to lane_count - 1 (lanes[0] is not read). Null: no lanes.
  const std::atomic<uint64_t>* lanes = nullptr;
  uint32_t lane_count = 0;
};

class control_writer {
 public:
  /// `broken` is called when the socket fails (once per connection).
  /// `sweeper` finds the commands a platform does not call back for after a
  /// gate fails (see callback_pool); `counter` counts what is sent;
  /// `received` feeds the acks that go out ahead of each batch; `reader`
  /// (may be null) hears of every batch of completions sent.
  control_writer(stream* fd, control_outbox& outbox, transfer_table& transfers, printf_capture* printf,
                 std::function<void(const std::string&)> broken, callback_pool* sweeper = nullptr,
                 link_counter* counter = nullptr, received_counts received = {}, reader_wake* reader = nullptr)
      : fd_(fd),
        outbox_(outbox),
        transfers_(transfers),
        printf_(printf),
        broken_(std::move(broken)),
        sweeper_(sweeper),
        counter_(counter),
        received_(received),
        reader_(reader) {
    work_.records.reserve(256);
    work_.frames.reserve(4096);
    out_.reserve(64 * 1024);
    message_.entries.reserve(256);
    // Registered from the start: send_or_wake may send on its caller's
    // thread before this writer's own thread runs.
    std::lock_guard drain(outbox_.drain_mutex_);
    outbox_.drainer_ = this;
  }
  ~control_writer();
  control_writer(const control_writer&) = delete;
  control_writer& operator=(const control_writer&) = delete;

  /// The writer thread's body; returns when the outbox closes. While no
  /// connection is attached it keeps processing records (native cleanup)
  /// and keeps what it would have sent, to send on the next connection.
  void run();
  /// One batch, sent on the calling thread without waiting on the socket
  /// (control_outbox::send_or_wake; drain_mutex_ held). False, with nothing
  /// taken, when the connection is absent or encrypted.
  bool send_without_waiting();

  /// The connection broke: nothing more goes to its socket.
  void detach();
  /// A resumed connection: the client has received the first `received`
  /// frames; the rest go out again on `fd`, then everything new.
  enum class attach_result {
    attached,
    bad_ack,  // `received` is more than was ever sent, or less than acknowledged before
    broken,   // the replay could not be written: the connection broke again
  };
  attach_result attach(stream* fd, uint64_t received);
  /// The client's ack: drops the frames it covers. False when it claims more
  /// than was sent.
  bool acknowledge(uint64_t received);

 private:
  /// Whether a send may wait for the socket: the writer thread's may; the
  /// completion poller's (send_or_wake) never does.
  enum class socket_wait { allowed, never };
  /// Whether the client asked for an ack even if no frame goes with it.
  enum class ack_request { asked, not_asked };

  void flush_completions(std::vector<uint8_t>& out);
  void process(const command_record& r, std::vector<uint8_t>& out);
  /// Takes everything queued, processes it and sends it (drain_mutex_ held).
  void drain(socket_wait wait);
  /// Sends an ack (when the counts moved) and `out`, then keeps `out` for a
  /// replay. Called with link_mutex_ held. With socket_wait::never what the
  /// socket does not take at once goes to unsent_, for the writer thread.
  void send_locked(std::vector<uint8_t>& out, ack_request ack, socket_wait wait);
  /// Appends a lane_ack to `frames` when a lane's count moved and an ack is
  /// `due` (as for ack).
  void append_lane_ack(std::vector<uint8_t>& frames, bool due);
  /// Writes `pieces` (after unsent_), waiting or not; false when the
  /// connection broke.
  bool write_locked(iovec* pieces, int count, socket_wait wait);

  std::mutex link_mutex_;  // guards fd_, log_, acked_
  stream* fd_;                 // -1: detached
  control_outbox& outbox_;
  transfer_table& transfers_;
  printf_capture* printf_;
  std::function<void(const std::string&)> broken_;
  callback_pool* sweeper_;
  link_counter* counter_;
  received_counts received_;
  reader_wake* reader_;
  protocol::replay_log log_;
  protocol::ack acked_;  // the counts the last ack carried
  protocol::lane_ack lanes_acked_;  // the counts the last lane_ack carried
  /// Bytes sent without waiting that the socket did not take: the writer
  /// thread writes them before anything else (guarded by link_mutex_).
  std::vector<uint8_t> unsent_;
  // The batch being processed and what it sends (drain_mutex_'s holder's).
  control_outbox::batch work_;
  std::vector<uint8_t> out_;
  protocol::completions message_;
};

/// The command's real status: `status`, unless the platform may report
/// CL_COMPLETE for a failure (`verify`) and the event says otherwise.
cl_int true_status(const native::api& api, cl_event event, cl_int status, bool verify);

}  // namespace ferry::server
