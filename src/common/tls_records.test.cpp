// Ferry's TLS 1.3 record layer after a handover (tls_records.hpp): against
// OpenSSL clients, and against records changed or made up in transit.
#include "common/tls_records.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstring>
#include <thread>

#include "common/test_tls_pair.hpp"

namespace ferry::tls {
namespace {

using namespace tls_testing;

void send_raw(int fd, const std::vector<uint8_t>& bytes) { ASSERT_TRUE(ferry::write_all(fd, bytes.data(), bytes.size())); }

class tls_records_test : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(make_test_contexts(contexts_, "", error_)) << error_; }
  void connect(client_kind kind = client_kind::ferry_channel) {
    ASSERT_TRUE(make_tls_pair(contexts_, kind, pair_, error_)) << error_;
    if (kind == client_kind::ferry_channel) {
      ASSERT_TRUE(exchange_messages(pair_, 1));
    }
  }
  void hand_over() {
    auto state = export_and_free(pair_, error_);
    ASSERT_TRUE(state) << error_;
    ASSERT_TRUE(adopt_into(pair_, std::move(*state), pair_.server_fd.get(), error_)) << error_;
  }
  /// Adopts over a socket of the test's own instead: the test carries
  /// records from the client's socket to it (`relay_`), and back, and may
  /// change them on the way.
  void hand_over_to_relay() {
    auto state = export_and_free(pair_, error_);
    ASSERT_TRUE(state) << error_;
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    relay_ = unique_fd(fds[0]);
    adopted_fd_ = unique_fd(fds[1]);
    ASSERT_TRUE(adopt_into(pair_, std::move(*state), adopted_fd_.get(), error_)) << error_;
  }
  /// The client's next record, as it came.
  std::vector<uint8_t> client_record() { return read_raw_record(pair_.server_fd.get()); }
  ssize_t read_one(uint8_t* buffer, size_t size) { return pair_.server->read_some(buffer, size, true); }

  test_contexts contexts_;
  tls_pair pair_;
  unique_fd relay_, adopted_fd_;
  std::string error_;
};

// --- records changed or made up ---------------------------------------------

enum class change { ciphertext_bit, tag_bit, length };

TEST_F(tls_records_test, a_changed_record_fails_authentication_and_ends_the_connection) {
  // A bit of the ciphertext, of the tag, or the header's length (which is
  // authenticated as the additional data: the record cut by a byte to match).
  for (change how : {change::ciphertext_bit, change::tag_bit, change::length}) {
    SCOPED_TRACE(static_cast<int>(how));
    pair_ = tls_pair{};
    connect();
    hand_over_to_relay();
    ASSERT_TRUE(pair_.client->write_all("hello", 5));
    send_raw(relay_.get(), client_record());  // unchanged: read as it was
    uint8_t buffer[64];
    ASSERT_EQ(read_one(buffer, sizeof buffer), 5);
    EXPECT_EQ(std::memcmp(buffer, "hello", 5), 0);

    std::vector<uint8_t> text(40, 'x');
    ASSERT_TRUE(pair_.client->write_all(text.data(), text.size()));
    std::vector<uint8_t> record = client_record();
    if (how == change::ciphertext_bit) record[record.size() - 30] ^= 0x04;
    if (how == change::tag_bit) record[record.size() - 1] ^= 0x80;
    if (how == change::length) {
      record.pop_back();
      record[4] = static_cast<uint8_t>(record[4] - 1);  // 40 bytes, a type and a tag: no borrow
    }
    send_raw(relay_.get(), record);
    EXPECT_EQ(read_one(buffer, sizeof buffer), -1);
    EXPECT_NE(pair_.server->last_error().find("bad record mac"), std::string::npos) << pair_.server->last_error();

    // The client learns why: the alert is sealed with the server's keys.
    send_raw(pair_.server_fd.get(), read_raw_record(relay_.get()));
    EXPECT_EQ(pair_.client->read_some(buffer, sizeof buffer, true), -1);
    EXPECT_NE(pair_.client->last_error().find("bad record mac"), std::string::npos) << pair_.client->last_error();

    // Nothing more is read or written (an error at once, not "nothing yet").
    EXPECT_EQ(pair_.server->read_some(buffer, sizeof buffer, false), -1);
    EXPECT_EQ(errno, ECONNRESET);
    EXPECT_FALSE(pair_.server->write_all("no", 2));
  }
}

