// One client session with one server: the control stream (commands out,
// completions and replies in) and the bulk stream (buffer contents both ways).
//
// Threads: the application's threads encode commands into the send buffer
// (short lock, no allocation in steady state); the writer thread sends what
// has accumulated; blocking calls flush from their own thread so a lone
// request leaves at once. The control reader completes events and answers
// requests; the bulk reader writes incoming data straight into its target.
//
// The session outlives its connections (docs/protocol.md, "Resuming a
// session"): every frame sent stays in a replay log until the server
// acknowledges it. When the streams break, the control reader takes the
// server offline (its devices report CL_DEVICE_AVAILABLE false), reconnects
// with backoff and resumes: both sides send again what the other has not
// received, so nothing is lost and nothing runs twice. Meanwhile new commands
// and requests are still taken (accepting()): they wait in the replay log,
// and blocking calls wait for the resumption, so a program that knows
// nothing of Ferry does not notice a short outage. Only when the session
// cannot be resumed (grace period passed, refused, protocol violation) does
// everything outstanding fail with CL_DEVICE_NOT_AVAILABLE.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "client/core/objects.hpp"
#include "client/core/result.hpp"
#include "client/net/bulk_log.hpp"
#include "common/bulk_window.hpp"
#include "common/socket.hpp"
#include "common/stream.hpp"
#include "protocol/outgoing.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/replay_log.hpp"

namespace ferry::client {

/// How long a waiting thread polls before it sleeps (FERRY_SPIN_US, default 50).
std::chrono::microseconds spin_duration();

/// What new work meets while a server is offline (FERRY_OUTAGE).
enum class outage_policy {
  /// Taken, and sent on resumption; fails only when the session cannot be
  /// resumed (the default: unmodified programs ride out short outages).
  wait,
  /// Refused at once with CL_DEVICE_NOT_AVAILABLE (FERRY_OUTAGE=fail-fast),
  /// for programs that move their work to another device as soon as the
  /// availability callback tells them (the PoCL-R paper's Fig. 4).
  fail_fast,
};
/// FERRY_OUTAGE, read once: "wait" (default) or "fail-fast"; anything else
/// is logged and taken as the default.
outage_policy outage_policy_from_environment();

class connection {
 public:
  /// Connects both streams and performs the handshakes. Returns nullptr and a
  /// reason on failure.
  /// `who`: the token and TLS context shown to the server.
  static std::unique_ptr<connection> open(const endpoint& where, const protocol::credentials& who,
                                          std::string& error);
  ~connection();

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

  /// Sends a request, waits for the reply with the same request id and
  /// decodes it. Offline, the request waits for the resumption (unless the
  /// outage policy is fail_fast). CL_DEVICE_NOT_AVAILABLE when the server
  /// takes no new work (accepting) or the session ends before the reply.
  template <class Reply, class Request>
  result<Reply> call(Request& request) {
    return call<Reply>(request, [] {});
  }
  /// The same, running `after_send` once the request is on its way (to
  /// send bulk data that the server awaits before it replies).
  template <class Reply, class Request, class AfterSend>
  result<Reply> call(Request& request, AfterSend&& after_send) {
    uint64_t frame;
    return call<Reply>(request, after_send, frame);
  }
  /// The same, storing the request's number among the session's control
  /// frames in `frame`.
  template <class Reply, class Request, class AfterSend>
  result<Reply> call(Request& request, AfterSend&& after_send, uint64_t& frame) {
    constexpr std::string_view kind = protocol::message_traits<Request>::label;
    request.request = next_request_.fetch_add(1);
    const uint64_t epoch = epoch_.load(std::memory_order_acquire);
    {
      std::lock_guard lock(requests_mutex_);
      if (!accepting()) return fail(unreachable(kind, ended() ? "its session ended" : "it is offline"));
      requests_[request.request];
    }
    waiting scope(*this);
    frame = post(request);
    flush();
    after_send();
    std::vector<uint8_t> payload;
    uint16_t id = 0;
    if (!wait_reply(request.request, epoch, id, payload))
      return fail(unreachable(kind, "its session ended before it answered"));
    Reply reply;
    const char* why = "";
    if (id != static_cast<uint16_t>(protocol::message_traits<Reply>::id) ||
        !protocol::decode_payload(payload.data(), payload.size(), reply, why)) {
      end_session("malformed reply");
      return fail(unreachable(kind, "its reply was malformed"));
    }
    if constexpr (requires { reply.status; }) {
      if (reply.status != CL_SUCCESS) [[unlikely]] {
        const subject about = subject_of(request);
        failed_reply(reply.status, kind, about.kind, about.id);
      }
    }
    return reply;
  }

