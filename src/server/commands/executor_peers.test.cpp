// Migrations through a daemon whose own queues run in order, as NVIDIA's do
// whatever they are asked (issue 22: the two-GPU stencil hung at 1 MiB
// halos). The daemon runs in this process on the host's OpenCL (PoCL in CI)
// through an api whose clCreateCommandQueueWithProperties either refuses
// out-of-order execution or, as NVIDIA's does, accepts it and makes an
// in-order queue. A hand-made source on a peer link sends the bytes, in the
// order that once deadlocked.
#include <gtest/gtest.h>

#include <CL/cl.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "server/daemon/server.hpp"
#include "server/native/api.hpp"
#include "server/native/catalog.hpp"
#include "server/testing/host_catalog.hpp"
#include "server/testing/in_process_daemon.hpp"
#include "server/testing/test_client.hpp"

namespace ferry::server {
namespace {

namespace p = protocol;
using testing::client;
using testing::chunk_frame;
using testing::connection;

// How the api below answers a queue asked to run out of order.
enum class out_of_order_queues {
  refused,         ///< CL_INVALID_QUEUE_PROPERTIES, as a device that cannot
  run_in_order,    ///< an in-order queue, and success (NVIDIA's OpenCL)
};

std::vector<cl_queue_properties> without_out_of_order(const cl_queue_properties* properties, bool& asked) {
  std::vector<cl_queue_properties> kept;
  asked = false;
  for (const cl_queue_properties* at = properties; at && at[0] != 0; at += 2) {
    cl_queue_properties value = at[1];
    if (at[0] == CL_QUEUE_PROPERTIES && (value & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0) {
      asked = true;
      value &= ~static_cast<cl_queue_properties>(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    }
    kept.push_back(at[0]);
    kept.push_back(value);
  }
  kept.push_back(0);
  return kept;
}

cl_command_queue CL_API_CALL refuse_out_of_order(cl_context context, cl_device_id device,
                                                 const cl_queue_properties* properties, cl_int* error) {
  bool asked = false;
  without_out_of_order(properties, asked);
  if (asked) {
    if (error) *error = CL_INVALID_QUEUE_PROPERTIES;
    return nullptr;
  }
  return native::real_api().clCreateCommandQueueWithProperties(context, device, properties, error);
}

cl_command_queue CL_API_CALL run_out_of_order_in_order(cl_context context, cl_device_id device,
                                                       const cl_queue_properties* properties, cl_int* error) {
  bool asked = false;
  std::vector<cl_queue_properties> kept = without_out_of_order(properties, asked);
  return native::real_api().clCreateCommandQueueWithProperties(context, device, kept.data(), error);
}

const native::api& api_for(out_of_order_queues how) {
  static const native::api refusing = [] {
    native::api copy = native::real_api();
    copy.clCreateCommandQueueWithProperties = refuse_out_of_order;
    return copy;
  }();
  static const native::api in_order = [] {
    native::api copy = native::real_api();
    copy.clCreateCommandQueueWithProperties = run_out_of_order_in_order;
    return copy;
  }();
  return how == out_of_order_queues::refused ? refusing : in_order;
}

p::command_header queue_header(p::object_id command, p::object_id queue, std::vector<p::object_id> wait = {}) {
  p::command_header h;
  h.command = command;
  h.queue = queue;
  h.flags = p::notify;
  h.wait_list.assign(wait.begin(), wait.end());
  return h;
}

std::vector<uint8_t> pattern(size_t size, unsigned seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * seed + seed / 3);
  return bytes;
}

class in_order_landing_test : public ::testing::TestWithParam<out_of_order_queues> {
 protected:
  void SetUp() override {
    if (!testing::in_process_daemon::possible()) GTEST_SKIP() << "no native OpenCL device";
    std::string why;
    ASSERT_TRUE(env_.start(api_for(GetParam()), why)) << why;
  }
  void TearDown() override {
    if (daemon_) daemon_->stop();
  }

  /// A source's peer link into the session; its welcome and state are read.
  connection open_link() {
    p::session_token link{};
    link[0] = 0x5a;
    connection c(testing::connect_loopback(daemon_->port()));
    EXPECT_TRUE(c.send(p::make_hello(p::stream_kind::peer, client_.welcome.session, client_.welcome.peer_key,
                                     "test source", link)));
    EXPECT_TRUE(c.expect<p::welcome>());
    EXPECT_TRUE(c.expect<p::session_state>());
    return c;
  }

  void sync(uint64_t request) {
    ASSERT_TRUE(client_.send(p::ping{request}));
    auto pong = client_.wait_reply<p::pong>();
    ASSERT_TRUE(pong);
  }

  std::vector<uint8_t> read_back(p::object_id command, p::object_id buffer, uint64_t size) {
    EXPECT_TRUE(client_.send(p::enqueue_read_buffer{queue_header(command, 2), buffer, 0, size}));
    auto data = client_.wait_bulk(command);
    EXPECT_TRUE(data);
    auto done = client_.wait_completion(command);
    EXPECT_TRUE(done && done->status == CL_COMPLETE);
    return data ? *data : std::vector<uint8_t>{};
  }

  /// Two migrate_in into buffers 3 and 4 (transfers 500 and 501) on the one
  /// queue, so that the second waits for the first; then the bytes come,
  /// `second_first` or not, and both must land.
  void two_landings(uint64_t size, bool second_first) {
    const std::vector<uint8_t> first = pattern(size, 7), second = pattern(size, 13);
    ASSERT_TRUE(client_.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, size, 0}));
    ASSERT_TRUE(client_.send(p::create_buffer{4, 1, CL_MEM_READ_WRITE, size, 0}));
    ASSERT_TRUE(client_.send(p::migrate_in{queue_header(50, 2), 3, 0, size, 500}));
    ASSERT_TRUE(client_.send(p::migrate_in{queue_header(51, 2), 4, 0, size, 501}));
    sync(1);  // both are enqueued before a byte comes
    connection link = open_link();
    const std::vector<uint8_t> frame_first = chunk_frame(500, first), frame_second = chunk_frame(501, second);
    for (const auto* frame : second_first ? std::vector{&frame_second, &frame_first}
                                          : std::vector{&frame_first, &frame_second})
      ASSERT_TRUE(link.send_raw(frame->data(), frame->size()));
    auto landed = client_.wait_completion(50);
    ASSERT_TRUE(landed) << "the first migrate_in never completed";
    EXPECT_EQ(landed->status, CL_COMPLETE);
    landed = client_.wait_completion(51);
    ASSERT_TRUE(landed) << "the second migrate_in never completed";
    EXPECT_EQ(landed->status, CL_COMPLETE);
    EXPECT_EQ(read_back(60, 3, size), first);
    EXPECT_EQ(read_back(61, 4, size), second);
  }

