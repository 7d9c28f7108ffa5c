// The bulk stream's incoming side: bulk_data frames whose chunks are read
// straight from the socket into the transfer's staging (no intermediate copy).
// Incoming peer links carry the same frames among others and hand each
// bulk_data frame to receive_chunk.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "common/stream.hpp"
#include "server/link_stats.hpp"
#include "server/transfer_table.hpp"

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

  enum class end { closed, violation };
  /// The bulk reader thread's body. Returns when the connection closes
  /// (`closed`) or sends something malformed (`violation`, `why` says what).
  end run(std::string& why);

  /// Size of what precedes a chunk's bytes: frame header and bulk prefix.
  static constexpr size_t head_size = 8 + 24;
  /// Takes one bulk_data frame whose header and prefix (`head`, head_size
  /// bytes) were read: validates them, reads the chunk into its transfer's
  /// staging and counts the frame. False with `end` and a reason otherwise.
  bool receive_chunk(const uint8_t* head, end& how, std::string& why);

  /// Checks a frame header alone: a bulk_data id, no flags, a payload that
  /// holds the prefix and at most max_bulk_chunk bytes. False with a reason.
  static bool validate_header(const uint8_t* header, std::string& why);
  /// Checks one frame header + bulk prefix (exposed for tests). False with a
  /// reason when the frame is not a well-formed bulk_data chunk.
  static bool validate(const uint8_t* head, uint64_t& transfer, uint64_t& offset, uint64_t& chunk,
                       uint64_t& total, std::string& why);

 private:
  stream* fd_;
  transfer_table& transfers_;
  link_counter* counter_;
  std::atomic<uint64_t>* received_;
  control_outbox* acks_;
};

}  // namespace ferry::server
