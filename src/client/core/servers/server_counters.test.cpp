// What clFerryGetWorkers hands the application: the daemon's worker entries
// as C structs, their strings cut to fit and always terminated.
#include "client/core/servers/server_counters.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace ferry::client {
namespace {

/// A worker entry with no session and no client (a spare, or one starting).
protocol::worker_entry bare_worker(uint32_t pid, protocol::worker_state state) {
  protocol::worker_entry entry;
  entry.pid = pid;
  entry.state = state;
  return entry;
}

TEST(server_counters, a_worker_entry_keeps_its_numbers_and_its_state_as_the_c_constant) {
  const protocol::worker_entry entry{4242, protocol::worker_state::detached, "1a2b3c4d", "10.0.0.7", 3ull << 30,
                                     90'000};
  const cl_ferry_worker c = c_worker(entry);
  EXPECT_EQ(c.pid, 4242u);
  EXPECT_EQ(c.state, static_cast<cl_uint>(CL_FERRY_WORKER_DETACHED));
  EXPECT_STREQ(c.session, "1a2b3c4d");
  EXPECT_STREQ(c.client, "10.0.0.7");
  EXPECT_EQ(c.memory_bytes, 3ull << 30);
  EXPECT_EQ(c.age_ms, 90'000u);
}

TEST(server_counters, worker_states_match_the_extension_constants) {
  auto state_of = [](protocol::worker_state state) { return c_worker(bare_worker(1, state)).state; };
  EXPECT_EQ(state_of(protocol::worker_state::starting), static_cast<cl_uint>(CL_FERRY_WORKER_STARTING));
  EXPECT_EQ(state_of(protocol::worker_state::spare), static_cast<cl_uint>(CL_FERRY_WORKER_SPARE));
  EXPECT_EQ(state_of(protocol::worker_state::serving), static_cast<cl_uint>(CL_FERRY_WORKER_SERVING));
  EXPECT_EQ(state_of(protocol::worker_state::detached), static_cast<cl_uint>(CL_FERRY_WORKER_DETACHED));
  EXPECT_EQ(state_of(protocol::worker_state::ending), static_cast<cl_uint>(CL_FERRY_WORKER_ENDING));
}

TEST(server_counters, worker_strings_longer_than_their_field_are_cut_and_terminated) {
  protocol::worker_entry entry;
  entry.session = std::string(100, 's');
  entry.client = std::string(500, 'c');
  const cl_ferry_worker c = c_worker(entry);
  EXPECT_EQ(std::strlen(c.session), sizeof c.session - 1);
  EXPECT_EQ(std::string(c.session), std::string(sizeof c.session - 1, 's'));
  EXPECT_EQ(std::strlen(c.client), sizeof c.client - 1);
  EXPECT_EQ(c.client[sizeof c.client - 1], '\0');
}

TEST(server_counters, a_spare_worker_has_empty_strings) {
  const cl_ferry_worker c = c_worker(bare_worker(7, protocol::worker_state::spare));
  EXPECT_STREQ(c.session, "");
  EXPECT_STREQ(c.client, "");
}

}  // namespace
}  // namespace ferry::client
