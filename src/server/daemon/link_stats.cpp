#include "server/daemon/link_stats.hpp"

#include "protocol/frame.hpp"

namespace ferry::server {

size_t count_frames(const uint8_t* data, size_t size) {
  size_t frames = 0;
  size_t at = 0;
  while (size - at >= protocol::frame_header_size) {
    protocol::frame_header h = protocol::load_header(data + at);
    at += protocol::frame_header_size + h.payload_size;
    ++frames;
    if (at > size) break;
  }
  return frames;
}

std::string remote_host(const std::string& peer_name) {
  if (!peer_name.empty() && peer_name.front() == '[') {
    auto close = peer_name.find(']');
    if (close != std::string::npos) return peer_name.substr(1, close - 1);
    return peer_name;
  }
  auto colon = peer_name.rfind(':');
  // One colon: host:port. None, or several (a bare IPv6 address): as it is.
  if (colon != std::string::npos && peer_name.find(':') == colon) return peer_name.substr(0, colon);
  return peer_name;
}

link_counter* link_stats::find(protocol::link_kind kind, const std::string& remote) {
  std::lock_guard lock(mutex_);
  // std::map nodes never move: the pointer stays valid.
  return &counters_[{kind, remote}];
}

std::vector<protocol::link_counter> link_stats::snapshot() const {
  std::lock_guard lock(mutex_);
  std::vector<protocol::link_counter> out;
  out.reserve(counters_.size());
  for (const auto& [key, c] : counters_) {
    protocol::link_counter entry;
    entry.kind = key.first;
    entry.remote = key.second;
    entry.bytes_in = c.bytes_in.load(std::memory_order_relaxed);
    entry.bytes_out = c.bytes_out.load(std::memory_order_relaxed);
    entry.messages_in = c.messages_in.load(std::memory_order_relaxed);
    entry.messages_out = c.messages_out.load(std::memory_order_relaxed);
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace ferry::server
