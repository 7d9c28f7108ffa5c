// The bulk stream's incoming side: bulk_data frames whose chunks are read
// straight from the socket into the transfer's staging (no intermediate copy).
// Incoming peer links carry the same frames among others and hand each
// bulk_data frame to receive_chunk.
//
// A client on the same host (a plain Unix socket) may instead share a window
// (common/bulk_window.hpp): window_offer hands it over once, and each
// window_chunk names a slot whose bytes are copied into the staging. A peer
// link from a daemon on the same host does the same, and its reader hands
// those messages to receive_window_message. From version 8 a client may also
// share a second window for reads (read_window_offer), which this reader
// checks and hands to the stream's bulk writer.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "common/bulk_window.hpp"
#include "common/stream.hpp"
#include "protocol/frame.hpp"
#include "server/daemon/link_stats.hpp"
#include "server/transport/read_window_handoff.hpp"
#include "server/transport/transfer_table.hpp"

namespace ferry::server {

class control_outbox;

class bulk_reader {
 public:
  /// `received` (may be null) counts whole frames for a resumed session;
  /// `acks` (may be null) is asked for an ack once a transfer is complete,
  /// so that a client waiting to reuse its memory hears at once.
  bulk_reader(stream* fd, transfer_table& transfers, link_counter* counter = nullptr,
              std::atomic<uint64_t>* received = nullptr, control_outbox* acks = nullptr)
      : fd_(fd), transfers_(transfers), counter_(counter), received_(received), acks_(acks) {}

  /// Whether a client may share a window on this stream: only over a plain
  /// Unix socket, where descriptors can pass and both ends share a host.
  enum class windows { refused, accepted };
  /// `session` names the session in the log line that says a window came.
  /// `sharer` says who shares one there ("the client", "a peer").
  void set_windows(windows allowed, std::string session, const char* sharer = "the client") {
    windows_ = allowed;
    session_ = std::move(session);
    sharer_ = sharer;
  }
  /// Asks for an ack after every chunk, not only after a transfer's last
  /// one: a bulk lane carries some chunks of a transfer, and the client
  /// waits to hear of each (docs/protocol.md, "Bulk lanes").
  void ack_each_chunk() { ack_each_chunk_ = true; }
  /// Accepted when `fd` is a plain (not TLS) Unix socket.
  static windows windows_for(const stream& fd);
  /// Where a read window the client offers goes (the stream's bulk
  /// writer). Without one, or with windows refused, read_window_offer is a
  /// protocol violation.
  void set_read_windows(std::shared_ptr<read_window_handoff> to) { read_windows_ = std::move(to); }

  enum class end { closed, violation };
  /// The bulk reader thread's body. Returns when the connection closes
  /// (`closed`) or sends something malformed (`violation`, `why` says what).
  end run(std::string& why);

  /// Size of what precedes a chunk's bytes: frame header and bulk prefix
  /// (protocol::bulk_head_size).
  static constexpr size_t head_size = 8 + 24;
  /// Takes one bulk_data frame whose header and prefix (`head`, head_size
  /// bytes) were read: checks them (protocol::load_bulk_head), reads the
  /// chunk into its transfer's staging and counts the frame. False with
  /// `end` and a reason otherwise.
  bool receive_chunk(const uint8_t* head, end& how, std::string& why);

  /// Whether `h` is a window message (window_offer or window_chunk, flags 0).
  static bool is_window_message(const protocol::frame_header& h);
  /// Takes one window message whose header `h` was read: adopts the offered
  /// window, or copies a named slot into its transfer and counts the frame
  /// (window_offer is not counted: it belongs to one connection). False
  /// with `end` and a reason otherwise.
  bool receive_window_message(const protocol::frame_header& h, end& how, std::string& why);

 private:
  /// window_offer and window_chunk, whose header `h` was read.
  bool receive_offer(const protocol::frame_header& h, end& how, std::string& why);
  bool receive_read_window_offer(const protocol::frame_header& h, end& how, std::string& why);
  /// Reads an offer's payload and its memfd, and maps the window it shares
  /// (`what` names the message in reasons); null with `how` and `why` otherwise.
  std::unique_ptr<bulk_window> adopt_offered_window(const protocol::frame_header& h, const char* what, end& how,
                                                    std::string& why);
  bool receive_window_chunk(const protocol::frame_header& h, end& how, std::string& why);
  /// Reads a window message's payload (within its limit and
  /// window_payload_limit, the buffer's size), and the descriptor that came
  /// with it when `memory` is given.
  bool read_window_payload(const protocol::frame_header& h, uint8_t* payload, unique_fd* memory, end& how,
                           std::string& why);
  static constexpr size_t window_payload_limit = 64;
  /// A chunk's bytes are in place: counts its frame (`frame_bytes`), ends it
  /// in the table and asks for an ack after a transfer's last chunk.
  void chunk_landed(uint64_t transfer, uint64_t offset, uint64_t chunk, uint64_t total, uint64_t frame_bytes);

  stream* fd_;
  transfer_table& transfers_;
  link_counter* counter_;
  std::atomic<uint64_t>* received_;
  control_outbox* acks_;
  windows windows_ = windows::refused;
  std::string session_;
  const char* sharer_ = "the client";
  std::unique_ptr<bulk_window> window_;
  std::shared_ptr<read_window_handoff> read_windows_;
  bool read_window_offered_ = false;
  bool ack_each_chunk_ = false;
};

}  // namespace ferry::server
