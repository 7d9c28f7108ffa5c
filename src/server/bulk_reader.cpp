#include "server/bulk_reader.hpp"

#include "common/socket.hpp"
#include "protocol/codec.hpp"
#include "protocol/frame.hpp"
#include "protocol/messages.hpp"
#include "server/completion_writer.hpp"

namespace ferry::server {

namespace p = protocol;

bool bulk_reader::validate_header(const uint8_t* header, std::string& why) {
  p::frame_header h = p::load_header(header);
  if (h.message_id != static_cast<uint16_t>(p::message_id::bulk_data)) {
    const char* name = p::message_name(h.message_id);
    why = std::string("message ") + (name ? name : std::to_string(h.message_id).c_str()) +
          " is not expected on the bulk stream";
    return false;
  }
  if (h.flags != 0) {
    why = "frame flags " + std::to_string(h.flags) + " are reserved in protocol version 1";
    return false;
  }
  if (h.payload_size < p::bulk_prefix_size) {
    why = "bulk_data payload of " + std::to_string(h.payload_size) + " bytes is shorter than its prefix";
    return false;
  }
  uint64_t chunk = h.payload_size - p::bulk_prefix_size;
  if (chunk > p::max_bulk_chunk) {
    why = "bulk chunk of " + std::to_string(chunk) + " bytes exceeds the limit of " + std::to_string(p::max_bulk_chunk);
    return false;
  }
  return true;
}

bool bulk_reader::validate(const uint8_t* head, uint64_t& transfer, uint64_t& offset, uint64_t& chunk,
                           uint64_t& total, std::string& why) {
  if (!validate_header(head, why)) return false;
  chunk = p::load_header(head).payload_size - p::bulk_prefix_size;
  p::bulk_data prefix;
  const char* error = "";
  if (!p::decode_payload(head + p::frame_header_size, p::bulk_prefix_size, prefix, error)) {
    why = std::string("malformed bulk prefix: ") + error;
    return false;
  }
  transfer = prefix.transfer;
  offset = prefix.offset;
  total = prefix.total;
  if (total > p::max_transfer_size) {
    why = "transfer of " + std::to_string(total) + " bytes exceeds the limit of " +
          std::to_string(p::max_transfer_size);
    return false;
  }
  if (offset > total || chunk > total - offset) {
    why = "chunk at " + std::to_string(offset) + " of " + std::to_string(chunk) + " bytes runs past the transfer's " +
          std::to_string(total) + " bytes";
    return false;
  }
  return true;
}

bool bulk_reader::receive_chunk(const uint8_t* head, end& how, std::string& why) {
  uint64_t transfer, offset, chunk, total;
  how = end::violation;
  if (!validate(head, transfer, offset, chunk, total, why)) return false;
  uint8_t* destination = nullptr;
  if (!transfers_.begin_chunk(transfer, offset, chunk, total, destination, why)) return false;
  if (chunk && !read_exact(fd_, destination, chunk)) {
    transfers_.abandon_chunk(transfer, chunk);
    why = "connection closed inside a chunk";
    how = end::closed;
    return false;
  }
  count_in(counter_, 1, head_size + chunk);
  transfers_.end_chunk(transfer, chunk);
  if (received_) received_->fetch_add(1, std::memory_order_acq_rel);
  if (acks_ && offset + chunk == total) acks_->request_ack();
  return true;
}

bulk_reader::end bulk_reader::run(std::string& why) {
  static_assert(head_size == p::frame_header_size + p::bulk_prefix_size);
  uint8_t head[head_size];
  for (;;) {
    if (!read_exact(fd_, head, p::frame_header_size)) {
      why = "bulk connection closed";
      return end::closed;
    }
    // The header alone tells a frame that can be no chunk (another message, a
    // payload too short for the prefix or too long for a chunk): refused now,
    // not after waiting for prefix bytes that need not come, or taking the
    // next frame's bytes for them.
    if (!validate_header(head, why)) return end::violation;
    if (!read_exact(fd_, head + p::frame_header_size, p::bulk_prefix_size)) {
      why = "bulk connection closed inside a chunk's prefix";
      return end::closed;
    }
    end how;
    if (!receive_chunk(head, how, why)) {
      if (how == end::closed) why = "bulk " + why;
      return how;
    }
  }
}

}  // namespace ferry::server
