// Per-session quotas and daemon-wide limits against the host's real OpenCL:
// each refusal reaches the offending session only, with the quota's OpenCL
// error, while another session goes on; releasing gives the quota back.
#include "server/session/session_quota.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CL/cl.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "server/daemon/connection_census.hpp"
#include "server/daemon/handshake.hpp"
#include "server/daemon/server.hpp"
#include "server/native/api.hpp"
#include "server/native/catalog.hpp"
#include "server/testing/host_catalog.hpp"
#include "server/testing/test_client.hpp"

namespace ferry::server {
namespace {

namespace p = protocol;
using testing::client;
using testing::connection;

const native::device_catalog* catalog() { return testing::host_catalog(); }

class quota_test : public ::testing::Test {
 protected:
  void start(const session_limits& limits, size_t max_sessions = 256, size_t max_connections = 1024) {
    if (catalog() == nullptr) GTEST_SKIP() << "no native OpenCL device";
    server_config config;
    config.port = 0;
    config.handshake_timeout_s = 2;
    config.session_grace_s = 0;
    config.max_sessions = max_sessions;
    config.max_connections = max_connections;
    session_services services{*catalog(), native::real_api(), nullptr, nullptr, {}};
    services.limits = limits;
    server_ = std::make_unique<server>(config, services);
    std::string error;
    ASSERT_TRUE(server_->start(error)) << error;
  }
  void TearDown() override {
    if (server_) server_->stop();
  }

  // context 1 and in-order queue 2 on device 0.
  static void open_session(client& c, uint16_t port) {
    ASSERT_TRUE(c.open(port));
    ASSERT_TRUE(c.send(p::create_context{1, {0}}));
    ASSERT_TRUE(c.send(p::create_queue{2, 1, 0, 0}));
  }

  static p::command_header header(p::object_id command, uint32_t flags = p::notify,
                                  std::vector<p::object_id> wait = {}) {
    p::command_header h;
    h.command = command;
    h.queue = 2;
    h.flags = flags;
    h.wait_list = std::move(wait);
    return h;
  }

  static cl_int fill(client& c, p::object_id command, p::object_id buffer, uint64_t size = 64) {
    if (!c.send(p::enqueue_fill_buffer{header(command), buffer, {1, 2, 3, 4}, 0, size})) return 1;
    auto done = c.wait_completion(command);
    return done ? done->status : 1;
  }

  static uint64_t objects(client& c) {
    c.send(p::get_object_counts{900});
    auto counts = c.wait_reply<p::object_counts>();
    return counts ? counts->objects : ~0ull;
  }

