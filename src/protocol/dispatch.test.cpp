// dispatch_frame: which frames reach a handler and the reason given for the
// ones that do not (unknown id, wrong direction, over the table limit, no
// handler, rejected by the handler).
#include "protocol/dispatch.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/messages.hpp"

namespace ferry::protocol {
namespace {

/// Accepts every message and counts them.
struct accept_all {
  int calls = 0;
  template <class M>
  bool on(const M&) {
    ++calls;
    return true;
  }
};

struct frame_bytes {
  std::vector<uint8_t> payload;
  frame_view view(uint16_t id) const { return frame_view{{static_cast<uint32_t>(payload.size()), id, 0}, payload.data()}; }
};

template <class T>
frame_bytes encoded(const T& message) {
  frame_bytes out;
  writer w(out.payload);
  encode_value(w, message);
  return out;
}

TEST(protocol_dispatch, unknown_message_ids_fail_with_unknown_message_id) {
  frame_bytes empty;
  for (uint16_t id : {uint16_t{0}, uint16_t{6}, uint16_t{9}, uint16_t{69}, uint16_t{89}, uint16_t{0xFFFF}}) {
    accept_all handler;
    std::string why;
    EXPECT_FALSE(dispatch_frame(empty.view(id), receiver::server, handler, why));
    EXPECT_EQ(why, "unknown message id " + std::to_string(id));
    EXPECT_FALSE(dispatch_frame(empty.view(id), receiver::client, handler, why));
    EXPECT_EQ(why, "unknown message id " + std::to_string(id));
    EXPECT_EQ(handler.calls, 0);
  }
}

TEST(protocol_dispatch, server_rejects_to_client_messages) {
  accept_all handler;
  std::string why;
  EXPECT_FALSE(dispatch_frame(encoded(welcome{}).view(2), receiver::server, handler, why));
  EXPECT_EQ(why, "message welcome may not be sent in this direction");
  EXPECT_FALSE(dispatch_frame(encoded(completions{}).view(70), receiver::server, handler, why));
  EXPECT_EQ(why, "message completions may not be sent in this direction");
  EXPECT_EQ(handler.calls, 0);
}

TEST(protocol_dispatch, client_rejects_to_server_messages) {
  accept_all handler;
  std::string why;
  EXPECT_FALSE(dispatch_frame(encoded(hello{}).view(1), receiver::client, handler, why));
  EXPECT_EQ(why, "message hello may not be sent in this direction");
  EXPECT_FALSE(dispatch_frame(encoded(enqueue_ndrange{}).view(50), receiver::client, handler, why));
  EXPECT_EQ(why, "message enqueue_ndrange may not be sent in this direction");
  EXPECT_EQ(handler.calls, 0);
}

TEST(protocol_dispatch, every_message_reaches_only_the_receiver_its_direction_names) {
  // A table, then one loop: the checks written out once per message made one
  // function of thousands of assertions (over a minute to compile under ASan).
  struct row {
    const char* name;
    uint16_t id;
    direction dir;
    frame_bytes bytes;
  };
  const std::vector<row> rows = {
#define FERRY_DIRECTION_ROW(num, name, dir, limit) {#name, num, dir, encoded(name{})},
      FERRY_MESSAGES(FERRY_DIRECTION_ROW)
#undef FERRY_DIRECTION_ROW
  };
  for (const row& r : rows) {
    SCOPED_TRACE(r.name);
    for (receiver who : {receiver::server, receiver::client}) {
      bool allowed = r.dir == direction::both ||
                     (who == receiver::server ? r.dir == direction::to_server : r.dir == direction::to_client);
      accept_all handler;
      std::string why;
      EXPECT_EQ(dispatch_frame(r.bytes.view(r.id), who, handler, why), allowed) << why;
      EXPECT_EQ(handler.calls, allowed ? 1 : 0);
      if (!allowed) {
        EXPECT_EQ(why, std::string("message ") + r.name + " may not be sent in this direction");
      }
    }
  }
}

TEST(protocol_dispatch, rejects_a_message_above_its_table_limit_before_decoding) {
  frame_bytes bytes;
  bytes.payload.resize(65);  // ping's limit is 64
  accept_all handler;
  std::string why;
  EXPECT_FALSE(dispatch_frame(bytes.view(10), receiver::server, handler, why));
  EXPECT_EQ(why, "message ping of 65 bytes is over its limit of 64");

  bytes.payload.resize(4097);  // hello's limit is 4096
  EXPECT_FALSE(dispatch_frame(bytes.view(1), receiver::server, handler, why));
  EXPECT_EQ(why, "message hello of 4097 bytes is over its limit of 4096");
  EXPECT_EQ(handler.calls, 0);
}

TEST(protocol_dispatch, a_payload_exactly_at_the_table_limit_passes_the_limit_check) {
  frame_bytes bytes;
  bytes.payload.resize(64);  // ping: 8 bytes of fields, 56 trailing
  accept_all handler;
  std::string why;
  EXPECT_FALSE(dispatch_frame(bytes.view(10), receiver::server, handler, why));
  EXPECT_EQ(why, "malformed ping: trailing bytes after message");
}

TEST(protocol_dispatch, a_message_without_a_handler_is_not_expected_on_this_stream) {
  struct only_ping {
    bool on(const ping&) { return true; }
  } handler;
  std::string why;
  EXPECT_FALSE(dispatch_frame(encoded(goodbye{}).view(16), receiver::server, handler, why));
  EXPECT_EQ(why, "message goodbye is not expected on this stream");
  EXPECT_TRUE(dispatch_frame(encoded(ping{5}).view(10), receiver::server, handler, why)) << why;
}

TEST(protocol_dispatch, a_handler_that_returns_false_makes_dispatch_fail_with_rejected) {
  struct refuse_all {
    bool on(const ping&) { return false; }
  } handler;
  std::string why;
  EXPECT_FALSE(dispatch_frame(encoded(ping{5}).view(10), receiver::server, handler, why));
  EXPECT_EQ(why, "rejected ping");
}

TEST(protocol_dispatch, truncated_payload_fails_as_malformed_with_the_reason) {
  frame_bytes bytes = encoded(ping{5});
  bytes.payload.pop_back();
  accept_all handler;
  std::string why;
  EXPECT_FALSE(dispatch_frame(bytes.view(10), receiver::server, handler, why));
  EXPECT_EQ(why, "malformed ping: field runs past end of frame");
  EXPECT_EQ(handler.calls, 0);
}

TEST(protocol_dispatch, trailing_bytes_fail_as_malformed_with_the_reason) {
  frame_bytes bytes = encoded(ping{5});
  bytes.payload.push_back(0);
  accept_all handler;
  std::string why;
  EXPECT_FALSE(dispatch_frame(bytes.view(10), receiver::server, handler, why));
  EXPECT_EQ(why, "malformed ping: trailing bytes after message");
  EXPECT_EQ(handler.calls, 0);
}

}  // namespace
}  // namespace ferry::protocol
