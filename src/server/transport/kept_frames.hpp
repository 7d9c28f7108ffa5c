// What a bulk connection of a session sent to the client and the client has
// not acknowledged yet: bulk_data frames that a resumed session sends again
// (docs/protocol.md, "Resuming a session"). The bulk stream has one (in its
// bulk_outbox), and so has each bulk lane (session_core::lanes_out): each
// connection numbers its frames on its own.
//
// Thread-safe: the connection's writer keeps and writes, the control reader
// acknowledges, a new connection's writer sends again.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

#include "common/stream.hpp"
#include "server/daemon/link_stats.hpp"

namespace ferry::server {

class kept_frames {
 public:
  /// Keeps bytes about to be sent until the client acknowledges their
  /// frames: the `size` bytes at `data`, which are [base, base + size) of a
  /// transfer of `total` bytes (a whole read, a piece of one, a chunk).
  /// `owner` keeps `data` alive. Returns the number of the last frame.
  uint64_t keep(uint64_t transfer, std::shared_ptr<const void> owner, const uint8_t* data, uint64_t base,
                uint64_t size, uint64_t total);
  /// The writer is done with the frames up to `frame` (written, or failed).
  /// Only those are freed when acknowledged: the client may acknowledge a
  /// frame before the writer's write call returns.
  void written(uint64_t frame);
  /// The client received the first `received` frames. False when it claims
  /// more than were kept.
  bool acknowledge(uint64_t received);
  /// Sends again every kept frame after the first `received`, as bulk_data
  /// on `fd`. False when the socket fails or those frames are gone.
  bool resend(stream* fd, uint64_t received, link_counter* counter);

 private:
  struct kept_transfer {
    uint64_t first_frame = 0;  // number of its first frame
    uint64_t frames = 0;
    uint64_t transfer = 0;
    std::shared_ptr<const void> owner;  // keeps `data` alive
    const uint8_t* data = nullptr;      // bytes [base, base + size) of the transfer
    uint64_t base = 0;
    uint64_t size = 0;
    uint64_t total = 0;
  };
  /// Moves the transfers both acknowledged and written into `done` (freed by
  /// the caller outside the lock). Called with mutex_ held.
  void take_done(std::deque<kept_transfer>& done);

  std::mutex mutex_;  // guards everything below
  std::deque<kept_transfer> kept_;
  uint64_t frames_kept_ = 0;
  uint64_t frames_acknowledged_ = 0;
  uint64_t frames_written_ = 0;
};

}  // namespace ferry::server