  std::unique_ptr<server> server_;
};

TEST_F(quota_test, memory_over_the_quota_fails_that_buffer_with_allocation_failure_until_released) {
  session_limits limits;
  limits.memory = 4096;
  start(limits);
  if (!server_) return;
  client a, b;
  open_session(a, server_->port());
  open_session(b, server_->port());
  ASSERT_TRUE(a.send(p::create_buffer{3, 1, 0, 4096, 0}));
  ASSERT_TRUE(a.send(p::create_buffer{4, 1, 0, 64, 0}));  // over: recorded as failed
  EXPECT_EQ(fill(a, 20, 3), CL_SUCCESS);
  EXPECT_EQ(fill(a, 21, 4), CL_MEM_OBJECT_ALLOCATION_FAILURE);
  ASSERT_TRUE(a.send(p::enqueue_read_buffer{header(22), 4, 0, 64}));
  EXPECT_EQ(a.wait_completion(22)->status, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  // A sub-buffer is part of its parent's memory.
  ASSERT_TRUE(a.send(p::create_sub_buffer{5, 3, 0, 0, 64}));
  EXPECT_EQ(fill(a, 23, 5), CL_SUCCESS);
  // SVM memory counts too; its refusal is in the reply.
  ASSERT_TRUE(a.send(p::svm_alloc{50, 6, 1, CL_MEM_READ_WRITE, 64, 0}));
  auto svm = a.wait_reply<p::status_reply>();
  ASSERT_TRUE(svm);
  EXPECT_EQ(svm->status, CL_MEM_OBJECT_ALLOCATION_FAILURE);

  // The other session has its own quota.
  ASSERT_TRUE(b.send(p::create_buffer{3, 1, 0, 4096, 0}));
  EXPECT_EQ(fill(b, 20, 3), CL_SUCCESS);

  // Releasing gives the memory back; releasing the failed id works too.
  for (p::object_id id : {5, 4, 3}) ASSERT_TRUE(a.send(p::release_object{id}));
  EXPECT_EQ(objects(a), 2u);
  ASSERT_TRUE(a.send(p::create_buffer{7, 1, 0, 4096, 0}));
  EXPECT_EQ(fill(a, 24, 7), CL_SUCCESS);
}

TEST_F(quota_test, objects_over_the_quota_fail_with_out_of_resources_until_released) {
  session_limits limits;
  limits.objects = 4;
  start(limits);
  if (!server_) return;
  client a, b;
  open_session(a, server_->port());
  open_session(b, server_->port());
  ASSERT_TRUE(a.send(p::create_buffer{3, 1, 0, 64, 0}));
  ASSERT_TRUE(a.send(p::create_user_event{4, 1}));
  ASSERT_TRUE(a.send(p::create_buffer{5, 1, 0, 64, 0}));  // the fifth object: refused, recorded as failed
  EXPECT_EQ(fill(a, 20, 3), CL_SUCCESS);
  EXPECT_EQ(fill(a, 21, 5), CL_OUT_OF_RESOURCES);
  // A kept event is an object too.
  ASSERT_TRUE(a.send(p::enqueue_marker{header(22, p::keep_event)}));
  EXPECT_EQ(a.wait_completion(22)->status, CL_OUT_OF_RESOURCES);
  ASSERT_TRUE(a.send(p::create_sampler{60, 8, 1, {}}));
  auto sampler = a.wait_reply<p::status_reply>();
  ASSERT_TRUE(sampler);
  EXPECT_EQ(sampler->status, CL_OUT_OF_RESOURCES);

  ASSERT_TRUE(b.send(p::create_buffer{3, 1, 0, 64, 0}));
  ASSERT_TRUE(b.send(p::create_buffer{4, 1, 0, 64, 0}));
  EXPECT_EQ(fill(b, 20, 4), CL_SUCCESS);

  // context, queue, buffer, user event, failed buffer 5, failed event 22
  EXPECT_EQ(objects(a), 6u);
  for (p::object_id id : {22, 5, 4}) ASSERT_TRUE(a.send(p::release_object{id}));
  EXPECT_EQ(objects(a), 3u);
  ASSERT_TRUE(a.send(p::create_buffer{6, 1, 0, 64, 0}));
  EXPECT_EQ(fill(a, 23, 6), CL_SUCCESS);
}

TEST_F(quota_test, commands_over_the_queued_quota_complete_with_out_of_resources) {
  session_limits limits;
  limits.queued = 4;
  start(limits);
  if (!server_) return;
  client a, b;
  open_session(a, server_->port());
  open_session(b, server_->port());
  ASSERT_TRUE(a.send(p::create_user_event{7, 1}));
  for (p::object_id id = 60; id < 64; ++id) ASSERT_TRUE(a.send(p::enqueue_marker{header(id, p::notify, {7})}));
  ASSERT_TRUE(a.send(p::enqueue_marker{header(64)}));
  EXPECT_EQ(a.wait_completion(64)->status, CL_OUT_OF_RESOURCES);
  // Another session's queue is its own business (under its own quota: each
  // command completes before the next).
  for (p::object_id id = 60; id < 70; ++id) {
    ASSERT_TRUE(b.send(p::enqueue_marker{header(id)}));
    EXPECT_EQ(b.wait_completion(id)->status, CL_COMPLETE) << id;
  }

  ASSERT_TRUE(a.send(p::set_user_event_status{7, CL_COMPLETE}));
  for (p::object_id id = 60; id < 64; ++id) EXPECT_EQ(a.wait_completion(id)->status, CL_COMPLETE) << id;
  ASSERT_TRUE(a.send(p::enqueue_marker{header(65)}));
  EXPECT_EQ(a.wait_completion(65)->status, CL_COMPLETE);
}

TEST_F(quota_test, transfers_over_the_in_flight_quota_fail_but_one_alone_may_be_larger) {
  session_limits limits;
  limits.in_flight = 1024;
  start(limits);
  if (!server_) return;
  client a, b;
  open_session(a, server_->port());
  open_session(b, server_->port());
  ASSERT_TRUE(a.send(p::create_buffer{3, 1, 0, 4096, 0}));
  // A write whose bytes have not come holds 600 bytes of staging.
  ASSERT_TRUE(a.send(p::enqueue_write_buffer{header(20), 3, 0, 600}));
  ASSERT_TRUE(a.send(p::enqueue_read_buffer{header(21), 3, 1024, 600}));
  EXPECT_EQ(a.wait_completion(21)->status, CL_OUT_OF_RESOURCES);
  std::vector<uint8_t> bytes(600, 7);
  ASSERT_TRUE(a.send_bulk(20, bytes.data(), bytes.size()));
  EXPECT_EQ(a.wait_completion(20)->status, CL_SUCCESS);

  // Alone, a transfer larger than the quota goes through.
  ASSERT_TRUE(b.send(p::create_buffer{3, 1, 0, 4096, 0}));
  ASSERT_TRUE(b.send(p::enqueue_read_buffer{header(21), 3, 0, 4096}));
  EXPECT_EQ(b.wait_completion(21)->status, CL_SUCCESS);
  auto data = b.wait_bulk(21);
  ASSERT_TRUE(data);
  EXPECT_EQ(data->size(), 4096u);
}

// Bytes that come before their command are staged at once; a session that
// sends bulk data for commands it never sends could once stage up to the
// machine's memory (issue 18, item 2).
TEST_F(quota_test, bulk_data_ahead_of_its_commands_is_held_to_the_in_flight_quota) {
  session_limits limits;
  limits.in_flight = 1 << 20;
  start(limits);
  if (!server_) return;
  client a, b;
  open_session(a, server_->port());
  open_session(b, server_->port());
  const uint64_t size = 512 << 10;
  ASSERT_TRUE(a.send(p::create_buffer{3, 1, 0, size, 0}));
  std::vector<uint8_t> bytes(size, 5);
  // Eight transfers of 512 KiB, one frame each, with no command yet: the
  // first two fill the quota.
  for (p::object_id transfer = 100; transfer < 108; ++transfer)
    ASSERT_TRUE(a.send_bulk(transfer, bytes.data(), size));
  // The server acknowledges bulk frames once it has taken them.
  ASSERT_TRUE(a.pump_until([&] { return a.last_ack.bulk >= 8; })) << "acked " << a.last_ack.bulk;
  for (p::object_id transfer : {100, 101, 102, 105})
    ASSERT_TRUE(a.send(p::enqueue_write_buffer{header(transfer), 3, 0, size}));
  EXPECT_EQ(a.wait_completion(100)->status, CL_SUCCESS);
  EXPECT_EQ(a.wait_completion(101)->status, CL_SUCCESS);
  EXPECT_EQ(a.wait_completion(102)->status, CL_OUT_OF_RESOURCES);
  EXPECT_EQ(a.wait_completion(105)->status, CL_OUT_OF_RESOURCES);
  // A refusal is no violation: the session goes on, and its buffer holds the admitted bytes.
  ASSERT_TRUE(a.send(p::enqueue_read_buffer{header(20), 3, 0, size}));
  auto data = a.wait_bulk(20);
  ASSERT_TRUE(data);
  EXPECT_TRUE(*data == bytes);

  // The other session writes and reads back under its own quota.
  std::vector<uint8_t> mine(4096);
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = static_cast<uint8_t>(i * 13);
  ASSERT_TRUE(b.send(p::create_buffer{3, 1, 0, mine.size(), 0}));
  ASSERT_TRUE(b.send(p::enqueue_write_buffer{header(20), 3, 0, mine.size()}));
  ASSERT_TRUE(b.send_bulk(20, mine.data(), mine.size()));
  EXPECT_EQ(b.wait_completion(20)->status, CL_SUCCESS);
  ASSERT_TRUE(b.send(p::enqueue_read_buffer{header(21), 3, 0, mine.size()}));
  auto theirs = b.wait_bulk(21);
  ASSERT_TRUE(theirs);
  EXPECT_EQ(*theirs, mine);
}

TEST_F(quota_test, a_control_hello_over_max_sessions_is_refused_with_its_code) {
  start({}, 1);
  if (!server_) return;
  client a;
  ASSERT_TRUE(a.open(server_->port()));
  connection extra(testing::connect_loopback(server_->port()));
  ASSERT_TRUE(extra.send(testing::make_hello(p::stream_kind::control)));
  auto refused = extra.expect<p::refused>();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code, static_cast<int32_t>(refusal::too_many_sessions));
  EXPECT_NE(refused->reason.find("--max-sessions"), std::string::npos) << refused->reason;
  // The first session goes on.
  ASSERT_TRUE(a.send(p::ping{5}));
  EXPECT_EQ(a.wait_reply<p::pong>()->request, 5u);
}

TEST_F(quota_test, connections_over_max_connections_are_closed_and_counted_down_when_they_close) {
  start({}, 256, 2);
  if (!server_) return;
  auto a = std::make_unique<client>();
  ASSERT_TRUE(a->open(server_->port()));  // control + bulk: the limit
  connection extra(testing::connect_loopback(server_->port()));
  EXPECT_TRUE(extra.closed_by_peer(5000));
  ASSERT_TRUE(a->send(p::ping{5}));
  EXPECT_EQ(a->wait_reply<p::pong>()->request, 5u);
  a.reset();
  for (int i = 0; i < 500 && server_->session_count() != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  client b;
  EXPECT_TRUE(b.open(server_->port()));
}

TEST(session_quota, transfers_refused_on_two_readers_at_once_are_all_counted) {
  session_limits limits;
  limits.in_flight = 10;
  session_quota quota(limits, "test");
  uint8_t* held = acquire_staging(10, &quota.in_flight());
  // The control reader and a bulk reader both ask (bytes may come before their command).
  auto ask = [&quota] {
    for (int i = 0; i < 10000; ++i) EXPECT_EQ(quota.admit_transfer(1), CL_OUT_OF_RESOURCES);
  };
  std::thread control(ask), bulk(ask);
  control.join();
  bulk.join();
  EXPECT_EQ(quota.refusals(quota_kind::in_flight), 20000u);
  release_staging(held);
}

TEST(connection_census, counts_a_socket_until_it_is_closed) {
  connection_census census;
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  census.track(pair[0]);
  census.track(pair[1]);
  EXPECT_EQ(census.open(), 2u);
  ::close(pair[0]);
  EXPECT_EQ(census.open(), 1u);
  // A new socket under the old number is another one.
  int again[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, again), 0);
  ::close(pair[1]);
  EXPECT_EQ(census.open(), 0u);
  ::close(again[0]);
  ::close(again[1]);
}

TEST(session_quota, refuses_at_the_limit_and_zero_is_unlimited) {
  session_limits limits;
  limits.memory = 100;
  limits.objects = 2;
  limits.queued = 0;
  limits.in_flight = 10;
  session_quota quota(limits, "test");
  EXPECT_EQ(quota.admit_memory(0, 100), CL_SUCCESS);
  EXPECT_EQ(quota.admit_memory(50, 51), CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(quota.admit_memory(0, UINT64_MAX), CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(quota.admit_object(1), CL_SUCCESS);
  EXPECT_EQ(quota.admit_object(2), CL_OUT_OF_RESOURCES);
  EXPECT_EQ(quota.admit_command(1'000'000'000), CL_SUCCESS);
  EXPECT_EQ(quota.admit_transfer(1000), CL_SUCCESS);  // nothing in flight: alone it may be larger
  uint8_t* held = acquire_staging(8, &quota.in_flight());
  EXPECT_EQ(quota.in_flight().bytes.load(), 8u);
  EXPECT_EQ(quota.admit_transfer(2), CL_SUCCESS);
  EXPECT_EQ(quota.admit_transfer(3), CL_OUT_OF_RESOURCES);
  release_staging(held);
  EXPECT_EQ(quota.in_flight().bytes.load(), 0u);
  EXPECT_EQ(quota.refusals(quota_kind::memory), 2u);
  EXPECT_EQ(quota.refusals(quota_kind::objects), 1u);
  EXPECT_EQ(quota.refusals(quota_kind::in_flight), 1u);
}

}  // namespace
}  // namespace ferry::server
