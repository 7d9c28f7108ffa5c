// The client's side of the bulk stream going out: buffer contents cut into
// chunks, each kept in the bulk replay log (bulk_log) until the server
// acknowledges it, and large chunks to a daemon on the same machine passed
// through a shared-memory window instead of the socket. Transfers of
// stripe_from bytes or more are striped over the session's bulk lanes
// (bulk_lane.hpp) when it has some: the caller writes chunks to the bulk
// stream while each lane's thread writes others to its lane.
//
// Locks, in the order they nest: send_mutex_ serialises writes to the bulk
// socket and guards window_ and window_decided_ (held while a stripe's lanes
// work); then the log's own (sent_chunks). The resumer takes both (with the
// control channel's), then each lane's, to send the logs again.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "client/net/bulk_lane.hpp"
#include "client/net/bulk_log.hpp"
#include "client/net/sent_chunks.hpp"
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

  /// Transfers of at least this many bytes are striped over the bulk lanes:
  /// smaller ones gain less than a hand-off to the lanes' threads costs.
  static constexpr uint64_t stripe_from = uint64_t{32} << 20;

  explicit bulk_sender(link_state& link);

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
  /// The same for the bulk lanes (lane_ack: `received[i]` is lane i + 1's).
  bool acknowledge_lanes(const std::vector<uint64_t>& received);
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
  /// The last frame a transfer has on each connection (0: none there):
  /// [0] the bulk stream's, [k] lane k's.
  using sent_frames = std::array<uint64_t, protocol::max_bulk_lanes>;
  /// Writes the chunks of one transfer to the bulk stream and its lanes (or
  /// only into the logs while offline).
  sent_frames send_chunks(protocol::object_id transfer, const uint8_t* bytes, uint64_t size, bulk_log::hold how,
                          const std::shared_ptr<const void>& keeper, protocol::object_id queue);
  /// Keeps chunk [offset, offset + chunk) of the transfer in the bulk
  /// stream's log and writes it when `writing` (send_mutex_ held); returns
  /// whether to go on writing, and the frame's number in `last`.
  bool send_logged_chunk(uint64_t generation, protocol::object_id transfer, const uint8_t* bytes, uint64_t offset,
                         uint64_t chunk, uint64_t size, bulk_log::hold how, const std::shared_ptr<const void>& keeper,
                         protocol::object_id queue, bool writing, uint64_t& last);
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
  sent_chunks log_;  // the bulk stream's
  /// Lane k at [k] ([0] empty): all made up front, so that acks and
  /// completions find them without the send mutex; each starts its thread
  /// with its first stripe.
  std::array<std::unique_ptr<bulk_lane>, protocol::max_bulk_lanes> lanes_;
};

}  // namespace ferry::client
