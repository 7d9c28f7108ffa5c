// The daemon: one listening port (plus an optional Unix socket), the
// handshake decisions, and the sessions.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/daemon/handshake.hpp"
#include "server/daemon/link_stats.hpp"
#include "server/daemon/listener.hpp"
#include "server/daemon/worker_pool.hpp"
#include "server/session/session.hpp"

namespace ferry::server {

struct server_config {
  std::string listen = "127.0.0.1";
  uint16_t port = 0;
  std::string unix_path;
  double handshake_timeout_s = 5.0;
  /// How long a session outlives its client's lost connection (0: not at all).
  double session_grace_s = 60.0;
  uint32_t bulk_lanes = 4;  // --bulk-lanes
  /// --peer-address: "host[:port]" or "unix:/path" (a missing port is the
  /// one listened on); empty: none announced.
  std::string peer_address;
  /// --peer-shared-memory: peer links between daemons of this host use Unix
  /// sockets and shared memory (docs/protocol.md, "Peer links").
  bool peer_shared_memory = true;
  /// Sessions at once, detached ones included (0: no limit): a control hello
  /// beyond is refused (refusal::too_many_sessions).
  size_t max_sessions = 256;
  /// Open connections, pending handshakes included (0: no limit): more are
  /// closed as they are accepted.
  size_t max_connections = 1024;
  /// Token and TLS demanded of every connection.
  admission rules;
  /// Each session in a worker process of its own (ferryd); none: sessions
  /// run in this process (the unit tests' servers).
  std::optional<worker_pool_config> workers;
};

class server {
 public:
  server(server_config config, const session_services& services);
  ~server() { stop(); }
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// Starts the session workers (when configured) and listens. False with a
  /// reason when a worker cannot serve (no device matches) or it cannot listen.
  bool start(std::string& error);
  /// The devices the first worker found, a line each (after start; workers only).
  const std::vector<std::string>& worker_devices() const { return worker_devices_; }
  /// The TCP port it listens on (the chosen one for port 0).
  uint16_t port() const { return listener_.port(); }
  /// Stops accepting, ends every session, joins every thread. Idempotent.
  void stop();

  /// Sessions not yet reaped (tests).
  size_t session_count() const;
  /// What server_info announces as peer_address (after start).
  const std::string& peer_address() const { return services_.peer_address; }
  /// The daemon's traffic counters.
  link_stats& links() { return links_; }

 private:
  void on_hello(stream_ptr s, const std::string& peer, const protocol::hello& hello);
  /// The daemon with session workers: each hello goes to the pool.
  void route_to_worker(stream_ptr fd, const std::string& peer, const protocol::hello& hello, uint16_t version);
  void on_session_finished(session& s);
  void reap();
  void refuse(stream& s, const std::string& peer, const protocol::refused& why) { send_refusal(s, peer, why); }

  const server_config config_;
  std::unique_ptr<worker_pool> workers_;  // null: in-process sessions
  std::vector<std::string> worker_devices_;
  link_stats links_;
  session_services services_;  // peer_address is completed by start()
  listener listener_;

  mutable std::mutex mutex_;  // guards by_id_, all_, finished_, stopping_
  std::map<protocol::session_token, session*> by_id_;   // live sessions, for bulk attach
  std::vector<std::shared_ptr<session>> all_;           // not yet joined
  std::vector<session*> finished_;                      // to join
  bool stopping_ = false;
};

}  // namespace ferry::server
