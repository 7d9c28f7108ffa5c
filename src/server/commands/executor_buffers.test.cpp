// Large reads in pieces (executor::read_in_pieces) on the host's OpenCL (PoCL
// in CI), through an api whose clEnqueueReadBuffer can be made to fail: each
// piece is armed as it is enqueued, so pieces before a failed one may be sent
// already; the read must still fail exactly once, with the enqueue's error,
// a command waiting on it must fail, and the session must go on.
#include <gtest/gtest.h>

#include <CL/cl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <vector>

#include "server/daemon/server.hpp"
#include "server/native/api.hpp"
#include "server/testing/host_catalog.hpp"
#include "server/testing/in_process_daemon.hpp"
#include "server/testing/test_client.hpp"

namespace ferry::server {
namespace {

namespace p = protocol;
using testing::client;

// The clEnqueueReadBuffer call (counting from 1) that fails; 0: none does.
std::atomic<int> failing_read{0};
std::atomic<int> reads_seen{0};

cl_int CL_API_CALL failing_read_buffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset,
                                       size_t size, void* host, cl_uint count, const cl_event* waits,
                                       cl_event* event) {
  const int call = ++reads_seen;
  if (failing_read.load() != 0 && call == failing_read.load()) return CL_OUT_OF_RESOURCES;
  return native::real_api().clEnqueueReadBuffer(queue, buffer, blocking, offset, size, host, count, waits, event);
}

const native::api& api_with_failing_reads() {
  static const native::api copy = [] {
    native::api a = native::real_api();
    a.clEnqueueReadBuffer = failing_read_buffer;
    return a;
  }();
  return copy;
}

p::command_header header(p::object_id command, uint32_t flags, std::vector<p::object_id> wait = {}) {
  p::command_header h;
  h.command = command;
  h.queue = 2;
  h.flags = flags;
  h.wait_list.assign(wait.begin(), wait.end());
  return h;
}

class read_in_pieces_test : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!testing::in_process_daemon::possible()) GTEST_SKIP() << "no native OpenCL device";
    std::string why;
    ASSERT_TRUE(env_.start(api_with_failing_reads(), why)) << why;
  }
  void TearDown() override {
    failing_read = 0;
    if (daemon_) daemon_->stop();
  }

  testing::in_process_daemon env_;
  std::unique_ptr<server>& daemon_ = env_.daemon;
  client& client_ = env_.session;
};

// Parameter: which piece of three cannot be enqueued (1: the first, so none is).
TEST_P(read_in_pieces_test, a_piece_that_cannot_be_enqueued_fails_the_read_once_and_the_session_goes_on) {
  const uint64_t size = 2 * uint64_t{p::max_bulk_chunk} + 100;  // three pieces
  std::vector<uint8_t> bytes(size);
  for (uint64_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 13 + (i >> 16));
  ASSERT_TRUE(client_.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, size, 0}));
  ASSERT_TRUE(client_.send(p::enqueue_write_buffer{header(10, p::notify), 3, 0, size}));
  ASSERT_TRUE(client_.send_bulk(10, bytes.data(), size));
  auto written = client_.wait_completion(10);
  ASSERT_TRUE(written);
  ASSERT_EQ(written->status, CL_COMPLETE);

  // Pieces sent before the failure are drained here: the daemon may not block on them.
  std::atomic<bool> draining{true};
  auto drained = std::async(std::launch::async, [&] {
    uint64_t got = 0;
    p::frame_header h;
    std::vector<uint8_t> payload;
    while (draining.load())
      if (client_.bulk.next(h, payload, 50) && payload.size() >= p::bulk_prefix_size)
        got += payload.size() - p::bulk_prefix_size;
    return got;
  });
  reads_seen = 0;
  failing_read = GetParam();
  ASSERT_TRUE(client_.send(p::enqueue_read_buffer{header(11, p::notify | p::keep_event), 3, 0, size}));
  ASSERT_TRUE(client_.send(p::enqueue_marker{header(12, p::notify, {11})}));
  auto read = client_.wait_completion(11);
  ASSERT_TRUE(read) << "the read never completed";
  EXPECT_EQ(read->status, CL_OUT_OF_RESOURCES);
  auto marker = client_.wait_completion(12);
  ASSERT_TRUE(marker);
  EXPECT_LT(marker->status, 0) << "a command waiting on the failed read ran";
  draining = false;
  EXPECT_LT(drained.get(), size) << "every byte of a failed read went out";

  // The session goes on: a read of the same buffer arrives whole.
  failing_read = 0;
  ASSERT_TRUE(client_.send(p::enqueue_read_buffer{header(13, p::notify), 3, 0, size}));
  auto data = client_.wait_bulk(13);
  ASSERT_TRUE(data);
  EXPECT_EQ(*data, bytes);
  auto again = client_.wait_completion(13);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, CL_COMPLETE);
  // Reported in order, so a second report of the failed read would have come by now.
  EXPECT_EQ(std::count(client_.completion_order.begin(), client_.completion_order.end(), p::object_id{11}), 1)
      << "the read was reported more than once";
}

INSTANTIATE_TEST_SUITE_P(failing_piece, read_in_pieces_test, ::testing::Values(1, 2, 3),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "piece_" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace ferry::server
