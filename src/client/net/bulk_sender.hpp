// The client's side of the bulk stream going out: buffer contents cut into
// chunks, each kept in the bulk replay log (bulk_log) until the server
// acknowledges it, and large chunks to a daemon on the same machine passed
// through a shared-memory window instead of the socket.
//
// Locks, in the order they nest: send_mutex_ serialises writes to the bulk
// socket and guards window_ and window_decided_; log_mutex_ guards log_. The
// resumer takes both (with the control channel's) to send the log again.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "client/net/bulk_log.hpp"
#include "client/net/link_state.hpp"
#include "common/bulk_window.hpp"

namespace ferry::client {

/// How long the bytes handed to send_data stay as they are.
enum class bytes_lifetime {
  /// The caller may reuse them once send_data returns (a blocking write,
  /// a buffer's initial contents): a small transfer is copied into the
  /// replay log, a large one waits until the server acknowledges it.
  until_return,
  /// Untouched until the command completes (a non-blocking write): the
  /// replay log only points to them, and send_data returns once they are
  /// written, with no round trip (bulk_log, "borrowed").
  until_completion,
};

/// Writes one bulk frame (head and bytes) to `to`; false when it broke.
bool write_bulk_frame(stream* to, protocol::object_id transfer, uint64_t offset, uint64_t total, const uint8_t* data,
                      uint64_t size);

class bulk_sender {
 public:
  /// Slots of a window, each max_bulk_chunk bytes: enough that the copy into
  /// one overlaps the daemon's copy out of another (FERRY_WINDOW_SLOTS).
  static constexpr uint32_t default_window_slots = 4;

  explicit bulk_sender(link_state& link) : link_(link) {}

  /// Sends `size` bytes as bulk transfer `transfer` of a command of queue
  /// `queue` (until_completion needs it). False when the session ended
  /// first.
  bool send_data(protocol::object_id transfer, const void* data, uint64_t size, bytes_lifetime lifetime,
                 protocol::object_id queue);
  /// Sends bytes the client made for the transfer (a packed rectangle): the
  /// replay log keeps them until acknowledged, so nobody waits.
  bool send_data(protocol::object_id transfer, std::vector<uint8_t> bytes);

  /// The server has `received` bulk frames: drops them from the log; false
  /// for a claim beyond what was sent.
  bool acknowledge(uint64_t received);
  /// Command `command` of `queue` completed with `status`: no frame may
  /// point into the memory of the writes it lets the application reuse any
  /// more (bulk_log::settle, settle_all for a failure).
  void settle_borrowed(protocol::object_id queue, protocol::object_id command, cl_int status);
  /// Wakes the writers that wait for an acknowledgement (the session ended).
  void wake_waiters();

  /// Offers the server a window for the bytes of large reads on the bulk
  /// stream of `generation` (read_window_offer: version 8, a plain Unix
  /// socket, FERRY_BULK_WINDOW not 0). The caller (the bulk receiver of that
  /// stream) owns it and releases its slots. Null when none is offered.
  std::unique_ptr<bulk_window> offer_read_window(uint64_t generation);

 private:
  // The resumer holds both mutexes while it resumes or starts a new session,
  // and checks the server's count against log_ then.
  friend class resumer;
  /// Sends the frames after `received` again on `to`: the server has the
  /// first `received`.
  bool replay_locked(uint64_t received, stream* to) const;
  /// Forgets everything of a session that ended.
  void reset_locked();

  /// Writes the chunks of one transfer to the bulk stream (or only into the
  /// log while offline); returns the number of the last frame.
  uint64_t send_chunks(protocol::object_id transfer, const uint8_t* bytes, uint64_t size, bulk_log::hold how,
                       const std::shared_ptr<const void>& keeper, protocol::object_id queue);
  /// Sends one chunk on the current bulk stream: through the shared-memory
  /// window when there is one for it, else on the socket. False when the
  /// stream broke (or was replaced: `generation` is stale).
  bool send_chunk(uint64_t generation, protocol::object_id transfer, uint64_t offset, uint64_t total,
                  const uint8_t* data, uint64_t size);
  /// The window a chunk of `chunk` bytes goes through, offering one on a new
  /// bulk stream that can take it (version 5, a plain Unix socket); null:
  /// send it on the socket. Called with send_mutex_ held.
  bulk_window* window_for_chunk(uint64_t chunk);
  /// The bulk stream was replaced: its window goes with it (send_mutex_ held).
  void forget_window();
  /// Whether the session that a send_data began in is over for it.
  bool over(uint64_t epoch) const;

  /// Whether the current bulk stream could take a window (the protocol
  /// version `least` or later, a plain Unix socket, windows not turned off).
  bool windows_possible(uint16_t least) const;

  link_state& link_;
  std::mutex send_mutex_;  // serialises writes to the bulk socket; guards window_, window_decided_
  std::unique_ptr<bulk_window> window_;  // the current bulk stream's, if it has one
  bool window_decided_ = false;          // whether the current bulk stream was offered one
  std::mutex log_mutex_;                 // guards log_; acked_cv_ waits with it
  std::condition_variable acked_cv_;
  bulk_log log_;
  std::atomic<bool> borrowing_{false};  // log_.borrowing(), read without the lock on each completion
};

}  // namespace ferry::client
