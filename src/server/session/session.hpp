// One client's session: its control connection, its bulk connection, the
// four threads that serve them, and the peer links of other servers.
//
//  - control reader: receives frames and runs them (executor), calling the
//    native API itself; owns the session's teardown.
//  - control writer: sends completions, replies and printf output.
//  - bulk reader / bulk writer: buffer contents in and out (started when the
//    bulk connection attaches).
//  - one reader per incoming peer link (another server pushing event
//    statuses and migrated bytes into this session), and one writer per
//    outgoing peer link (peer_directory), each started when first needed.
//
// When the client's connection is lost, the session is detached: its work
// goes on, what it would send is kept, and the client may resume it within
// the grace period (docs/protocol.md, "Resuming a session"): it has the
// frames it missed sent again and sends again those the session missed.
// A session ends on goodbye, on a protocol violation on either client
// connection, when the grace period passes without a resumption (or at
// once without one), or when the daemon stops; all its native objects are
// released and the daemon keeps serving the others. A peer link that breaks
// a rule closes alone.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/stream.hpp"
#include "server/peers/local_routes.hpp"
#include "protocol/messages.hpp"
#include "server/daemon/link_stats.hpp"
#include "server/native/api.hpp"
#include "server/native/catalog.hpp"
#include "server/session/session_core.hpp"

namespace ferry::server {

class control_writer;
class printf_capture;

/// Answers that need the whole daemon, not one session: a session worker
/// asks its main process (server/worker/session_worker.hpp).
class daemon_queries {
 public:
  virtual ~daemon_queries() = default;
  /// The daemon's link counters, summed over every session.
  virtual std::vector<protocol::link_counter> link_counters() = 0;
  /// The daemon's worker processes.
  virtual std::vector<protocol::worker_entry> workers() = 0;
};

/// What every session uses and the server owns.
struct session_services {
  const native::device_catalog& catalog;
  const native::api& api;
  printf_capture* printf = nullptr;
  link_stats* links = nullptr;   // daemon-wide traffic counters (null: none)
  std::string peer_address{};    // server_info.peer_address
  /// local_route's answer, and whether peer links take other daemons' routes.
  local_routes routes{};
  /// The directory file commands may use (ferryd --file-root; null: none).
  std::shared_ptr<const file_root> files{};
  /// How long a session outlives its client's lost connection (0: not at all).
  std::chrono::milliseconds grace{0};
  /// Bulk connections a session takes, its bulk stream included (ferryd
  /// --bulk-lanes; 1: the bulk stream alone). session_state.bulk_lanes.
  uint32_t bulk_lanes = 1;
  /// What each session may hold (session_quota.hpp).
  session_limits limits{};
  /// What peer links show other daemons: the token, TLS (null: none).
  std::shared_ptr<const protocol::credentials> peer_credentials{};
  /// Told when the client's connection is lost (detached) and when the
  /// client resumes (serving), with the client's address (null: nobody).
  std::function<void(protocol::worker_state, const std::string& client)> on_client_state{};
  /// What only the daemon's main process knows, when sessions run in worker
  /// processes (null: this process is the whole daemon).
  daemon_queries* daemon = nullptr;
};

class session {
 public:
  /// `finished` is called on the control reader thread as its last act.
  session(const protocol::session_token& id, const protocol::session_token& secret,
          const protocol::session_token& peer_key, stream_ptr control, std::string peer,
          const session_services& services, std::function<void(session&)> finished);
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// Starts the control reader and writer. Send the welcome before.
  void start();
  /// Attaches the bulk connection: sends `welcome` on it and starts the bulk
  /// threads. False with a refusal when the session has one already or is
  /// ending; `fd` is then left to the caller.
  bool attach_bulk(stream_ptr& fd, const std::string& peer, const protocol::welcome& welcome,
                   protocol::refused& why);
  /// Attaches bulk lane `lane` (1 to bulk_lanes() - 1; version 11) and
  /// starts its reader, which first sends `welcome` and the session_state
  /// (the frames the session has received on that lane so far). A new
  /// connection of a lane replaces the old one, whose reader ends first, so
  /// that the count is final. False with a refusal when the session is
  /// ending or takes no such lane; `fd` is then left to the caller.
  bool attach_lane(stream_ptr& fd, const std::string& peer, uint32_t lane, const protocol::welcome& welcome,
                   protocol::refused& why);
  /// Bulk connections the session takes, its bulk stream included.
  uint32_t bulk_lanes() const { return bulk_lanes_; }
  /// A client resumes the session on a new control connection (the server
  /// checked its secret). The session drops the connection it has, if any,
  /// and takes this one; its control reader then sends `welcome` and the
  /// session_state. False with a refusal when the session is ending; `fd`
  /// is then left to the caller.
  bool resume(stream_ptr& fd, const std::string& peer, const protocol::welcome& welcome, protocol::refused& why);
  /// Attaches an incoming peer link (the hello showed peer_key()) and
  /// starts its reader, which first sends `welcome` and the session_state
  /// (the frames the link `link` has delivered so far). A connection of a
  /// link that is connected already replaces the old one, whose reader ends
  /// first, so that the count is final. A link closed for breaking a rule
  /// is refused instead. False with a refusal when the session is ending;
  /// `fd` is then left to the caller.
  bool attach_peer_in(stream_ptr& fd, const std::string& peer, const protocol::session_token& link,
                      const protocol::welcome& welcome, protocol::refused& why);
  /// Ends the session (any thread, idempotent): shuts the sockets down so
  /// that every thread unblocks; the control reader then tears down.
  void close(const std::string& reason);
  /// Waits for the control reader (after `finished`, or after close()).
  void join();

