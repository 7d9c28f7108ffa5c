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
// A session ends when its control connection closes, on goodbye, on a
// protocol violation on either client connection, or when the daemon stops;
// all its native objects are released and the daemon keeps serving the
// others. A peer link that breaks a rule closes alone.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/socket.hpp"
#include "protocol/messages.hpp"
#include "server/native/api.hpp"
#include "server/native/catalog.hpp"
#include "server/link_stats.hpp"
#include "server/session_core.hpp"

namespace ferry::server {

class printf_capture;

/// What every session uses and the server owns.
struct session_services {
  const native::device_catalog& catalog;
  const native::api& api;
  printf_capture* printf = nullptr;
  link_stats* links = nullptr;   // daemon-wide traffic counters (null: none)
  std::string peer_address;      // server_info.peer_address
};

class session {
 public:
  /// `finished` is called on the control reader thread as its last act.
  session(const protocol::session_token& id, const protocol::session_token& secret,
          const protocol::session_token& peer_key, unique_fd control, std::string peer,
          const session_services& services, std::function<void(session&)> finished);
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// Starts the control reader and writer. Send the welcome before.
  void start();
  /// Attaches the bulk connection: sends `welcome` on it and starts the bulk
  /// threads. False with a refusal when the session has one already or is
  /// ending; `fd` is then left to the caller.
  bool attach_bulk(unique_fd& fd, const std::string& peer, const protocol::welcome& welcome,
                   protocol::refused& why);
  /// Attaches an incoming peer link (the hello showed peer_key()): sends
  /// `welcome` on it and starts its reader. False with a refusal when the
  /// session is ending; `fd` is then left to the caller.
  bool attach_peer_in(unique_fd& fd, const std::string& peer, const protocol::welcome& welcome,
                      protocol::refused& why);
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

  const protocol::session_token secret_;
  const protocol::session_token peer_key_;
  const session_services services_;
  std::shared_ptr<session_core> core_;
  unique_fd control_;
  const std::string peer_;
  std::function<void(session&)> finished_;

  struct peer_in {
    unique_fd fd;
    std::string peer;
    std::thread reader;
  };
  void join_peer_readers();
  /// The daemon's counter of this kind of link with `peer`'s host (null: none).
  link_counter* counter(protocol::link_kind kind, const std::string& peer) const;

  std::mutex mutex_;  // guards bulk_, bulk_peer_, closing_, close_reason_, the bulk threads, peers_in_
  unique_fd bulk_;
  std::string bulk_peer_;
  bool closing_ = false;
  std::string close_reason_;
  std::thread control_reader_;
  std::thread control_writer_;
  std::thread bulk_reader_;
  std::thread bulk_writer_;
  std::vector<std::unique_ptr<peer_in>> peers_in_;
};

}  // namespace ferry::server
