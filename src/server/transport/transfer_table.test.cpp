#include "server/transport/transfer_table.hpp"

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
    // No destination: the bytes are dropped (the reader reads them off the stream).
    if (!bytes.empty() && destination) std::memcpy(destination, bytes.data(), bytes.size());
    table.end_chunk(transfer, offset, bytes.size());
  }
};

TEST_F(transfer_table_test, bytes_first_then_the_command_finds_them_complete) {
  transfer_table table(recording_api());
  send(table, 7, 0, {1, 2, 3}, 6);
  send(table, 7, 3, {4, 5, 6}, 6);
  uint8_t* data = nullptr;
  std::string why;
  cl_int status = CL_SUCCESS;
  ASSERT_EQ(table.claim(7, 6, data, status, why), transfer_table::claim_result::complete);
  EXPECT_EQ(std::vector<uint8_t>(data, data + 6), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  table.write_finished(7);
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(transfer_table_test, command_first_waits_on_a_user_event_set_by_the_last_byte) {
  transfer_table table(recording_api());
  uint8_t* data = nullptr;
  std::string why;
  cl_int status = CL_SUCCESS;
  ASSERT_EQ(table.claim(9, 4, data, status, why), transfer_table::claim_result::pending);
  cl_event gate = user_event();
  // A whole write's gate: one piece that ends with the transfer.
  table.attach_piece_gates(9, {{4, gate}});
  const int64_t live = native::dry_live_handles();
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
  table.write_finished(9);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(native::dry_live_handles(), live - 1) << "the user event is released once set";
}

TEST_F(transfer_table_test, inconsistent_sizes_are_refused) {
  transfer_table table(recording_api());
  send(table, 1, 0, {1}, 4);
  uint8_t* destination = nullptr;
  std::string why;
  cl_int status = CL_SUCCESS;
  EXPECT_FALSE(table.begin_chunk(1, 1, 1, 5, destination, why));
  EXPECT_NE(why.find("announced"), std::string::npos);
  EXPECT_FALSE(table.begin_chunk(1, 0, 4, 4, destination, why)) << "over the byte already sent";
  uint8_t* data;
  EXPECT_EQ(table.claim(1, 8, data, status, why), transfer_table::claim_result::conflict);
  EXPECT_EQ(table.claim(1, 4, data, status, why), transfer_table::claim_result::pending);
  EXPECT_EQ(table.claim(1, 4, data, status, why), transfer_table::claim_result::conflict) << "claimed twice";
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
    cl_int status = CL_INVALID_VALUE;
    bool ok = table.wait_complete(5, data, total, status);
    return ok && status == CL_SUCCESS && total == 3 && data[2] == 9;
  });
  send(table, 5, 0, {7, 8}, 3);
  EXPECT_EQ(waiter.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  send(table, 5, 2, {9}, 3);
  EXPECT_TRUE(waiter.get());
  table.erase(5);

  auto aborted = std::async(std::launch::async, [&] {
    uint8_t* data = nullptr;
    uint64_t total = 0;
    cl_int status = CL_SUCCESS;
    return table.wait_complete(6, data, total, status);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  table.abort();
  EXPECT_FALSE(aborted.get());
}

TEST_F(transfer_table_test, teardown_fails_user_events_of_writes_still_waiting) {
  transfer_table table(recording_api());
  uint8_t* data;
  std::string why;
  cl_int status = CL_SUCCESS;
  ASSERT_EQ(table.claim(2, 10, data, status, why), transfer_table::claim_result::pending);
  cl_event gate = user_event();
  table.attach_piece_gates(2, {{10, gate}});
  const int64_t live = native::dry_live_handles();
  table.fail_pending(CL_DEVICE_NOT_AVAILABLE);
  {
    std::lock_guard lock(recorded_mutex);
    ASSERT_EQ(recorded.size(), 1u);
    EXPECT_EQ(recorded[0], std::make_pair(gate, CL_DEVICE_NOT_AVAILABLE));
  }
  table.clear();
  EXPECT_EQ(native::dry_live_handles(), live - 1);
}

}  // namespace
}  // namespace ferry::server

namespace ferry::server {
namespace {

TEST_F(transfer_table_test, an_at_most_claim_takes_fewer_bytes_that_came_first) {
  transfer_table table(recording_api());
  send(table, 11, 0, {1, 2, 3}, 3);
  uint8_t* data = nullptr;
  uint64_t total = 0;
  cl_int status = CL_SUCCESS;
  std::string why;
  ASSERT_EQ(table.claim_at_most(11, 8, data, total, status, why), transfer_table::claim_result::complete);
  EXPECT_EQ(total, 3u);
  EXPECT_EQ(std::vector<uint8_t>(data, data + 3), (std::vector<uint8_t>{1, 2, 3}));
  table.write_finished(11);
  EXPECT_EQ(table.size(), 0u);
  // More than the command takes: refused, and the bytes are dropped.
  send(table, 12, 0, {1, 2, 3}, 3);
  EXPECT_EQ(table.claim_at_most(12, 2, data, total, status, why), transfer_table::claim_result::conflict);
  EXPECT_EQ(table.size(), 0u);
}

// A landing that records what the table tells it; it takes chunks into its
// own memory once `open` is set.
struct recording_landing : transfer_table::landing {
  std::vector<uint8_t> memory = std::vector<uint8_t>(64, 0);
  bool open = false;
  int asked = 0;
  std::vector<uint8_t> staged_bytes;
  uint64_t staged = 0, total = 0;
  int landings = 0;
  std::vector<cl_int> failures;

  uint8_t* direct(uint64_t offset, uint64_t) override {
    ++asked;
    return open ? memory.data() + offset : nullptr;
  }
  void landed(uint8_t* staging, uint64_t staged_count, uint64_t total_count) override {
    staged_bytes.assign(staging, staging + staged_count);
    staged = staged_count;
    total = total_count;
    ++landings;
  }
  void failed(cl_int status) override { failures.push_back(status); }
  /// Each progressed(): staged, prefix, and the bytes [0, prefix) read where it said.
  struct report {
    uint64_t staged, prefix;
    std::vector<uint8_t> bytes;
  };
  std::vector<report> reports;
  void progressed(uint8_t* staging, uint64_t staged_count, uint64_t prefix) override {
    report r{staged_count, prefix, {}};
    for (uint64_t i = 0; i < prefix; ++i) r.bytes.push_back(i < staged_count ? staging[i] : memory[i]);
    reports.push_back(std::move(r));
  }
};

/// A pending claim of at most `limit` bytes of `transfer`, with a recording
/// landing attached (open: it takes chunks directly from the first).
std::shared_ptr<recording_landing> claim_with_landing(transfer_table& table, uint64_t transfer, uint64_t limit,
                                                      bool open = false) {
  uint8_t* data = nullptr;
  uint64_t total = 0;
  cl_int status = CL_SUCCESS;
  std::string why;
  EXPECT_EQ(table.claim_at_most(transfer, limit, data, total, status, why), transfer_table::claim_result::pending);
  auto to = std::make_shared<recording_landing>();
  to->open = open;
  EXPECT_TRUE(table.attach_landing(transfer, to, data, total));
  return to;
}

TEST_F(transfer_table_test, an_at_most_claim_lands_through_staging_once_the_size_is_known) {
  transfer_table table(recording_api());
  auto to = claim_with_landing(table, 13, 100);
  send(table, 13, 2, {3, 4}, 4);  // out of order: staging, not asked
  EXPECT_EQ(to->asked, 0);
  send(table, 13, 0, {1, 2}, 4);
  EXPECT_EQ(to->landings, 1);
  EXPECT_EQ(to->staged, 4u);
  EXPECT_EQ(to->total, 4u);
  EXPECT_EQ(to->staged_bytes, (std::vector<uint8_t>{1, 2, 3, 4}));
  EXPECT_TRUE(to->failures.empty());
  table.write_finished(13);
  EXPECT_EQ(table.size(), 0u);

  // Zero bytes land too.
  auto none = claim_with_landing(table, 14, 100);
  send(table, 14, 0, {}, 0);
  EXPECT_EQ(none->landings, 1);
  EXPECT_EQ(none->total, 0u);
  table.write_finished(14);
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(transfer_table_test, chunks_land_directly_once_the_landing_takes_them_and_earlier_ones_stay_staged) {
  transfer_table table(recording_api());
  std::string why;
  auto to = claim_with_landing(table, 20, 64);
  send(table, 20, 0, {1, 2}, 6);  // not open yet: staging
  to->open = true;
  send(table, 20, 2, {3, 4}, 6);
  send(table, 20, 4, {5, 6}, 6);
  EXPECT_EQ(to->landings, 1);
  EXPECT_EQ(to->staged, 2u) << "only the chunk before the landing opened is staged";
  EXPECT_EQ(to->staged_bytes, (std::vector<uint8_t>{1, 2}));
  EXPECT_EQ(std::vector<uint8_t>(to->memory.begin() + 2, to->memory.begin() + 6), (std::vector<uint8_t>{3, 4, 5, 6}));
  EXPECT_EQ(to->memory[0], 0) << "a staged chunk is not copied into the landing";
  table.write_finished(20);
  EXPECT_EQ(table.size(), 0u);

  // Once direct, the later chunks land there in any order (bulk lanes bring them so),
  // each at its place; one over bytes already sent is still refused.
  auto direct = claim_with_landing(table, 21, 64, true);
  send(table, 21, 0, {1, 2}, 8);
  send(table, 21, 6, {7, 8}, 8);
  send(table, 21, 2, {3, 4}, 8);
  uint8_t* destination = nullptr;
  EXPECT_FALSE(table.begin_chunk(21, 5, 2, 8, destination, why)) << "overlaps the chunk at 6";
  EXPECT_NE(why.find("overlaps"), std::string::npos) << why;
  send(table, 21, 4, {5, 6}, 8);
  EXPECT_EQ(direct->landings, 1);
  EXPECT_EQ(direct->staged, 0u);
  EXPECT_EQ(std::vector<uint8_t>(direct->memory.begin(), direct->memory.begin() + 8),
            (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  table.write_finished(21);
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(transfer_table_test, a_landing_learns_how_far_the_bytes_are_written_as_chunks_end) {
  transfer_table table(recording_api());
  std::string why;
  // Two chunks come before the claim: they are reported when the landing is attached.
  send(table, 30, 0, {1, 2}, 10);
  send(table, 30, 4, {5, 6}, 10);  // past a gap: not part of the prefix yet
  auto to = claim_with_landing(table, 30, 64);
  ASSERT_EQ(to->reports.size(), 1u);
  EXPECT_EQ(to->reports[0].prefix, 2u);
  EXPECT_EQ(to->reports[0].staged, 2u) << "before the first direct chunk every byte is in staging";
  EXPECT_EQ(to->reports[0].bytes, (std::vector<uint8_t>{1, 2}));
  send(table, 30, 2, {3, 4}, 10);  // fills the gap (staging: the chunks so far were no prefix)
  ASSERT_EQ(to->reports.size(), 2u);
  EXPECT_EQ(to->reports[1].prefix, 6u);
  EXPECT_EQ(to->reports[1].bytes, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  to->open = true;
  // A chunk still being read is not counted: the prefix stays until it ends.
  uint8_t* destination = nullptr;
  ASSERT_TRUE(table.begin_chunk(30, 6, 2, 10, destination, why)) << why;
  send(table, 30, 8, {9, 10}, 10);  // direct, past the chunk in flight
  EXPECT_EQ(to->reports.back().prefix, 6u);
  destination[0] = 7;
  destination[1] = 8;
  table.end_chunk(30, 6, 2);
  EXPECT_EQ(to->reports.size(), 3u) << "the last chunk lands (landed), it is no progress report";
  EXPECT_EQ(to->landings, 1);
  EXPECT_EQ(to->staged, 6u);
  table.write_finished(30);

  // Direct from the first chunk: staged stays 0, the bytes are read from the landing's memory.
  auto direct = claim_with_landing(table, 31, 64, true);
  EXPECT_TRUE(direct->reports.empty()) << "nothing is written yet";
  send(table, 31, 0, {1, 2}, 6);
  send(table, 31, 4, {5, 6}, 6);
  ASSERT_EQ(direct->reports.size(), 2u);
  EXPECT_EQ(direct->reports[1].staged, 0u);
  EXPECT_EQ(direct->reports[1].prefix, 2u) << "the chunk at 4 lies past a gap";
  EXPECT_EQ(direct->reports[1].bytes, (std::vector<uint8_t>{1, 2}));
  send(table, 31, 2, {3, 4}, 6);
  EXPECT_EQ(direct->reports.size(), 2u);
  EXPECT_EQ(direct->landings, 1);
  table.write_finished(31);
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(transfer_table_test, the_written_prefix_passes_a_chunk_that_ended_while_later_ones_are_still_read) {
  // Bulk lanes read several chunks of one transfer at once: the prefix is what lies below
  // the lowest chunk still being read, not what lay below the first chunk of the batch.
  transfer_table table(recording_api());
  std::string why;
  auto to = claim_with_landing(table, 40, 64, true);
  uint8_t* at0 = nullptr;
  uint8_t* at2 = nullptr;
  uint8_t* at4 = nullptr;
  ASSERT_TRUE(table.begin_chunk(40, 0, 2, 8, at0, why)) << why;
  ASSERT_TRUE(table.begin_chunk(40, 2, 2, 8, at2, why)) << why;
  ASSERT_TRUE(table.begin_chunk(40, 4, 2, 8, at4, why)) << why;
  at0[0] = 1, at0[1] = 2;
  table.end_chunk(40, 0, 2);
  ASSERT_EQ(to->reports.size(), 1u);
  EXPECT_EQ(to->reports[0].prefix, 2u) << "the chunk at 0 is written; the one at 2 is still being read";
  EXPECT_EQ(to->reports[0].bytes, (std::vector<uint8_t>{1, 2}));
  at4[0] = 5, at4[1] = 6;
  table.end_chunk(40, 4, 2);
  EXPECT_EQ(to->reports.back().prefix, 2u) << "the chunk at 2 is still being read";
  at2[0] = 3, at2[1] = 4;
  table.end_chunk(40, 2, 2);
  EXPECT_EQ(to->reports.back().prefix, 6u);
  EXPECT_EQ(to->reports.back().bytes, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  // A chunk whose connection broke is read again later: it holds the prefix back no more
  // than a gap does.
  ASSERT_TRUE(table.begin_chunk(40, 6, 2, 8, at0, why)) << why;
  table.abandon_chunk(40, 6, 2);
  send(table, 40, 6, {7, 8}, 8);
  EXPECT_EQ(to->landings, 1);
  table.write_finished(40);
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(transfer_table_test, an_abort_during_a_direct_chunk_fails_the_landing_after_that_chunk) {
  transfer_table table(recording_api());
  std::string why;
  auto to = claim_with_landing(table, 22, 64, true);
  uint8_t* destination = nullptr;
  ASSERT_TRUE(table.begin_chunk(22, 0, 2, 4, destination, why)) << why;
  EXPECT_EQ(destination, to->memory.data());
  EXPECT_FALSE(table.fail(22, -9)) << "the landing fails later, after the chunk";
  EXPECT_TRUE(to->failures.empty()) << "not while the reader still writes into its memory";
  destination[0] = 7;
  table.end_chunk(22, 0, 2);
  EXPECT_EQ(to->failures, (std::vector<cl_int>{-9}));
  send(table, 22, 2, {3, 4}, 4);  // dropped: the rest goes to staging and away
  EXPECT_EQ(to->landings, 0);
  EXPECT_EQ(to->memory[2], 0);
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(transfer_table_test, an_at_most_claim_fails_its_landing_on_too_many_bytes_an_abort_or_teardown) {
  transfer_table table(recording_api());
  std::string why;
  auto too_small = claim_with_landing(table, 15, 2);
  uint8_t* destination = nullptr;
  EXPECT_FALSE(table.begin_chunk(15, 0, 3, 3, destination, why));
  EXPECT_NE(why.find("more than"), std::string::npos) << why;
  EXPECT_EQ(too_small->failures, (std::vector<cl_int>{CL_INVALID_VALUE}));

  auto aborted = claim_with_landing(table, 16, 10);
  EXPECT_TRUE(table.fail(16, -5));
  send(table, 16, 0, {1, 2}, 2);  // dropped
  EXPECT_EQ(aborted->landings, 0);
  EXPECT_EQ(aborted->failures, (std::vector<cl_int>{-5}));

  auto left = claim_with_landing(table, 19, 10);
  send(table, 19, 0, {1}, 2);
  table.fail_pending(CL_DEVICE_NOT_AVAILABLE);
  EXPECT_EQ(left->failures, (std::vector<cl_int>{CL_DEVICE_NOT_AVAILABLE}));
  EXPECT_EQ(left->landings, 0);
  {
    std::lock_guard lock(recorded_mutex);
    EXPECT_TRUE(recorded.empty()) << "landings, not the table, set their gates";
  }
}

TEST_F(transfer_table_test, an_abort_before_the_claim_fails_it_at_once_and_drops_the_bytes) {
  transfer_table table(recording_api());
  uint8_t* data = nullptr;
  uint64_t total = 0;
  cl_int status = CL_SUCCESS;
  std::string why;
  EXPECT_FALSE(table.fail(17, -7));  // nothing waits yet
  ASSERT_EQ(table.claim_at_most(17, 10, data, total, status, why), transfer_table::claim_result::aborted);
  EXPECT_EQ(status, -7);
  send(table, 17, 0, {1}, 1);
  EXPECT_EQ(table.size(), 0u);
  // Bytes first, then the abort, then the claim.
  send(table, 18, 0, {1}, 1);
  EXPECT_FALSE(table.fail(18, -8));
  ASSERT_EQ(table.claim_at_most(18, 10, data, total, status, why), transfer_table::claim_result::aborted);
  EXPECT_EQ(status, -8);
  EXPECT_EQ(table.size(), 0u);
}

// Piece gates (a large write sent to the device while its bytes arrive).
class piece_gates_test : public transfer_table_test {
 protected:
  /// Claims `transfer` (`total` bytes), which must still be waiting for bytes; its staging.
  static uint8_t* claim_pending(transfer_table& table, uint64_t transfer, uint64_t total) {
    uint8_t* data = nullptr;
    std::string why;
    cl_int status = CL_SUCCESS;
    EXPECT_EQ(table.claim(transfer, total, data, status, why), transfer_table::claim_result::pending) << why;
    return data;
  }
  std::vector<std::pair<cl_event, cl_int>> set_so_far() {
    std::lock_guard lock(recorded_mutex);
    return recorded;
  }
};

TEST_F(piece_gates_test, each_gate_opens_once_the_bytes_before_its_end_are_in) {
  transfer_table table(recording_api());
  send(table, 4, 0, {1, 2}, 6);  // bytes before the gates: the first opens at once
  uint8_t* data = claim_pending(table, 4, 6);
  cl_event first = user_event(), second = user_event(), third = user_event();
  const int64_t live = native::dry_live_handles();
  table.attach_piece_gates(4, {{2, first}, {4, second}, {6, third}});
  EXPECT_EQ(set_so_far(), (std::vector<std::pair<cl_event, cl_int>>{{first, CL_COMPLETE}}));
  send(table, 4, 2, {3}, 6);
  EXPECT_EQ(set_so_far().size(), 1u) << "a gate opened before all of its piece was in";
  send(table, 4, 3, {4, 5}, 6);
  EXPECT_EQ(set_so_far(), (std::vector<std::pair<cl_event, cl_int>>{{first, CL_COMPLETE}, {second, CL_COMPLETE}}));
  send(table, 4, 5, {6}, 6);
  EXPECT_EQ(set_so_far().back(), std::make_pair(third, CL_COMPLETE));
  EXPECT_EQ(native::dry_live_handles(), live - 3) << "each gate is released once set";
  EXPECT_EQ(std::vector<uint8_t>(data, data + 6), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  table.write_finished(4);
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(piece_gates_test, chunks_out_of_order_keep_every_gate_shut_until_the_last_byte) {
  transfer_table table(recording_api());
  claim_pending(table, 5, 6);
  cl_event first = user_event(), second = user_event();
  table.attach_piece_gates(5, {{3, first}, {6, second}});
  // Staging behind a chunk that skipped ahead holds whatever was there before.
  send(table, 5, 3, {4, 5, 6}, 6);
  send(table, 5, 0, {1, 2}, 6);
  EXPECT_TRUE(set_so_far().empty()) << "a gate opened over bytes that had not come";
  send(table, 5, 2, {3}, 6);
  EXPECT_EQ(set_so_far(), (std::vector<std::pair<cl_event, cl_int>>{{first, CL_COMPLETE}, {second, CL_COMPLETE}}));
  table.write_finished(5);
}

TEST_F(piece_gates_test, gates_still_shut_fail_on_an_abort_or_teardown) {
  transfer_table table(recording_api());
  claim_pending(table, 6, 4);
  cl_event first = user_event(), second = user_event();
  table.attach_piece_gates(6, {{2, first}, {4, second}});
  send(table, 6, 0, {1, 2}, 4);
  EXPECT_TRUE(table.fail(6, CL_INVALID_OPERATION)) << "the caller sweeps after failed gates";
  EXPECT_EQ(set_so_far(),
            (std::vector<std::pair<cl_event, cl_int>>{{first, CL_COMPLETE}, {second, CL_INVALID_OPERATION}}));

  claim_pending(table, 7, 4);
  cl_event third = user_event();
  table.attach_piece_gates(7, {{4, third}});
  table.fail_pending(CL_DEVICE_NOT_AVAILABLE);
  EXPECT_EQ(set_so_far().back(), std::make_pair(third, CL_DEVICE_NOT_AVAILABLE));
  table.clear();
}

// Each byte of a transfer comes once (issue 18, item 1): recycled staging
// keeps another session's bytes wherever a chunk did not write.
TEST_F(transfer_table_test, a_chunk_over_bytes_already_sent_is_refused) {
  transfer_table table(recording_api());
  uint8_t* destination = nullptr;
  std::string why;
  send(table, 1, 0, {1, 2, 3, 4}, 8);
  EXPECT_FALSE(table.begin_chunk(1, 0, 4, 8, destination, why)) << "the same chunk twice";
  EXPECT_NE(why.find("overlaps"), std::string::npos) << why;
  EXPECT_FALSE(table.begin_chunk(1, 2, 4, 8, destination, why)) << "half over the first chunk";
  EXPECT_FALSE(table.begin_chunk(1, 3, 1, 8, destination, why)) << "inside the first chunk";
  // Out of order: the gaps and their neighbours are tracked too.
  send(table, 1, 6, {7, 8}, 8);
  EXPECT_FALSE(table.begin_chunk(1, 5, 2, 8, destination, why)) << "over the chunk after the gap";
  EXPECT_FALSE(table.begin_chunk(1, 3, 3, 8, destination, why)) << "across the gap's start";
  send(table, 1, 4, {5, 6}, 8);
  uint8_t* data = nullptr;
  cl_int status = CL_SUCCESS;
  ASSERT_EQ(table.claim(1, 8, data, status, why), transfer_table::claim_result::complete) << why;
  EXPECT_EQ(std::vector<uint8_t>(data, data + 8), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  table.write_finished(1);

  // The attack: two halves at offset 0 count as many bytes as the whole.
  send(table, 2, 0, {9, 9}, 4);
  EXPECT_FALSE(table.begin_chunk(2, 0, 2, 4, destination, why));
  ASSERT_EQ(table.claim(2, 4, data, status, why), transfer_table::claim_result::pending)
      << "complete with half of its bytes never written";
}

TEST_F(transfer_table_test, disjoint_chunks_in_any_order_complete_the_transfer) {
  transfer_table table(recording_api());
  send(table, 3, 6, {7, 8}, 8);
  send(table, 3, 0, {1, 2}, 8);
  send(table, 3, 4, {5, 6}, 8);
  uint8_t* data = nullptr;
  std::string why;
  cl_int status = CL_SUCCESS;
  ASSERT_EQ(table.claim(3, 8, data, status, why), transfer_table::claim_result::pending);
  send(table, 3, 2, {3, 4}, 8);
  EXPECT_EQ(std::vector<uint8_t>(data, data + 8), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  table.write_finished(3);
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(transfer_table_test, an_abandoned_chunk_frees_exactly_its_range_for_the_resent_one) {
  transfer_table table(recording_api());
  uint8_t* destination = nullptr;
  std::string why;
  send(table, 4, 0, {1, 2}, 8);
  send(table, 4, 6, {7, 8}, 8);
  // The connection breaks inside the middle chunk; the resumed session sends it again.
  ASSERT_TRUE(table.begin_chunk(4, 2, 4, 8, destination, why)) << why;
  destination[0] = 0xEE;
  table.abandon_chunk(4, 2, 4);
  EXPECT_FALSE(table.begin_chunk(4, 0, 2, 8, destination, why)) << "the chunks on both sides are still in";
  EXPECT_FALSE(table.begin_chunk(4, 6, 2, 8, destination, why)) << "the chunks on both sides are still in";
  send(table, 4, 2, {3, 4, 5, 6}, 8);
  uint8_t* data = nullptr;
  cl_int status = CL_SUCCESS;
  ASSERT_EQ(table.claim(4, 8, data, status, why), transfer_table::claim_result::complete) << why;
  EXPECT_EQ(std::vector<uint8_t>(data, data + 8), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  table.write_finished(4);

  // Inside a prefix that chunks in order built.
  send(table, 5, 0, {1, 2}, 6);
  ASSERT_TRUE(table.begin_chunk(5, 2, 2, 6, destination, why)) << why;
  table.abandon_chunk(5, 2, 2);
  send(table, 5, 4, {5, 6}, 6);
  send(table, 5, 2, {3, 4}, 6);
  ASSERT_EQ(table.claim(5, 6, data, status, why), transfer_table::claim_result::complete) << why;
  EXPECT_EQ(std::vector<uint8_t>(data, data + 6), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  table.write_finished(5);
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(transfer_table_test, chunks_scattered_over_too_many_ranges_are_refused) {
  transfer_table table(recording_api());
  const uint64_t total = 2 * (transfer_table::max_gaps + 2);
  uint8_t* destination = nullptr;
  std::string why;
  // Every other byte, after a gap at 0: one range each.
  for (uint64_t i = 0; i < transfer_table::max_gaps; ++i) send(table, 6, 1 + 2 * i, {1}, total);
  EXPECT_FALSE(table.begin_chunk(6, 1 + 2 * transfer_table::max_gaps, 1, total, destination, why));
  EXPECT_NE(why.find("scattered"), std::string::npos) << why;
  // A chunk that joins ranges is fine.
  EXPECT_TRUE(table.begin_chunk(6, 2, 1, total, destination, why)) << why;
}

TEST_F(transfer_table_test, a_landing_takes_chunks_directly_only_after_a_prefix_without_gaps) {
  transfer_table table(recording_api());
  std::string why;
  auto to = claim_with_landing(table, 23, 64, true);
  // A chunk after a gap: its staging is not all written before it.
  send(table, 23, 4, {5, 6}, 8);
  send(table, 23, 2, {3, 4}, 8);
  EXPECT_EQ(to->asked, 0) << "a chunk went direct with bytes before it never sent";
  send(table, 23, 0, {1, 2}, 8);
  EXPECT_EQ(to->asked, 0);
  // Now [0, 6) is in: the last chunk may go direct.
  send(table, 23, 6, {7, 8}, 8);
  EXPECT_EQ(to->asked, 1);
  ASSERT_EQ(to->landings, 1);
  EXPECT_EQ(to->staged, 6u);
  EXPECT_EQ(to->staged_bytes, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(to->memory[6], 7);
  table.write_finished(23);
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(piece_gates_test, a_gate_waits_for_a_chunk_still_being_read_below_it) {
  transfer_table table(recording_api());
  claim_pending(table, 8, 4);
  cl_event first = user_event(), second = user_event();
  table.attach_piece_gates(8, {{2, first}, {4, second}});
  // Two readers (the client's stream and a peer link) at once: the chunk at 0
  // has begun but its bytes are not there when the one after it ends.
  uint8_t* destination = nullptr;
  std::string why;
  ASSERT_TRUE(table.begin_chunk(8, 0, 2, 4, destination, why)) << why;
  send(table, 8, 2, {3, 4}, 4);
  EXPECT_TRUE(set_so_far().empty()) << "a gate opened over bytes still being read";
  table.end_chunk(8, 0, 2);
  EXPECT_EQ(set_so_far(), (std::vector<std::pair<cl_event, cl_int>>{{first, CL_COMPLETE}, {second, CL_COMPLETE}}));
  table.write_finished(8);
}

// Bytes that come before their command are weighed against the session's
// in-flight quota (issue 18, item 2).
class transfer_quota_test : public transfer_table_test {
 protected:
  static session_limits in_flight(uint64_t bytes) {
    session_limits limits;
    limits.in_flight = bytes;
    return limits;
  }
  /// Begins a chunk of `size` bytes at 0 of `transfer` (`total`): where its bytes go.
  static uint8_t* begin(transfer_table& table, uint64_t transfer, uint64_t size, uint64_t total) {
    uint8_t* destination = reinterpret_cast<uint8_t*>(&destination);  // not left as it was
    std::string why;
    EXPECT_TRUE(table.begin_chunk(transfer, 0, size, total, destination, why)) << why;
    return destination;
  }
};

TEST_F(transfer_quota_test, bytes_without_their_command_never_stage_past_the_quota) {
  session_quota quota(in_flight(1000), "test");
  {
    transfer_table table(recording_api(), &quota);
    for (uint64_t transfer = 1; transfer <= 50; ++transfer) {
      uint8_t* destination = begin(table, transfer, 100, 300);
      if (transfer <= 3) {
        EXPECT_NE(destination, nullptr) << "admitted: " << transfer;
      } else {
        EXPECT_EQ(destination, nullptr) << "refused, its bytes are dropped: " << transfer;
      }
      table.end_chunk(transfer, 0, 100);
      EXPECT_LE(quota.in_flight().bytes.load(), 1000u);
    }
    EXPECT_EQ(quota.in_flight().bytes.load(), 900u);
    EXPECT_EQ(quota.refusals(quota_kind::in_flight), 47u);
    EXPECT_EQ(table.size(), 50u);
  }
  EXPECT_EQ(quota.in_flight().bytes.load(), 0u);

  // Alone, a transfer larger than the quota is admitted, as a command's is.
  transfer_table table(recording_api(), &quota);
  EXPECT_NE(begin(table, 1, 10, 5000), nullptr);
  EXPECT_EQ(quota.in_flight().bytes.load(), 5000u);
}

TEST_F(transfer_quota_test, the_claim_of_a_refused_transfer_fails_with_out_of_resources) {
  session_quota quota(in_flight(100), "test");
  transfer_table table(recording_api(), &quota);
  send(table, 1, 0, std::vector<uint8_t>(60, 1), 60);  // held: the next are refused
  send(table, 2, 0, std::vector<uint8_t>(60, 2), 60);
  EXPECT_EQ(table.size(), 2u) << "a complete refused transfer waits for its claim";
  uint8_t* data = nullptr;
  uint64_t total = 0;
  cl_int status = CL_SUCCESS;
  std::string why;
  EXPECT_EQ(table.claim(2, 60, data, status, why), transfer_table::claim_result::refused);
  EXPECT_EQ(status, CL_OUT_OF_RESOURCES);
  EXPECT_EQ(table.size(), 1u);

  // Claimed before the rest of its bytes: they are dropped as they come.
  EXPECT_EQ(begin(table, 3, 10, 60), nullptr);
  table.end_chunk(3, 0, 10);
  status = CL_SUCCESS;
  EXPECT_EQ(table.claim(3, 60, data, status, why), transfer_table::claim_result::refused);
  EXPECT_EQ(status, CL_OUT_OF_RESOURCES);
  uint8_t* destination = nullptr;
  ASSERT_TRUE(table.begin_chunk(3, 10, 50, 60, destination, why)) << why;
  EXPECT_EQ(destination, nullptr);
  table.end_chunk(3, 10, 50);
  EXPECT_EQ(table.size(), 1u);

  // A migration's claim at most, and a buffer's initial contents, fail alike.
  send(table, 4, 0, std::vector<uint8_t>(60, 4), 60);
  status = CL_SUCCESS;
  EXPECT_EQ(table.claim_at_most(4, 100, data, total, status, why), transfer_table::claim_result::refused);
  EXPECT_EQ(status, CL_OUT_OF_RESOURCES);
  send(table, 5, 0, std::vector<uint8_t>(60, 5), 60);
  status = CL_SUCCESS;
  EXPECT_TRUE(table.wait_complete(5, data, total, status));
  EXPECT_EQ(status, CL_OUT_OF_RESOURCES);
  // A command that fails before it claims one drops it too.
  send(table, 6, 0, std::vector<uint8_t>(60, 6), 60);
  table.abandon(6);
  EXPECT_EQ(table.size(), 1u);

  // The admitted one is untouched.
  status = CL_SUCCESS;
  ASSERT_EQ(table.claim(1, 60, data, status, why), transfer_table::claim_result::complete);
  EXPECT_EQ(data[59], 1);
  table.write_finished(1);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(quota.in_flight().bytes.load(), 0u);
}

TEST_F(transfer_quota_test, bytes_of_a_command_that_failed_first_are_dropped_unstaged) {
  session_quota quota(in_flight(100), "test");
  transfer_table table(recording_api(), &quota);
  // The write failed (an unknown buffer, say) before its bytes came: none is staged.
  table.abandon(7);
  EXPECT_EQ(begin(table, 7, 10, uint64_t{1} << 40), nullptr);
  EXPECT_EQ(quota.in_flight().bytes.load(), 0u);
}

TEST_F(transfer_quota_test, too_many_refused_transfers_without_their_command_are_a_violation) {
  session_quota quota(in_flight(100), "test");
  transfer_table table(recording_api(), &quota);
  send(table, 1, 0, {1}, 100);  // held, never complete
  uint64_t transfer = 2;
  for (size_t i = 0; i < transfer_table::max_refused; ++i) begin(table, transfer++, 0, 1000);
  uint8_t* destination = nullptr;
  std::string why;
  EXPECT_FALSE(table.begin_chunk(transfer, 0, 0, 1000, destination, why));
  EXPECT_NE(why.find("refused"), std::string::npos) << why;
  // A claim lets one go.
  uint8_t* data = nullptr;
  cl_int status = CL_SUCCESS;
  EXPECT_EQ(table.claim(2, 1000, data, status, why), transfer_table::claim_result::refused);
  EXPECT_TRUE(table.begin_chunk(transfer, 0, 0, 1000, destination, why)) << why;
  EXPECT_FALSE(table.begin_chunk(transfer + 1, 0, 0, 1000, destination, why));
}

}  // namespace
}  // namespace ferry::server
