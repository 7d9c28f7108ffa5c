// Who gets in: token challenge-response and TLS, against a real listener
// (sessions on the dry API), with the client side libferry and peer links use.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/test_certificates.hpp"
#include "protocol/auth.hpp"
#include "protocol/codec.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/outgoing.hpp"
#include "server/daemon/handshake.hpp"
#include "server/daemon/server.hpp"
#include "server/testing/test_client.hpp"

namespace ferry::server {
namespace {

namespace p = protocol;

constexpr const char* good_token = "0123456789abcdef-the-right-token";

/// A temporary directory removed at the end of the test.
struct scratch_dir {
  scratch_dir() {
    char pattern[] = "/tmp/ferry-admission-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~scratch_dir() { std::filesystem::remove_all(path); }
  std::string path;
};

class admission_test : public ::testing::Test {
 protected:
  void start(admission rules) {
    server_config config;
    config.port = 0;
    config.handshake_timeout_s = 1;  // room for TLS handshakes under sanitizers on busy machines
    config.session_grace_s = 0;
    config.rules = std::move(rules);
    server_ = std::make_unique<server>(config, session_services{catalog_, native::dry_api(), nullptr, nullptr, {}});
    std::string error;
    ASSERT_TRUE(server_->start(error)) << error;
  }
  void TearDown() override {
    kept_.clear();
    if (server_) server_->stop();
  }
  endpoint where() const { return {endpoint::kind::tcp, "127.0.0.1", server_->port()}; }

  /// Opens a control stream as `who` and returns the frame answering its
  /// hello; false with the client's reason. The stream stays open in `kept`
  /// (a session ends with its connection).
  bool say_hello(const p::credentials& who, p::frame_header& header, std::vector<uint8_t>& payload,
                 std::string& error) {
    stream_ptr s = p::open_stream(where(), who, 2000, error);
    if (!s) return false;
    kept_.push_back(s);
    return p::exchange_hello(*s, testing::make_hello(p::stream_kind::control), who, 2000, header, payload, error);
  }
  std::vector<stream_ptr> kept_;

  /// The refusal code in an answer, or 0 when it is a welcome.
  static int32_t refusal_code(const p::frame_header& header, const std::vector<uint8_t>& payload) {
    if (header.message_id == static_cast<uint16_t>(p::message_id::welcome)) return 0;
    EXPECT_EQ(header.message_id, static_cast<uint16_t>(p::message_id::refused));
    p::refused r;
    const char* why = "";
    EXPECT_TRUE(p::decode_payload(payload.data(), payload.size(), r, why)) << why;
    return r.code;
  }

