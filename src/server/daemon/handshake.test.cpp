#include "server/daemon/handshake.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "protocol/bulk_head.hpp"
#include "protocol/version.hpp"
#include "server/daemon/server.hpp"
#include "server/testing/test_client.hpp"

namespace ferry::server {
namespace {

namespace p = protocol;
using testing::connection;
using testing::connect_loopback;
using testing::make_hello;

TEST(hello_reader, assembles_a_hello_from_pieces_and_stops_at_its_end) {
  std::vector<uint8_t> bytes;
  p::append_frame(bytes, make_hello(p::stream_kind::control));
  size_t hello_size = bytes.size();
  p::append_frame(bytes, p::ping{1});  // must stay unread
  hello_reader reader;
  std::string why;
  const uint8_t* data = bytes.data();
  for (size_t i = 0; i + 1 < hello_size; ++i) {
    size_t one = 1;
    ASSERT_EQ(reader.feed(data, one, why), hello_reader::state::need_more) << i;
  }
  size_t rest = bytes.size() - (hello_size - 1);
  ASSERT_EQ(reader.feed(data, rest, why), hello_reader::state::done) << why;
  EXPECT_EQ(rest, bytes.size() - hello_size);
  EXPECT_EQ(reader.hello(), make_hello(p::stream_kind::control));
}

TEST(hello_reader, rejects_other_first_frames_and_oversize_hellos) {
  {
    std::vector<uint8_t> bytes;
    p::append_frame(bytes, p::ping{1});
    hello_reader reader;
    std::string why;
    const uint8_t* data = bytes.data();
    size_t size = bytes.size();
    EXPECT_EQ(reader.feed(data, size, why), hello_reader::state::failed);
    EXPECT_NE(why.find("ping"), std::string::npos) << why;
  }
  {
    uint8_t header[8];
    p::store_header(header, {1u << 20, static_cast<uint16_t>(p::message_id::hello), 0});
    hello_reader reader;
    std::string why;
    const uint8_t* data = header;
    size_t size = sizeof header;
    EXPECT_EQ(reader.feed(data, size, why), hello_reader::state::failed);
  }
}

TEST(check_hello, refuses_bad_magic_versions_and_streams) {
  auto h = make_hello(p::stream_kind::control);
  EXPECT_TRUE(check_hello(h).accepted);
  EXPECT_EQ(check_hello(h).version, p::max_version);
  auto bad = h;
  bad.magic = 0x12345678;
  EXPECT_EQ(check_hello(bad).refusal.code, static_cast<int32_t>(refusal::bad_magic));
  bad = h;
  bad.min_version = bad.max_version = p::max_version + 1;
  EXPECT_EQ(check_hello(bad).refusal.code, static_cast<int32_t>(refusal::no_common_version));
  p::hello resuming = h;
  resuming.session[0] = 1;
  EXPECT_TRUE(check_hello(resuming).accepted) << "a control hello naming a session resumes it";
  bad = make_hello(p::stream_kind::bulk);
  EXPECT_EQ(check_hello(bad).refusal.code, static_cast<int32_t>(refusal::unknown_session));
  bad = make_hello(p::stream_kind::peer);
  EXPECT_EQ(check_hello(bad).refusal.code, static_cast<int32_t>(refusal::unknown_session)) << "a peer link names no session";
  p::session_token some{};
  some[0] = 1;
  EXPECT_TRUE(check_hello(make_hello(p::stream_kind::peer, some, some)).accepted);
  bad.stream = static_cast<p::stream_kind>(9);
  EXPECT_EQ(check_hello(bad).refusal.code, static_cast<int32_t>(refusal::unsupported_stream));
}

TEST(check_hello, a_bulk_stream_names_a_lane_number_or_none) {
  p::session_token some{};
  some[0] = 1;
  auto h = make_hello(p::stream_kind::bulk, some, some, p::lane_token(3));
  EXPECT_TRUE(check_hello(h).accepted);
  h.link = p::lane_token(p::max_bulk_lanes - 1);
  EXPECT_TRUE(check_hello(h).accepted);
  h.link = p::lane_token(p::max_bulk_lanes);
  EXPECT_EQ(check_hello(h).refusal.code, static_cast<int32_t>(refusal::no_such_lane));
  h.link = p::lane_token(1);
  h.link[15] = 1;  // not a lane number
  EXPECT_EQ(check_hello(h).refusal.code, static_cast<int32_t>(refusal::no_such_lane));
  // An older client has no lanes; only lane 0, the bulk stream, is its.
  h.link = p::lane_token(1);
  h.max_version = p::bulk_lanes_version - 1;
  EXPECT_EQ(check_hello(h).refusal.code, static_cast<int32_t>(refusal::no_such_lane));
  h.link = p::lane_token(0);
  EXPECT_TRUE(check_hello(h).accepted);
}

TEST(tokens, compare_and_randomness) {
  p::session_token a{}, b{};
  EXPECT_TRUE(tokens_equal(a, b));
  EXPECT_TRUE(is_zero(a));
  ASSERT_TRUE(random_token(a));
  ASSERT_TRUE(random_token(b));
  EXPECT_FALSE(tokens_equal(a, b));
  EXPECT_FALSE(is_zero(a));
}

TEST(bulk_reader, validates_headers_before_reading_a_chunk) {
  auto frame = [](uint16_t id, uint32_t payload, uint64_t transfer, uint64_t offset, uint64_t total) {
    std::vector<uint8_t> head(8);
    p::writer w(head);
    p::encode_value(w, p::bulk_data{transfer, offset, total});
    p::store_header(head.data(), {payload, id, 0});
    return head;
  };
  uint16_t bulk = static_cast<uint16_t>(p::message_id::bulk_data);
  p::bulk_data prefix;
  uint64_t chunk = 0;
  std::string why;
  auto ok = frame(bulk, 24 + 100, 1, 0, 100);
  EXPECT_TRUE(p::load_bulk_head(ok.data(), prefix, chunk, why)) << why;
  EXPECT_EQ(chunk, 100u);
  auto wrong_id = frame(static_cast<uint16_t>(p::message_id::ping), 24, 1, 0, 0);
  EXPECT_FALSE(p::load_bulk_head(wrong_id.data(), prefix, chunk, why));
  auto short_payload = frame(bulk, 10, 1, 0, 0);
  EXPECT_FALSE(p::load_bulk_head(short_payload.data(), prefix, chunk, why));
  auto huge_chunk = frame(bulk, 24 + p::max_bulk_chunk + 1, 1, 0, uint64_t{1} << 30);
  EXPECT_FALSE(p::load_bulk_head(huge_chunk.data(), prefix, chunk, why));
  auto huge_total = frame(bulk, 24, 1, 0, p::max_transfer_size + 1);
  EXPECT_FALSE(p::load_bulk_head(huge_total.data(), prefix, chunk, why));
  auto past_end = frame(bulk, 24 + 10, 1, UINT64_MAX - 4, UINT64_MAX);
  EXPECT_FALSE(p::load_bulk_head(past_end.data(), prefix, chunk, why));
}

// The handshake against a real listener; sessions run on the dry API.
class handshake_test : public ::testing::Test {
 protected:
  void SetUp() override {
    server_config config;
    config.port = 0;
    config.handshake_timeout_s = 0.3;
    config.session_grace_s = 0;  // sessions end with their connection (resumption: server/session/session.test.cpp)
    server_ = std::make_unique<server>(config, session_services{catalog_, native::dry_api(), nullptr, nullptr, {}});
    std::string error;
    ASSERT_TRUE(server_->start(error)) << error;
  }
  void TearDown() override { server_->stop(); }

