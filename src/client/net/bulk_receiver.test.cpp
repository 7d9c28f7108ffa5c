// The bulk receiver: a read's data lands in its destination, completes the
// read's data part, and a server that sends what nobody asked for ends the
// session without touching memory.
#include "client/net/bulk_receiver.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "client/net/test_parts.hpp"

namespace ferry::client {
namespace {

using testing::connection_parts;
using testing::fake_event;
using testing::recording_sink;

std::vector<uint8_t> counting(size_t size) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i + 1);
  return bytes;
}

/// Whether the session ends within a few seconds.
bool ends(const link_state& link) {
  return testing::eventually([&] { return link.ended.load(); });
}

TEST(bulk_receiver, bulk_data_lands_in_its_destination_and_completes_the_read) {
  connection_parts parts;
  auto server = parts.attach();
  fake_event read{40};
  std::vector<uint8_t> destination(16, 0xEE);
  parts.receiver.expect_data(40, destination.data(), destination.size(), recording_sink::handle(read));
  parts.receiver.start(parts.link.bulk(), parts.link.generation());

  const std::vector<uint8_t> data = counting(16);
  ASSERT_TRUE(write_bulk_frame(server.bulk.get(), 40, 8, 16, data.data() + 8, 8));  // chunks may come in any order
  ASSERT_TRUE(write_bulk_frame(server.bulk.get(), 40, 0, 16, data.data(), 8));
  ASSERT_TRUE(parts.sink.wait_for_parts(read, 1));

  EXPECT_EQ(destination, data);
  const fake_event seen = parts.sink.snapshot(read);
  EXPECT_EQ(seen.parts, std::vector<cl_int>{CL_COMPLETE});
  EXPECT_EQ(seen.holds, 1);
  EXPECT_EQ(seen.releases, 1);
  EXPECT_EQ(parts.link.received_bulk, 2u);
}

TEST(bulk_receiver, a_shorter_read_of_a_content_size_buffer_leaves_the_rest_as_it_was) {
  connection_parts parts;
  auto server = parts.attach();
  fake_event read{41};
  std::vector<uint8_t> destination(16, 0xEE);
  parts.receiver.expect_data(41, destination.data(), destination.size(), recording_sink::handle(read));
  parts.receiver.start(parts.link.bulk(), parts.link.generation());

  const std::vector<uint8_t> data = counting(10);
  ASSERT_TRUE(write_bulk_frame(server.bulk.get(), 41, 0, 10, data.data(), 10));
  ASSERT_TRUE(parts.sink.wait_for_parts(read, 1));
  EXPECT_TRUE(std::equal(data.begin(), data.end(), destination.begin()));
  EXPECT_EQ(std::vector<uint8_t>(destination.begin() + 10, destination.end()), std::vector<uint8_t>(6, 0xEE));
}

TEST(bulk_receiver, data_beyond_its_read_ends_the_session_and_touches_nothing) {
  connection_parts parts;
  auto server = parts.attach();
  fake_event read{42};
  std::vector<uint8_t> destination(4, 0xEE);
  parts.receiver.expect_data(42, destination.data(), destination.size(), recording_sink::handle(read));
  parts.receiver.start(parts.link.bulk(), parts.link.generation());

  const std::vector<uint8_t> data = counting(8);
  ASSERT_TRUE(write_bulk_frame(server.bulk.get(), 42, 0, 8, data.data(), 8));
  ASSERT_TRUE(ends(parts.link));
  EXPECT_EQ(destination, std::vector<uint8_t>(4, 0xEE));
  EXPECT_TRUE(parts.sink.snapshot(read).parts.empty());
}

TEST(bulk_receiver, data_for_an_unknown_transfer_ends_the_session) {
  connection_parts parts;
  auto server = parts.attach();
  parts.receiver.start(parts.link.bulk(), parts.link.generation());
  const std::vector<uint8_t> data = counting(8);
  ASSERT_TRUE(write_bulk_frame(server.bulk.get(), 43, 0, 8, data.data(), 8));
  EXPECT_TRUE(ends(parts.link));
}

TEST(bulk_receiver, a_failed_read_is_abandoned_with_the_event_it_held) {
  connection_parts parts;
  fake_event read{44};
  std::vector<uint8_t> destination(4);
  parts.receiver.expect_data(44, destination.data(), destination.size(), recording_sink::handle(read));
  EXPECT_EQ(parts.receiver.abandon(45), nullptr);
  EXPECT_EQ(parts.receiver.abandon(44), recording_sink::handle(read));
  EXPECT_EQ(parts.receiver.abandon(44), nullptr);  // once
}

}  // namespace
}  // namespace ferry::client
