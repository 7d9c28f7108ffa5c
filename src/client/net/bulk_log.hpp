// The bulk frames the client has sent that the server has not acknowledged
// yet, kept so that they go out again after a reconnection (docs/protocol.md,
// "Resuming a session").
//
// A frame is a chunk of one transfer. Small transfers are copied here, so the
// caller may reuse its memory at once; a large one is only pointed to, and
// its sender waits until the server acknowledges its last frame before it
// returns (copying megabytes on every write would cost more than the round
// trip it saves). Not thread-safe: the connection locks.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "protocol/messages.hpp"

namespace ferry::client {

class bulk_log {
 public:
  /// Transfers up to this many bytes are copied.
  static constexpr uint64_t copy_limit = 64 * 1024;

  struct frame {
    uint64_t number = 0;  // counted from 1 over the session
    protocol::object_id transfer = 0;
    uint64_t offset = 0;
    uint64_t total = 0;
    uint64_t size = 0;
    const uint8_t* data = nullptr;  // into `copy`, or the sender's memory
    std::vector<uint8_t> copy;
  };

  /// Keeps one chunk (numbered next) and returns it; `copy` says whether its
  /// bytes are copied or only pointed to. The frame stays where it is until
  /// acknowledged.
  const frame& append(protocol::object_id transfer, uint64_t offset, uint64_t total, const uint8_t* data,
                      uint64_t size, bool copy);
  /// The server has received the first `received` frames. False for a count
  /// beyond sent(): a broken server.
  bool acknowledge(uint64_t received);
  /// The sender is done with the first `number` frames (written, or left
  /// for the resumption). Only those are dropped when acknowledged: the
  /// server may acknowledge a frame before the sender's write call returns.
  void written(uint64_t number);

  /// Calls `send(frame)` for every frame after the first `received`; false
  /// when those are not all here (acknowledged already, or never sent).
  template <class Send>
  bool replay(uint64_t received, Send&& send) const {
    if (received < acknowledged_ || received > sent_) return false;
    for (const frame& f : frames_)
      if (f.number > received && !send(f)) return false;
    return true;
  }

  uint64_t sent() const { return sent_; }
  uint64_t acknowledged() const { return acknowledged_; }

 private:
  void drop_done();

  std::deque<frame> frames_;
  uint64_t sent_ = 0;
  uint64_t acknowledged_ = 0;
  uint64_t written_ = 0;
};

}  // namespace ferry::client