  connection dial() { return connection(connect_loopback(server_->port())); }

  native::device_catalog catalog_ = native::device_catalog::dry(2);
  std::unique_ptr<server> server_;
};

TEST_F(handshake_test, a_control_hello_opens_a_session_with_a_random_id_and_secret) {
  connection a = dial(), b = dial();
  ASSERT_TRUE(a.send(make_hello(p::stream_kind::control)));
  ASSERT_TRUE(b.send(make_hello(p::stream_kind::control)));
  auto wa = a.expect<p::welcome>();
  auto wb = b.expect<p::welcome>();
  ASSERT_TRUE(wa && wb);
  EXPECT_EQ(wa->version, p::max_version);
  EXPECT_FALSE(is_zero(wa->session));
  EXPECT_FALSE(is_zero(wa->secret));
  EXPECT_NE(wa->session, wb->session);
  EXPECT_NE(wa->secret, wb->secret);
  // The session's state follows: nothing received yet, its grace period, and the bulk
  // connections it takes (--bulk-lanes, default 4).
  auto state = a.expect<p::session_state>();
  ASSERT_TRUE(state);
  EXPECT_EQ(*state, (p::session_state{0, 0, 0, 4}));
  // Commands may follow the hello at once.
  ASSERT_TRUE(a.send(p::ping{3}));
  EXPECT_EQ(a.expect<p::pong>()->request, 3u);
}

TEST_F(handshake_test, commands_sent_right_behind_the_hello_are_not_lost) {
  connection a = dial();
  std::vector<uint8_t> bytes;
  p::append_frame(bytes, make_hello(p::stream_kind::control));
  p::append_frame(bytes, p::ping{11});
  ASSERT_TRUE(a.send_raw(bytes.data(), bytes.size()));
  ASSERT_TRUE(a.expect<p::welcome>());
  ASSERT_TRUE(a.expect<p::session_state>());
  auto pong = a.expect<p::pong>();
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->request, 11u);
}

TEST_F(handshake_test, refusals_carry_a_code_and_reason_then_close) {
  struct refusal_case {
    p::hello hello;
    refusal code;
  };
  auto bad_magic = make_hello(p::stream_kind::control);
  bad_magic.magic = 1;
  auto bad_version = make_hello(p::stream_kind::control);
  bad_version.min_version = bad_version.max_version = 99;
  p::session_token nonzero{};
  nonzero[3] = 7;
  const refusal_case cases[] = {
      {bad_magic, refusal::bad_magic},
      {bad_version, refusal::no_common_version},
      {make_hello(p::stream_kind::peer), refusal::unknown_session},
      {make_hello(p::stream_kind::peer, nonzero, nonzero), refusal::unknown_session},
      {make_hello(p::stream_kind::control, nonzero), refusal::unknown_session},
      {make_hello(p::stream_kind::bulk, nonzero, nonzero), refusal::unknown_session},
  };
  for (const auto& c : cases) {
    connection conn = dial();
    ASSERT_TRUE(conn.send(c.hello));
    auto refused = conn.expect<p::refused>();
    ASSERT_TRUE(refused) << static_cast<int>(c.code);
    EXPECT_EQ(refused->code, static_cast<int32_t>(c.code));
    EXPECT_FALSE(refused->reason.empty());
    EXPECT_TRUE(conn.closed_by_peer());
  }
}

TEST_F(handshake_test, a_bulk_stream_needs_its_sessions_secret_and_attaches_once) {
  connection control = dial();
  ASSERT_TRUE(control.send(make_hello(p::stream_kind::control)));
  auto welcome = control.expect<p::welcome>();
  ASSERT_TRUE(welcome);

  connection wrong = dial();
  p::session_token bad_secret = welcome->secret;
  bad_secret[15] ^= 1;
  ASSERT_TRUE(wrong.send(make_hello(p::stream_kind::bulk, welcome->session, bad_secret)));
  auto refused = wrong.expect<p::refused>();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code, static_cast<int32_t>(refusal::unknown_session));

