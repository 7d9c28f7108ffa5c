// The part of a session that native callbacks touch. Shared (shared_ptr)
// between the session's threads and every outstanding callback slot, so it
// stays alive until the last callback has run, even after the session ended.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "protocol/messages.hpp"
#include "server/daemon/link_stats.hpp"
#include "server/files/file_root.hpp"
#include "server/native/api.hpp"
#include "server/peers/event_imports.hpp"
#include "server/peers/local_routes.hpp"
#include "server/peers/peer_directory.hpp"
#include "server/session/session_quota.hpp"
#include "server/transport/bulk_writer.hpp"
#include "server/transport/callback_pool.hpp"
#include "server/transport/control_writer.hpp"
#include "common/reader_wake.hpp"
#include "server/transport/transfer_table.hpp"

namespace ferry::server {

class printf_capture;
class daemon_queries;

// Sessions are named in logs as the client names them (protocol/messages.hpp).
using protocol::session_label;

struct session_core {
  /// `links` (may be null: nothing is counted) and `peer_address` (for
  /// server_info) are the daemon's; `grace` is the session's grace period,
  /// which its peer links also give a lost connection; `limits` its quotas.
  session_core(const protocol::session_token& session, const native::api& native, printf_capture* capture,
               link_stats* links = nullptr, std::string peer_address = {},
               std::chrono::milliseconds grace = {}, const session_limits& limits = {},
               std::shared_ptr<const protocol::credentials> credentials = {});

  const protocol::session_token id;
  const std::string label;
  /// Unique per session; printf attribution compares it.
  const uint64_t key;
  const native::api& api;
  printf_capture* const printf;  // null: no printf forwarding (tests)
  link_stats* const links;
  const std::string peer_address;
  /// What local_route answers and whether add_peer_route is taken (set by
  /// the session before its threads start).
  local_routes routes;
  /// ferryd --file-root, for file_to_buffer and buffer_to_file (null or
  /// unconfigured: no files; set by the session before its threads start).
  std::shared_ptr<const file_root> files;
  /// The main process, when the session runs in a worker (null otherwise):
  /// daemon-wide counters and the workers come from there.
  daemon_queries* daemon = nullptr;

  /// Frames received from the client over every connection so far: the
  /// control stream's (each run once, counted as it runs; acks excluded)
  /// and the bulk stream's (counted once whole). `ack` and session_state
  /// report them.
  std::atomic<uint64_t> control_in{0};
  std::atomic<uint64_t> bulk_in{0};
  /// The same for each bulk lane (lanes_in[k]: lane k's; [0] is bulk_in's
  /// place and stays 0), which lane_ack and each lane's session_state report.
  std::array<std::atomic<uint64_t>, protocol::max_bulk_lanes> lanes_in{};
  /// The client's ack (set by the session before its threads start): lets
  /// go of what it covers; false when it claims more than was sent.
  std::function<bool(const protocol::ack&)> acked;
  /// The client's lane_ack (set likewise): lets go of what each lane's
  /// writer kept; false when it claims more than was sent, or names a lane
  /// the session does not take.
  std::function<bool(const protocol::lane_ack&)> lanes_acked;

  /// Before every member that holds staging: charged buffers must go first.
  session_quota quota;
  /// Wakes the control reader when completions go out (reader_wake.hpp).
  reader_wake reader;
  control_outbox outbox;
  bulk_outbox bulk;
  /// What each bulk lane sent the client and it has not acknowledged
  /// (lanes_out[k]: lane k's; [0] unused: the bulk stream's is bulk.kept()).
  std::array<kept_frames, protocol::max_bulk_lanes> lanes_out;
  transfer_table transfers;
  callback_pool callbacks;
  event_imports imports;
  peer_directory peers;  // after outbox: its links report there
};

}  // namespace ferry::server
