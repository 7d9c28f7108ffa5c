// The life of a client session across connections (docs/protocol.md,
// "Resuming a session"): the handshakes, the control reader thread, and what
// happens when the streams break. The resumer takes the server offline,
// reconnects with backoff and resumes: both sides send again what the other
// has not received, so nothing is lost and nothing runs twice. When the
// session cannot be resumed it fails everything outstanding and opens a new
// session in the background.
//
// Locks: listener_mutex_ guards the availability listener and what it last
// heard; stop_mutex_ goes with stop_cv_ (the pauses between reconnections)
// and online_cv_ (wait_online). While it swaps streams the resumer holds, in
// one std::scoped_lock, the control channel's send_mutex_ and log_mutex_ and
// the bulk sender's send_mutex_ and log_mutex_ (and the control channel's
// out_mutex_ for a new session), then each bulk lane's send_mutex_ and
// log_mutex_, lane by lane (lock_lanes), then link_state's fd_mutex_ inside
// them.
#pragma once

#include <CL/cl.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "client/net/bulk_receiver.hpp"
#include "client/net/bulk_sender.hpp"
#include "client/net/control_channel.hpp"
#include "client/net/event_tracker.hpp"
#include "client/net/link_state.hpp"

namespace ferry::client {

/// The `refused.code` values whose meaning the client acts on (docs/protocol.md,
/// "Refusal codes"; ferryd's server::refusal lists them all).
enum class refusal_code : int32_t {
  worker_lost = 12,        ///< the session's worker process ended abnormally (crashed, killed)
  worker_over_quota = 13,  ///< the same, because it exceeded a limit (memory, open files)
};

/// What the work of a session fails with when the server refuses to resume
/// it with `code` (0: no code, the answer was not a `refused` frame):
/// CL_OUT_OF_RESOURCES for worker_over_quota, else CL_DEVICE_NOT_AVAILABLE.
cl_int failure_after_refusal(int32_t code);

class resumer {
 public:
  resumer(link_state& link, control_channel& channel, bulk_sender& sender, bulk_receiver& receiver,
          event_tracker& tracker);

  /// Connects both streams and performs the handshakes of a new session;
  /// false, with `error`, when that fails.
  bool connect(std::string& error);
  /// Starts the writer, the bulk reader and the control reader.
  void start();
  /// Stops and joins every thread (the connection is being destroyed).
  void stop();

  /// Waits while the server is offline: true once it is back (or was never
  /// gone), false when the session ended instead.
  bool wait_online();
  void set_availability_listener(std::function<void(bool)> listener);

  enum class handshake_result { ok, refused, failed };
  enum class resume_result { resumed, refused, failed };
  /// A session's streams, connected and past their handshakes: what the
  /// server said it has received of each (session_state; lane_states[k - 1]
  /// for lane k).
  struct stream_set {
    stream_ptr control;
    stream_ptr bulk;
    std::vector<stream_ptr> lanes;  // lane k at k - 1
    protocol::session_state state;
    std::vector<protocol::session_state> lane_states;
  };
  /// Sends again what the server has not received (`streams.state` and
  /// `lane_states` say what it has) on the streams, and makes them current.
  resume_result resume_streams(stream_set streams, std::string& error);
  /// Ends the session's outstanding work: fails every event, awaited read,
  /// failure hook and waiting caller with what the session's end named
  /// (link_state::failure: CL_DEVICE_NOT_AVAILABLE, or CL_OUT_OF_RESOURCES).
  void fail_outstanding();

 private:
  /// Sends hello on `s` and reads the answer; on a control stream also the
  /// session_state that follows the welcome. `refusal` gets the code of a
  /// `refused` answer, 0 for any other.
  /// `lane`: which bulk lane a bulk stream is (0: the bulk stream), which
  /// also reads the session_state after its welcome.
  handshake_result handshake(stream& s, protocol::stream_kind kind, std::string& error,
                             protocol::session_state* state, int32_t& refusal, uint32_t lane = 0);
  /// Connects both streams and performs their handshakes (a new session
  /// when the link has none, else a resumption). `refused` only when the
  /// control stream is refused; any trouble with the bulk stream is
  /// `failed` (a resumption may meet the bulk stream of an attempt that
  /// broke, which the server drops on the next). `refusal`: the code of
  /// the control stream's `refused` answer, 0 for none.
  handshake_result connect_streams(stream_set& streams, std::string& error, int32_t& refusal);
  /// How many bulk connections to open with a session whose server grants
  /// `granted` (session_state.bulk_lanes), the bulk stream included.
  uint32_t lanes_to_open(uint32_t granted) const;
  /// Holds every bulk lane's send and log mutexes (the resumer, after the
  /// bulk sender's).
  std::vector<std::unique_lock<std::mutex>> lock_lanes();
  void control_reader_loop();
  /// Serves the session, resuming it after lost connections, until it ends.
  void serve_session();
  /// Takes the server offline after its streams broke.
  void go_offline(const std::string& why);
  /// Reconnects with backoff until the grace period passes; true once the
  /// session is resumed.
  bool reconnect();
  /// One attempt to resume; `refusal` as for connect_streams.
  resume_result try_resume(std::string& error, int32_t& refusal);
  /// Opens a new session with the server (after one ended), retrying with
  /// backoff until it succeeds or the connection is destroyed.
  bool start_new_session();
  void start_bulk_reader();
  void notify_availability(bool available);
  void wake_online_waiters();
  /// Wakes the reconnection's pauses and wait_online.
  void wake_pauses();

  link_state& link_;
  control_channel& channel_;
  bulk_sender& sender_;
  bulk_receiver& receiver_;
  event_tracker& tracker_;

  std::mutex listener_mutex_;  // guards availability_listener_, reported_available_
  std::function<void(bool)> availability_listener_;
  bool reported_available_ = true;  // what the listener last heard

  std::mutex stop_mutex_;  // with stop_cv_: the reconnection's pauses; with online_cv_: wait_online
  std::condition_variable stop_cv_;
  std::condition_variable online_cv_;  // the server came back or the session ended

  std::thread control_reader_;
};

}  // namespace ferry::client