  /// Registers an event to be completed by the server's completion for
  /// command `e->id` (takes an internal reference).
  void track(event* e);
  /// Registers where the bulk data of a read goes. The server may send fewer
  /// bytes than `size` (a buffer with a content size); the rest of the
  /// destination is left as it was.
  void expect_data(protocol::object_id transfer, void* destination, uint64_t size, event* e);
  /// How long the bytes handed to send_data stay as they are.
  enum class bytes_lifetime {
    /// The caller may reuse them once send_data returns (a blocking write,
    /// a buffer's initial contents): a small transfer is copied into the
    /// replay log, a large one waits until the server acknowledges it.
    until_return,
    /// Untouched until the command completes (a non-blocking write): the
    /// replay log only points to them, and send_data returns once they are
    /// written, with no round trip (bulk_log, "borrowed").
    until_completion,
  };
  /// Sends `size` bytes as bulk transfer `transfer` of a command of queue
  /// `queue` (until_completion needs it). False when the session ended
  /// first.
  bool send_data(protocol::object_id transfer, const void* data, uint64_t size,
                 bytes_lifetime lifetime = bytes_lifetime::until_return, protocol::object_id queue = 0);
  /// Sends bytes the client made for the transfer (a packed rectangle): the
  /// replay log keeps them until acknowledged, so nobody waits.
  bool send_data(protocol::object_id transfer, std::vector<uint8_t> bytes);

  /// Whether the server is reachable now (false while offline and after the
  /// session ended): what CL_DEVICE_AVAILABLE reports.
  bool alive() const { return alive_.load(std::memory_order_acquire); }
  /// Whether the server takes new work: while the session lives, offline
  /// too (the work waits in the replay log and goes on resumption); under
  /// outage_policy::fail_fast only while connected.
  bool accepting() const { return policy_ == outage_policy::fail_fast ? alive() : !ended(); }
  /// Waits while the server is offline: true once it is back (or was never
  /// gone), false when the session ended instead.
  bool wait_online();
  /// Whether the session is over for good: nothing outstanding will complete.
  /// The protocol version the server chose at the handshake (0 before it).
  uint16_t version() const { return version_.load(std::memory_order_acquire); }
  bool ended() const { return ended_.load(std::memory_order_acquire); }
  /// Runs `listener(available)` on the reader thread each time the server
  /// goes offline or comes back (and once, false, when the session ends).
  void set_availability_listener(std::function<void(bool)> listener);

  /// This client's session on the server and the key other servers show to
  /// open a peer link into it (welcome.peer_key).
  protocol::session_token session() const {
    std::lock_guard lock(session_mutex_);
    return session_;
  }
  protocol::session_token peer_key() const {
    std::lock_guard lock(session_mutex_);
    return peer_key_;
  }
  /// Which session with the server this is: 1 for the first, one more each
  /// time a new session replaces one that ended (the server restarted).
  /// Objects made in an earlier session stay unusable.
  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

  /// Runs `hook` (on the reader thread, outside Ferry's locks) when the
  /// server reports command `command` failed; a success report, or
  /// forget_failure, drops it. For commands that have no client event:
  /// migrations and event exports, whose failure the client must pass on to
  /// another server.
  void on_failure(protocol::object_id command, std::function<void(cl_int)> hook);
  void forget_failure(protocol::object_id command);
  /// Waits until every failure hook has run or been dropped (letting go of
  /// what it held) and every event the client completed itself has had its
  /// server's report: exact object counts.
  void settle();

  /// Marks an application thread as waiting for an answer from this server
  /// while it lives: the reader then polls the socket briefly before it
  /// sleeps, so the answer does not pay for waking a sleeping thread.
  class waiting {
   public:
    explicit waiting(connection& c) : c_(c) { c_.waiters_.fetch_add(1, std::memory_order_relaxed); }
    ~waiting() { c_.waiters_.fetch_sub(1, std::memory_order_relaxed); }
    waiting(const waiting&) = delete;
    waiting& operator=(const waiting&) = delete;

   private:
    connection& c_;
  };
  const std::string& name() const { return name_; }
  /// The session's label in logs ("1a2b3c4d", as the daemon logs it).
  std::string session_label() const { return protocol::session_label(session()); }

  /// Tells the server the process is leaving (goodbye), so that it frees the
  /// session now instead of keeping it for a resumption; nothing reconnects
  /// afterwards. For the end of the process: best effort, never waits.
  void say_goodbye();

  /// Round trip of one ping, in nanoseconds.
  result<uint64_t> ping();

  /// Waits until the bulk reader holds no chunk in hand, so that every
  /// object it was about to let go of is gone (exact leak counts).
  void quiesce_bulk() const;

