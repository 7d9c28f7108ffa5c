// An incoming peer link: another server's outgoing link into this session
// (hello with stream peer and the session's peer key). Its thread reads
// peer_event_status frames, which complete imported events, and bulk_data
// chunks, which go straight into the transfer table as the client's bulk
// stream's do (bulk_reader::receive_chunk). A daemon on the same host may
// share a window on a plain Unix socket (window_offer, window_chunk: the bulk
// reader checks and lands them, peer_window.hpp). Anything else, or a
// malformed frame, ends this link only; the session goes on.
//
// It counts the whole frames it has applied, over every connection of the
// link (the session keeps the count by the hello's link id), and sends the
// count back as `ack{control = count, bulk = 0}` on the same connection:
// whenever it has read all that has arrived, and at least every
// `ack_every` frames. A chunk cut in the middle is not counted (its bytes
// come again whole), so nothing is applied twice.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "common/stream.hpp"
#include "server/daemon/link_stats.hpp"

namespace ferry::server {

struct session_core;

class peer_reader {
 public:
  /// `received`: frames of this link applied over its earlier connections.
  peer_reader(stream* fd, session_core& core, link_counter* counter, uint64_t received = 0)
      : fd_(fd), core_(core), counter_(counter), received_(received), acked_(received) {}

  enum class end { closed, violation };
  /// The thread's body; returns when the link closes or breaks a rule (`why`).
  end run(std::string& why);
  /// Frames applied so far, over every connection of the link.
  uint64_t received() const { return received_.load(std::memory_order_acquire); }

  /// The most frames that go unacknowledged while more keep arriving.
  static constexpr uint64_t ack_every = 64;

 private:
  /// Sends an ack when one is due; false when the socket fails.
  bool maybe_ack();

  stream* fd_;
  session_core& core_;
  link_counter* counter_;
  std::atomic<uint64_t> received_;
  uint64_t acked_;  // the count last acknowledged
};

}  // namespace ferry::server
