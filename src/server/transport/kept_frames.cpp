#include "server/transport/kept_frames.hpp"

#include <algorithm>

#include "protocol/limits.hpp"
#include "server/transport/bulk_writer.hpp"

namespace ferry::server {

uint64_t kept_frames::keep(uint64_t transfer, std::shared_ptr<const void> owner, const uint8_t* data, uint64_t base,
                           uint64_t size, uint64_t total) {
  std::lock_guard lock(mutex_);
  kept_transfer k;
  k.first_frame = frames_kept_ + 1;
  k.frames = bulk_frames(size);
  k.transfer = transfer;
  k.owner = std::move(owner);
  k.data = data;
  k.base = base;
  k.size = size;
  k.total = total;
  frames_kept_ += k.frames;
  kept_.push_back(std::move(k));
  return frames_kept_;
}

void kept_frames::take_done(std::deque<kept_transfer>& done) {
  const uint64_t through = std::min(frames_acknowledged_, frames_written_);
  while (!kept_.empty() && kept_.front().first_frame + kept_.front().frames - 1 <= through) {
    done.push_back(std::move(kept_.front()));
    kept_.pop_front();
  }
}

void kept_frames::written(uint64_t frame) {
  std::deque<kept_transfer> done;  // freed outside the lock
  std::lock_guard lock(mutex_);
  frames_written_ = std::max(frames_written_, frame);
  take_done(done);
}

bool kept_frames::acknowledge(uint64_t received) {
  std::deque<kept_transfer> done;  // freed outside the lock
  std::lock_guard lock(mutex_);
  if (received > frames_kept_) return false;
  frames_acknowledged_ = std::max(frames_acknowledged_, received);
  take_done(done);
  return true;
}

bool kept_frames::resend(stream* fd, uint64_t received, link_counter* counter) {
  std::lock_guard lock(mutex_);
  // Frames acknowledged before are gone: a client cannot have lost them.
  if (received > frames_kept_ || received < frames_acknowledged_) return false;
  for (const kept_transfer& k : kept_) {
    const uint64_t last = k.first_frame + k.frames - 1;
    if (last <= received) continue;
    // Frames are max_bulk_chunk bytes each (pieces are whole chunks), so
    // the frame says where it starts. Always on the socket: the new
    // stream's client has offered no read window yet.
    uint64_t at = received >= k.first_frame ? (received + 1 - k.first_frame) * protocol::max_bulk_chunk : 0;
    do {
      const uint64_t chunk = std::min<uint64_t>(k.size - at, protocol::max_bulk_chunk);
      if (!write_bulk_frame(fd, k.transfer, k.base + at, k.total, k.data + at, chunk, counter)) return false;
      at += chunk;
    } while (at < k.size);
  }
  return true;
}

}  // namespace ferry::server