 private:
  connection() = default;
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
  /// server); returns CL_DEVICE_NOT_AVAILABLE.
  cl_int unreachable(std::string_view kind, const char* what) const;
  /// The reply to request `kind` about `object_kind` `object` carries the
  /// error `status`: records the reason and reports it (warn once).
  void failed_reply(cl_int status, std::string_view kind, const char* object_kind, protocol::object_id object) const;
  enum class handshake_result { ok, refused, failed };
  /// Sends hello on `fd` and reads the answer; on a control stream also the
  /// session_state that follows the welcome.
  handshake_result handshake(stream& s, protocol::stream_kind kind, std::string& error,
                             protocol::session_state* state = nullptr);
  /// Connects both streams and performs their handshakes (a new session
  /// when session_ is zero, else a resumption). `refused` only when the
  /// control stream is refused; any trouble with the bulk stream is
  /// `failed` (a resumption may meet the bulk stream of an attempt that
  /// broke, which the server drops on the next).
  handshake_result connect_streams(stream_ptr& control, stream_ptr& bulk, protocol::session_state& state,
                                   std::string& error);
  void start_threads();
  void writer_loop();
  void control_reader_loop();
  /// Serves the session, resuming it after lost connections, until it ends.
  void serve_session();
  /// Reads and handles frames until the stream breaks (true) or the server
  /// breaks the protocol (false); `why` says what happened.
  bool read_control_stream(std::string& why);
  /// recv() that first polls for a short while when somebody waits.
  ssize_t receive(void* area, size_t size);
  void bulk_reader_loop(stream* fd, uint64_t generation);
  /// Waits for the reply to `request`, sent in session `epoch`.
  bool wait_reply(uint64_t request, uint64_t epoch, uint16_t& id, std::vector<uint8_t>& payload);
  bool on_frame(const protocol::frame_view& frame, std::string& why);
  void on_completions(const protocol::completions& batch);
  /// Drops what the server has acknowledged; false for a claim beyond what
  /// was sent.
  bool on_ack(const protocol::ack& a);
  /// Asks the writer to send an ack soon (the server keeps what it sent
  /// until then).
  void request_ack();
  /// Writes the chunks of one transfer to the bulk stream (or only into the
  /// log while offline); returns the number of the last frame.
  uint64_t send_chunks(protocol::object_id transfer, const uint8_t* bytes, uint64_t size, bulk_log::hold how,
                       const std::shared_ptr<const void>& keeper, protocol::object_id queue);
  /// Command `command` of `queue` completed with `status`: no frame may
  /// point into the memory of the writes it lets the application reuse any
  /// more (bulk_log::settle, settle_all for a failure).
  void settle_borrowed(protocol::object_id queue, protocol::object_id command, cl_int status);
  /// Writes an ack (when the counts moved) and `batch` to the control
  /// stream. Called with send_mutex_ held, while online.
  void write_control_locked(const std::vector<uint8_t>& batch);
  /// Counts `count` hooks as gone and wakes settle().
  void retire_hooks(size_t count);

  /// The streams of connection `generation` broke: shuts both down so that
  /// the control reader notices and resumes. A stale generation is ignored.
  void broken(uint64_t generation, const char* why);
  /// Sends one chunk of a transfer on the current bulk stream: through the
  /// shared-memory window when there is one for it, else on the socket.
  /// False when the stream broke (or was replaced: `generation` is stale).
  bool send_chunk(uint64_t generation, protocol::object_id transfer, uint64_t offset, uint64_t total,
                  const uint8_t* data, uint64_t size);
  /// The window a chunk of `chunk` bytes goes through, offering one on a new
  /// bulk stream that can take it (version 5, a plain Unix socket); null:
  /// send it on the socket. Called with bulk_send_mutex_ held.
  bulk_window* window_for_chunk(uint64_t chunk);
  /// The bulk stream was replaced: its window goes with it (called with
  /// bulk_send_mutex_ held).
  void forget_window();
  /// Slots of a window, each max_bulk_chunk bytes: enough that the copy into
  /// one overlaps the daemon's copy out of another.
  static constexpr uint32_t window_slots = 4;
  /// Ends the session for good (no resumption): the control reader then
  /// fails everything outstanding.
  void end_session(const std::string& why);
  /// Takes the server offline after its streams broke.
  void go_offline(const std::string& why);
  /// Reconnects with backoff until the grace period passes; true once the
  /// session is resumed.
  bool reconnect();
  enum class resume_result { resumed, refused, failed };
  resume_result try_resume(std::string& error);
  /// Sends again what the server has not received and makes the new streams
  /// current.
  resume_result resume_streams(stream_ptr control, stream_ptr bulk, const protocol::session_state& state,
                               std::string& error);
  /// Fails everything outstanding once the session has ended.
  void fail_outstanding();
  /// Opens a new session with the server (after one ended), retrying with
  /// backoff until it succeeds or the connection is destroyed.
  bool start_new_session();
  void notify_availability(bool available);