  connection bulk = dial();
  ASSERT_TRUE(bulk.send(make_hello(p::stream_kind::bulk, welcome->session, welcome->secret)));
  auto attached = bulk.expect<p::welcome>();
  ASSERT_TRUE(attached);
  EXPECT_EQ(attached->session, welcome->session);

  connection second = dial();
  ASSERT_TRUE(second.send(make_hello(p::stream_kind::bulk, welcome->session, welcome->secret)));
  refused = second.expect<p::refused>();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code, static_cast<int32_t>(refusal::bulk_already_attached));

  // Closing the control stream ends the session and its bulk stream.
  control.reset();
  EXPECT_TRUE(bulk.closed_by_peer());
}

TEST_F(handshake_test, a_peer_link_needs_the_sessions_peer_key_and_several_may_attach) {
  connection control = dial();
  ASSERT_TRUE(control.send(make_hello(p::stream_kind::control)));
  auto welcome = control.expect<p::welcome>();
  ASSERT_TRUE(welcome);
  EXPECT_FALSE(is_zero(welcome->peer_key));
  EXPECT_NE(welcome->peer_key, welcome->secret);

  // The client's secret is no peer key, nor is a key with one bit changed.
  p::session_token wrong_key = welcome->peer_key;
  wrong_key[0] ^= 0x80;
  for (const p::session_token& key : {welcome->secret, wrong_key}) {
    connection refused_link = dial();
    ASSERT_TRUE(refused_link.send(make_hello(p::stream_kind::peer, welcome->session, key)));
    auto refused = refused_link.expect<p::refused>();
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->code, static_cast<int32_t>(refusal::unknown_session));
    EXPECT_TRUE(refused_link.closed_by_peer());
  }

  connection first = dial(), second = dial();
  for (connection* link : {&first, &second}) {
    ASSERT_TRUE(link->send(make_hello(p::stream_kind::peer, welcome->session, welcome->peer_key)));
    auto attached = link->expect<p::welcome>();
    ASSERT_TRUE(attached);
    EXPECT_EQ(attached->session, welcome->session);
    EXPECT_TRUE(is_zero(attached->secret)) << "a peer learns no secret";
    EXPECT_TRUE(is_zero(attached->peer_key));
  }
  // A peer key opens no client stream.
  connection bulk = dial();
  ASSERT_TRUE(bulk.send(make_hello(p::stream_kind::bulk, welcome->session, welcome->peer_key)));
  EXPECT_TRUE(bulk.expect<p::refused>());

  // Peer links end with their session.
  control.reset();
  EXPECT_TRUE(first.closed_by_peer());
  EXPECT_TRUE(second.closed_by_peer());
}

