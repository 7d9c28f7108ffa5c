#include "protocol/frame.hpp"

#include <algorithm>

#include "protocol/messages.hpp"

namespace ferry::protocol {

uint8_t* frame_assembler::write_area(size_t min_free, size_t& available) {
  if (begin_ == end_) begin_ = end_ = 0;
  if (buffer_.size() - end_ < min_free) {
    // Move the partial frame to the front before growing.
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    if (buffer_.size() - end_ < min_free) buffer_.resize(end_ + min_free);
  }
  available = buffer_.size() - end_;
  return buffer_.data() + end_;
}

void frame_assembler::feed(const uint8_t* data, size_t size) {
  size_t available;
  uint8_t* area = write_area(size, available);
  std::memcpy(area, data, size);
  commit(size);
}

frame_assembler::result frame_assembler::next(frame_view& out, std::string& why) {
  if (end_ - begin_ < frame_header_size) return result::need_more;
  frame_header h = load_header(buffer_.data() + begin_);
  // Check the announced size before waiting for (or allocating room for) it.
  if (h.payload_size > max_payload_) {
    why = "frame payload of " + std::to_string(h.payload_size) + " bytes exceeds the limit of " +
          std::to_string(max_payload_);
    return result::error;
  }
  // A message's own limit is known from its id: refuse before buffering it.
  if (message_name(h.message_id) == nullptr) {
    why = "unknown message id " + std::to_string(h.message_id);
    return result::error;
  }
  if (h.payload_size > message_limit(h.message_id)) {
    why = "frame of message id " + std::to_string(h.message_id) + " announces " + std::to_string(h.payload_size) +
          " bytes, over its limit of " + std::to_string(message_limit(h.message_id));
    return result::error;
  }
  if (h.flags != 0) {
    why = "frame flags " + std::to_string(h.flags) + " are reserved in protocol version 1";
    return result::error;
  }
  size_t whole = frame_header_size + h.payload_size;
  if (end_ - begin_ < whole) {
    if (buffer_.size() - begin_ < whole) {
      // Make room for the rest of this frame now that its size is known valid.
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
      if (buffer_.size() < whole) buffer_.resize(whole);
    }
    return result::need_more;
  }
  out.header = h;
  out.payload = buffer_.data() + begin_ + frame_header_size;
  begin_ += whole;
  return result::frame;
}

size_t frame_assembler::take(uint8_t* out, size_t size) {
  size_t n = std::min(size, end_ - begin_);
  std::memcpy(out, buffer_.data() + begin_, n);
  begin_ += n;
  return n;
}

}  // namespace ferry::protocol