  const protocol::session_token& id() const { return core_->id; }
  const protocol::session_token& secret() const { return secret_; }
  const protocol::session_token& peer_key() const { return peer_key_; }
  const std::string& label() const { return core_->label; }
  const std::string& peer() const { return peer_; }

 private:
  void control_main();
  void report_end(const std::string& connection_peer, const std::string& reason, bool violation);
  /// The client's connection broke (any thread): shuts both streams down so
  /// that the control reader notices and detaches the session.
  void connection_broken(const std::string& reason);
  /// Control reader: waits up to the grace period for resume() and takes the
  /// new connection over. False, with why the session ends, otherwise.
  bool wait_for_resume(std::string& why);
  /// Control reader: the client's first frame on a resumed connection.
  bool read_resume_ack(protocol::ack& ack, std::string& why);
  /// Stops the bulk threads of a lost connection and forgets it.
  void drop_bulk();

  const protocol::session_token secret_;
  const protocol::session_token peer_key_;
  const session_services services_;
  std::shared_ptr<session_core> core_;
  stream_ptr control_;
  std::string peer_;  // of the control connection; changes only on the control reader, under mutex_
  std::function<void(session&)> finished_;
  std::unique_ptr<control_writer> writer_;

  /// An incoming peer link's current connection. One per link id: a new
  /// connection of the link takes the old one over as `previous`.
  struct peer_in {
    stream_ptr fd;
    std::string peer;
    protocol::session_token link{};  // the source's id for the link (zero: none, never matched)
    std::thread reader;
    /// Frames the link has delivered, over its connections up to this one;
    /// final once `reader` has ended (read after joining it).
    uint64_t received = 0;
    bool violated = false;  // the link broke a rule: its reconnections are refused
    std::unique_ptr<peer_in> previous;  // joined by `reader` before it answers the hello
  };
  /// The body of a peer link's reader thread.
  void serve_peer_in(peer_in& link, link_counter* counter, const protocol::welcome& welcome);
  void join_peer_readers();

  /// A bulk lane's current connection (docs/protocol.md, "Bulk lanes"). The
  /// frames it delivered are counted in core_->lanes_in[lane], by its reader
  /// alone: a new connection's reader joins the old one's first.
  struct lane_in {
    stream_ptr fd;
    std::string peer;
    uint32_t lane = 0;
    std::thread reader;
    std::unique_ptr<lane_in> previous;  // joined by `reader` before it answers the hello
  };
  /// The body of a lane's reader thread.
  void serve_lane(lane_in& lane, const protocol::welcome& welcome);
  /// Shuts every lane down and joins their readers (a lost connection, the
  /// session's end).
  void drop_lanes();
  /// The daemon's counter of this kind of link with `peer`'s host (null: none).
  link_counter* counter(protocol::link_kind kind, const std::string& peer) const;

  std::mutex mutex_;  // guards bulk_, bulk_peer_, closing_, close_reason_, the bulk threads, peers_in_, lanes_
  stream_ptr bulk_;
  std::string bulk_peer_;
  bool closing_ = false;
  std::string close_reason_;
  std::thread control_reader_;
  std::thread control_writer_;
  std::thread bulk_reader_;
  std::thread bulk_writer_;
  std::vector<std::unique_ptr<peer_in>> peers_in_;
  const uint32_t bulk_lanes_;
  std::array<std::unique_ptr<lane_in>, protocol::max_bulk_lanes> lanes_;  // [k]: lane k's; [0] unused
  // Resumption (guarded by mutex_; resumed_ wakes the control reader and the bulk writer):
  std::condition_variable resumed_;
  stream_ptr resume_fd_;            // a resumed connection the control reader has not taken yet
  std::string resume_peer_;
  protocol::welcome resume_welcome_;
  /// Bulk frames the client has received, once known for the current
  /// connection (the bulk writer sends again what follows).
  std::optional<uint64_t> client_bulk_received_ = 0;
};

}  // namespace ferry::server
