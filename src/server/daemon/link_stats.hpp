// Daemon-wide traffic counters per link (get_link_counters).
//
// Every connection looks its counter up once, when it starts, by (kind,
// remote); from then on each frame only adds to atomics, so counting costs no
// lock. Counters live as long as the daemon (one per (kind, remote) pair,
// summed over sessions), so the pointers handed out never dangle.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "protocol/messages.hpp"

namespace ferry::server {

/// One link's traffic; a null counter counts nothing (tests, the fuzzer).
///
/// Both directions count a frame before it takes effect: what is read before
/// it is handled, what is written before the write. Once the last byte of a
/// frame is out, the other side may act on it (complete a command, land a
/// migration) and the client may ask for these counters before the writing
/// thread runs again; counted afterwards, they would lag behind what the
/// client already saw happen. A write that fails breaks its link, and a
/// resumed link counts what it sends again.
struct link_counter {
  std::atomic<uint64_t> bytes_in{0};
  std::atomic<uint64_t> bytes_out{0};
  std::atomic<uint64_t> messages_in{0};
  std::atomic<uint64_t> messages_out{0};

  void count_in(uint64_t frames, uint64_t bytes) {
    messages_in.fetch_add(frames, std::memory_order_relaxed);
    bytes_in.fetch_add(bytes, std::memory_order_relaxed);
  }
  void count_out(uint64_t frames, uint64_t bytes) {
    messages_out.fetch_add(frames, std::memory_order_relaxed);
    bytes_out.fetch_add(bytes, std::memory_order_relaxed);
  }
};

inline void count_in(link_counter* c, uint64_t frames, uint64_t bytes) {
  if (c) c->count_in(frames, bytes);
}
inline void count_out(link_counter* c, uint64_t frames, uint64_t bytes) {
  if (c) c->count_out(frames, bytes);
}

/// Frames in a buffer of whole frames (what a writer is about to send).
size_t count_frames(const uint8_t* data, size_t size);

/// "10.0.0.1" for "10.0.0.1:4242", "::1" for "[::1]:4242"; other text as it is.
std::string remote_host(const std::string& peer_name);

class link_stats {
 public:
  /// The counter of (kind, remote), made on first use. Stable for the
  /// daemon's lifetime.
  link_counter* find(protocol::link_kind kind, const std::string& remote);
  /// A copy of every counter, for link_counters.
  std::vector<protocol::link_counter> snapshot() const;

 private:
  mutable std::mutex mutex_;  // guards counters_ (the map, not the atomics inside)
  std::map<std::pair<protocol::link_kind, std::string>, link_counter> counters_;
};

}  // namespace ferry::server
