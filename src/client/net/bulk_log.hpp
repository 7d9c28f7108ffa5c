// The bulk frames the client has sent that the server has not acknowledged
// yet, kept so that they go out again after a reconnection (docs/protocol.md,
// "Resuming a session").
//
// A frame is a chunk of one transfer, and its bytes are held one of three
// ways (hold):
//  - copied: small transfers, so that the caller may reuse its memory at once;
//  - kept: bytes the client made itself (a packed rectangle), whose buffer the
//    frames share until the last of them is acknowledged;
//  - borrowed: the application's own memory, which a non-blocking write lets
//    it touch again only once the command has completed. The frames point
//    into it, so a large write costs neither a copy nor a round trip. What
//    ends the borrowing is whichever comes first: the server acknowledges the
//    frames (the usual case: it acknowledges a transfer's bytes before
//    anything they enable can complete), or the client learns that a command
//    of the same queue, at or after the write, has completed, or that any
//    later command failed (settle: a write that failed before all its bytes
//    arrived, and the commands that waited for it). Then the frames still
//    unacknowledged are copied, before the application can hear of the
//    completion, so a resumption never reads memory the application has
//    reused or freed.
// Not thread-safe: the connection locks.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "protocol/messages.hpp"

namespace ferry::client {

class bulk_log {
 public:
  /// Transfers up to this many bytes are copied.
  static constexpr uint64_t copy_limit = 64 * 1024;

  enum class hold { copy, keep, borrow };

  struct frame {
    uint64_t number = 0;  // counted from 1 over the session
    protocol::object_id transfer = 0;
    uint64_t offset = 0;
    uint64_t total = 0;
    uint64_t size = 0;
    const uint8_t* data = nullptr;  // into `copy` or `keeper`'s bytes, or the sender's memory
    std::vector<uint8_t> copy;
    std::shared_ptr<const void> keeper;  // hold::keep: the buffer `data` points into
  };

  /// Keeps one chunk (numbered next) and returns it. `keeper` owns the bytes
  /// for hold::keep. hold::borrow with a `queue` (the command's) borrows
  /// until acknowledged or settled, and a transfer settled already is copied
  /// instead; without one the sender itself waits for the acknowledgement.
  /// The frame stays where it is until acknowledged.
  const frame& append(protocol::object_id transfer, uint64_t offset, uint64_t total, const uint8_t* data,
                      uint64_t size, hold how, std::shared_ptr<const void> keeper = {}, protocol::object_id queue = 0);
  /// The server has received the first `received` frames. False for a count
  /// beyond sent(): a broken server.
  bool acknowledge(uint64_t received);
  /// The sender is done with the first `number` frames (written, or left
  /// for the resumption). Only those are dropped when acknowledged: the
  /// server may acknowledge a frame before the sender's write call returns.
  void written(uint64_t number);

  /// No more chunks of `transfer` come to this log: a bulk lane's share of a
  /// striped transfer (bulk_lane.hpp) may end before the transfer does, and
  /// only a whole transfer stops borrowing once acknowledged.
  void end_transfer(protocol::object_id transfer);

  /// Whether any transfer borrows the application's memory now.
  bool borrowing() const { return !borrowed_.empty(); }
  /// The queue of borrowed transfer `transfer`, or 0.
  protocol::object_id borrowed_queue(protocol::object_id transfer) const;
  /// Command `command` of queue `queue` has completed: every borrowed
  /// transfer of that queue from a command up to it copies the bytes of its
  /// unacknowledged frames, and any frame it still appends. Returns the bytes
  /// copied.
  uint64_t settle(protocol::object_id queue, protocol::object_id command);
  /// Command `command` failed: it may have waited (on any queue) for a write
  /// that failed before its bytes arrived, so every borrowed transfer from a
  /// command up to it settles as above.
  uint64_t settle_all(protocol::object_id command);

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
  /// Settles the borrowed transfers that `which(transfer, entry)` picks.
  template <class Which>
  uint64_t settle_where(Which&& which);

  struct borrowed {
    protocol::object_id queue = 0;
    uint64_t last_frame = 0;  // the newest frame appended
    bool whole = false;       // its last chunk is appended
    bool settled = false;     // its command's queue moved past it: copy from now on
  };

  std::deque<frame> frames_;
  std::unordered_map<protocol::object_id, borrowed> borrowed_;
  uint64_t sent_ = 0;
  uint64_t acknowledged_ = 0;
  uint64_t written_ = 0;
};

}  // namespace ferry::client
