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

/// A receiver reading the bulk stream, and one read it awaits.
class bulk_receiver_test : public ::testing::Test {
 protected:
  /// Awaits `size` bytes of transfer `read.command` into `destination`
  /// (filled with 0xEE first), and starts the bulk reader.
  void await(fake_event& read, size_t size) {
    destination.assign(size, 0xEE);
    parts.receiver.expect_data(read.command, destination.data(), size, recording_sink::handle(read));
    parts.receiver.start(parts.link.bulk(), parts.link.generation());
  }
  /// The server sends bytes [offset, offset + size) of a transfer of `total` bytes.
  void send(protocol::object_id transfer, uint64_t offset, uint64_t size, uint64_t total) {
    const std::vector<uint8_t> data = counting(total);
    ASSERT_TRUE(write_bulk_frame(server.bulk.get(), transfer, offset, total, data.data() + offset, size));
  }

  connection_parts parts;
  testing::server_end server = parts.attach();
  std::vector<uint8_t> destination;
};

TEST_F(bulk_receiver_test, bulk_data_lands_in_its_destination_and_completes_the_read) {
  fake_event read{40};
  await(read, 16);
  send(40, 8, 8, 16);  // chunks may come in any order
  send(40, 0, 8, 16);
  ASSERT_TRUE(parts.sink.wait_for_parts(read, 1));

  EXPECT_EQ(destination, counting(16));
  const fake_event seen = parts.sink.snapshot(read);
  EXPECT_EQ(seen.parts, std::vector<cl_int>{CL_COMPLETE});
  EXPECT_EQ(seen.holds, 1);
  EXPECT_EQ(seen.releases, 1);
  EXPECT_EQ(parts.link.received_bulk, 2u);
}

TEST_F(bulk_receiver_test, a_shorter_read_of_a_content_size_buffer_leaves_the_rest_as_it_was) {
  fake_event read{41};
  await(read, 16);
  send(41, 0, 10, 10);
  ASSERT_TRUE(parts.sink.wait_for_parts(read, 1));
  std::vector<uint8_t> expected = counting(10);
  expected.resize(16, 0xEE);
  EXPECT_EQ(destination, expected);
}

TEST_F(bulk_receiver_test, data_beyond_its_read_ends_the_session_and_touches_nothing) {
  fake_event read{42};
  await(read, 4);
  send(42, 0, 8, 8);
  ASSERT_TRUE(ends(parts.link));
  EXPECT_EQ(destination, std::vector<uint8_t>(4, 0xEE));
  EXPECT_TRUE(parts.sink.snapshot(read).parts.empty());
}

TEST_F(bulk_receiver_test, data_for_an_unknown_transfer_ends_the_session) {
  parts.receiver.start(parts.link.bulk(), parts.link.generation());
  send(43, 0, 8, 8);
  EXPECT_TRUE(ends(parts.link));
}

TEST_F(bulk_receiver_test, a_failed_read_is_abandoned_with_the_event_it_held) {
  fake_event read{44};
  destination.resize(4);
  parts.receiver.expect_data(44, destination.data(), destination.size(), recording_sink::handle(read));
  EXPECT_EQ(parts.receiver.abandon(45), nullptr);
  EXPECT_EQ(parts.receiver.abandon(44), recording_sink::handle(read));
  EXPECT_EQ(parts.receiver.abandon(44), nullptr);  // once
}

}  // namespace
}  // namespace ferry::client