TEST_F(handshake_test, connections_without_a_hello_are_closed_after_the_timeout) {
  connection silent = dial();
  connection half = dial();
  std::vector<uint8_t> bytes;
  p::append_frame(bytes, make_hello(p::stream_kind::control));
  ASSERT_TRUE(half.send_raw(bytes.data(), 5));
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(silent.closed_by_peer(5000));
  EXPECT_TRUE(half.closed_by_peer(5000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  // Meanwhile the daemon still serves.
  connection good = dial();
  ASSERT_TRUE(good.send(make_hello(p::stream_kind::control)));
  EXPECT_TRUE(good.expect<p::welcome>());
}

TEST_F(handshake_test, a_first_frame_other_than_hello_closes_the_connection) {
  connection conn = dial();
  ASSERT_TRUE(conn.send(p::ping{1}));
  EXPECT_TRUE(conn.closed_by_peer());
}

TEST_F(handshake_test, sessions_end_when_their_control_stream_closes) {
  {
    connection control = dial();
    ASSERT_TRUE(control.send(make_hello(p::stream_kind::control)));
    ASSERT_TRUE(control.expect<p::welcome>());
    EXPECT_EQ(server_->session_count(), 1u);
  }
  for (int i = 0; i < 200 && server_->session_count() != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(server_->session_count(), 0u);
}

}  // namespace
}  // namespace ferry::server