  std::string name_;
  endpoint where_;
  protocol::credentials credentials_;
  // Replaced by the control reader when it resumes, under fd_mutex_ and the
  // send mutexes, so a writer's stream stays put while it writes.
  stream_ptr control_;
  stream_ptr bulk_;
  mutable std::mutex session_mutex_;  // guards session_, peer_key_ (read by other threads)
  protocol::session_token session_{};
  protocol::session_token secret_{};  // used by the control reader only, after open()
  protocol::session_token peer_key_{};
  std::atomic<uint64_t> epoch_{1};
  uint32_t grace_ms_ = 0;  // session_state.grace_ms: 0 means no resumption
  std::atomic<bool> alive_{false};
  outage_policy policy_ = outage_policy_from_environment();
  std::atomic<bool> ended_{false};
  std::atomic<int> waiters_{0};
  std::atomic<int> bulk_busy_{0};  // 1 while the bulk reader handles a chunk
  std::atomic<bool> stopping_{false};

  std::mutex fd_mutex_;  // guards shutting down and replacing control_ and bulk_
  std::atomic<uint64_t> generation_{1};  // of the current pair of streams

  std::mutex out_mutex_;  // guards out_, out_frames_, writer_idle_, ack_due_
  std::condition_variable out_cv_;
  std::vector<uint8_t> out_;
  uint64_t out_frames_ = 0;  // frames in out_
  uint64_t posted_ = 0;      // frames posted in this session
  bool writer_idle_ = false;
  bool ack_due_ = false;
  std::mutex send_mutex_;  // serialises writes to the control socket; guards spare_, ack_frame_
  std::vector<uint8_t> spare_;
  std::vector<uint8_t> ack_frame_;

  // What the client has received (and handled) of the session's frames, and
  // the counts its last ack carried.
  std::atomic<uint64_t> received_control_{0};
  std::atomic<uint64_t> received_bulk_{0};
  std::atomic<uint64_t> acked_control_{0};
  std::atomic<uint64_t> acked_bulk_{0};

  std::mutex log_mutex_;  // guards control_log_, early_ack_
  protocol::replay_log control_log_;
  uint64_t early_ack_ = 0;  // an ack that overtook its frames' entry into the log

  std::mutex bulk_send_mutex_;  // serialises writes to the bulk socket; guards window_ and window_decided_
  std::mutex bulk_log_mutex_;   // guards bulk_log_
  std::condition_variable bulk_acked_cv_;
  bulk_log bulk_log_;
  std::atomic<bool> borrowing_{false};  // bulk_log_.borrowing(), read without the lock on each completion
  std::unique_ptr<bulk_window> window_;  // the current bulk stream's, if it has one
  bool window_decided_ = false;          // whether the current bulk stream was offered one
  std::atomic<uint16_t> version_{0};  // the protocol version the server chose

  std::mutex listener_mutex_;
  std::function<void(bool)> availability_listener_;
  bool reported_available_ = true;  // what the listener last heard

  std::mutex stop_mutex_;  // with stop_cv_: the reconnection's pauses; with online_cv_: wait_online
  std::condition_variable stop_cv_;
  std::condition_variable online_cv_;  // the server came back or the session ended
  void wake_online_waiters();

  std::atomic<uint64_t> next_request_{1};
  struct reply_slot {
    bool done = false;
    uint16_t id = 0;
    std::vector<uint8_t> payload;
  };
  std::mutex requests_mutex_;  // guards requests_
  std::condition_variable requests_cv_;
  std::unordered_map<uint64_t, reply_slot> requests_;

  std::mutex tracked_mutex_;  // guards tracked_, transfers_, failure_hooks_
  std::unordered_map<protocol::object_id, event*> tracked_;
  std::unordered_map<protocol::object_id, std::function<void(cl_int)>> failure_hooks_;
  size_t hooks_alive_ = 0;  // hooks registered and not yet destroyed (in the map or running)
  std::condition_variable hooks_cv_;  // with tracked_mutex_: settle() waits on it
  struct transfer {
    uint8_t* destination;
    uint64_t size;
    uint64_t received;
    event* owner;
  };
  std::unordered_map<protocol::object_id, transfer> transfers_;

  std::thread writer_;
  std::thread control_reader_;
  std::thread bulk_reader_;  // of the current streams; started and joined by the control reader
};

}  // namespace ferry::client
