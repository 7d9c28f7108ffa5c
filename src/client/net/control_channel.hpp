// The client's side of the control stream: commands and requests out, the
// server's frames in (completions, acks, replies, printf output).
//
// Threads: the application's threads encode messages into out_ (a short
// lock, no allocation in steady state); the writer thread sends what has
// accumulated; blocking calls flush from their own thread so that a lone
// request leaves at once. The control reader (the resumer's thread) reads
// the stream through read_stream() and answers the waiting requests.
//
// Every frame sent stays in control_log_ until the server acknowledges it;
// the resumer sends again what the server has not received.
//
// Locks, in the order they nest: send_mutex_ (serialises writes to the
// control socket; guards spare_, ack_frame_), then out_mutex_ (out_,
// out_frames_, posted_, writer_idle_, ack_due_) or log_mutex_ (control_log_,
// early_ack_). requests_mutex_ (requests_) nests with none of them. The
// resumer takes send_mutex_ and log_mutex_ (and out_mutex_ for a new
// session) together with the bulk sender's, in one std::scoped_lock.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "client/net/bulk_sender.hpp"
#include "client/net/event_tracker.hpp"
#include "client/net/link_state.hpp"
#include "common/reader_wake.hpp"
#include "common/result.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/frame.hpp"
#include "protocol/outgoing.hpp"
#include "protocol/replay_log.hpp"

namespace ferry::client {

/// How long a waiting thread (and the reader, while one waits) polls before
/// it sleeps: FERRY_SPIN_US, by default 2 ms where the host has at least 8
/// hardware threads and 50 µs elsewhere. A thread that sleeps through a
/// long kernel wakes 30-60 µs late from deep idle (issue 22: a 0.7 ms
/// kernel step); NVIDIA's own clFinish polls for the whole wait. With few
/// cores the polling would take the CPU from the daemon and the program.
std::chrono::microseconds spin_duration();
/// How long a thread waiting for a GPU's work polls: for up to a second on
/// hosts with at least 8 hardware threads, as NVIDIA's clFinish and CUDA's
/// default synchronization spin for the whole wait (a 5 ms kernel's step
/// took 250 µs longer than natively with 2 ms of polling, 105-130 µs with
/// a second: docs/performance.md, "A long kernel's step"); spin_duration()
/// elsewhere, and wherever FERRY_SPIN_US is set.
std::chrono::microseconds gpu_wait_spin();
/// How long this thread polls: what the innermost control_channel::waiting
/// scope with a spin of its own asked for, else spin_duration().
std::chrono::microseconds this_thread_spin();

class control_channel {
 public:
  control_channel(link_state& link, event_tracker& tracker, bulk_sender& sender);

  /// Queues a message; the writer thread sends it soon (batched with
  /// others). Returns its number among the session's control frames.
  template <class T>
  uint64_t post(const T& message) {
    bool wake;
    uint64_t number;
    {
      std::lock_guard lock(out_mutex_);
      protocol::append_frame(out_, message);
      ++out_frames_;
      number = ++posted_;
      wake = writer_idle_;
    }
    if (wake) out_cv_.notify_one();
    return number;
  }
  /// Sends everything queued so far from the calling thread.
  void flush();
  /// Frames posted in this session so far (post's numbers count them).
  uint64_t posted_frames() {
    std::lock_guard lock(out_mutex_);
    return posted_;
  }
  /// Asks the writer to send an ack soon (the server keeps what it sent
  /// until then).
  void request_ack();

  /// Marks a thread as waiting for an answer while it lives: the reader then
  /// polls the socket briefly before it sleeps. `spin`, where given, is how
  /// long both this thread and the reader poll (a wait for a GPU that the
  /// program asked to spin, as CUDA's context flags do); it holds for this
  /// thread's waits inside the scope.
  class waiting {
   public:
    explicit waiting(control_channel& c);
    waiting(control_channel& c, std::chrono::microseconds spin);
    ~waiting();
    waiting(const waiting&) = delete;
    waiting& operator=(const waiting&) = delete;

   private:
    control_channel& c_;
    const int64_t outer_spin_us_;  // this thread's spin before the scope (-1: none set)
  };

  /// Sends a request, waits for the reply with the same request id and
  /// decodes it, running `after_send` once the request is on its way and
  /// storing the request's frame number in `frame` (connection::call).
  template <class Reply, class Request, class AfterSend>
  result<Reply> call(Request& request, AfterSend&& after_send, uint64_t& frame) {
    constexpr std::string_view kind = protocol::message_traits<Request>::label;
    request.request = next_request_.fetch_add(1);
    const uint64_t epoch = link_.epoch.load(std::memory_order_acquire);
    {
      std::lock_guard lock(requests_mutex_);
      if (!link_.accepting())
        return fail(link_.ended ? unreachable(link_.failure_of(epoch), kind, "its session ended")
                                : unreachable(CL_DEVICE_NOT_AVAILABLE, kind, "it is offline"));
      requests_[request.request];
    }
    waiting scope(*this);
    frame = post(request);
    flush();
    after_send();
    std::vector<uint8_t> payload;
    uint16_t id = 0;
    if (!wait_reply(request.request, epoch, id, payload))
      return fail(unreachable(link_.failure_of(epoch), kind, "its session ended before it answered"));
    Reply reply;
    const char* why = "";
    if (id != static_cast<uint16_t>(protocol::message_traits<Reply>::id) ||
        !protocol::decode_payload(payload.data(), payload.size(), reply, why)) {
      link_.end_session("malformed reply", CL_DEVICE_NOT_AVAILABLE);
      return fail(unreachable(CL_DEVICE_NOT_AVAILABLE, kind, "its reply was malformed"));
    }
    if constexpr (requires { reply.status; }) {
      if (reply.status != CL_SUCCESS) [[unlikely]] {
        const subject about = subject_of(request);
        failed_reply(reply.status, kind, about.kind, about.id);
      }
    }
    return reply;
  }