TEST_F(tls_records_test, a_record_longer_than_the_limit_fails_before_its_body_comes) {
  connect();
  hand_over_to_relay();
  // 2^14 + 256 + 1 bytes announced, none sent.
  send_raw(relay_.get(), {0x17, 0x03, 0x03, 0x41, 0x01});
  uint8_t buffer[16];
  EXPECT_EQ(read_one(buffer, sizeof buffer), -1);
  EXPECT_NE(pair_.server->last_error().find("too long"), std::string::npos) << pair_.server->last_error();
}

TEST_F(tls_records_test, unprotected_and_malformed_records_are_refused) {
  const std::vector<std::vector<uint8_t>> bad = {
      {0x16, 0x03, 0x03, 0x00, 0x01, 0x00},  // a plaintext handshake record
      {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28},  // a plaintext alert
      {0x17, 0x03, 0x01, 0x00, 0x20},  // another version
      {0x17, 0x03, 0x03, 0x00, 0x10},  // shorter than a tag and a type
  };
  const std::vector<std::string> why = {"unprotected", "unprotected", "version", "too short"};
  for (size_t i = 0; i < bad.size(); ++i) {
    SCOPED_TRACE(i);
    pair_ = tls_pair{};
    connect();
    hand_over_to_relay();
    std::vector<uint8_t> bytes = bad[i];
    bytes.resize(bytes.size() + 64, 0);  // a body, where one is announced
    send_raw(relay_.get(), bytes);
    uint8_t buffer[16];
    EXPECT_EQ(read_one(buffer, sizeof buffer), -1);
    EXPECT_NE(pair_.server->last_error().find(why[i]), std::string::npos) << pair_.server->last_error();
  }
}

TEST_F(tls_records_test, a_connection_closed_inside_a_record_is_an_error) {
  connect();
  hand_over_to_relay();
  ASSERT_TRUE(pair_.client->write_all("hello", 5));
  std::vector<uint8_t> record = client_record();
  record.resize(record.size() - 3);
  send_raw(relay_.get(), record);
  ::shutdown(relay_.get(), SHUT_WR);
  uint8_t buffer[16];
  EXPECT_EQ(read_one(buffer, sizeof buffer), -1);
  EXPECT_NE(pair_.server->last_error().find("closed inside a record"), std::string::npos);
}

// --- how a connection ends ------------------------------------------------------

TEST_F(tls_records_test, close_notify_ends_the_stream_after_the_bytes_before_it) {
  connect(client_kind::raw_openssl);
  hand_over();
  ASSERT_TRUE(raw_write(pair_.raw_client.get(), {1, 2, 3}));
  ASSERT_GE(SSL_shutdown(pair_.raw_client.get()), 0);
  uint8_t buffer[16];
  ASSERT_EQ(read_one(buffer, sizeof buffer), 3);
  EXPECT_EQ(read_one(buffer, sizeof buffer), 0);
  EXPECT_EQ(read_one(buffer, sizeof buffer), 0);
}

TEST_F(tls_records_test, a_close_without_close_notify_ends_the_stream) {
  connect();
  hand_over();
  ASSERT_TRUE(pair_.client->write_all("bye", 3));
  ::shutdown(pair_.client_fd.get(), SHUT_WR);
  uint8_t buffer[16];
  ASSERT_EQ(read_one(buffer, sizeof buffer), 3);
  EXPECT_EQ(read_one(buffer, sizeof buffer), 0);
}

TEST_F(tls_records_test, the_peers_alerts_are_errors_that_say_which) {
  connect();
  hand_over_to_relay();
  // A server record changed on its way makes the client send bad_record_mac.
  ASSERT_TRUE(pair_.server->write_all("hello", 5));
  std::vector<uint8_t> record = read_raw_record(relay_.get());
  record[7] ^= 1;
  send_raw(pair_.server_fd.get(), record);
  uint8_t buffer[16];
  EXPECT_EQ(pair_.client->read_some(buffer, sizeof buffer, true), -1);
  send_raw(relay_.get(), client_record());
  EXPECT_EQ(read_one(buffer, sizeof buffer), -1);
  EXPECT_NE(pair_.server->last_error().find("alert bad record mac (20)"), std::string::npos)
      << pair_.server->last_error();
}