  native::device_catalog catalog_ = native::device_catalog::dry(2);
  std::unique_ptr<server> server_;
};

TEST_F(admission_test, only_a_client_that_proves_the_token_gets_a_session) {
  start({good_token, nullptr});
  p::frame_header header;
  std::vector<uint8_t> payload;
  std::string error;
  ASSERT_TRUE(say_hello({good_token, nullptr}, header, payload, error)) << error;
  EXPECT_EQ(refusal_code(header, payload), 0) << "the right token opens a session";

  ASSERT_TRUE(say_hello({"0123456789abcdef-a-wrong-token!!", nullptr}, header, payload, error)) << error;
  EXPECT_EQ(refusal_code(header, payload), static_cast<int32_t>(refusal::not_authenticated));

  EXPECT_FALSE(say_hello({}, header, payload, error));
  EXPECT_NE(error.find("requires a token"), std::string::npos) << error;
  EXPECT_EQ(server_->session_count(), 1u) << "refused clients leave no session behind";
}

TEST_F(admission_test, the_daemon_proves_the_token_too_and_a_replayed_proof_is_refused) {
  // A hand-made client answers the challenge the way the protocol says.
  start({good_token, nullptr});
  testing::connection c(testing::connect_loopback(server_->port()));
  ASSERT_TRUE(c.send(testing::make_hello(p::stream_kind::control)));
  auto challenge = c.expect<p::challenge>();
  ASSERT_TRUE(challenge);
  p::proof mine;
  ASSERT_TRUE(p::random_nonce(mine.client_nonce));
  mine.proof_mac = p::auth_mac(good_token, p::auth_role::client, challenge->server_nonce, mine.client_nonce, {});
  ASSERT_TRUE(c.send(mine));
  auto theirs = c.expect<p::proof>();
  ASSERT_TRUE(theirs);
  EXPECT_EQ(theirs->proof_mac,
            p::auth_mac(good_token, p::auth_role::server, challenge->server_nonce, mine.client_nonce, {}));
  EXPECT_TRUE(c.expect<p::welcome>());
  // A replayed proof is worthless: the next challenge has another nonce.
  testing::connection again(testing::connect_loopback(server_->port()));
  ASSERT_TRUE(again.send(testing::make_hello(p::stream_kind::control)));
  auto second = again.expect<p::challenge>();
  ASSERT_TRUE(second);
  EXPECT_NE(second->server_nonce, challenge->server_nonce);
  ASSERT_TRUE(again.send(mine));
  auto refused = again.expect<p::refused>();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code, static_cast<int32_t>(refusal::not_authenticated));
}

TEST_F(admission_test, a_daemon_that_cannot_prove_the_token_is_not_trusted) {
  // A fake daemon on a socket pair: challenges, then answers with a proof
  // made with another token.
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  unique_fd fake(pair[1]);
  stream client(unique_fd{pair[0]});
  std::thread daemon([&] {
    p::frame_header h;
    std::vector<uint8_t> payload;
    stream s(std::move(fake));
    std::string error;
    if (!p::read_frame(s, h, payload, 4096, error)) return;
    std::vector<uint8_t> out;
    p::challenge c;
    c.server_nonce.fill(7);
    p::append_frame(out, c);
    s.write_all(out.data(), out.size());
    if (!p::read_frame(s, h, payload, 4096, error)) return;
    p::proof client_proof;
    const char* why = "";
    p::decode_payload(payload.data(), payload.size(), client_proof, why);
    p::proof forged{client_proof.client_nonce,
                    p::auth_mac("another-token-of-sixteen+", p::auth_role::server, c.server_nonce,
                                client_proof.client_nonce, {})};
    out.clear();
    p::append_frame(out, forged);
    p::append_frame(out, p::welcome{});
    s.write_all(out.data(), out.size());
  });
  p::frame_header header;
  std::vector<uint8_t> payload;
  std::string error;
  EXPECT_FALSE(p::exchange_hello(client, testing::make_hello(p::stream_kind::control), {good_token, nullptr}, 2000,
                                 header, payload, error));
  EXPECT_NE(error.find("could not prove"), std::string::npos) << error;
  daemon.join();
}

class tls_admission_test : public admission_test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(tls_testing::make_test_pki(dir_.path, tls_testing::certificate_validity::current, pki_));
    std::string warning, error;
    server_tls_ = tls::context::for_server(pki_.server_cert, pki_.server_key, warning, error);
    ASSERT_TRUE(server_tls_) << error;
    EXPECT_TRUE(warning.empty()) << warning;
    client_tls_ = tls::context::for_client(pki_.ca_cert, error);
    ASSERT_TRUE(client_tls_) << error;
  }
  scratch_dir dir_;
  tls_testing::test_pki pki_;
  std::shared_ptr<tls::context> server_tls_, client_tls_;
};

TEST_F(tls_admission_test, a_tls_client_with_the_token_gets_a_session_and_a_plain_one_is_told_why_not) {
  start({good_token, server_tls_});
  p::frame_header header;
  std::vector<uint8_t> payload;
  std::string error;
  stream_ptr s = p::open_stream(where(), {good_token, client_tls_}, 2000, error);
  ASSERT_TRUE(s) << error;
  ASSERT_TRUE(s->encrypted());
  EXPECT_NE(s->tls()->describe().find("TLSv1.3"), std::string::npos) << s->tls()->describe();
  ASSERT_TRUE(p::exchange_hello(*s, testing::make_hello(p::stream_kind::control), {good_token, client_tls_}, 2000,
                                header, payload, error))
      << error;
  ASSERT_EQ(refusal_code(header, payload), 0);
  // The session works over TLS: a ping through the session.
  ASSERT_TRUE(p::read_frame(*s, header, payload, 4096, error)) << error;  // session_state
  std::vector<uint8_t> out;
  p::append_frame(out, p::ping{42});
  ASSERT_TRUE(s->write_all(out.data(), out.size()));
  do {  // acks may come first
    ASSERT_TRUE(p::read_frame(*s, header, payload, 4096, error)) << error;
  } while (header.message_id == static_cast<uint16_t>(p::message_id::ack));
  EXPECT_EQ(header.message_id, static_cast<uint16_t>(p::message_id::pong));

  // Plain: refused with a reason that names the fix.
  ASSERT_TRUE(say_hello({good_token, nullptr}, header, payload, error)) << error;
  EXPECT_EQ(refusal_code(header, payload), static_cast<int32_t>(refusal::tls_required));
  p::refused r;
  const char* why = "";
  ASSERT_TRUE(p::decode_payload(payload.data(), payload.size(), r, why));
  EXPECT_NE(r.reason.find("FERRY_TLS_CA"), std::string::npos) << r.reason;
}

