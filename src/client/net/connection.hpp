// One client session with one server: the control stream (commands out,
// completions and replies in) and the bulk stream (buffer contents both ways).
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
// everything outstanding fail with CL_DEVICE_NOT_AVAILABLE, or with
// CL_OUT_OF_RESOURCES when the server refuses because it stopped the
// session's worker for exceeding a limit (refusal code 13).
//
// A connection owns its parts, in the way Cap'n Proto splits rpc,
// rpc-twoparty and reconnect; each part's header says which lock guards what:
//   link_state       what the parts share: the streams, the session, the counts
//   control_channel  post, flush, request and reply, the writer thread, frames in
//   event_tracker    the events and failure hooks completions complete
//   bulk_sender      buffer contents out, their replay log and shared-memory window,
//                    and the bulk lanes (bulk_lane) that large transfers are striped over
//   bulk_receiver    buffer contents in: the awaited reads and the bulk readers
//   resumer          handshakes, the control reader, reconnection, resumption,
//                    failing what is outstanding, new sessions, availability
// Lock order across parts: the resumer's std::scoped_lock over the send and
// log mutexes of control_channel and bulk_sender (and control_channel's
// out_mutex_), then link_state's fd_mutex_. A part calls into another with
// no lock held, except that a send mutex may be held around
// link_state::broken and end_session, which take fd_mutex_ and then each
// part's wake-up lock alone (control_channel's out_mutex_, which nests in
// its send_mutex_ anyway, and the resumer's stop_mutex_).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "client/net/bulk_receiver.hpp"
#include "client/net/bulk_sender.hpp"
#include "client/net/completion_sink.hpp"
#include "client/net/control_channel.hpp"
#include "client/net/event_tracker.hpp"
#include "client/net/link_state.hpp"
#include "client/net/resumer.hpp"
#include "common/result.hpp"
#include "common/socket.hpp"
#include "protocol/outgoing.hpp"

namespace ferry::client {

class connection {
 public:
  /// Connects both streams and performs the handshakes. Returns nullptr and a
  /// reason on failure.
  /// `who`: the token and TLS context shown to the server.
  static std::unique_ptr<connection> open(const endpoint& where, const protocol::credentials& who,
                                          std::string& error);
  /// The same, completing events through `sink` instead of the client's own
  /// (tests).
  static std::unique_ptr<connection> open(const endpoint& where, const protocol::credentials& who,
                                          std::string& error, completion_sink& sink);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Queues a message; the writer thread sends it soon (batched with
  /// others). Returns its number among the session's control frames.
  template <class T>
  uint64_t post(const T& message) {
    return channel_.post(message);
  }
  /// Sends everything queued so far from the calling thread.
  void flush() { channel_.flush(); }

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
    return channel_.call<Reply>(request, after_send, frame);
  }

  /// Sends a request without waiting; its reply goes to `handler` on the
  /// reader thread (control_channel::post_request). False when the server
  /// takes no new work.
  template <class Request>
  bool post_request(Request& request, control_channel::reply_handler handler) {
    return channel_.post_request(request, std::move(handler));
  }

  /// Registers an event to be completed by the server's completion for
  /// command `e->id` (takes an internal reference).
  void track(event* e) { tracker_.track(e); }
  /// Registers where the bulk data of a read goes. The server may send fewer
  /// bytes than `size` (a buffer with a content size); the rest of the
  /// destination is left as it was.
  void expect_data(protocol::object_id transfer, void* destination, uint64_t size, event* e) {
    receiver_.expect_data(transfer, destination, size, e);
  }
  /// Frames posted in this session so far (control_channel::posted_frames).
  uint64_t posted_frames() { return channel_.posted_frames(); }
  /// How the log names what the work fails with when the session ends
  /// (link_state::name_failures).
  void name_failures(std::function<std::string(cl_int)> namer) { link_.name_failures(std::move(namer)); }
  /// Registers where the bytes of bulk transfer `transfer` go for a waiter
  /// that is no OpenCL event (bulk_receiver::expect_bytes).
  bool expect_bytes(protocol::object_id transfer, void* destination, uint64_t size, bulk_receiver::bytes_done done) {
    return receiver_.expect_bytes(transfer, destination, size, std::move(done));
  }
  /// Forgets such a transfer: true when its bytes had not all come.
  bool forget_bytes(protocol::object_id transfer) { return receiver_.forget_bytes(transfer); }
  /// How long the bytes handed to send_data stay as they are.
  using bytes_lifetime = client::bytes_lifetime;
  /// Sends `size` bytes as bulk transfer `transfer` of a command of queue
  /// `queue` (until_completion needs it). False when the session ended
  /// first.
  bool send_data(protocol::object_id transfer, const void* data, uint64_t size,
                 bytes_lifetime lifetime = bytes_lifetime::until_return, protocol::object_id queue = 0) {
    return sender_.send_data(transfer, data, size, lifetime, queue);
  }
  /// Sends bytes the client made for the transfer (a packed rectangle): the
  /// replay log keeps them until acknowledged, so nobody waits.
  bool send_data(protocol::object_id transfer, std::vector<uint8_t> bytes) {
    return sender_.send_data(transfer, std::move(bytes));
  }

