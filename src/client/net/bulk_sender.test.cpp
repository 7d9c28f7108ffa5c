// The bulk sender: chunks go out in order and stay in the log until the
// server acknowledges them; offline they wait in the log; a blocking write
// of borrowed memory returns only once the server has it.
#include "client/net/bulk_sender.hpp"

#include <gtest/gtest.h>

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "client/net/test_parts.hpp"
#include "protocol/limits.hpp"

namespace ferry::client {
namespace {

using testing::connection_parts;
using testing::server_end;

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

/// Reads bulk frames off one connection of a session (the bulk stream or a
/// lane) on a thread of its own, until `enough()`, placing each chunk into
/// `into` and counting its frames and bytes.
class chunk_collector {
 public:
  chunk_collector(stream& from, std::vector<uint8_t>& into, std::mutex& mutex, std::function<bool()> enough)
      : thread_([this, &from, &into, &mutex, enough] {
          while (!enough()) {
            pollfd ready{from.fd(), POLLIN, 0};
            if (::poll(&ready, 1, 10) <= 0) continue;
            std::vector<uint8_t> bytes;
            const protocol::bulk_data prefix = server_end::receive_bulk_on(from, bytes);
            std::lock_guard lock(mutex);
            if (prefix.offset + bytes.size() > into.size()) {
              ADD_FAILURE() << "a chunk beyond the transfer";
              return;
            }
            std::copy(bytes.begin(), bytes.end(), into.begin() + static_cast<std::ptrdiff_t>(prefix.offset));
            offsets.push_back(prefix.offset);
            bytes_read += bytes.size();
            transfers_seen.push_back(prefix.transfer);
          }
        }) {}
  ~chunk_collector() { join(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

  std::vector<uint64_t> offsets;  // of the chunks read, in order
  std::vector<protocol::object_id> transfers_seen;
  std::atomic<uint64_t> bytes_read{0};

 private:
  std::thread thread_;
};

// Striped: the caller's thread blocks on its first chunk to the bulk stream (nobody
// reads it yet) while the two lanes' threads carry the rest; every chunk comes once, at
// its place, and each connection's frames are counted on their own.
TEST(bulk_sender, a_large_transfer_is_striped_over_the_lanes_each_chunk_once) {
  connection_parts parts;
  auto server = parts.attach(3);
  const std::vector<uint8_t> data = pattern(5 * size_t{protocol::max_bulk_chunk});
  ASSERT_GE(data.size(), bulk_sender::stripe_from);
  std::vector<uint8_t> received(data.size());
  std::mutex mutex;
  std::atomic<uint64_t> total{0};
  std::thread writer(
      [&] { EXPECT_TRUE(parts.sender.send_data(10, data.data(), data.size(), bytes_lifetime::until_completion, 1)); });
  std::vector<std::unique_ptr<chunk_collector>> lanes;
  auto all_here = [&] {
    uint64_t sum = 0;
    for (auto& lane : lanes) sum += lane->bytes_read;
    return sum;
  };
  for (auto& lane : server.lanes)
    lanes.push_back(std::make_unique<chunk_collector>(*lane, received, mutex, [&] { return total >= data.size(); }));
  // The lanes take at least four of the five chunks: the bulk stream holds at most one
  // while nobody reads it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (all_here() < 4 * protocol::max_bulk_chunk && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_GE(all_here(), 4 * protocol::max_bulk_chunk) << "the lanes did not carry the chunks the bulk stream could not";
  chunk_collector bulk(*server.bulk, received, mutex, [&] { return total >= data.size(); });
  while (std::chrono::steady_clock::now() < deadline) {
    total = all_here() + bulk.bytes_read;
    if (total >= data.size()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  writer.join();
  bulk.join();
  for (auto& lane : lanes) lane->join();
  ASSERT_EQ(total.load(), data.size());
  std::vector<uint64_t> offsets = bulk.offsets;
  for (auto& lane : lanes) offsets.insert(offsets.end(), lane->offsets.begin(), lane->offsets.end());
  std::sort(offsets.begin(), offsets.end());
  EXPECT_EQ(std::adjacent_find(offsets.begin(), offsets.end()), offsets.end()) << "a chunk came twice";
  EXPECT_EQ(offsets.size(), 5u);
  EXPECT_TRUE(received == data);
  EXPECT_LE(bulk.offsets.size(), 1u);
  // Frames are counted per connection: the server's counts of each.
  std::vector<uint64_t> lane_frames;
  for (auto& lane : lanes) lane_frames.push_back(lane->offsets.size());
  EXPECT_TRUE(parts.sender.acknowledge(bulk.offsets.size()));
  EXPECT_FALSE(parts.sender.acknowledge_lanes({lane_frames[0] + 1, lane_frames[1]})) << "more than lane 1 sent";
  EXPECT_TRUE(parts.sender.acknowledge_lanes(lane_frames));
}

TEST(bulk_sender, a_blocking_striped_write_returns_once_every_lane_is_acknowledged) {
  connection_parts parts;
  auto server = parts.attach(2);
  const std::vector<uint8_t> data = pattern(4 * size_t{protocol::max_bulk_chunk} + 9);
  std::vector<uint8_t> received(data.size());
  std::mutex mutex;
  std::atomic<bool> returned{false};
  std::atomic<uint64_t> total{0};
  std::thread writer([&] {
    EXPECT_TRUE(parts.sender.send_data(12, data.data(), data.size(), bytes_lifetime::until_return, 0));
    returned = true;
  });
  chunk_collector bulk(*server.bulk, received, mutex, [&] { return total >= data.size(); });
  chunk_collector lane(*server.lanes[0], received, mutex, [&] { return total >= data.size(); });
  ASSERT_TRUE(testing::eventually([&] { return (total = bulk.bytes_read + lane.bytes_read) >= data.size(); }));
  bulk.join();
  lane.join();
  EXPECT_TRUE(received == data);
  EXPECT_FALSE(returned);
  EXPECT_TRUE(parts.sender.acknowledge(bulk.offsets.size()));
  if (!lane.offsets.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(returned) << "returned before the lane's frames were acknowledged";
  }
  EXPECT_TRUE(parts.sender.acknowledge_lanes({lane.offsets.size()}));
  writer.join();
  EXPECT_TRUE(returned);
}

TEST(bulk_sender, a_lane_ack_for_frames_never_sent_or_lanes_that_cannot_be_is_refused) {
  connection_parts parts;
  auto server = parts.attach(2);
  EXPECT_TRUE(parts.sender.acknowledge_lanes({}));
  EXPECT_TRUE(parts.sender.acknowledge_lanes({0, 0}));
  EXPECT_FALSE(parts.sender.acknowledge_lanes({1}));
  EXPECT_FALSE(parts.sender.acknowledge_lanes(std::vector<uint64_t>(protocol::max_bulk_lanes, 0)));
}

TEST(bulk_sender, a_transfer_below_the_stripe_size_stays_on_the_bulk_stream) {
  connection_parts parts;
  auto server = parts.attach(4);
  const std::vector<uint8_t> data = pattern(bulk_sender::stripe_from - 1);
  std::vector<uint8_t> received(data.size());
  std::mutex mutex;
  std::atomic<uint64_t> total{0};
  std::thread writer(
      [&] { EXPECT_TRUE(parts.sender.send_data(14, data.data(), data.size(), bytes_lifetime::until_completion, 1)); });
  chunk_collector bulk(*server.bulk, received, mutex, [&] { return total >= data.size(); });
  ASSERT_TRUE(testing::eventually([&] { return (total = bulk.bytes_read.load()) >= data.size(); }));
  writer.join();
  bulk.join();
  EXPECT_TRUE(received == data);
  for (auto& lane : server.lanes) {
    uint8_t byte;
    EXPECT_TRUE(lane->try_read_some(&byte, 1) < 0 && errno == EAGAIN) << "a lane carried a small transfer";
  }
}

}  // namespace
}  // namespace ferry::client
