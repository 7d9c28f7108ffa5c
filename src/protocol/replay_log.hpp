// The frames a stream has sent that the other side has not acknowledged yet,
// kept so that they can go out again after a reconnection (docs/protocol.md,
// "Resuming a session").
//
// Frames are numbered from 1 over the whole session, across connections; the
// receiver acknowledges a cumulative count (`ack`), and the sender drops what
// it covers. The log takes whole batches of encoded frames by swapping
// vectors, so keeping them costs no copy; acknowledged batches are recycled.
// Not thread-safe: its owner locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace ferry::protocol {

class replay_log {
 public:
  /// Takes the `count` whole frames in `frames`; `frames` is left empty,
  /// with the capacity of a recycled batch.
  void append(std::vector<uint8_t>& frames, uint64_t count);
  /// The other side has received the first `received` frames. A count
  /// beyond sent() is a broken peer: false, and nothing changes.
  bool acknowledge(uint64_t received);
  /// Appends every frame after the first `received` to `out`. False when
  /// those frames are not all here: acknowledged already (below
  /// acknowledged()) or never sent (beyond sent()).
  bool replay(uint64_t received, std::vector<uint8_t>& out) const;

  uint64_t sent() const { return sent_; }
  uint64_t acknowledged() const { return acknowledged_; }
  /// Bytes kept.
  size_t bytes() const { return bytes_; }

 private:
  struct batch {
    uint64_t first = 0;       // number of its first frame
    uint64_t count = 0;
    size_t skip = 0;          // bytes of frames acknowledged already
    std::vector<uint8_t> bytes;
  };
  /// Bytes from the start of `b`'s frame `index` (0-based, counting from the batch's first).
  static size_t offset_of(const batch& b, uint64_t index);

  std::deque<batch> batches_;
  std::vector<std::vector<uint8_t>> recycled_;
  uint64_t sent_ = 0;
  uint64_t acknowledged_ = 0;
  size_t bytes_ = 0;
};

}  // namespace ferry::protocol
