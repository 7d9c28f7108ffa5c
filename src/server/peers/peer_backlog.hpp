// What an outgoing peer link has sent and the destination has not
// acknowledged yet, so that it can go out again after a reconnection
// (docs/protocol.md, "Peer links").
//
// Frames are numbered from 1 in the order they are written, over every
// connection of the link; the destination acknowledges a cumulative count.
// A status is kept as its event, status and command (a few bytes, encoded
// again when resent). A migration's chunks are kept as offsets into its
// mapped range, which stays mapped until every chunk is acknowledged: no
// copy. Statuses may sit between two chunks of a migration, so each frame
// has its own record; one migration is numbered at a time (the current one),
// so migrations finish in the order they began.
//
// Owned by the link's thread: no lock.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "common/stream.hpp"
#include "server/daemon/link_stats.hpp"
#include "server/peers/peer_status_and_migration.hpp"
#include "server/peers/peer_window.hpp"

namespace ferry::server {

class peer_backlog {
 public:
  /// The frames numbered so far, and the count the destination acknowledged.
  uint64_t sent() const { return sent_; }
  uint64_t acknowledged() const { return acknowledged_; }
  /// Nothing numbered is unacknowledged and no migration is open.
  bool empty() const { return frames_.empty() && open_.empty(); }

  /// Numbers a status frame (its status final, its native event released)
  /// and appends the frame to `out`.
  void add_status(const peer_status& item, std::vector<uint8_t>& out);

  /// Opens a migration of `to_send` bytes (its payload); it becomes the
  /// current one. Only when there is none (see current()).
  void begin(peer_migration&& item, uint64_t to_send);
  /// The open migration with chunks not yet numbered, or null.
  bool has_current() const { return current_ != nullptr; }
  /// Another way than the socket for a chunk: the current connection's
  /// shared-memory window (asked for only when a chunk is large enough, so
  /// that links with small migrations make none; null or empty: none), the
  /// counter of what goes through it, and the link's answer to whether the
  /// connection still lives (asked while waiting for a free slot).
  struct chunk_route {
    std::function<peer_window*()> window;
    link_counter* window_counter = nullptr;
    std::function<bool()> alive;
  };
  /// Numbers the current migration's next chunk and writes it to `fd`, or
  /// through `route`'s window when it takes a chunk of that size. The chunk
  /// counts as sent even when the write fails (the destination's count says
  /// whether it arrived). False when the write failed.
  bool send_chunk(stream* fd, link_counter* counter, const chunk_route& route);
  bool send_chunk(stream* fd, link_counter* counter) { return send_chunk(fd, counter, chunk_route{}); }

  enum class ack_result { ok, beyond_sent };
  /// The destination has received the first `received` frames: drops them,
  /// and hands every migration whose chunks are all covered to `done`.
  /// A count below acknowledged() changes nothing.
  ack_result acknowledge(uint64_t received, std::vector<peer_migration>& done);
  /// Writes again every frame after acknowledged(), in order. False when
  /// the socket fails.
  bool resend(stream* fd, link_counter* counter) const;

  /// Takes out everything kept (to fail it) and starts numbering from 0
  /// again (a new link).
  void take_all(std::vector<peer_status>& statuses, std::vector<peer_migration>& migrations);

 private:
  struct open_migration {
    peer_migration item;
    uint64_t to_send = 0;
    uint64_t numbered = 0;    // bytes of its chunks numbered so far
    uint64_t last_frame = 0;  // number of its last chunk, once numbered
  };
  struct frame {
    uint64_t number = 0;
    open_migration* migration = nullptr;  // null: a status
    uint64_t offset = 0;                  // a chunk: where it starts in the payload
    peer_status status;                   // a status: what it said and for which command
  };
  static bool write_chunk(stream* fd, const open_migration& m, uint64_t offset, link_counter* counter);

  std::deque<frame> frames_;
  std::deque<std::unique_ptr<open_migration>> open_;
  open_migration* current_ = nullptr;
  uint64_t sent_ = 0;
  uint64_t acknowledged_ = 0;
};

}  // namespace ferry::server
