// The bulk sender: chunks go out in order and stay in the log until the
// server acknowledges them; offline they wait in the log; a blocking write
// of borrowed memory returns only once the server has it.
#include "client/net/bulk_sender.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "client/net/test_parts.hpp"
#include "protocol/limits.hpp"

namespace ferry::client {
namespace {

using testing::connection_parts;

std::vector<uint8_t> pattern(size_t size) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
  return bytes;
}

TEST(bulk_sender, a_small_transfer_goes_in_one_frame_and_stays_until_acknowledged) {
  connection_parts parts;
  auto server = parts.attach();
  const std::vector<uint8_t> data = pattern(100);
  ASSERT_TRUE(parts.sender.send_data(9, data.data(), data.size(), bytes_lifetime::until_return, 0));
  std::vector<uint8_t> bytes;
  EXPECT_EQ(server.receive_bulk(bytes), (protocol::bulk_data{9, 0, 100}));
  EXPECT_EQ(bytes, data);
  EXPECT_FALSE(parts.sender.acknowledge(2));  // only one frame was sent
  EXPECT_TRUE(parts.sender.acknowledge(1));
}

TEST(bulk_sender, a_large_transfer_goes_in_chunks_of_the_largest_size_in_order) {
  connection_parts parts;
  auto server = parts.attach();
  const std::vector<uint8_t> data = pattern(2 * size_t{protocol::max_bulk_chunk} + 5);
  std::vector<uint8_t> received;
  std::vector<protocol::bulk_data> prefixes;
  std::thread reader([&] {
    while (received.size() < data.size()) {
      std::vector<uint8_t> bytes;
      prefixes.push_back(server.receive_bulk(bytes));
      if (bytes.empty()) return;
      received.insert(received.end(), bytes.begin(), bytes.end());
    }
  });
  EXPECT_TRUE(parts.sender.send_data(10, data.data(), data.size(), bytes_lifetime::until_completion, 1));
  reader.join();
  ASSERT_EQ(prefixes.size(), 3u);
  for (size_t i = 0; i < prefixes.size(); ++i)
    EXPECT_EQ(prefixes[i], (protocol::bulk_data{10, i * protocol::max_bulk_chunk, data.size()}));
  EXPECT_TRUE(received == data);
}

TEST(bulk_sender, offline_a_transfer_waits_in_the_log) {
  connection_parts parts;
  auto server = parts.attach();
  parts.link.alive = false;
  const std::vector<uint8_t> data = pattern(10);
  EXPECT_TRUE(parts.sender.send_data(11, data.data(), data.size(), bytes_lifetime::until_return, 0));
  EXPECT_TRUE(server.bulk_is_quiet());
  EXPECT_TRUE(parts.sender.acknowledge(1));  // it is in the log all the same
}

TEST(bulk_sender, a_blocking_write_of_borrowed_memory_returns_once_acknowledged) {
  connection_parts parts;
  auto server = parts.attach();
  const std::vector<uint8_t> data = pattern(bulk_log::copy_limit + 1);
  std::atomic<bool> returned{false};
  std::thread writer([&] {
    EXPECT_TRUE(parts.sender.send_data(12, data.data(), data.size(), bytes_lifetime::until_return, 0));
    returned = true;
  });
  std::vector<uint8_t> bytes;
  server.receive_bulk(bytes);
  EXPECT_EQ(bytes, data);
  EXPECT_FALSE(returned);  // the log still points into the caller's memory
  EXPECT_TRUE(parts.sender.acknowledge(1));
  writer.join();
  EXPECT_TRUE(returned);
}

TEST(bulk_sender, a_blocking_write_returns_false_when_the_session_ends_first) {
  connection_parts parts;
  auto server = parts.attach();
  const std::vector<uint8_t> data = pattern(bulk_log::copy_limit + 1);
  bool sent = true;
  std::thread writer([&] { sent = parts.sender.send_data(13, data.data(), data.size(), bytes_lifetime::until_return, 0); });
  std::vector<uint8_t> bytes;
  server.receive_bulk(bytes);
  parts.link.ended = true;
  parts.sender.wake_waiters();
  writer.join();
  EXPECT_FALSE(sent);
}

}  // namespace
}  // namespace ferry::client