TEST_F(tls_admission_test, a_tls_client_of_a_plain_daemon_fails_with_a_hint) {
  start({});
  p::frame_header header;
  std::vector<uint8_t> payload;
  std::string error;
  EXPECT_FALSE(say_hello({{}, client_tls_}, header, payload, error));
  EXPECT_NE(error.find("--tls-cert"), std::string::npos) << error;
  // The daemon goes on serving plain clients.
  ASSERT_TRUE(say_hello({}, header, payload, error)) << error;
  EXPECT_EQ(refusal_code(header, payload), 0);
}

TEST_F(tls_admission_test, certificates_of_other_authorities_and_expired_ones_are_refused) {
  scratch_dir other_dir;
  tls_testing::test_pki other;
  ASSERT_TRUE(tls_testing::make_test_pki(other_dir.path, tls_testing::certificate_validity::expired, other));
  std::string warning, error;
  auto expired = tls::context::for_server(other.server_cert, other.server_key, warning, error);
  ASSERT_TRUE(expired) << error;
  EXPECT_NE(warning.find("expired"), std::string::npos) << warning;
  start({{}, expired});
  p::frame_header header;
  std::vector<uint8_t> payload;
  // Signed by a CA the client does not trust:
  EXPECT_FALSE(say_hello({{}, client_tls_}, header, payload, error));
  EXPECT_NE(error.find("certificate is refused"), std::string::npos) << error;
  // Trusted CA, but expired:
  auto trusting = tls::context::for_client(other.ca_cert, error);
  ASSERT_TRUE(trusting) << error;
  EXPECT_FALSE(say_hello({{}, trusting}, header, payload, error));
  EXPECT_NE(error.find("expired"), std::string::npos) << error;
}

TEST_F(tls_admission_test, silent_connections_are_dropped_after_the_handshake_timeout) {
  start({good_token, server_tls_});
  // Connects and says nothing at all.
  unique_fd silent = testing::connect_loopback(server_->port());
  // Completes TLS, then never sends its hello.
  std::string error;
  stream_ptr quiet = p::open_stream(where(), {good_token, client_tls_}, 2000, error);
  ASSERT_TRUE(quiet) << error;
  auto start_time = std::chrono::steady_clock::now();
  char byte;
  EXPECT_EQ(::recv(silent.get(), &byte, 1, 0), 0) << "closed by the daemon";
  quiet->set_receive_timeout(5000);
  EXPECT_LE(quiet->read_some(&byte, 1), 0) << "closed by the daemon";
  EXPECT_LT(std::chrono::steady_clock::now() - start_time, std::chrono::seconds(5));
}

TEST(token_file, short_unreadable_and_shared_files_are_reported) {
  scratch_dir dir;
  std::string token, warning, error;
  EXPECT_FALSE(p::load_token(dir.path + "/missing", token, warning, error));
  EXPECT_NE(error.find("cannot read"), std::string::npos) << error;
  std::ofstream(dir.path + "/short") << "too short\n";
  EXPECT_FALSE(p::load_token(dir.path + "/short", token, warning, error));
  EXPECT_NE(error.find("at least 16"), std::string::npos) << error;
  const std::string good = dir.path + "/good";
  std::ofstream(good) << good_token << "\n";
  std::filesystem::permissions(good, std::filesystem::perms::owner_read | std::filesystem::perms::group_read);
  ASSERT_TRUE(p::load_token(good, token, warning, error)) << error;
  EXPECT_EQ(token, good_token) << "the trailing newline is not part of the token";
  EXPECT_NE(warning.find("chmod 600"), std::string::npos) << warning;
}

TEST(auth_mac, depends_on_role_token_nonces_and_binding) {
  p::nonce a{}, b{};
  b[0] = 1;
  p::channel_binding none{}, some{};
  some[5] = 9;
  auto base = p::auth_mac(good_token, p::auth_role::client, a, b, none);
  EXPECT_EQ(base, p::auth_mac(good_token, p::auth_role::client, a, b, none));
  EXPECT_NE(base, p::auth_mac(good_token, p::auth_role::server, a, b, none));
  EXPECT_NE(base, p::auth_mac("0123456789abcdef-the-right-tokeN", p::auth_role::client, a, b, none));
  EXPECT_NE(base, p::auth_mac(good_token, p::auth_role::client, b, a, none));
  EXPECT_NE(base, p::auth_mac(good_token, p::auth_role::client, a, b, some));
}

}  // namespace
}  // namespace ferry::server
