// An outgoing peer link: one TCP (or Unix) connection at a time from this
// session to the client's session on another server, carrying
// peer_event_status frames and the bulk_data chunks of migrations, and
// bringing back the destination's acks (docs/protocol.md, "Peer links").
//
// A destination on the same host (add_peer_route) is dialled on its Unix
// socket first, and large chunks then go through a shared-memory window
// (peer_window.hpp); when the socket cannot be reached, each connection
// falls back to the TCP address, with the same frames and the same results.
//
// Items are posted by native callbacks (export_event, migrate_out maps) and
// sent by the link's own thread, which also connects, lazily, when the first
// item arrives: the control reader never waits for a peer. Statuses go first:
// between two chunks of a migration the writer sends every status waiting,
// so a status never waits behind more than one chunk. A second thread per
// connection reads the acks.
//
// What was sent is kept (peer_backlog) until the destination acknowledges
// it; a migration completes then, not when written. When a write fails or
// the connection ends with frames unacknowledged (or when an item comes for
// a link whose connection ended while idle), the link connects again
// (backoff from 5 ms, doubling to 500 ms), learns from the destination's
// session_state how many frames it has, and sends the rest again. It gives up
// when the session's grace period has passed since the loss (or since the
// idle link was needed), when the
// destination refuses the link (its session is gone), when the first
// connection cannot be opened, or when the session ends: then everything
// outstanding fails, each command reported to the client with
// CL_DEVICE_NOT_AVAILABLE, and the log says why. A later item starts a new
// link (a new link id) and tries again.
#pragma once

#include <CL/cl.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/socket.hpp"
#include "common/stream.hpp"
#include "protocol/messages.hpp"
#include "protocol/outgoing.hpp"
#include "server/daemon/link_stats.hpp"
#include "server/native/api.hpp"
#include "server/peers/peer_backlog.hpp"
#include "server/peers/peer_status_and_migration.hpp"
#include "server/peers/peer_window.hpp"

namespace ferry::server {

class control_outbox;

/// Where a link goes and what it shows there.
struct peer_target {
  std::string address;  // "host:port" or "unix:/path", as add_peer gave it
  protocol::session_token session{};
  protocol::session_token key{};
  bool operator==(const peer_target&) const = default;
};

class peer_link {
 public:
  /// `label` names the session in logs and in the thread's name.
  /// `grace`: how long after losing its connection the link keeps trying
  /// to connect again (the session's grace period; 0: it fails at once).
  /// `credentials`: the token and TLS context shown to the destination
  /// (null: none, a plain connection).
  peer_link(peer_target target, const native::api& api, control_outbox& outbox, link_stats* stats,
            std::string label, std::chrono::milliseconds grace = {},
            std::shared_ptr<const protocol::credentials> credentials = {});
  ~peer_link();
  peer_link(const peer_link&) = delete;
  peer_link& operator=(const peer_link&) = delete;

  const peer_target& target() const { return target_; }
  /// The destination shares this host: connections try `address`
  /// ("unix:/path") before the TCP address (any thread; the next connection
  /// uses it).
  void prefer_local(std::string address);

  /// Queue an item (any thread, native callbacks included; never calls
  /// OpenCL). Starts the link's thread on first use. After close() the item
  /// fails at once.
  void post(peer_status&& item);
  void post(peer_migration&& item);
  /// Starts the thread (the control reader calls it at the first command
  /// that will use the link, so that callbacks never start threads).
  void start();
  /// The session is ending (any thread): shuts the socket down so that a
  /// blocked write returns; the link connects no more.
  void interrupt();
  /// Stops the thread, failing what is left. Idempotent.
  void close();

  /// Reports an item that will not be sent: its command fails with `status`
  /// (a migration whose map failed keeps the map's error). Frees it (the
  /// control writer unmaps a migration's range).
  static void fail_item(const native::api& api, control_outbox& outbox, peer_status& item, cl_int status);
  static void fail_item(const native::api& api, control_outbox& outbox, peer_migration& item, cl_int status);

