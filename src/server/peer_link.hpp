// An outgoing peer link: one TCP (or Unix) connection from this session to the
// client's session on another server, carrying peer_event_status frames and
// the bulk_data chunks of migrations (docs/protocol.md, "Peer links").
//
// Items are posted by native callbacks (export_event, migrate_out maps) and
// sent by the link's own thread, which also connects, lazily, when the first
// item arrives: the control reader never waits for a peer. Statuses go first:
// between two chunks of a migration the writer sends every status waiting,
// so a status never waits behind more than one chunk.
//
// When the link cannot be opened or a write fails, every item queued then
// fails: its command is reported to the client with CL_DEVICE_NOT_AVAILABLE
// and the log says why. A later item tries to connect again.
#pragma once

#include <CL/cl.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "common/socket.hpp"
#include "protocol/messages.hpp"
#include "server/link_stats.hpp"
#include "server/native/api.hpp"
#include "server/native/mapping.hpp"
#include "server/staging.hpp"

namespace ferry::server {

class control_outbox;

/// export_event: `event`'s status, for the peer.
struct peer_status {
  protocol::object_id event = 0;
  protocol::object_id command = 0;  // the export_event's command, for failures
  cl_int status = CL_COMPLETE;
  cl_event native = nullptr;  // owned, may be null: its true status is read before sending
  bool verify = false;        // the callback may have said CL_COMPLETE for a failure
};

/// migrate_out: a mapped range of a buffer, for the peer.
struct peer_migration {
  protocol::object_id command = 0;
  uint64_t transfer = 0;
  staging_ptr content_size;  // the buffer's content size (8 bytes), or null
  native::mapping source;    // `size` bytes (empty when size is 0); unmapped once sent
  uint64_t size = 0;    // bytes mapped
  uint64_t offset = 0;  // where they start in the buffer
  cl_int status = CL_COMPLETE;  // negative: the map failed, send nothing
  cl_event event = nullptr;     // owned, may be null
  bool verify = false;
  bool notify = false;
  /// Bytes to send: with a content size, those below it.
  uint64_t payload_size() const;
  const uint8_t* payload() const { return source.bytes(); }
};

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
  peer_link(peer_target target, const native::api& api, control_outbox& outbox, link_stats* stats,
            std::string label);
  ~peer_link();
  peer_link(const peer_link&) = delete;
  peer_link& operator=(const peer_link&) = delete;

  const peer_target& target() const { return target_; }

  /// Queue an item (any thread, native callbacks included; never calls
  /// OpenCL). Starts the link's thread on first use. After close() the item
  /// fails at once.
  void post(peer_status&& item);
  void post(peer_migration&& item);
  /// Starts the thread (the control reader calls it at the first command
  /// that will use the link, so that callbacks never start threads).
  void start();
  /// Shuts the socket down so that a blocked write returns (any thread).
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

 private:
  void run();
  bool connect(std::string& why);
  void disconnect();
  /// Sends the statuses; false (with why) when the socket fails.
  bool send_statuses(std::deque<peer_status>& statuses, std::string& why);
  /// Reports the failure of everything given and of what is queued.
  void fail(std::deque<peer_status>& statuses, std::optional<peer_migration>& current, const std::string& why);
  void complete_migration(peer_migration& item);
  void start_locked();

  const peer_target target_;
  const native::api& api_;
  control_outbox& outbox_;
  link_counter* counter_;
  const std::string label_;

  std::mutex mutex_;  // guards statuses_, migrations_, fd_ (its value), started_, closing_, thread_
  std::condition_variable ready_;
  std::deque<peer_status> statuses_;
  std::deque<peer_migration> migrations_;
  unique_fd fd_;
  bool started_ = false;
  bool closing_ = false;
  std::thread thread_;
};

}  // namespace ferry::server
