#include "server/transfer_table.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace ferry::server {
namespace {

// The dry API, recording the statuses set on user events.
std::mutex recorded_mutex;
std::vector<std::pair<cl_event, cl_int>> recorded;

cl_int record_status(cl_event event, cl_int status) {
  std::lock_guard lock(recorded_mutex);
  recorded.emplace_back(event, status);
  return CL_SUCCESS;
}

const native::api& recording_api() {
  static const native::api table = [] {
    native::api t = native::dry_api();
    t.clSetUserEventStatus = &record_status;
    return t;
  }();
  return table;
}

class transfer_table_test : public ::testing::Test {
 protected:
  void SetUp() override {
    std::lock_guard lock(recorded_mutex);
    recorded.clear();
  }
  cl_event user_event() {
    cl_int error;
    return recording_api().clCreateUserEvent(nullptr, &error);
  }
  void send(transfer_table& table, uint64_t transfer, uint64_t offset, const std::vector<uint8_t>& bytes,
            uint64_t total) {
    uint8_t* destination = nullptr;
    std::string why;
    ASSERT_TRUE(table.begin_chunk(transfer, offset, bytes.size(), total, destination, why)) << why;
    std::memcpy(destination, bytes.data(), bytes.size());
    table.end_chunk(transfer, bytes.size());
  }
};

TEST_F(transfer_table_test, bytes_first_then_the_command_finds_them_complete) {
  transfer_table table(recording_api());
  send(table, 7, 0, {1, 2, 3}, 6);
  send(table, 7, 3, {4, 5, 6}, 6);
  uint8_t* data = nullptr;
  std::string why;
  ASSERT_EQ(table.claim(7, 6, data, why), transfer_table::claim_result::complete);
  EXPECT_EQ(std::vector<uint8_t>(data, data + 6), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  table.write_finished(7);
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(transfer_table_test, command_first_waits_on_a_user_event_set_by_the_last_byte) {
  transfer_table table(recording_api());
  uint8_t* data = nullptr;
  std::string why;
  ASSERT_EQ(table.claim(9, 4, data, why), transfer_table::claim_result::pending);
  cl_event gate = user_event();
  ASSERT_TRUE(table.attach_user_event(9, gate));
  send(table, 9, 2, {3, 4}, 4);
  {
    std::lock_guard lock(recorded_mutex);
    EXPECT_TRUE(recorded.empty());
  }
  send(table, 9, 0, {1, 2}, 4);
  {
    std::lock_guard lock(recorded_mutex);
    ASSERT_EQ(recorded.size(), 1u);
    EXPECT_EQ(recorded[0], std::make_pair(gate, CL_COMPLETE));
  }
  EXPECT_EQ(std::vector<uint8_t>(data, data + 4), (std::vector<uint8_t>{1, 2, 3, 4}));
  int64_t live = native::dry_live_handles();
  table.write_finished(9);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(native::dry_live_handles(), live - 1) << "the user event is released with the entry";
}

TEST_F(transfer_table_test, inconsistent_sizes_are_refused) {
  transfer_table table(recording_api());
  send(table, 1, 0, {1}, 4);
  uint8_t* destination = nullptr;
  std::string why;
  EXPECT_FALSE(table.begin_chunk(1, 1, 1, 5, destination, why));
  EXPECT_NE(why.find("announced"), std::string::npos);
  EXPECT_FALSE(table.begin_chunk(1, 0, 4, 4, destination, why)) << "more bytes than the transfer has left";
  uint8_t* data;
  EXPECT_EQ(table.claim(1, 8, data, why), transfer_table::claim_result::conflict);
  EXPECT_EQ(table.claim(1, 4, data, why), transfer_table::claim_result::pending);
  EXPECT_EQ(table.claim(1, 4, data, why), transfer_table::claim_result::conflict) << "claimed twice";
}

TEST_F(transfer_table_test, abandoned_transfers_are_dropped_once_their_bytes_arrive) {
  transfer_table table(recording_api());
  table.abandon(3);  // before any byte
  EXPECT_EQ(table.size(), 1u);
  send(table, 3, 0, {1, 2}, 2);
  EXPECT_EQ(table.size(), 0u);
  send(table, 4, 0, {1}, 2);
  table.abandon(4);  // half way
  EXPECT_EQ(table.size(), 1u);
  send(table, 4, 1, {2}, 2);
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(transfer_table_test, wait_complete_returns_when_the_last_byte_lands_or_on_abort) {
  transfer_table table(recording_api());
  auto waiter = std::async(std::launch::async, [&] {
    uint8_t* data = nullptr;
    uint64_t total = 0;
    bool ok = table.wait_complete(5, data, total);
    return ok && total == 3 && data[2] == 9;
  });
  send(table, 5, 0, {7, 8}, 3);
  EXPECT_EQ(waiter.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  send(table, 5, 2, {9}, 3);
  EXPECT_TRUE(waiter.get());
  table.erase(5);

  auto aborted = std::async(std::launch::async, [&] {
    uint8_t* data = nullptr;
    uint64_t total = 0;
    return table.wait_complete(6, data, total);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  table.abort();
  EXPECT_FALSE(aborted.get());
}

TEST_F(transfer_table_test, teardown_fails_user_events_of_writes_still_waiting) {
  transfer_table table(recording_api());
  uint8_t* data;
  std::string why;
  ASSERT_EQ(table.claim(2, 10, data, why), transfer_table::claim_result::pending);
  cl_event gate = user_event();
  ASSERT_TRUE(table.attach_user_event(2, gate));
  table.fail_pending_user_events(CL_DEVICE_NOT_AVAILABLE);
  {
    std::lock_guard lock(recorded_mutex);
    ASSERT_EQ(recorded.size(), 1u);
    EXPECT_EQ(recorded[0], std::make_pair(gate, CL_DEVICE_NOT_AVAILABLE));
  }
  int64_t live = native::dry_live_handles();
  table.clear();
  EXPECT_EQ(native::dry_live_handles(), live - 1);
}

}  // namespace
}  // namespace ferry::server