  /// How long connecting, and waiting for the welcome, may take.
  static constexpr int connect_timeout_ms = 3000;
  /// Waits between attempts to connect again after a loss.
  static constexpr std::chrono::milliseconds first_backoff{5};
  static constexpr std::chrono::milliseconds max_backoff{500};

 private:
  enum class opened { yes, refused, failed };
  void run();
  /// Opens a connection: hello with the link id, welcome, session_state
  /// (`received`: the frames the destination has). Starts the ack reader.
  opened connect(uint64_t& received, std::string& why);
  /// Connects again, with backoff while the grace period since `lost` lasts
  /// (none: one attempt), and sends again what the destination lacks. False
  /// (with why) when the link gives up.
  bool reconnect(std::optional<std::chrono::steady_clock::time_point> lost, std::string& why);
  /// Shuts the connection down and joins its ack reader.
  void disconnect();
  /// Opens the stream of a new connection: the local address when there is
  /// one and it answers, else the TCP one. Sets counter_ (and the window's)
  /// for the connection.
  stream_ptr open(std::string& why);
  /// The ack reader's body: takes acks until the connection ends.
  void read_acks(stream* fd, link_counter* counter);
  /// The current connection's window, offered on first use (null: chunks
  /// go on the socket).
  peer_window* window_for_chunks();
  /// Whether the current connection still lives (the ack reader has not
  /// seen it end and the session is not ending).
  bool connection_alive();
  /// Applies the destination's count; completes the migrations it covers.
  /// False (with why) when it counts frames never sent.
  bool acknowledge(uint64_t received, std::string& why);
  /// Numbers and sends the statuses; false (with why) when the socket fails.
  bool send_statuses(std::deque<peer_status>& statuses, std::string& why);
  /// Fails everything outstanding (kept, given, queued) and starts a new link.
  void fail_all(std::deque<peer_status>& statuses, const std::string& why);
  void complete_migration(peer_migration& item);
  void start_locked();
  /// Anything sent and unacknowledged, or waiting to be sent.
  bool outstanding(const std::deque<peer_status>& statuses) const;

  const peer_target target_;
  const native::api& api_;
  control_outbox& outbox_;
  link_stats* const stats_;
  link_counter* const tcp_counter_;
  const std::string label_;
  const std::chrono::milliseconds grace_;
  const std::shared_ptr<const protocol::credentials> credentials_;  // never null

  // The link thread's own:
  link_counter* counter_;                  // the current connection's (TCP or Unix socket)
  link_counter* window_counter_ = nullptr;  // its window's
  std::unique_ptr<peer_window> window_;     // the current connection's, once offered
  bool window_decided_ = false;             // whether the current connection was offered one
  uint16_t version_ = 0;                    // the current connection's protocol version
  std::string dialled_local_;               // the local address the current connection uses; empty: TCP
  std::string local_refused_;               // the local address whose failure was last logged
  peer_backlog backlog_;
  protocol::session_token link_id_{};  // random; a new one after the link gave up
  bool was_up_ = false;                // link_id_ has had a connection
  std::thread ack_reader_;

  std::mutex mutex_;  // guards statuses_, migrations_, fd_ (its value), started_, closing_, ending_,
                      // acked_, broken_, thread_, local_address_
  std::condition_variable ready_;
  std::deque<peer_status> statuses_;
  std::deque<peer_migration> migrations_;
  stream_ptr fd_;
  bool started_ = false;
  bool closing_ = false;
  bool ending_ = false;    // interrupt(): the session ends, no more connecting
  uint64_t acked_ = 0;     // the latest ack of the current link
  bool broken_ = false;    // the ack reader saw the connection end
  std::string broken_why_;
  std::string local_address_;  // prefer_local(); empty: TCP only
  std::thread thread_;
};

}  // namespace ferry::server
