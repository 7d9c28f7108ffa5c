// Handing a TLS connection from the process that made it (and holds the
// key) to another that continues it (tls_handoff.hpp): OpenSSL on both
// ends before the handover, Ferry's record layer on the server's after it.
#include "common/tls_handoff.hpp"

#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "common/stream.hpp"
#include "common/test_tls_pair.hpp"

namespace ferry::tls {
namespace {

using namespace tls_testing;

class tls_handoff_test : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(make_test_contexts(contexts_, "", error_)) << error_; }
  void connect(client_kind kind = client_kind::ferry_channel) {
    ASSERT_TRUE(make_tls_pair(contexts_, kind, pair_, error_)) << error_;
  }
  /// Export, free the OpenSSL channel, adopt over the same socket.
  void hand_over() {
    auto state = export_and_free(pair_, error_);
    ASSERT_TRUE(state) << error_;
    ASSERT_TRUE(adopt_into(pair_, std::move(*state), pair_.server_fd.get(), error_)) << error_;
  }

  test_contexts contexts_;
  tls_pair pair_;
  std::string error_;
};

// --- the connection goes on --------------------------------------------------

class tls_handoff_suite_test : public tls_handoff_test, public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override { ASSERT_TRUE(make_test_contexts(contexts_, GetParam(), error_)) << error_; }
};

TEST_P(tls_handoff_suite_test, an_adopted_connection_carries_exact_bytes_both_ways) {
  connect();
  ASSERT_TRUE(exchange_messages(pair_, 1));
  const std::array<uint8_t, 32> binding = pair_.server->binding();
  auto state = export_and_free(pair_, error_);
  ASSERT_TRUE(state) << error_;
  EXPECT_STREQ(cipher_suite_name(state->suite), GetParam());
  EXPECT_GE(state->read_sequence, 7u);  // the 40000 bytes were 3 records
  EXPECT_GE(state->write_sequence, 7u);
  EXPECT_TRUE(state->plaintext.empty());
  EXPECT_TRUE(state->ciphertext.empty());
  ASSERT_TRUE(adopt_into(pair_, std::move(*state), pair_.server_fd.get(), error_)) << error_;

  EXPECT_EQ(pair_.server->describe(), std::string("TLSv1.3 ") + GetParam() + " (handed over)");
  EXPECT_EQ(pair_.server->binding(), binding);
  EXPECT_EQ(pair_.server->binding(), pair_.client->binding());
  ASSERT_TRUE(exchange_messages(pair_, 100));

  // Bulk, sizes not a multiple of a record, each way while the other end reads.
  for (size_t size : {size_t{1} << 20, (size_t{1} << 20) + 4321, size_t{3 * 16384 + 1}}) {
    std::vector<uint8_t> up = test_bytes(size, 7), down = test_bytes(size, 8);
    std::thread client_writes([&] { EXPECT_TRUE(pair_.client->write_all(up.data(), up.size())); });
    EXPECT_EQ(read_bytes(*pair_.server, size), up);
    client_writes.join();
    std::thread server_writes([&] { EXPECT_TRUE(pair_.server->write_all(down.data(), down.size())); });
    EXPECT_EQ(read_bytes(*pair_.client, size), down);
    server_writes.join();
  }
}

