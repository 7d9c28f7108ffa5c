#include "protocol/bulk_head.hpp"

#include <cstring>
#include <vector>

#include "protocol/codec.hpp"

namespace ferry::protocol {

void store_bulk_head(uint8_t* out, const bulk_data& prefix, uint64_t chunk) {
  frame_header h;
  h.payload_size = static_cast<uint32_t>(bulk_prefix_size + chunk);
  h.message_id = static_cast<uint16_t>(message_id::bulk_data);
  store_header(out, h);
  // A small fixed-size encoding: the vector's storage stays within its
  // small reserve, and the layout is the codec's, not a second copy of it.
  std::vector<uint8_t> encoded;
  encoded.reserve(bulk_prefix_size);
  writer w(encoded);
  encode_value(w, prefix);
  std::memcpy(out + frame_header_size, encoded.data(), bulk_prefix_size);
}

bool check_bulk_header(const frame_header& h, std::string& why) {
  if (h.message_id != static_cast<uint16_t>(message_id::bulk_data)) {
    const char* name = message_name(h.message_id);
    why = std::string("message ") + (name ? name : std::to_string(h.message_id).c_str()) +
          " is not expected on the bulk stream";
    return false;
  }
  if (h.flags != 0) {
    why = "frame flags " + std::to_string(h.flags) + " are reserved in protocol version 1";
    return false;
  }
  if (h.payload_size < bulk_prefix_size) {
    why = "bulk_data payload of " + std::to_string(h.payload_size) + " bytes is shorter than its prefix";
    return false;
  }
  const uint64_t chunk = h.payload_size - bulk_prefix_size;
  if (chunk > max_bulk_chunk) {
    why = "bulk chunk of " + std::to_string(chunk) + " bytes exceeds the limit of " + std::to_string(max_bulk_chunk);
    return false;
  }
  return true;
}

bool check_chunk_place(uint64_t offset, uint64_t chunk, uint64_t total, std::string& why) {
  if (total > max_transfer_size) {
    why = "transfer of " + std::to_string(total) + " bytes exceeds the limit of " + std::to_string(max_transfer_size);
    return false;
  }
  if (!chunk_within(offset, chunk, total)) {
    why = "chunk at " + std::to_string(offset) + " of " + std::to_string(chunk) + " bytes runs past the transfer's " +
          std::to_string(total) + " bytes";
    return false;
  }
  return true;
}

bool load_bulk_head(const uint8_t* head, bulk_data& prefix, uint64_t& chunk, std::string& why) {
  const frame_header h = load_header(head);
  if (!check_bulk_header(h, why)) return false;
  chunk = h.payload_size - bulk_prefix_size;
  const char* error = "";
  if (!decode_payload(head + frame_header_size, bulk_prefix_size, prefix, error)) {
    why = std::string("malformed bulk prefix: ") + error;
    return false;
  }
  return check_chunk_place(prefix.offset, chunk, prefix.total, why);
}

}  // namespace ferry::protocol
