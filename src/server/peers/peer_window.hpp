// The source's side of a shared-memory window on one connection of a peer
// link between two daemons of one host (docs/protocol.md, "Peer links").
//
// A Unix socket between two processes moves a few GB/s; a host copies
// several times faster. So, as a same-host client does for its large writes
// (common/bulk_window.hpp), the source offers a sealed memfd of a few slots
// once per connection (window_offer), copies each large migration chunk out
// of the mapped range into the next slot and sends only window_chunk naming
// the slot. The destination's peer reader hands both messages to its bulk
// reader, which checks every slot number and size, copies the slot into the
// staging or mapped landing and frees the slot.
//
// A window belongs to one connection: after a reconnection the old one is
// dropped (the destination's copy of it went with the old connection), and
// what the destination lacks is sent again on the socket. Waiting for a free
// slot is bounded: every bulk_window::slot_wait_ms the link is asked whether the
// connection still lives, so a destination that died never blocks the
// source for longer than that.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/bulk_window.hpp"
#include "common/stream.hpp"
#include "protocol/messages.hpp"
#include "server/daemon/link_stats.hpp"

namespace ferry::server {

class peer_window {
 public:
  /// Slots of a window, each max_bulk_chunk bytes: enough that copying into
  /// one overlaps the destination's copy out of another.
  static constexpr uint32_t slots = 4;
  /// Chunks up to this size go on the socket (bulk_window::small_chunk).
  static constexpr uint64_t min_chunk = bulk_window::small_chunk;

  /// Whether the connection `fd` can carry a window: a plain (not TLS) Unix
  /// socket to a destination that speaks `version`.
  static bool possible(const stream& fd, uint16_t version);
  /// Makes a window and offers it on `fd` (window_offer with the memfd,
  /// counted on `counter`). Null with a reason when the system refuses or
  /// the write fails.
  static std::unique_ptr<peer_window> offer(stream& fd, link_counter* counter, std::string& why);

  /// Whether a chunk of `size` bytes goes through the window.
  static bool takes(uint64_t size) { return size > min_chunk; }
  /// Copies the chunk into the next slot, once the destination has freed it,
  /// and sends window_chunk on `fd` (the frame and the slot's bytes counted
  /// on `counter`). `alive` is asked between waits; false when it says the
  /// connection is gone or the write fails.
  bool send_chunk(stream* fd, protocol::object_id transfer, uint64_t offset, uint64_t total, const uint8_t* data,
                  uint64_t size, link_counter* counter, const std::function<bool()>& alive);

 private:
  explicit peer_window(std::unique_ptr<bulk_window> window) : window_(std::move(window)) {}
  std::unique_ptr<bulk_window> window_;
};

}  // namespace ferry::server