  /// What an asynchronous request's reply is handed to, on the reader
  /// thread: true with the reply's message id and payload (valid during the
  /// call only: it is the frame as received, not copied), or false (no
  /// payload) when the session ended before the reply came. It must not block.
  using reply_handler = std::function<void(bool answered, uint16_t id, const uint8_t* payload, size_t size)>;
  /// Sends a request without waiting: its reply goes to `handler` (CUDA's
  /// asynchronous copies back and stream callbacks). Offline it waits in the
  /// replay log like any frame. Returns false, without calling `handler`,
  /// when the server takes no new work.
  template <class Request>
  bool post_request(Request& request, reply_handler handler) {
    request.request = next_request_.fetch_add(1);
    {
      std::lock_guard lock(requests_mutex_);
      if (!link_.accepting()) return false;
      requests_[request.request].handler = std::move(handler);
    }
    post(request);
    return true;
  }

  /// Starts the writer thread; join_writer waits for it to stop (it stops
  /// when the session ends or the connection stops).
  void start_writer();
  void join_writer();
  /// Wakes the writer: what was posted offline goes now, or it stops.
  void wake_writer();
  /// Wakes the callers that wait for replies (the session ended).
  void wake_callers();

  /// Reads and handles frames until the stream breaks (true) or the server
  /// breaks the protocol (false); `why` says what happened.
  bool read_stream(std::string& why);
  /// Handles one frame from the server; false, with `why`, for a protocol
  /// violation.
  bool on_frame(const protocol::frame_view& frame, std::string& why);

 private:
  // The resumer holds send_mutex_, log_mutex_ (and out_mutex_) while it
  // resumes or starts a new session, and works on control_log_ then.
  friend class resumer;
  /// Forgets everything of a session that ended (all three mutexes held).
  void reset_locked();

  /// The object a request is about, for the log: its program, kernel,
  /// queried object or context, else the object it creates.
  struct subject {
    const char* kind;
    protocol::object_id id;
  };
  template <class Request>
  static subject subject_of(const Request& r) {
    if constexpr (requires { r.program; }) return {"program", r.program};
    else if constexpr (requires { r.kernel; }) return {"kernel", r.kernel};
    else if constexpr (requires { r.object; }) return {"object", r.object};
    else if constexpr (requires { r.context; }) return {"context", r.context};
    else if constexpr (requires { r.id; }) return {"object", r.id};
    else return {"session", 0};
  }
  /// Records why request `kind` got no answer (`what` happened to the
  /// server) and fails it with `code`: CL_DEVICE_NOT_AVAILABLE, or the
  /// failure the session's end named (link_state::failure_of). Returns `code`.
  cl_int unreachable(cl_int code, std::string_view kind, const char* what) const;
  /// The reply to request `kind` about `object_kind` `object` carries the
  /// error `status`: records the reason and reports it (warn once).
  void failed_reply(cl_int status, std::string_view kind, const char* object_kind, protocol::object_id object) const;
  /// Waits for the reply to `request`, sent in session `epoch`.
  bool wait_reply(uint64_t request, uint64_t epoch, uint16_t& id, std::vector<uint8_t>& payload);
  /// Drops what the server has acknowledged; false for a claim beyond what
  /// was sent.
  bool on_ack(const protocol::ack& a);
  /// Stores a reply for the caller waiting for it; false for a reply to no
  /// request.
  bool on_reply(const protocol::frame_view& frame, std::string& why);
  /// Writes an ack (when the counts moved) and `batch` to the control
  /// stream. Called with send_mutex_ held, while online.
  void write_locked(const std::vector<uint8_t>& batch);
  /// flush() without waking the reader.
  void flush_batch();
  void writer_loop();
  /// recv() that first polls for a short while when somebody waits.
  ssize_t receive(void* area, size_t size);

  link_state& link_;
  event_tracker& tracker_;
  bulk_sender& sender_;

  std::mutex send_mutex_;  // serialises writes to the control socket; guards spare_, ack_frame_
  std::vector<uint8_t> spare_;
  std::vector<uint8_t> ack_frame_;

  std::mutex out_mutex_;  // guards out_, out_frames_, posted_, writer_idle_, ack_due_
  std::condition_variable out_cv_;
  std::vector<uint8_t> out_;
  uint64_t out_frames_ = 0;  // frames in out_
  uint64_t posted_ = 0;      // frames posted in this session
  bool writer_idle_ = false;
  bool ack_due_ = false;

  std::mutex log_mutex_;  // guards control_log_, early_ack_
  protocol::replay_log control_log_;
  uint64_t early_ack_ = 0;  // an ack that overtook its frames' entry into the log

  std::atomic<uint64_t> next_request_{1};
  struct reply_slot {
    bool done = false;
    uint16_t id = 0;
    std::vector<uint8_t> payload;
    reply_handler handler;  // set: nobody waits, the reply goes here
  };
  /// Hands every asynchronous request its failure (the session ended).
  void fail_handlers();
  std::mutex requests_mutex_;  // guards requests_
  std::condition_variable requests_cv_;
  std::unordered_map<uint64_t, reply_slot> requests_;

  std::atomic<int> waiters_{0};
  /// The reader polls while a waiter's window lasts and somebody waits, and
  /// is woken once a waiter's request went out (flush; reader_wake.hpp).
  reader_wake wake_{spin_duration()};
  std::thread writer_;
};

}  // namespace ferry::client