TEST_F(tls_records_test, a_key_update_after_the_handover_is_a_clear_error) {
  connect(client_kind::raw_openssl);
  hand_over();
  ASSERT_EQ(SSL_key_update(pair_.raw_client.get(), SSL_KEY_UPDATE_NOT_REQUESTED), 1);
  ASSERT_TRUE(raw_write(pair_.raw_client.get(), {42}));
  uint8_t buffer[16];
  EXPECT_EQ(read_one(buffer, sizeof buffer), -1);
  EXPECT_EQ(pair_.server->last_error(), "TLS key update after handover is not supported");
}

// --- waiting ------------------------------------------------------------------------

TEST_F(tls_records_test, reads_that_must_not_wait_and_receive_timeouts_say_eagain) {
  connect();
  hand_over();
  uint8_t buffer[16];
  EXPECT_EQ(pair_.server->read_some(buffer, sizeof buffer, false), -1);
  EXPECT_EQ(errno, EAGAIN);
  pair_.server->set_receive_timeout(20);
  EXPECT_EQ(pair_.server->read_some(buffer, sizeof buffer, true), -1);
  EXPECT_EQ(errno, EAGAIN);
  // What comes later is read.
  ASSERT_TRUE(pair_.client->write_all("late", 4));
  EXPECT_EQ(pair_.server->read_some(buffer, sizeof buffer, true), 4);
}

TEST_F(tls_records_test, shutdown_of_the_socket_wakes_a_waiting_reader) {
  connect();
  hand_over();
  std::thread waiting([&] {
    uint8_t buffer[16];
    pair_.server->set_receive_timeout(-1);
    EXPECT_EQ(pair_.server->read_some(buffer, sizeof buffer, true), 0);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::shutdown(pair_.server_fd.get(), SHUT_RDWR);
  waiting.join();
}

TEST_F(tls_records_test, a_reader_and_several_writers_run_at_once) {
  connect();
  hand_over();
  constexpr size_t up_bytes = 3 << 20;
  constexpr int writers = 2, messages = 150;
  const std::vector<uint8_t> up = test_bytes(up_bytes, 1);
  auto message = [](int writer, int index) {
    const size_t size = 1 + static_cast<size_t>(writer * 7919 + index * 104729) % 40000;
    std::vector<uint8_t> bytes = test_bytes(size, static_cast<uint32_t>(writer * 1000 + index));
    uint8_t header[9] = {static_cast<uint8_t>(writer), static_cast<uint8_t>(index >> 8), static_cast<uint8_t>(index),
                         0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 4; ++i) header[3 + i] = static_cast<uint8_t>(size >> (24 - 8 * i));
    bytes.insert(bytes.begin(), header, header + 9);
    return bytes;
  };

  std::thread server_reads([&] { EXPECT_EQ(read_bytes(*pair_.server, up_bytes), up); });
  std::vector<std::thread> server_writes;
  for (int w = 0; w < writers; ++w)
    server_writes.emplace_back([&, w] {
      for (int i = 0; i < messages; ++i) {
        std::vector<uint8_t> m = message(w, i);
        ASSERT_TRUE(pair_.server->write_all(m.data(), m.size()));
      }
    });
  std::thread client_reads([&] {
    int next[writers] = {};
    for (int got = 0; got < writers * messages; ++got) {
      std::vector<uint8_t> header = read_bytes(*pair_.client, 9);
      ASSERT_EQ(header.size(), 9u);
      const int w = header[0], index = header[1] << 8 | header[2];
      ASSERT_LT(w, writers);
      ASSERT_EQ(index, next[w]++);
      std::vector<uint8_t> expected = message(w, index);
      std::vector<uint8_t> payload = read_bytes(*pair_.client, expected.size() - 9);
      ASSERT_TRUE(std::equal(payload.begin(), payload.end(), expected.begin() + 9) && !payload.empty());
    }
  });
  // The client writes in pieces of many sizes meanwhile.
  for (size_t at = 0, piece = 1; at < up_bytes; at += piece, piece = piece * 3 % 70001 + 1) {
    piece = std::min(piece, up_bytes - at);
    ASSERT_TRUE(pair_.client->write_all(up.data() + at, piece));
  }
  for (auto& t : server_writes) t.join();
  client_reads.join();
  server_reads.join();
}

}  // namespace
}  // namespace ferry::tls