  /// Whether the server is reachable now (false while offline and after the
  /// session ended): what CL_DEVICE_AVAILABLE reports.
  bool alive() const { return link_.alive.load(std::memory_order_acquire); }
  /// Whether the server takes new work: while the session lives, offline
  /// too (the work waits in the replay log and goes on resumption); under
  /// outage_policy::fail_fast only while connected.
  bool accepting() const { return link_.accepting(); }
  /// Waits while the server is offline: true once it is back (or was never
  /// gone), false when the session ended instead.
  bool wait_online() { return resumer_.wait_online(); }
  /// The protocol version the server chose at the handshake (0 before it).
  uint16_t version() const { return link_.version.load(std::memory_order_acquire); }
  /// Whether the session is over for good: nothing outstanding will complete.
  bool ended() const { return link_.ended.load(std::memory_order_acquire); }
  /// What the work of session `session_epoch` fails with once it ended:
  /// CL_OUT_OF_RESOURCES when the server stopped its worker for exceeding a
  /// limit, else CL_DEVICE_NOT_AVAILABLE (link_state::failure_of).
  cl_int failure_of(uint64_t session_epoch) const { return link_.failure_of(session_epoch); }
  /// The same for the current session.
  cl_int failure() const { return link_.failure(); }
  /// Runs `listener(available)` on the reader thread each time the server
  /// goes offline or comes back (and once, false, when the session ends).
  void set_availability_listener(std::function<void(bool)> listener) {
    resumer_.set_availability_listener(std::move(listener));
  }

  /// This client's session on the server and the key other servers show to
  /// open a peer link into it (welcome.peer_key).
  protocol::session_token session() const { return link_.session(); }
  protocol::session_token peer_key() const { return link_.peer_key(); }
  /// Which session with the server this is: 1 for the first, one more each
  /// time a new session replaces one that ended (the server restarted).
  /// Objects made in an earlier session stay unusable.
  uint64_t epoch() const { return link_.epoch.load(std::memory_order_acquire); }

  /// Runs `hook` (on the reader thread, outside Ferry's locks) when the
  /// server reports command `command` failed; a success report, or
  /// forget_failure, drops it. For commands that have no client event:
  /// migrations and event exports, whose failure the client must pass on to
  /// another server.
  void on_failure(protocol::object_id command, std::function<void(cl_int)> hook) {
    tracker_.on_failure(command, std::move(hook));
  }
  void forget_failure(protocol::object_id command) { tracker_.forget_failure(command); }
  /// Waits until every failure hook has run or been dropped (letting go of
  /// what it held) and every event the client completed itself has had its
  /// server's report: exact object counts.
  void settle() { tracker_.settle(); }

  /// Marks an application thread as waiting for an answer from this server
  /// while it lives: the reader then polls the socket briefly before it
  /// sleeps, so the answer does not pay for waking a sleeping thread.
  class waiting {
   public:
    explicit waiting(connection& c) : scope_(c.channel_) {}
    /// The same, polling for `spin` (control_channel::waiting).
    waiting(connection& c, std::chrono::microseconds spin) : scope_(c.channel_, spin) {}

   private:
    control_channel::waiting scope_;
  };
  const std::string& name() const { return link_.name(); }
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
  void quiesce_bulk() const { receiver_.quiesce(); }

 private:
  connection(const endpoint& where, const protocol::credentials& who, completion_sink& sink);

  // Built in this order, each from those before it (the bulk receiver asks
  // the control channel for acks through a callback); the destructor stops
  // every thread before any part goes.
  link_state link_;
  bulk_sender sender_;
  bulk_receiver receiver_;
  event_tracker tracker_;
  control_channel channel_;
  resumer resumer_;
};

}  // namespace ferry::client
