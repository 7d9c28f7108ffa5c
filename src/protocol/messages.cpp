#include "protocol/messages.hpp"

#include <bit>

#include "protocol/frame.hpp"
#include "protocol/version.hpp"

namespace ferry::protocol {

static_assert(std::endian::native == std::endian::little,
              "the wire format is little endian and the codec copies scalars as they are");

std::string session_label(const session_token& id) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < 4; ++i) {
    out += digits[id[i] >> 4];
    out += digits[id[i] & 15];
  }
  return out;
}

session_token lane_token(uint32_t lane) {
  session_token token{};
  for (size_t i = 0; i < 4; ++i) token[i] = static_cast<uint8_t>(lane >> (8 * i));
  return token;
}

bool lane_of(const session_token& link, uint32_t& lane) {
  for (size_t i = 4; i < link.size(); ++i)
    if (link[i] != 0) return false;
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value |= static_cast<uint32_t>(link[i]) << (8 * i);
  if (value >= max_bulk_lanes) return false;
  lane = value;
  return true;
}

const char* message_name(uint16_t id) {
  switch (id) {
#define FERRY_NAME(num, name, dir, limit) \
  case num: return #name;
    FERRY_MESSAGES(FERRY_NAME)
#undef FERRY_NAME
  }
  return nullptr;
}

uint32_t message_limit(uint16_t id) {
  switch (id) {
#define FERRY_LIMIT(num, name, dir, limit) \
  case num: return static_cast<uint32_t>(limit);
    FERRY_MESSAGES(FERRY_LIMIT)
#undef FERRY_LIMIT
  }
  return 0;
}

static bool has_direction(uint16_t id, direction wanted) {
  switch (id) {
#define FERRY_DIR(num, name, dir, limit) \
  case num: return dir == wanted || dir == direction::both;
    FERRY_MESSAGES(FERRY_DIR)
#undef FERRY_DIR
  }
  return false;
}

hello make_hello(stream_kind stream, const session_token& session, const session_token& secret,
                 std::string client_name, const session_token& link) {
  hello h;
  h.magic = magic;
  h.min_version = min_version;
  h.max_version = max_version;
  h.stream = stream;
  h.session = session;
  h.secret = secret;
  h.client_name = std::move(client_name);
  h.link = link;
  return h;
}

bool message_to_server(uint16_t id) { return has_direction(id, direction::to_server); }
bool message_to_client(uint16_t id) { return has_direction(id, direction::to_client); }

}  // namespace ferry::protocol