INSTANTIATE_TEST_SUITE_P(each_cipher_suite, tls_handoff_suite_test,
                         ::testing::Values("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                                           "TLS_CHACHA20_POLY1305_SHA256"));

TEST_F(tls_handoff_test, a_connection_handed_over_right_after_its_handshake_goes_on) {
  connect();
  auto state = export_and_free(pair_, error_);
  ASSERT_TRUE(state) << error_;
  EXPECT_EQ(state->read_sequence, 0u);
  EXPECT_EQ(state->write_sequence, 0u);
  ASSERT_TRUE(adopt_into(pair_, std::move(*state), pair_.server_fd.get(), error_)) << error_;
  ASSERT_TRUE(exchange_messages(pair_, 1));
}

TEST_F(tls_handoff_test, bytes_the_client_pipelined_before_the_export_arrive_exactly_after_it) {
  connect();
  // The client sends its "authentication" and, in the same record, the
  // start of what follows; then more than the server socket BIO's buffer
  // holds, so that the export finds decrypted bytes in OpenSSL, undecrypted
  // ones in the BIO (the last record cut short) and more in the socket.
  const std::vector<uint8_t> first = test_bytes(100, 1), next = test_bytes(300, 2);
  const std::vector<uint8_t> more = test_bytes(140000, 3), last = test_bytes((1 << 20) + 5, 4);
  std::vector<uint8_t> together = first;
  together.insert(together.end(), next.begin(), next.end());
  std::atomic<bool> more_sent{false};
  std::thread client_writes([&] {
    EXPECT_TRUE(pair_.client->write_all(together.data(), together.size()));
    EXPECT_TRUE(pair_.client->write_all(more.data(), more.size()));
    more_sent = true;
  });
  // Until the socket holds more than the BIO's buffer, or the client is done.
  for (int waited_ms = 0; waited_ms < 10000 && !more_sent; ++waited_ms) {
    int queued = 0;
    if (::ioctl(pair_.server_fd.get(), FIONREAD, &queued) == 0 && queued > 128 * 1024 + 1000) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(read_bytes(*pair_.server, first.size()), first);

  auto state = export_and_free(pair_, error_);
  ASSERT_TRUE(state) << error_;
  EXPECT_EQ(std::vector<uint8_t>(state->plaintext.begin(), state->plaintext.end()), next);
  EXPECT_FALSE(state->ciphertext.empty());
  EXPECT_EQ(state->read_sequence, 1u);
  ASSERT_TRUE(adopt_into(pair_, std::move(*state), pair_.server_fd.get(), error_)) << error_;

  std::thread client_writes_last([&] { EXPECT_TRUE(pair_.client->write_all(last.data(), last.size())); });
  EXPECT_EQ(read_bytes(*pair_.server, next.size()), next);
  EXPECT_EQ(read_bytes(*pair_.server, more.size()), more);
  EXPECT_EQ(read_bytes(*pair_.server, last.size()), last);
  client_writes.join();
  client_writes_last.join();
  ASSERT_TRUE(exchange_messages(pair_, 9));
}

TEST_F(tls_handoff_test, a_stream_runs_on_an_adopted_channel_unchanged) {
  connect();
  ASSERT_TRUE(exchange_messages(pair_, 1));
  hand_over();
  const int fd = pair_.server_fd.release();
  stream s(unique_fd(fd), std::move(pair_.server));
  s.set_receive_timeout(10000);
  std::vector<uint8_t> header = test_bytes(8, 1), payload = test_bytes(70000, 2);
  iovec pieces[2] = {{header.data(), header.size()}, {payload.data(), payload.size()}};
  ASSERT_TRUE(s.writev_all(pieces, 2));
  EXPECT_EQ(read_bytes(*pair_.client, header.size()), header);
  EXPECT_EQ(read_bytes(*pair_.client, payload.size()), payload);

  uint8_t byte = 0;
  EXPECT_EQ(s.try_read_some(&byte, 1), -1);
  EXPECT_EQ(errno, EAGAIN);
  std::vector<uint8_t> up = test_bytes(20000, 3), got(up.size());
  ASSERT_TRUE(pair_.client->write_all(up.data(), up.size()));
  ASSERT_TRUE(s.read_exact(got.data(), got.size()));
  EXPECT_EQ(got, up);
}

// --- what an export refuses ----------------------------------------------------

TEST_F(tls_handoff_test, an_exported_channel_neither_reads_nor_writes_again) {
  connect();
  auto state = pair_.server->export_for_handoff(error_);
  ASSERT_TRUE(state) << error_;
  uint8_t byte = 0;
  EXPECT_EQ(pair_.server->read_some(&byte, 1, false), -1);
  EXPECT_NE(pair_.server->last_error().find("handed over"), std::string::npos);
  EXPECT_FALSE(pair_.server->write_all("x", 1));
  EXPECT_FALSE(pair_.server->export_for_handoff(error_));
  EXPECT_NE(error_.find("handed over before"), std::string::npos) << error_;
}

TEST_F(tls_handoff_test, clients_and_unfinished_handshakes_cannot_be_exported) {
  connect();
  EXPECT_FALSE(pair_.client->export_for_handoff(error_));
  EXPECT_NE(error_.find("not a server"), std::string::npos) << error_;

  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  unique_fd a(fds[0]), b(fds[1]);
  auto fresh = channel::accept(*contexts_.server, b.get(), error_);
  ASSERT_TRUE(fresh) << error_;
  EXPECT_FALSE(fresh->export_for_handoff(error_));
  EXPECT_NE(error_.find("handshake is not finished"), std::string::npos) << error_;
}

TEST_F(tls_handoff_test, a_connection_whose_keys_were_updated_is_not_exported) {
  connect(client_kind::raw_openssl);
  ASSERT_EQ(SSL_key_update(pair_.raw_client.get(), SSL_KEY_UPDATE_NOT_REQUESTED), 1);
  ASSERT_TRUE(raw_write(pair_.raw_client.get(), {42}));
  EXPECT_EQ(read_bytes(*pair_.server, 1), std::vector<uint8_t>{42});
  EXPECT_FALSE(pair_.server->export_for_handoff(error_));
  EXPECT_NE(error_.find("key update"), std::string::npos) << error_;
}

TEST_F(tls_handoff_test, a_record_openssl_has_read_in_part_is_not_exported) {
  // A header cut short; a whole header (which OpenSSL keeps apart from its
  // buffer); a header and some of the body.
  for (size_t part : {size_t{3}, size_t{5}, size_t{20}}) {
    SCOPED_TRACE(part);
    pair_ = tls_pair{};
    ASSERT_TRUE(make_tls_pair(contexts_, client_kind::ferry_channel, pair_, error_, connection_path::relayed))
        << error_;
    ASSERT_TRUE(pair_.client->write_all("hello", 5));
    const std::vector<uint8_t> record = read_raw_record(pair_.relay_client.get());
    ASSERT_TRUE(ferry::write_all(pair_.relay_server.get(), record.data(), part));
    uint8_t buffer[16];
    EXPECT_EQ(pair_.server->read_some(buffer, sizeof buffer, false), -1);
    EXPECT_EQ(errno, EAGAIN);
    EXPECT_FALSE(pair_.server->export_for_handoff(error_));
    EXPECT_NE(error_.find("half read"), std::string::npos) << error_;
  }
}

// --- the state as bytes --------------------------------------------------------------

handoff_state sample_state() {
  handoff_state s;
  s.suite = cipher_suite::aes_256_gcm_sha384;
  auto secret = [](uint32_t seed) {
    auto bytes = test_bytes(48, seed);
    return wiped_bytes(bytes.begin(), bytes.end());
  };
  s.client_secret = secret(1);
  s.server_secret = secret(2);
  s.read_sequence = 0x0102030405060708;
  s.write_sequence = 99;
  s.binding[0] = 7;
  s.binding[31] = 9;
  s.plaintext = {1, 2, 3};
  s.ciphertext.assign(5000, 0x17);
  return s;
}

TEST(tls_handoff_state, encodes_and_decodes_to_the_same_state) {
  const handoff_state s = sample_state();
  const wiped_bytes bytes = s.encode();
  std::string error;
  auto back = handoff_state::decode(bytes.data(), bytes.size(), error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->suite, s.suite);
  EXPECT_EQ(back->client_secret, s.client_secret);
  EXPECT_EQ(back->server_secret, s.server_secret);
  EXPECT_EQ(back->read_sequence, s.read_sequence);
  EXPECT_EQ(back->write_sequence, s.write_sequence);
  EXPECT_EQ(back->binding, s.binding);
  EXPECT_EQ(back->plaintext, s.plaintext);
  EXPECT_EQ(back->ciphertext, s.ciphertext);
}

TEST(tls_handoff_state, decoding_refuses_every_truncation_and_trailing_bytes) {
  const wiped_bytes bytes = sample_state().encode();
  std::string error;
  for (size_t size = 0; size < bytes.size(); ++size)
    EXPECT_FALSE(handoff_state::decode(bytes.data(), size, error)) << "cut to " << size;
  wiped_bytes longer = bytes;
  longer.push_back(0);
  EXPECT_FALSE(handoff_state::decode(longer.data(), longer.size(), error));
  EXPECT_NE(error.find("trailing"), std::string::npos) << error;
}

TEST(tls_handoff_state, decoding_refuses_hostile_fields) {
  const wiped_bytes good = sample_state().encode();
  std::string error;
  auto refused = [&](size_t at, std::initializer_list<uint8_t> values, const char* why) {
    wiped_bytes bytes = good;
    std::copy(values.begin(), values.end(), bytes.begin() + static_cast<ptrdiff_t>(at));
    EXPECT_FALSE(handoff_state::decode(bytes.data(), bytes.size(), error)) << why;
    return error;
  };
  // Layout: magic 0-3, format 4, suite 5-6, secret size 7, secret, size, secret,
  // sequences 16 bytes, binding 32, plaintext size (4) and bytes, ciphertext size (4) and bytes.
  EXPECT_NE(refused(0, {'X'}, "magic").find("magic"), std::string::npos);
  EXPECT_NE(refused(4, {2}, "format").find("format"), std::string::npos);
  EXPECT_NE(refused(5, {0x13, 0x04}, "suite").find("cipher suite"), std::string::npos);
  EXPECT_NE(refused(5, {0x13, 0x01}, "a SHA-256 suite with 48-byte secrets").find("secret size"),
            std::string::npos);
  EXPECT_NE(refused(7, {255}, "secret size").find("secret size"), std::string::npos);
  const size_t plaintext_size_at = 7 + 1 + 48 + 1 + 48 + 16 + 32;
  EXPECT_NE(refused(plaintext_size_at, {0, 0, 0x40, 0x01}, "plaintext over a record").find("plaintext"),
            std::string::npos);
  EXPECT_NE(refused(plaintext_size_at, {0xff, 0xff, 0xff, 0xff}, "plaintext size").find("plaintext"),
            std::string::npos);
  const size_t ciphertext_size_at = plaintext_size_at + 4 + 3;
  EXPECT_NE(refused(ciphertext_size_at, {0xff, 0xff, 0xff, 0xff}, "ciphertext size").find("ciphertext"),
            std::string::npos);
  EXPECT_NE(refused(ciphertext_size_at, {0, 0, 0x13, 0x89}, "ciphertext beyond the end").find("cut short"),
            std::string::npos);

  std::vector<uint8_t> garbage = test_bytes(4096, 5);
  for (size_t size : {size_t{0}, size_t{1}, size_t{10}, garbage.size()})
    EXPECT_FALSE(handoff_state::decode(garbage.data(), size, error));
}

// --- into another process ------------------------------------------------------------

/// The worker's side: takes the socket and the state over `control`, adopts,
/// echoes until the client closes. Its exit status says what failed.
int echo_worker(int control) {
  uint8_t size_bytes[4];
  char space[CMSG_SPACE(sizeof(int))] = {};
  iovec piece{size_bytes, sizeof size_bytes};
  msghdr message{};
  message.msg_iov = &piece;
  message.msg_iovlen = 1;
  message.msg_control = space;
  message.msg_controllen = sizeof space;
  if (::recvmsg(control, &message, MSG_WAITALL) != sizeof size_bytes) return 10;
  cmsghdr* c = CMSG_FIRSTHDR(&message);
  if (!c || c->cmsg_type != SCM_RIGHTS) return 11;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  const size_t size = size_t{size_bytes[0]} << 24 | size_t{size_bytes[1]} << 16 | size_t{size_bytes[2]} << 8 | size_bytes[3];
  wiped_bytes encoded(size);
  if (!ferry::read_exact(control, encoded.data(), size)) return 12;
  std::string error;
  auto state = handoff_state::decode(encoded.data(), encoded.size(), error);
  if (!state) return 13;
  auto adopted = channel::adopt(std::move(*state), fd, error);
  if (!adopted) return 14;
  uint8_t buffer[50000];
  for (;;) {
    ssize_t n = adopted->read_some(buffer, sizeof buffer, true);
    if (n == 0) return 0;
    if (n < 0) return 15;
    if (!adopted->write_all(buffer, static_cast<size_t>(n))) return 16;
  }
}

TEST_F(tls_handoff_test, a_forked_worker_adopts_the_socket_and_echoes) {
  int control[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control), 0);
  // Forked before any thread of this test starts.
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(control[0]);
    ::_exit(echo_worker(control[1]));
  }
  ::close(control[1]);
  unique_fd to_worker(control[0]);

  connect();
  ASSERT_TRUE(exchange_messages(pair_, 1));
  // Two records: the main process reads into the first, so that the state
  // carries decrypted bytes and (the second record) undecrypted ones.
  std::vector<uint8_t> pipelined = test_bytes(30000, 2);
  ASSERT_TRUE(pair_.client->write_all(pipelined.data(), pipelined.size()));
  EXPECT_EQ(read_bytes(*pair_.server, 10), std::vector<uint8_t>(pipelined.begin(), pipelined.begin() + 10));
  pipelined.erase(pipelined.begin(), pipelined.begin() + 10);
  auto state = export_and_free(pair_, error_);
  ASSERT_TRUE(state) << error_;
  EXPECT_FALSE(state->plaintext.empty());
  EXPECT_FALSE(state->ciphertext.empty());
  const wiped_bytes encoded = state->encode();
  state.reset();

  const uint8_t size_bytes[4] = {static_cast<uint8_t>(encoded.size() >> 24), static_cast<uint8_t>(encoded.size() >> 16),
                                 static_cast<uint8_t>(encoded.size() >> 8), static_cast<uint8_t>(encoded.size())};
  char space[CMSG_SPACE(sizeof(int))] = {};
  iovec piece{const_cast<uint8_t*>(size_bytes), sizeof size_bytes};
  msghdr message{};
  message.msg_iov = &piece;
  message.msg_iovlen = 1;
  message.msg_control = space;
  message.msg_controllen = sizeof space;
  cmsghdr* c = CMSG_FIRSTHDR(&message);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  const int fd = pair_.server_fd.get();
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  ASSERT_EQ(::sendmsg(to_worker.get(), &message, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof size_bytes));
  ASSERT_TRUE(ferry::write_all(to_worker.get(), encoded.data(), encoded.size()));
  pair_.server_fd.reset();  // the worker's now

  EXPECT_EQ(read_bytes(*pair_.client, pipelined.size()), pipelined);
  for (size_t size : {size_t{5}, size_t{100000}, size_t{16384}}) {
    std::vector<uint8_t> bytes = test_bytes(size, static_cast<uint32_t>(size));
    std::thread writes([&] { EXPECT_TRUE(pair_.client->write_all(bytes.data(), bytes.size())); });
    EXPECT_EQ(read_bytes(*pair_.client, size), bytes);
    writes.join();
  }
  ::shutdown(pair_.client_fd.get(), SHUT_WR);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace ferry::tls