  testing::in_process_daemon env_;
  std::unique_ptr<server>& daemon_ = env_.daemon;
  client& client_ = env_.session;
};

// 1 MiB and more land straight in a mapped range: the second command's map
// once went onto the in-order own queue ahead of the first one's unmap,
// which it waited for through the client's queue.
TEST_P(in_order_landing_test, a_later_landings_map_does_not_block_an_earlier_landing) {
  two_landings(2u << 20, false);
}

// Smaller ranges are written from staging; bytes that come out of order (two
// sources) once put the later write ahead of the earlier one it waited for.
TEST_P(in_order_landing_test, bytes_that_arrive_out_of_order_still_land) {
  two_landings(64u << 10, true);
}

TEST_P(in_order_landing_test, large_bytes_that_arrive_out_of_order_still_land) {
  two_landings(2u << 20, true);
}

// The source: a small migration with nothing to wait for was once waited for
// on the spot, on the control reader's thread. Behind a large one whose map
// waits for a user event, on a queue that runs in order, that wait never
// ended, and the command that sets the event was never read.
TEST_P(in_order_landing_test, a_small_migration_behind_a_waiting_one_does_not_stop_the_session) {
  // The session is its own peer: its bytes come back to it, which is all a source needs.
  ASSERT_TRUE(client_.send(p::add_peer{1, "127.0.0.1:" + std::to_string(daemon_->port()), client_.welcome.session,
                                       client_.welcome.peer_key}));
  ASSERT_TRUE(client_.send(p::create_user_event{7, 1}));
  ASSERT_TRUE(client_.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, 2u << 20, 0}));
  ASSERT_TRUE(client_.send(p::create_buffer{4, 1, CL_MEM_READ_WRITE, 64, 0}));
  ASSERT_TRUE(client_.send(p::migrate_out{queue_header(40, 0, {7}), 3, 0, 2u << 20, 1, 500, 0}));
  ASSERT_TRUE(client_.send(p::migrate_out{queue_header(41, 0), 4, 0, 64, 1, 501, 0}));
  ASSERT_TRUE(client_.send(p::set_user_event_status{7, CL_COMPLETE}));
  auto sent = client_.wait_completion(40);
  ASSERT_TRUE(sent) << "the migration behind the user event never completed";
  EXPECT_EQ(sent->status, CL_COMPLETE);
  sent = client_.wait_completion(41);
  ASSERT_TRUE(sent) << "the small migration never completed";
  EXPECT_EQ(sent->status, CL_COMPLETE);
  sync(2);
}

// A landing whose bytes are all in waits for its `before` marker on the host;
// the session ends first (the import `before` waits for never comes). The
// teardown fails the import, `before` fails with it, and the landing must
// fail its gate then, or the teardown's clFinish of the queue never returns.
TEST_P(in_order_landing_test, a_session_ending_while_a_landing_waits_for_its_turn_still_ends) {
  constexpr uint64_t size = 2u << 20;
  ASSERT_TRUE(client_.send(p::import_event{7, 1}));
  ASSERT_TRUE(client_.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, size, 0}));
  ASSERT_TRUE(client_.send(p::migrate_in{queue_header(50, 2, {7}), 3, 0, size, 500}));
  sync(1);
  connection link = open_link();
  const std::vector<uint8_t> frame = chunk_frame(500, pattern(size, 5));
  ASSERT_TRUE(link.send_raw(frame.data(), frame.size()));
  auto ack = link.expect<p::ack>();
  ASSERT_TRUE(ack) << "the destination never acknowledged the chunk";
  EXPECT_EQ(ack->control, 1u);
  link.reset();
  client_.control.reset();
  client_.bulk.reset();
  auto stopped = std::async(std::launch::async, [this] { daemon_->stop(); });
  if (stopped.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    ADD_FAILURE() << "the session's teardown never ended";
    std::_Exit(1);  // its threads cannot be joined: end the test binary rather than hang
  }
}

INSTANTIATE_TEST_SUITE_P(own_queues, in_order_landing_test,
                         ::testing::Values(out_of_order_queues::refused, out_of_order_queues::run_in_order),
                         [](const ::testing::TestParamInfo<out_of_order_queues>& info) {
                           return std::string(info.param == out_of_order_queues::refused ? "refused"
                                                                                         : "accepted_run_in_order");
                         });

}  // namespace
}  // namespace ferry::server
