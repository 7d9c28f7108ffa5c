// Encoding a message into a frame, and decoding a frame into the right
// message struct, both generated from the message table.
#pragma once

#include <string>
#include <vector>

#include "protocol/codec.hpp"
#include "protocol/frame.hpp"
#include "protocol/messages.hpp"

namespace ferry::protocol {

/// Appends header + payload of `message` to `out` (no allocation once `out`
/// has grown to its working size).
template <class T>
void append_frame(std::vector<uint8_t>& out, const T& message) {
  size_t start = out.size();
  out.resize(start + frame_header_size);
  writer w(out);
  encode_value(w, message);
  frame_header h;
  h.payload_size = static_cast<uint32_t>(out.size() - start - frame_header_size);
  h.message_id = static_cast<uint16_t>(message_traits<T>::id);
  store_header(out.data() + start, h);
}

/// What the receiver of a frame is.
enum class receiver { server, client };

/// Decodes `frame` into its struct and calls `handler.on(message)`. Fails with
/// a reason (for the log) when the id is unknown, travels the wrong way, is
/// over its limit, does not decode exactly, or the handler has no `on` for it.
template <class Handler>
bool dispatch_frame(const frame_view& frame, receiver who, Handler& handler, std::string& why) {
  uint16_t id = frame.header.message_id;
  const char* name = message_name(id);
  if (name == nullptr) {
    why = "unknown message id " + std::to_string(id);
    return false;
  }
  if (who == receiver::server ? !message_to_server(id) : !message_to_client(id)) {
    why = std::string("message ") + name + " may not be sent in this direction";
    return false;
  }
  if (frame.header.payload_size > message_limit(id)) {
    why = std::string("message ") + name + " of " + std::to_string(frame.header.payload_size) +
          " bytes is over its limit of " + std::to_string(message_limit(id));
    return false;
  }
  switch (static_cast<message_id>(id)) {
#define FERRY_CASE(num, type, dir, limit)                                                   \
  case message_id::type: {                                                                  \
    if constexpr (requires(type m) { handler.on(m); }) {                                    \
      type message;                                                                         \
      const char* error = "";                                                               \
      if (!decode_payload(frame.payload, frame.header.payload_size, message, error)) {      \
        why = std::string("malformed ") + #type + ": " + error;                             \
        return false;                                                                       \
      }                                                                                     \
      return handler.on(message) || (why = std::string("rejected ") + #type, false);       \
    } else {                                                                                \
      why = std::string("message ") + #type + " is not expected on this stream";            \
      return false;                                                                         \
    }                                                                                       \
  }
    FERRY_MESSAGES(FERRY_CASE)
#undef FERRY_CASE
  }
  why = "unhandled message id " + std::to_string(id);
  return false;
}

}  // namespace ferry::protocol
