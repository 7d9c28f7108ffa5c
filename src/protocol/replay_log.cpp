#include "protocol/replay_log.hpp"

#include "protocol/frame.hpp"

namespace ferry::protocol {

namespace {
// Recycled batches kept for reuse; more are freed.
constexpr size_t max_recycled = 8;
}  // namespace

size_t replay_log::offset_of(const batch& b, uint64_t index) {
  size_t at = 0;
  for (uint64_t i = 0; i < index; ++i) at += frame_header_size + load_header(b.bytes.data() + at).payload_size;
  return at;
}

void replay_log::append(std::vector<uint8_t>& frames, uint64_t count) {
  if (count == 0) {
    frames.clear();
    return;
  }
  batch b;
  b.first = sent_ + 1;
  b.count = count;
  b.bytes.swap(frames);
  bytes_ += b.bytes.size();
  sent_ += count;
  batches_.push_back(std::move(b));
  if (!recycled_.empty()) {
    frames.swap(recycled_.back());
    recycled_.pop_back();
  }
  frames.clear();
}

bool replay_log::acknowledge(uint64_t received) {
  if (received > sent_) return false;
  if (received <= acknowledged_) return true;
  acknowledged_ = received;
  while (!batches_.empty()) {
    batch& b = batches_.front();
    const uint64_t last = b.first + b.count - 1;
    if (last > received) {
      // Partly acknowledged: later replays start inside it.
      size_t skip = offset_of(b, received + 1 - b.first);
      bytes_ -= skip - b.skip;
      b.skip = skip;
      break;
    }
    bytes_ -= b.bytes.size() - b.skip;
    if (recycled_.size() < max_recycled) {
      recycled_.push_back(std::move(b.bytes));
      recycled_.back().clear();
    }
    batches_.pop_front();
  }
  return true;
}

bool replay_log::replay(uint64_t received, std::vector<uint8_t>& out) const {
  if (received < acknowledged_ || received > sent_) return false;
  for (const batch& b : batches_) {
    const uint64_t last = b.first + b.count - 1;
    if (last <= received) continue;
    size_t from = received >= b.first ? offset_of(b, received + 1 - b.first) : 0;
    out.insert(out.end(), b.bytes.begin() + static_cast<std::ptrdiff_t>(from), b.bytes.end());
  }
  return true;
}

}  // namespace ferry::protocol
