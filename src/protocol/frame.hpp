// Frames: an 8-byte header followed by the payload.
//
//   offset size field
//   0      4    payload_size  (u32, bytes after the header)
//   4      2    message_id    (u16, from messages.hpp)
//   6      2    flags         (u16, reserved, must be 0 in version 1)
//
// `frame_assembler` turns a byte stream that arrives in arbitrary pieces into
// whole frames, rejecting oversize headers before buffering their payload.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ferry::protocol {

struct frame_header {
  uint32_t payload_size = 0;
  uint16_t message_id = 0;
  uint16_t flags = 0;
};
inline constexpr size_t frame_header_size = 8;

inline void store_header(uint8_t* out, const frame_header& h) {
  std::memcpy(out, &h.payload_size, 4);
  std::memcpy(out + 4, &h.message_id, 2);
  std::memcpy(out + 6, &h.flags, 2);
}
inline frame_header load_header(const uint8_t* in) {
  frame_header h;
  std::memcpy(&h.payload_size, in, 4);
  std::memcpy(&h.message_id, in + 4, 2);
  std::memcpy(&h.flags, in + 6, 2);
  return h;
}

/// A complete frame; `payload` points into the assembler's buffer and stays
/// valid until the next call of any assembler method (next() may move data).
struct frame_view {
  frame_header header;
  const uint8_t* payload = nullptr;
};

class frame_assembler {
 public:
  explicit frame_assembler(uint32_t max_payload, size_t initial_capacity = 256 * 1024)
      : max_payload_(max_payload) {
    buffer_.resize(initial_capacity);
  }

  /// Space to receive at least `min_free` more bytes into; call `commit` after.
  uint8_t* write_area(size_t min_free, size_t& available);
  void commit(size_t count) { end_ += count; }
  /// Convenience for tests and fuzzers: copies bytes in.
  void feed(const uint8_t* data, size_t size);

  enum class result { frame, need_more, error };
  /// Extracts the next whole frame. On `error`, `why` says what was wrong and
  /// the stream must be abandoned.
  result next(frame_view& out, std::string& why);

  /// Bytes buffered that do not yet form a frame.
  size_t pending() const { return end_ - begin_; }
  /// Takes up to `size` already-buffered bytes (after a frame header that the
  /// caller consumes itself, e.g. bulk payloads read straight into place).
  size_t take(uint8_t* out, size_t size);

 private:
  uint32_t max_payload_;
  std::vector<uint8_t> buffer_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace ferry::protocol
