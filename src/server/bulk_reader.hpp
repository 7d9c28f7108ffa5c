// The bulk stream's incoming side: bulk_data frames whose chunks are read
// straight from the socket into the transfer's staging (no intermediate copy).
#pragma once

#include <string>

#include "server/transfer_table.hpp"

namespace ferry::server {

class bulk_reader {
 public:
  bulk_reader(int fd, transfer_table& transfers) : fd_(fd), transfers_(transfers) {}

  enum class end { closed, violation };
  /// The bulk reader thread's body. Returns when the connection closes
  /// (`closed`) or sends something malformed (`violation`, `why` says what).
  end run(std::string& why);

  /// Checks one frame header + bulk prefix (exposed for tests). False with a
  /// reason when the frame is not a well-formed bulk_data chunk.
  static bool validate(const uint8_t* head, uint64_t& transfer, uint64_t& offset, uint64_t& chunk,
                       uint64_t& total, std::string& why);

 private:
  int fd_;
  transfer_table& transfers_;
};

}  // namespace ferry::server
