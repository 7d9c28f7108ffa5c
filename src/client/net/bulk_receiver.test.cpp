// The bulk receiver: a read's data lands in its destination, completes the
// read's data part, and a server that sends what nobody asked for ends the
// session without touching memory.
#include "client/net/bulk_receiver.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "protocol/frame.hpp"

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

TEST_F(bulk_receiver_test, bytes_awaited_without_an_event_tell_their_waiter_once_all_came) {
  destination.assign(16, 0xEE);
  std::atomic<int> landed{-1};
  ASSERT_TRUE(parts.receiver.expect_bytes(46, destination.data(), 16, [&](bool whole) { landed = whole; }));
  parts.receiver.start(parts.link.bulk(), parts.link.generation());
  send(46, 0, 8, 16);
  send(46, 8, 8, 16);
  ASSERT_TRUE(testing::eventually([&] { return landed.load() >= 0; }));
  EXPECT_EQ(landed.load(), 1);
  EXPECT_EQ(destination, counting(16));
  EXPECT_FALSE(parts.receiver.forget_bytes(46));  // already done
}

TEST_F(bulk_receiver_test, bytes_forgotten_or_abandoned_end_their_waiter_at_most_once) {
  std::vector<uint8_t> a(4), b(4);
  int told = 0, told_false = 0;
  ASSERT_TRUE(parts.receiver.expect_bytes(47, a.data(), 4, [&](bool) { ++told; }));
  ASSERT_TRUE(parts.receiver.expect_bytes(48, b.data(), 4, [&](bool whole) { told_false += !whole; }));
  EXPECT_EQ(parts.receiver.abandon(47), nullptr);  // not an OpenCL read's
  EXPECT_TRUE(parts.receiver.forget_bytes(47));
  EXPECT_FALSE(parts.receiver.forget_bytes(47));
  EXPECT_TRUE(parts.receiver.abandon_all().empty());
  EXPECT_EQ(told, 0);        // forgotten: never told
  EXPECT_EQ(told_false, 1);  // the session ended: told that nothing comes
  EXPECT_FALSE(parts.receiver.forget_bytes(48));
}

/// A daemon's side of a read window the receiver offered (version 8).
class read_window_test : public bulk_receiver_test {
 protected:
  void SetUp() override {
    std::string why;
    parts.read_window_offer = [this](uint64_t) {
      std::string why;
      auto window = bulk_window::create(1, protocol::max_bulk_chunk, why);
      if (window)
        daemon_side = bulk_window::adopt(unique_fd(::dup(window->fd())), 1, protocol::max_bulk_chunk,
                                         protocol::max_bulk_chunk, why);
      ++offers;
      return window;
    };
  }
  void send_window_chunk(const protocol::read_window_chunk& c) {
    std::vector<uint8_t> frame;
    protocol::append_frame(frame, c);
    ASSERT_TRUE(write_all(server.bulk.get(), frame.data(), frame.size()));
  }

  std::unique_ptr<bulk_window> daemon_side;
  int offers = 0;
};

TEST_F(read_window_test, after_a_full_chunk_a_read_window_is_offered_and_its_chunks_land_and_free_their_slot) {
  fake_event read{50};
  const uint64_t total = protocol::max_bulk_chunk + 1000;
  await(read, total);
  send(50, 0, protocol::max_bulk_chunk, total);  // a full chunk: this stream carries large reads
  ASSERT_TRUE(testing::eventually([&] { return offers == 1; }));
  ASSERT_TRUE(daemon_side);
  const std::vector<uint8_t> data = counting(total);
  std::memcpy(daemon_side->slot(0), data.data() + protocol::max_bulk_chunk, 1000);
  send_window_chunk({50, protocol::max_bulk_chunk, total, 0, 1000});
  daemon_side->slot_sent();
  ASSERT_TRUE(parts.sink.wait_for_parts(read, 1));
  EXPECT_EQ(destination, data);
  uint32_t slot = 9;
  EXPECT_TRUE(daemon_side->wait_for_slot(5000, slot)) << "the client kept the slot";
  EXPECT_EQ(slot, 0u);
  EXPECT_EQ(parts.link.received_bulk, 2u) << "a window chunk counts as a bulk frame";
  EXPECT_EQ(offers, 1);
}

TEST_F(read_window_test, a_read_window_chunk_without_a_window_ends_the_session) {
  fake_event read{51};
  await(read, 100);
  send_window_chunk({51, 0, 100, 0, 100});
  ASSERT_TRUE(ends(parts.link));
  EXPECT_EQ(destination, std::vector<uint8_t>(100, 0xEE));
  EXPECT_EQ(offers, 0);
}

TEST_F(read_window_test, a_read_window_chunk_outside_the_window_or_its_read_ends_the_session) {
  for (protocol::read_window_chunk bad : {protocol::read_window_chunk{52, protocol::max_bulk_chunk, 0, 1, 10},
                                          protocol::read_window_chunk{52, protocol::max_bulk_chunk, 0, 0,
                                                                      protocol::max_bulk_chunk + 1},
                                          protocol::read_window_chunk{52, UINT64_MAX - 5, 0, 0, 10}}) {
    connection_parts fresh;
    std::unique_ptr<bulk_window> kept;
    fresh.read_window_offer = [&](uint64_t) {
      std::string why;
      auto window = bulk_window::create(1, protocol::max_bulk_chunk, why);
      kept = bulk_window::adopt(unique_fd(::dup(window->fd())), 1, protocol::max_bulk_chunk,
                                protocol::max_bulk_chunk, why);
      return window;
    };
    testing::server_end theirs = fresh.attach();
    const uint64_t total = protocol::max_bulk_chunk + 100;
    bad.total = total;
    fake_event read{52};
    std::vector<uint8_t> into(total, 0xEE);
    fresh.receiver.expect_data(52, into.data(), total, recording_sink::handle(read));
    fresh.receiver.start(fresh.link.bulk(), fresh.link.generation());
    const std::vector<uint8_t> data = counting(total);
    ASSERT_TRUE(write_bulk_frame(theirs.bulk.get(), 52, 0, total, data.data(), protocol::max_bulk_chunk));
    ASSERT_TRUE(testing::eventually([&] { return kept != nullptr; }));
    std::vector<uint8_t> frame;
    protocol::append_frame(frame, bad);
    ASSERT_TRUE(write_all(theirs.bulk.get(), frame.data(), frame.size()));
    EXPECT_TRUE(ends(fresh.link)) << "slot " << bad.slot << " size " << bad.size << " offset " << bad.offset;
    EXPECT_TRUE(std::all_of(into.begin() + protocol::max_bulk_chunk, into.end(), [](uint8_t b) { return b == 0xEE; }));
  }
}

}  // namespace
}  // namespace ferry::client
