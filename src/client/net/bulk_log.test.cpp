// The client's bulk replay log: how a frame holds its bytes (copied, kept, borrowed),
// and that a borrowed write lets go of the application's memory before the application
// may reuse it.
#include "client/net/bulk_log.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace ferry::client {
namespace {

using hold = bulk_log::hold;

/// The bytes replay would send again after `received` frames, in order.
std::vector<uint8_t> replayed(const bulk_log& log, uint64_t received) {
  std::vector<uint8_t> out;
  EXPECT_TRUE(log.replay(received, [&](const bulk_log::frame& f) {
    out.insert(out.end(), f.data, f.data + f.size);
    return true;
  }));
  return out;
}

// A bulk lane carries some chunks of a striped transfer, never its last one: the lane's
// share ends (end_transfer) and, once acknowledged, borrows nothing.
TEST(bulk_log, a_share_of_a_striped_transfer_stops_borrowing_once_ended_and_acknowledged) {
  bulk_log log;
  std::vector<uint8_t> memory(300, 7);
  log.append(10, 0, 300, memory.data(), 100, hold::borrow, {}, 1);
  log.append(10, 200, 300, memory.data() + 200, 50, hold::borrow, {}, 1);  // not the transfer's end
  log.written(2);
  ASSERT_TRUE(log.acknowledge(2));
  EXPECT_TRUE(log.borrowing()) << "more chunks of the transfer may come to this log";
  log.end_transfer(10);
  EXPECT_FALSE(log.borrowing());
  // Ended before acknowledged: borrowing until the acknowledgement; a settled one is gone at once.
  log.append(11, 0, 300, memory.data(), 100, hold::borrow, {}, 1);
  log.written(3);
  log.end_transfer(11);
  EXPECT_TRUE(log.borrowing());
  ASSERT_TRUE(log.acknowledge(3));
  EXPECT_FALSE(log.borrowing());
  log.append(12, 0, 300, memory.data(), 100, hold::borrow, {}, 2);
  log.written(4);
  EXPECT_EQ(log.settle(2, 12), 100u);
  log.end_transfer(12);
  EXPECT_FALSE(log.borrowing());
  log.end_transfer(99);  // never borrowed: nothing to do
}

TEST(bulk_log, a_borrowed_write_points_into_the_application_memory_until_acknowledged) {
  bulk_log log;
  std::vector<uint8_t> memory(100, 7);
  const auto& first = log.append(10, 0, 100, memory.data(), 60, hold::borrow, {}, 1);
  EXPECT_EQ(first.data, memory.data());
  const auto& second = log.append(10, 60, 100, memory.data() + 60, 40, hold::borrow, {}, 1);
  EXPECT_EQ(second.data, memory.data() + 60);
  log.written(2);
  EXPECT_TRUE(log.borrowing());
  EXPECT_EQ(log.borrowed_queue(10), 1u);
  ASSERT_TRUE(log.acknowledge(1));
  EXPECT_TRUE(log.borrowing());  // one frame still points into the memory
  ASSERT_TRUE(log.acknowledge(2));
  EXPECT_FALSE(log.borrowing());
  EXPECT_EQ(log.borrowed_queue(10), 0u);
}

TEST(bulk_log, settling_copies_the_unacknowledged_frames_of_the_queue_up_to_the_command) {
  bulk_log log;
  std::vector<uint8_t> a(50, 1), b(50, 2), c(50, 3);
  log.append(10, 0, 50, a.data(), 50, hold::borrow, {}, 1);  // queue 1, command 10
  log.append(20, 0, 50, b.data(), 50, hold::borrow, {}, 2);  // another queue
  log.append(30, 0, 50, c.data(), 50, hold::borrow, {}, 1);  // queue 1, a later command
  log.written(3);
  // Command 25 of queue 1 completed: command 10 is before it, 30 after it.
  EXPECT_EQ(log.settle(1, 25), 50u);
  EXPECT_EQ(log.borrowed_queue(10), 0u);
  EXPECT_EQ(log.borrowed_queue(20), 2u);
  EXPECT_EQ(log.borrowed_queue(30), 1u);
  // The application may now reuse the first write's memory; a resumption still sends
  // what the write held.
  std::fill(a.begin(), a.end(), 0xEE);
  std::vector<uint8_t> expected(50, 1);
  expected.insert(expected.end(), b.begin(), b.end());
  expected.insert(expected.end(), c.begin(), c.end());
  EXPECT_EQ(replayed(log, 0), expected);
  EXPECT_EQ(log.settle(1, 25), 0u);  // nothing left to copy
}

TEST(bulk_log, a_failed_command_settles_the_writes_of_every_queue_before_it) {
  // A command of another queue that waited for a write which failed early
  // fails too, and tells the application the write is over.
  bulk_log log;
  std::vector<uint8_t> a(50, 1), b(50, 2);
  log.append(10, 0, 50, a.data(), 50, hold::borrow, {}, 1);
  log.append(30, 0, 50, b.data(), 50, hold::borrow, {}, 2);
  log.written(2);
  EXPECT_EQ(log.settle_all(20), 50u);  // command 20 (queue 3) failed: write 10 settles, 30 is later
  EXPECT_EQ(log.borrowed_queue(10), 0u);
  EXPECT_EQ(log.borrowed_queue(30), 2u);
  std::fill(a.begin(), a.end(), 0);
  std::vector<uint8_t> expected(50, 1);
  expected.insert(expected.end(), b.begin(), b.end());
  EXPECT_EQ(replayed(log, 0), expected);
}

TEST(bulk_log, a_write_settled_while_still_being_sent_copies_its_later_chunks) {
  bulk_log log;
  std::vector<uint8_t> memory(100, 5);
  log.append(10, 0, 100, memory.data(), 50, hold::borrow, {}, 1);
  // Its command failed before the rest was appended (the server refused it at once).
  EXPECT_EQ(log.settle(1, 10), 50u);
  const auto& later = log.append(10, 50, 100, memory.data() + 50, 50, hold::borrow, {}, 1);
  EXPECT_NE(later.data, memory.data() + 50);
  std::fill(memory.begin(), memory.end(), 0);
  EXPECT_EQ(replayed(log, 0), std::vector<uint8_t>(100, 5));
  log.written(2);
  ASSERT_TRUE(log.acknowledge(2));
  EXPECT_FALSE(log.borrowing());
}

TEST(bulk_log, kept_bytes_are_shared_until_acknowledged_and_small_ones_copied) {
  bulk_log log;
  auto packed = std::make_shared<std::vector<uint8_t>>(80, 9);
  std::weak_ptr<std::vector<uint8_t>> watch = packed;
  const auto& f = log.append(10, 0, 80, packed->data(), 80, hold::keep, packed);
  EXPECT_EQ(f.data, packed->data());
  packed.reset();
  EXPECT_FALSE(watch.expired());  // the log holds it
  std::vector<uint8_t> small(8, 4);
  const auto& g = log.append(11, 0, 8, small.data(), 8, hold::copy);
  EXPECT_NE(g.data, small.data());
  EXPECT_FALSE(log.borrowing());
  log.written(2);
  ASSERT_TRUE(log.acknowledge(2));
  EXPECT_TRUE(watch.expired());
}

TEST(bulk_log, a_borrow_without_a_queue_is_the_waiting_sender_s_and_never_settled) {
  bulk_log log;
  std::vector<uint8_t> memory(100, 3);
  const auto& f = log.append(10, 0, 100, memory.data(), 100, hold::borrow);
  EXPECT_EQ(f.data, memory.data());
  EXPECT_FALSE(log.borrowing());
  EXPECT_EQ(log.settle(0, 10), 0u);
}

}  // namespace
}  // namespace ferry::client
