#include "server/peers/peer_backlog.hpp"

#include <algorithm>

#include "common/socket.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/frame.hpp"
#include "server/transport/bulk_writer.hpp"

namespace ferry::server {

namespace p = protocol;

void peer_backlog::add_status(const peer_status& item, std::vector<uint8_t>& out) {
  frame f;
  f.number = ++sent_;
  f.status = item;
  f.status.native = nullptr;  // released by the caller; the status is final
  frames_.push_back(f);
  p::append_frame(out, p::peer_event_status{item.event, item.status});
}

void peer_backlog::begin(peer_migration&& item, uint64_t to_send) {
  auto m = std::make_unique<open_migration>();
  m->item = std::move(item);
  m->to_send = to_send;
  current_ = m.get();
  open_.push_back(std::move(m));
}

bool peer_backlog::write_chunk(stream* fd, const open_migration& m, uint64_t offset, link_counter* counter) {
  return write_bulk_chunk(fd, m.item.transfer, m.item.payload(), m.to_send, offset, counter);
}

bool peer_backlog::send_chunk(stream* fd, link_counter* counter, const chunk_route& route) {
  open_migration& m = *current_;
  frame f;
  f.number = ++sent_;
  f.migration = &m;
  f.offset = m.numbered;
  // A transfer of 0 bytes still has one (empty) chunk.
  m.numbered += std::min<uint64_t>(m.to_send - m.numbered, p::max_bulk_chunk);
  if (m.numbered == m.to_send) {
    m.last_frame = f.number;
    current_ = nullptr;
  }
  frames_.push_back(f);
  const uint64_t chunk = std::min<uint64_t>(m.to_send - f.offset, p::max_bulk_chunk);
  if (peer_window* window = route.window && peer_window::takes(chunk) ? route.window() : nullptr)
    return window->send_chunk(fd, m.item.transfer, f.offset, m.to_send, m.item.payload() + f.offset, chunk,
                              route.window_counter, route.alive);
  return write_chunk(fd, m, f.offset, counter);
}

peer_backlog::ack_result peer_backlog::acknowledge(uint64_t received, std::vector<peer_migration>& done) {
  if (received > sent_) return ack_result::beyond_sent;
  if (received <= acknowledged_) return ack_result::ok;
  acknowledged_ = received;
  while (!frames_.empty() && frames_.front().number <= received) {
    open_migration* m = frames_.front().migration;
    const uint64_t number = frames_.front().number;
    frames_.pop_front();
    // Migrations are numbered one after the other: the finished one is the oldest open.
    if (m != nullptr && m->last_frame == number) {
      done.push_back(std::move(m->item));
      open_.pop_front();
    }
  }
  return ack_result::ok;
}

bool peer_backlog::resend(stream* fd, link_counter* counter) const {
  std::vector<uint8_t> statuses;
  uint64_t status_frames = 0;
  auto flush = [&] {
    if (statuses.empty()) return true;
    count_out(counter, status_frames, statuses.size());  // before the write (link_counter says why)
    if (!write_all(fd, statuses.data(), statuses.size())) return false;
    statuses.clear();
    status_frames = 0;
    return true;
  };
  for (const frame& f : frames_) {
    if (f.migration == nullptr) {
      p::append_frame(statuses, p::peer_event_status{f.status.event, f.status.status});
      ++status_frames;
      continue;
    }
    if (!flush() || !write_chunk(fd, *f.migration, f.offset, counter)) return false;
  }
  return flush();
}

void peer_backlog::take_all(std::vector<peer_status>& statuses, std::vector<peer_migration>& migrations) {
  for (frame& f : frames_)
    if (f.migration == nullptr) statuses.push_back(f.status);
  for (auto& m : open_) migrations.push_back(std::move(m->item));
  frames_.clear();
  open_.clear();
  current_ = nullptr;
  sent_ = acknowledged_ = 0;
}

}  // namespace ferry::server
