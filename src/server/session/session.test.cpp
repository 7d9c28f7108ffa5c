// End-to-end tests of the daemon against the host's real OpenCL (PoCL in CI):
// a server runs in this process on a loopback port and test_client speaks the
// protocol to it.
#include "server/session/session.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <CL/cl.h>

#include <array>

#include <signal.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <optional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/thread_stacks.hpp"
#include "protocol/limits.hpp"
#include "server/daemon/handshake.hpp"
#include "server/daemon/printf_capture.hpp"
#include "server/daemon/server.hpp"
#include "server/native/api.hpp"
#include "server/native/catalog.hpp"
#include "server/session/object_table.hpp"
#include "server/testing/test_client.hpp"

namespace ferry::server {
namespace {

namespace p = protocol;
using testing::client;
using testing::connection;

// Debugging aid for hangs on real drivers: with FERRY_TEST_STACKS set, a
// request that times out prints every thread's stack to stderr.
void dump_all_stacks() {
  if (std::getenv("FERRY_TEST_STACKS") != nullptr) write_thread_stacks(STDERR_FILENO);
}

// The host's devices, with completions reported as `mode` says.
const native::device_catalog* real_catalog(native::completion_mode mode) {
  static native::device_catalog catalog;
  static bool found = [] {
    ::setenv("FERRY_IN_DAEMON", "1", 1);
    std::string error;
    // FERRY_TEST_PLATFORM picks the native platform to test on (default: any).
    native::catalog_filter filter;
    if (const char* platform = std::getenv("FERRY_TEST_PLATFORM")) filter.platform = platform;
    bool ok = native::device_catalog::discover(filter, catalog, error);
    if (!ok) std::fprintf(stderr, "no native OpenCL device: %s\n", error.c_str());
    return ok;
  }();
  if (!found) return nullptr;
  static native::device_catalog callbacks = [] {
    native::device_catalog copy = catalog;
    copy.choose_completions(native::completion_mode::callbacks);
    return copy;
  }();
  static native::device_catalog polled = [] {
    native::device_catalog copy = catalog;
    copy.choose_completions(native::completion_mode::polling);
    return copy;
  }();
  return mode == native::completion_mode::polling ? &polled : &callbacks;
}

std::string mode_name(const ::testing::TestParamInfo<native::completion_mode>& info) {
  return info.param == native::completion_mode::polling ? "polled" : "callbacks";
}

constexpr const char* vadd_source = R"(
kernel void vadd(global const float* a, global const float* b, global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
kernel void scale(global float* x, float factor) {
  x[get_global_id(0)] *= factor;
}
)";

// Every test runs twice: with completions learnt from native callbacks, and
// polled (as ferryd does on NVIDIA).
class daemon_test : public ::testing::TestWithParam<native::completion_mode> {
 protected:
  void SetUp() override {
    catalog_ = real_catalog(GetParam());
    if (catalog_ == nullptr) GTEST_SKIP() << "no native OpenCL device";
    start_server(nullptr);
  }
  void TearDown() override {
    if (server_) server_->stop();
  }

  void start_server(printf_capture* capture) {
    if (server_) server_->stop();
    server_config config;
    config.port = 0;
    config.handshake_timeout_s = 2;
    config.session_grace_s = 0;  // sessions end with their connection unless a test resumes them
    server_ = std::make_unique<server>(config, session_services{*catalog_, native::real_api(), capture, nullptr, {}});
    std::string error;
    ASSERT_TRUE(server_->start(error)) << error;
  }

  // context 1, queue 2 (profiling) on device 0.
  void make_context_and_queue(client& c) {
    ASSERT_TRUE(c.send(p::create_context{1, {0}}));
    ASSERT_TRUE(c.send(p::create_queue{2, 1, 0, CL_QUEUE_PROFILING_ENABLE}));
  }

  // program 10 from vadd_source, built; kernel 11 = vadd.
  void make_program(client& c) {
    ASSERT_TRUE(c.send(p::create_program_with_source{10, 1, vadd_source}));
    ASSERT_TRUE(c.send(p::build_program{100, 10, {}, "", {}}));
    auto built = c.wait_reply<p::build_reply>(120000);
    ASSERT_TRUE(built);
    EXPECT_EQ(built->request, 100u);
    ASSERT_EQ(built->status, CL_SUCCESS);
    EXPECT_EQ(built->kernel_names, (std::vector<std::string>{"vadd", "scale"}));
    ASSERT_TRUE(c.send(p::create_kernel{101, 11, 10, "vadd"}));
    auto kernel = c.wait_reply<p::kernel_reply>();
    ASSERT_TRUE(kernel);
    ASSERT_EQ(kernel->status, CL_SUCCESS);
    ASSERT_EQ(kernel->kernels.size(), 1u);
    EXPECT_EQ(kernel->kernels[0].num_args, 3u);
  }

  uint64_t object_count(client& c, uint64_t request = 900) {
    c.send(p::get_object_counts{request});
    auto counts = c.wait_reply<p::object_counts>();
    EXPECT_TRUE(counts);
    if (!counts) dump_all_stacks();
    return counts ? counts->objects : ~0ull;
  }

  static p::command_header header(p::object_id command, p::object_id queue, uint32_t flags = p::notify,
                                  std::vector<p::object_id> wait = {}) {
    return testing::header(command, queue, flags, std::move(wait));
  }
  static p::kernel_arg mem_arg(uint32_t index, p::object_id buffer) { return testing::mem_arg(index, buffer); }

  const native::device_catalog* catalog_ = nullptr;
  std::unique_ptr<server> server_;
};

TEST_P(daemon_test, vector_add_runs_with_bulk_writes_and_reads) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  make_context_and_queue(c);
  constexpr size_t n = 4096;
  constexpr uint64_t bytes = n * sizeof(float);
  std::vector<float> a(n), b(n);
  std::iota(a.begin(), a.end(), 0.0f);
  for (size_t i = 0; i < n; ++i) b[i] = 2.0f * static_cast<float>(i);
  ASSERT_TRUE(c.send(p::create_buffer{3, 1, CL_MEM_READ_ONLY, bytes, 0}));
  ASSERT_TRUE(c.send(p::create_buffer{4, 1, CL_MEM_READ_ONLY, bytes, 0}));
  ASSERT_TRUE(c.send(p::create_buffer{5, 1, CL_MEM_WRITE_ONLY, bytes, 0}));
  make_program(c);

  // a: bytes before the command; b: the command before its bytes (in small chunks).
  ASSERT_TRUE(c.send_bulk(20, a.data(), bytes));
  ASSERT_TRUE(c.send(p::enqueue_write_buffer{header(20, 2, 0), 3, 0, bytes}));
  ASSERT_TRUE(c.send(p::enqueue_write_buffer{header(21, 2, p::keep_event), 4, 0, bytes}));
  ASSERT_TRUE(c.send_bulk(21, b.data(), bytes, 1000));

  p::enqueue_ndrange run;
  run.header = header(22, 2, p::keep_event | p::notify, {21});
  run.kernel = 11;
  run.work_dim = 1;
  run.global = {n, 1, 1};
  run.args = {mem_arg(0, 3), mem_arg(1, 4), mem_arg(2, 5)};
  ASSERT_TRUE(c.send(run));
  ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(23, 2, p::notify, {22}), 5, 0, bytes}));

  auto done = c.wait_completion(22);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, CL_COMPLETE);
  EXPECT_NE(done->profiling[3], 0u) << "profiling counters on a profiling queue";
  EXPECT_LE(done->profiling[2], done->profiling[3]);
  auto read = c.wait_completion(23);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, CL_COMPLETE);
  auto data = c.wait_bulk(23);
  ASSERT_TRUE(data);
  ASSERT_EQ(data->size(), bytes);
  const float* out = reinterpret_cast<const float*>(data->data());
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 3.0f * static_cast<float>(i)) << "at " << i;
  // Writes without notify report nothing.
  EXPECT_EQ(c.completions.count(20), 0u);
  EXPECT_EQ(c.completions.count(21), 0u);

  // context, queue, 3 buffers, program, kernel, 2 kept events
  EXPECT_EQ(object_count(c), 9u);
  for (p::object_id id : {21, 22, 11, 10, 3, 4, 5, 2, 1}) ASSERT_TRUE(c.send(p::release_object{id}));
  EXPECT_EQ(object_count(c), 0u);
}

// Writes of two bulk chunks or more whose bytes come after the command go to
// the device a piece at a time (executor::write_in_pieces).
TEST_P(daemon_test, a_large_write_whose_bytes_come_later_lands_whole) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  ASSERT_TRUE(c.send(p::create_context{1, {0}}));
  ASSERT_TRUE(c.send(p::create_queue{6, 1, 0, 0}));
  ASSERT_TRUE(c.send(p::create_queue{7, 1, 0, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE}));
  const uint64_t chunk = p::max_bulk_chunk;
  const uint64_t size = 3 * chunk + 12345;
  // The second write covers the middle: the first's bytes stay on both sides.
  const uint64_t skip = chunk + 4096;
  ASSERT_TRUE(c.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, size, 0}));
  // No pattern that repeats every piece: a piece written from the wrong place shows.
  auto pattern = [](uint64_t i, uint64_t seed) {
    return static_cast<uint8_t>(((i + seed) * 0x9E3779B97F4A7C15ull) >> 56);
  };
  std::vector<uint8_t> first(size), second(2 * chunk + 1);
  for (uint64_t i = 0; i < first.size(); ++i) first[i] = pattern(i, 1);
  for (uint64_t i = 0; i < second.size(); ++i) second[i] = pattern(i, 2);

  // Each command is handled (a ping's pong follows it) before its bytes go.
  auto handled = [&c](uint64_t request) {
    ASSERT_TRUE(c.send(p::ping{request}));
    auto pong = c.wait_reply<p::pong>();
    ASSERT_TRUE(pong);
    ASSERT_EQ(pong->request, request);
  };
  ASSERT_TRUE(c.send(p::enqueue_write_buffer{header(30, 6, p::notify | p::keep_event), 3, 0, size}));
  handled(1);
  ASSERT_TRUE(c.send_bulk(30, first.data(), size));
  ASSERT_EQ(c.wait_completion(30)->status, CL_COMPLETE);
  // Behind the first: on an out-of-order queue, through the wait list.
  ASSERT_TRUE(c.send(p::enqueue_write_buffer{header(31, 7, p::notify, {30}), 3, skip, second.size()}));
  handled(2);
  ASSERT_TRUE(c.send_bulk(31, second.data(), second.size(), 3 << 20));
  ASSERT_EQ(c.wait_completion(31)->status, CL_COMPLETE);

  ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(32, 6), 3, 0, size}));
  auto data = c.wait_bulk(32);
  ASSERT_TRUE(data);
  ASSERT_EQ(data->size(), size);
  std::copy(second.begin(), second.end(), first.begin() + skip);
  EXPECT_TRUE(*data == first) << "the buffer does not hold the bytes written";
  for (p::object_id id : {30, 3, 7, 6, 1}) ASSERT_TRUE(c.send(p::release_object{id}));
  EXPECT_EQ(object_count(c), 0u);
}

// A write striped over the bulk stream and three bulk lanes (protocol version 11),
// chunks in no order and on any connection, lands whole; the server acknowledges each
// lane's frames on the control stream (lane_ack) before the write's completion.
TEST_P(daemon_test, a_write_striped_over_bulk_lanes_lands_whole_and_each_lane_is_acknowledged) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  ASSERT_EQ(c.state.bulk_lanes, 4u) << "ferryd --bulk-lanes defaults to 4";
  std::array<connection, 4> lanes;  // [0] unused: lane 0 is c.bulk
  for (uint32_t lane = 1; lane < 4; ++lane) {
    auto state = c.open_lane(server_->port(), lane, lanes[lane]);
    ASSERT_TRUE(state) << "lane " << lane;
    EXPECT_EQ(*state, (p::session_state{0, 0, 0, 4})) << "a new lane has no frames yet";
  }
  make_context_and_queue(c);
  const uint64_t chunk = 1 << 20;
  const uint64_t size = 9 * chunk + 777;
  ASSERT_TRUE(c.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, size, 0}));
  std::vector<uint8_t> bytes(size);
  for (uint64_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>((i * 0x9E3779B97F4A7C15ull) >> 57);
  ASSERT_TRUE(c.send(p::enqueue_write_buffer{header(30, 2), 3, 0, size}));
  // Chunk i on connection order[i], last chunk first: lane 1 gets three, lane 2 two,
  // lane 3 four, the bulk stream one.
  const std::array<uint32_t, 10> order{3, 1, 3, 2, 0, 1, 3, 2, 1, 3};
  std::array<uint64_t, 4> frames{};
  for (uint64_t i = 10; i-- > 0;) {
    const uint64_t offset = i * chunk;
    const std::vector<uint8_t> frame = testing::bulk_frame(30, offset, size, bytes.data() + offset,
                                                           std::min(chunk, size - offset));
    connection& to = order[i] == 0 ? c.bulk : lanes[order[i]];
    ASSERT_TRUE(to.send_raw(frame.data(), frame.size()));
    ++frames[order[i]];
  }
  auto done = c.wait_completion(30);
  ASSERT_TRUE(done);
  ASSERT_EQ(done->status, CL_COMPLETE);
  EXPECT_EQ(c.last_lane_ack, (p::lane_ack{{frames[1], frames[2], frames[3]}}))
      << "every lane's frames acknowledged no later than the completion";
  EXPECT_EQ(c.last_ack.bulk, frames[0]);
  ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(31, 2), 3, 0, size}));
  auto back = c.wait_bulk(31);
  ASSERT_TRUE(back);
  EXPECT_TRUE(*back == bytes) << "the buffer does not hold the bytes written";
  // A write nobody waits for (no completion) whose last chunk comes first, on a lane:
  // the bulk stream's chunk, which completes it, is acknowledged all the same (a
  // client's blocking write waits to hear of every chunk).
  ASSERT_TRUE(c.send(p::enqueue_write_buffer{header(32, 2, 0), 3, 0, 2 * chunk}));
  const std::vector<uint8_t> last = testing::bulk_frame(32, chunk, 2 * chunk, bytes.data() + chunk, chunk);
  ASSERT_TRUE(lanes[1].send_raw(last.data(), last.size()));
  ASSERT_TRUE(c.pump_until([&] { return c.last_lane_ack.received.size() == 3 && c.last_lane_ack.received[0] == frames[1] + 1; }));
  const std::vector<uint8_t> first = testing::bulk_frame(32, 0, 2 * chunk, bytes.data(), chunk);
  ASSERT_TRUE(c.bulk.send_raw(first.data(), first.size()));
  EXPECT_TRUE(c.pump_until([&] { return c.last_ack.bulk == frames[0] + 1; }, 5000))
      << "the bulk stream's chunk was never acknowledged";
  for (p::object_id id : {30, 31, 3, 2, 1}) ASSERT_TRUE(c.send(p::release_object{id}));
  EXPECT_EQ(object_count(c), 0u);
}

// A large read goes out in pieces (pipelined_read.hpp), each on whichever of the bulk
// stream and the session's bulk lanes is free: with the bulk stream left unread at
// first, the lanes carry pieces, and the read arrives whole across the connections.
TEST_P(daemon_test, the_pieces_of_a_large_read_go_out_on_the_bulk_lanes_too) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  std::array<connection, 4> lanes;
  for (uint32_t lane = 1; lane < 4; ++lane) ASSERT_TRUE(c.open_lane(server_->port(), lane, lanes[lane]));
  make_context_and_queue(c);
  const uint64_t size = 8 * p::max_bulk_chunk + 4096;
  ASSERT_TRUE(c.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, size, 0}));
  std::vector<uint8_t> bytes(size);
  for (uint64_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>((i * 0x9E3779B97F4A7C15ull) >> 55);
  ASSERT_TRUE(c.send(p::enqueue_write_buffer{header(30, 2), 3, 0, size}));
  ASSERT_TRUE(c.send_bulk(30, bytes.data(), size, p::max_bulk_chunk));
  ASSERT_EQ(c.wait_completion(30)->status, CL_COMPLETE);
  ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(31, 2), 3, 0, size}));
  std::vector<uint8_t> back(size);
  std::mutex mutex;
  std::atomic<uint64_t> total{0};
  std::array<std::atomic<uint64_t>, 4> frames{};
  bool bad_frame = false;
  auto drain = [&](connection& from, uint32_t index) {
    while (total < size) {
      p::frame_header h;
      std::vector<uint8_t> payload;
      if (!from.next(h, payload, 100)) continue;
      p::bulk_data prefix;
      const char* error = "";
      std::lock_guard lock(mutex);
      if (h.message_id != static_cast<uint16_t>(p::message_id::bulk_data) || payload.size() < p::bulk_prefix_size ||
          !p::decode_payload(payload.data(), p::bulk_prefix_size, prefix, error) || prefix.transfer != 31 ||
          prefix.offset + payload.size() - p::bulk_prefix_size > size) {
        bad_frame = true;
        total = size;
        return;
      }
      std::copy(payload.begin() + p::bulk_prefix_size, payload.end(), back.begin() + static_cast<std::ptrdiff_t>(prefix.offset));
      total += payload.size() - p::bulk_prefix_size;
      ++frames[index];
    }
  };
  std::vector<std::thread> readers;
  for (uint32_t lane = 1; lane < 4; ++lane) readers.emplace_back(drain, std::ref(lanes[lane]), lane);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (frames[1] + frames[2] + frames[3] == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  readers.emplace_back(drain, std::ref(c.bulk), 0);
  for (auto& reader : readers) reader.join();
  ASSERT_FALSE(bad_frame) << "a frame that is no chunk of the read";
  EXPECT_GE(frames[1] + frames[2] + frames[3], 1u) << "no piece went out on a lane";
  EXPECT_EQ(frames[0] + frames[1] + frames[2] + frames[3], 9u) << "each piece once, whole";
  EXPECT_TRUE(back == bytes) << "the read differs from what was written";
  auto done = c.wait_completion(31);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, CL_COMPLETE);
  // The client acknowledges each lane's frames; the server lets go of their staging.
  std::vector<uint64_t> lane_frames{frames[1], frames[2], frames[3]};
  ASSERT_TRUE(c.send(p::lane_ack{lane_frames}));
  ASSERT_TRUE(c.send(p::ack{0, frames[0]}));
  lane_frames[0] += 1;
  for (p::object_id id : {30, 31, 3, 2, 1}) ASSERT_TRUE(c.send(p::release_object{id}));
  EXPECT_EQ(object_count(c), 0u);
  ASSERT_TRUE(c.send(p::lane_ack{lane_frames}));
  EXPECT_TRUE(c.control.closed_by_peer()) << "a lane_ack of frames never sent ends the session";
}

// A lane the session does not take, and a link that is no lane number, are refused with
// code 15; the session goes on.
TEST_P(daemon_test, bulk_lanes_the_session_does_not_take_are_refused) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  connection lane;
  std::optional<p::refused> why;
  EXPECT_FALSE(c.open_lane(server_->port(), 4, lane, &why));
  ASSERT_TRUE(why);
  EXPECT_EQ(why->code, static_cast<int32_t>(refusal::no_such_lane)) << why->reason;
  EXPECT_NE(why->reason.find("takes 4 bulk connections"), std::string::npos) << why->reason;
  why.reset();
  p::session_token junk = p::lane_token(1);
  junk[9] = 1;
  EXPECT_FALSE(c.open_lane(server_->port(), junk, lane, &why));
  ASSERT_TRUE(why);
  EXPECT_EQ(why->code, static_cast<int32_t>(refusal::no_such_lane)) << why->reason;
  why.reset();
  // Lane 0 is the bulk stream, which the session has.
  EXPECT_FALSE(c.open_lane(server_->port(), 0, lane, &why));
  ASSERT_TRUE(why);
  EXPECT_EQ(why->code, static_cast<int32_t>(refusal::bulk_already_attached)) << why->reason;
  ASSERT_TRUE(c.send(p::ping{5}));
  auto pong = c.wait_reply<p::pong>();
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->request, 5u);
}

// A window message on a lane (lanes are no windows') ends the session.
TEST_P(daemon_test, a_window_message_on_a_bulk_lane_ends_the_session) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  connection lane;
  ASSERT_TRUE(c.open_lane(server_->port(), 2, lane));
  ASSERT_TRUE(lane.send(p::window_chunk{1, 0, 8, 0, 8}));
  EXPECT_TRUE(c.control.closed_by_peer());
}

TEST_P(daemon_test, buffer_takes_initial_contents_from_the_bulk_stream) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  make_context_and_queue(c);
  std::vector<uint8_t> initial(100000);
  for (size_t i = 0; i < initial.size(); ++i) initial[i] = static_cast<uint8_t>(i * 7);
  ASSERT_TRUE(c.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, initial.size(), 3}));
  // The daemon waits for the contents before it goes on with later frames.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(c.send_bulk(3, initial.data(), initial.size(), 30000));
  ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(30, 2), 3, 0, initial.size()}));
  auto data = c.wait_bulk(30);
  ASSERT_TRUE(data);
  EXPECT_EQ(*data, initial);
  EXPECT_EQ(c.wait_completion(30)->status, CL_COMPLETE);
}

TEST_P(daemon_test, rect_fill_and_copy_commands_move_the_right_bytes) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  make_context_and_queue(c);
  // A 16x8 byte buffer; write a 4x3 rectangle at (2,1) from a packed host block.
  ASSERT_TRUE(c.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, 128, 0}));
  ASSERT_TRUE(c.send(p::create_buffer{4, 1, CL_MEM_READ_WRITE, 128, 0}));
  ASSERT_TRUE(c.send(p::enqueue_fill_buffer{header(40, 2, 0), 3, {0xEE}, 0, 128}));
  std::vector<uint8_t> block(12);
  std::iota(block.begin(), block.end(), 1);
  p::enqueue_write_buffer_rect w{header(41, 2, 0), 3, {2, 1, 0}, {4, 3, 1}, 16, 0};
  ASSERT_TRUE(c.send(w));
  ASSERT_TRUE(c.send_bulk(41, block.data(), block.size()));
  ASSERT_TRUE(c.send(p::enqueue_copy_buffer{header(42, 2, 0), 3, 4, 0, 0, 128}));
  ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(43, 2), 4, 0, 128}));
  p::enqueue_read_buffer_rect r{header(44, 2), 4, {2, 1, 0}, {4, 3, 1}, 16, 0};
  ASSERT_TRUE(c.send(r));
  auto whole = c.wait_bulk(43);
  ASSERT_TRUE(whole);
  for (size_t y = 0; y < 8; ++y) {
    for (size_t x = 0; x < 16; ++x) {
      bool inside = x >= 2 && x < 6 && y >= 1 && y < 4;
      uint8_t expected = inside ? static_cast<uint8_t>(1 + (y - 1) * 4 + (x - 2)) : 0xEE;
      ASSERT_EQ((*whole)[y * 16 + x], expected) << x << "," << y;
    }
  }
  auto rect = c.wait_bulk(44);
  ASSERT_TRUE(rect);
  EXPECT_EQ(*rect, block);
  EXPECT_EQ(c.wait_completion(44)->status, CL_COMPLETE);
}

TEST_P(daemon_test, unknown_ids_fail_the_command_with_the_matching_error) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  make_context_and_queue(c);
  ASSERT_TRUE(c.send(p::create_buffer{3, 1, 0, 64, 0}));
  ASSERT_TRUE(c.send(p::enqueue_marker{header(50, 77)}));
  ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(51, 2), 78, 0, 64}));
  p::enqueue_ndrange run;
  run.header = header(52, 2);
  run.kernel = 79;
  run.work_dim = 1;
  run.global = {1, 1, 1};
  ASSERT_TRUE(c.send(run));
  ASSERT_TRUE(c.send(p::enqueue_marker{header(53, 2, p::notify, {80})}));
  // Without notify too: failures are always reported.
  ASSERT_TRUE(c.send(p::enqueue_copy_buffer{header(54, 2, 0), 3, 81, 0, 0, 64}));
  ASSERT_TRUE(c.send(p::create_queue{6, 82, 0, 0}));
  ASSERT_TRUE(c.send(p::enqueue_barrier{header(55, 6)}));
  ASSERT_TRUE(c.send(p::build_program{500, 83, {}, "", {}}));
  ASSERT_TRUE(c.send(p::create_kernel{501, 12, 83, "vadd"}));
  // A kept event of a failed command fails its dependents.
  ASSERT_TRUE(c.send(p::enqueue_marker{header(56, 77, p::keep_event)}));
  ASSERT_TRUE(c.send(p::enqueue_marker{header(57, 2, p::notify, {56})}));

  EXPECT_EQ(c.wait_completion(50)->status, CL_INVALID_COMMAND_QUEUE);
  EXPECT_EQ(c.wait_completion(51)->status, CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(c.wait_completion(52)->status, CL_INVALID_KERNEL);
  EXPECT_EQ(c.wait_completion(53)->status, CL_INVALID_EVENT_WAIT_LIST);
  EXPECT_EQ(c.wait_completion(54)->status, CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(c.wait_completion(55)->status, CL_INVALID_CONTEXT);
  EXPECT_EQ(c.wait_reply<p::build_reply>()->status, CL_INVALID_PROGRAM);
  EXPECT_EQ(c.wait_reply<p::kernel_reply>()->status, CL_INVALID_PROGRAM);
  EXPECT_EQ(c.wait_completion(56)->status, CL_INVALID_COMMAND_QUEUE);
  EXPECT_EQ(c.wait_completion(57)->status, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  // context, queue, buffer, the failed queue 6, the failed kept event 56
  EXPECT_EQ(object_count(c), 5u);
  // Nothing here was a protocol error: the session still answers.
  ASSERT_TRUE(c.send(p::ping{7}));
  EXPECT_EQ(c.wait_reply<p::pong>()->request, 7u);
}

TEST_P(daemon_test, a_malformed_frame_closes_only_its_own_connection) {
  client good, bad;
  ASSERT_TRUE(good.open(server_->port()));
  ASSERT_TRUE(bad.open(server_->port()));
  uint8_t garbage[16] = {8, 0, 0, 0, 0xFF, 0x7F, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};  // unknown message id
  ASSERT_TRUE(bad.control.send_raw(garbage, sizeof garbage));
  EXPECT_TRUE(bad.control.closed_by_peer());
  EXPECT_TRUE(bad.bulk.closed_by_peer());
  ASSERT_TRUE(good.send(p::ping{1}));
  auto pong = good.wait_reply<p::pong>();
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->request, 1u);
}

TEST_P(daemon_test, protocol_violations_close_the_session) {
  {
    client c;  // an id used twice
    ASSERT_TRUE(c.open(server_->port()));
    make_context_and_queue(c);
    ASSERT_TRUE(c.send(p::create_buffer{1, 1, 0, 64, 0}));
    EXPECT_TRUE(c.control.closed_by_peer());
  }
  {
    client c;  // a message that only travels to clients
    ASSERT_TRUE(c.open(server_->port()));
    ASSERT_TRUE(c.send(p::pong{1}));
    EXPECT_TRUE(c.control.closed_by_peer());
  }
  {
    client c;  // a truncated payload
    ASSERT_TRUE(c.open(server_->port()));
    uint8_t frame[10] = {2, 0, 0, 0, 10, 0, 0, 0, 1, 2};  // ping with 2 of its 8 bytes
    ASSERT_TRUE(c.control.send_raw(frame, sizeof frame));
    EXPECT_TRUE(c.control.closed_by_peer());
  }
  {
    client c;  // a bulk chunk past its transfer's end
    ASSERT_TRUE(c.open(server_->port()));
    std::vector<uint8_t> frame(8);
    p::writer w(frame);
    p::encode_value(w, p::bulk_data{5, 10, 12});
    frame.resize(frame.size() + 4);
    p::store_header(frame.data(), {static_cast<uint32_t>(frame.size() - 8), static_cast<uint16_t>(p::message_id::bulk_data), 0});
    ASSERT_TRUE(c.bulk.send_raw(frame.data(), frame.size()));
    EXPECT_TRUE(c.bulk.closed_by_peer());
    EXPECT_TRUE(c.control.closed_by_peer());
  }
}

// Staging of 1 MiB and more is recycled across sessions without being
// cleared. Two chunks over the same half of a write once counted as many
// bytes as the whole, so the write went to the device with the other half
// of its staging never written: whatever a previous session had left there
// (issue 18, item 1).
TEST_P(daemon_test, overlapping_chunks_never_reveal_another_sessions_staging) {
  // An even size of its own: the staging cache hands out the smallest kept
  // buffer that fits, which is the one session 1's write gave back.
  const uint64_t size = (3 << 20) + 8200;
  std::vector<uint8_t> secret(size);
  for (uint64_t i = 0; i < size; ++i) secret[i] = static_cast<uint8_t>(((i + 7) * 0x9E3779B97F4A7C15ull) >> 56) | 1;
  client first;
  ASSERT_TRUE(first.open(server_->port()));
  make_context_and_queue(first);
  ASSERT_TRUE(first.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, size, 0}));
  ASSERT_TRUE(first.send_bulk(30, secret.data(), size));
  ASSERT_TRUE(first.send(p::enqueue_write_buffer{header(30, 2), 3, 0, size}));
  // The write's staging goes back to the cache before its completion is sent.
  ASSERT_EQ(first.wait_completion(30)->status, CL_COMPLETE);

  client second;
  ASSERT_TRUE(second.open(server_->port()));
  make_context_and_queue(second);
  ASSERT_TRUE(second.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, size, 0}));
  // Two chunks of half the size, both at offset 0.
  std::vector<uint8_t> frame(p::frame_header_size);
  p::writer w(frame);
  p::encode_value(w, p::bulk_data{40, 0, size});
  frame.resize(frame.size() + size / 2, 0);
  p::store_header(frame.data(), {static_cast<uint32_t>(frame.size() - p::frame_header_size),
                                 static_cast<uint16_t>(p::message_id::bulk_data), 0});
  ASSERT_TRUE(second.bulk.send_raw(frame.data(), frame.size()));
  // The daemon closes the stream as soon as it has read this chunk's prefix,
  // so the rest of the send may meet a closed socket (and fail): what
  // counts is what the daemon does.
  (void)second.bulk.send_raw(frame.data(), frame.size());
  second.send(p::enqueue_write_buffer{header(40, 2), 3, 0, size});
  second.send(p::enqueue_read_buffer{header(41, 2), 3, 0, size});
  if (auto seen = second.wait_bulk(41, 10000)) {
    size_t leaked = 0;
    for (uint64_t i = 0; i < size && i < seen->size(); ++i) leaked += (*seen)[i] == secret[i];
    ADD_FAILURE() << "session 2 read its buffer back; " << leaked << " of its " << size
                  << " bytes are session 1's";
  }
  // The second chunk is a protocol violation: the session ends.
  EXPECT_TRUE(second.bulk.closed_by_peer(10000));
  EXPECT_TRUE(second.control.closed_by_peer(10000));

  // Session 1 goes on, and so do new sessions.
  ASSERT_TRUE(first.send(p::enqueue_read_buffer{header(31, 2), 3, 0, size}));
  auto back = first.wait_bulk(31);
  ASSERT_TRUE(back);
  EXPECT_TRUE(*back == secret);
  client third;
  ASSERT_TRUE(third.open(server_->port()));
  ASSERT_TRUE(third.send(p::ping{9}));
  auto pong = third.wait_reply<p::pong>();
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->request, 9u);
}

TEST_P(daemon_test, user_events_gate_commands_and_their_failure_is_reported) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  make_context_and_queue(c);
  ASSERT_TRUE(c.send(p::create_queue{6, 1, 0, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE}));
  ASSERT_TRUE(c.send(p::create_user_event{7, 1}));
  ASSERT_TRUE(c.send(p::create_user_event{8, 1}));
  ASSERT_TRUE(c.send(p::enqueue_marker{header(60, 2, p::notify, {7})}));
  ASSERT_TRUE(c.send(p::enqueue_marker{header(61, 6, p::notify, {8})}));
  EXPECT_FALSE(c.wait_completion(60, 200)) << "a marker behind an unset user event completed";
  ASSERT_TRUE(c.send(p::set_user_event_status{7, CL_COMPLETE}));
  EXPECT_EQ(c.wait_completion(60)->status, CL_COMPLETE);
  ASSERT_TRUE(c.send(p::set_user_event_status{8, -42}));
  auto failed = c.wait_completion(61);
  ASSERT_TRUE(failed) << "the failure of a command behind a failed user event was not reported";
  EXPECT_LT(failed->status, 0);
  for (p::object_id id : {7, 8, 6, 2, 1}) ASSERT_TRUE(c.send(p::release_object{id}));
  EXPECT_EQ(object_count(c), 0u);
}

TEST_P(daemon_test, build_errors_and_queries_are_answered) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  make_context_and_queue(c);
  ASSERT_TRUE(c.send(p::create_program_with_source{10, 1, "kernel void broken( { }"}));
  ASSERT_TRUE(c.send(p::build_program{1, 10, {0}, "", {}}));
  auto built = c.wait_reply<p::build_reply>(120000);
  ASSERT_TRUE(built);
  EXPECT_EQ(built->status, CL_BUILD_PROGRAM_FAILURE);
  EXPECT_TRUE(built->kernel_names.empty());
  ASSERT_TRUE(c.send(p::query{2, p::query_kind::program_build_info, 10, 0, CL_PROGRAM_BUILD_LOG, 0, {}}));
  auto log = c.wait_reply<p::query_reply>();
  ASSERT_TRUE(log);
  EXPECT_EQ(log->status, CL_SUCCESS);
  EXPECT_GT(log->value.size(), 1u);
  ASSERT_TRUE(c.send(p::query{3, p::query_kind::program_info, 10, 0, CL_PROGRAM_CONTEXT, 0, {}}));
  EXPECT_EQ(c.wait_reply<p::query_reply>()->status, CL_INVALID_VALUE) << "handles are the client's to answer";
  ASSERT_TRUE(c.send(p::query{4, p::query_kind::program_build_info, 10, 9, CL_PROGRAM_BUILD_LOG, 0, {}}));
  EXPECT_EQ(c.wait_reply<p::query_reply>()->status, CL_INVALID_DEVICE);
}

TEST_P(daemon_test, program_binaries_round_trip_and_kernels_come_in_name_order) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  make_context_and_queue(c);
  make_program(c);
  ASSERT_TRUE(c.send(p::query{1, p::query_kind::program_info, 10, 0, CL_PROGRAM_BINARIES, 0, {}}));
  auto reply = c.wait_reply<p::query_reply>();
  ASSERT_TRUE(reply);
  ASSERT_EQ(reply->status, CL_SUCCESS);
  std::vector<p::bytes> binaries;
  const char* error = "";
  ASSERT_TRUE(p::decode_payload(reply->value.data(), reply->value.size(), binaries, error)) << error;
  ASSERT_EQ(binaries.size(), 1u);
  ASSERT_FALSE(binaries[0].empty());

  ASSERT_TRUE(c.send(p::create_program_with_binary{2, 20, 1, {0}, binaries}));
  auto created = c.wait_reply<p::status_reply>();
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, CL_SUCCESS);
  EXPECT_EQ(created->details, (std::vector<int32_t>{CL_SUCCESS}));
  ASSERT_TRUE(c.send(p::build_program{3, 20, {}, "", {}}));
  ASSERT_EQ(c.wait_reply<p::build_reply>(120000)->status, CL_SUCCESS);

  ASSERT_TRUE(c.send(p::create_kernels_in_program{4, 20, {30}}));
  EXPECT_EQ(c.wait_reply<p::kernel_reply>()->status, CL_INVALID_VALUE) << "fewer ids than kernels";
  ASSERT_TRUE(c.send(p::create_kernels_in_program{5, 20, {31, 32}}));
  auto kernels = c.wait_reply<p::kernel_reply>();
  ASSERT_TRUE(kernels);
  ASSERT_EQ(kernels->status, CL_SUCCESS);
  ASSERT_EQ(kernels->kernels.size(), 2u);
  EXPECT_EQ(kernels->kernels[0], (p::kernel_desc{31, "vadd", 3}));
  EXPECT_EQ(kernels->kernels[1], (p::kernel_desc{32, "scale", 2}));

  // Validation with the native clSetKernelArg.
  ASSERT_TRUE(c.send(p::check_kernel_arg{6, 32, {1, p::kernel_arg_kind::value, 4, {0, 0, 128, 63}, 0}}));
  EXPECT_EQ(c.wait_reply<p::status_reply>()->status, CL_SUCCESS);
  ASSERT_TRUE(c.send(p::check_kernel_arg{7, 32, {1, p::kernel_arg_kind::value, 2, {0, 0}, 0}}));
  EXPECT_EQ(c.wait_reply<p::status_reply>()->status, CL_INVALID_ARG_SIZE);
  ASSERT_TRUE(c.send(p::query{8, p::query_kind::kernel_info, 32, 0, CL_KERNEL_FUNCTION_NAME, 0, {}}));
  auto name = c.wait_reply<p::query_reply>();
  ASSERT_TRUE(name);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(name->value.data())), "scale");
  ASSERT_TRUE(c.send(p::query{9, p::query_kind::kernel_work_group_info, 32, 0, CL_KERNEL_WORK_GROUP_SIZE, 0, {}}));
  auto wg = c.wait_reply<p::query_reply>();
  ASSERT_TRUE(wg);
  EXPECT_EQ(wg->status, CL_SUCCESS);
  EXPECT_EQ(wg->value.size(), sizeof(size_t));
  ASSERT_TRUE(c.send(p::query{10, p::query_kind::kernel_arg_info, 32, 0, CL_KERNEL_ARG_NAME, 1, {}}));
  auto arg_name = c.wait_reply<p::query_reply>();
  ASSERT_TRUE(arg_name);
  if (arg_name->status == CL_SUCCESS) {
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(arg_name->value.data())), "factor");
  }
}

TEST_P(daemon_test, server_info_lists_raw_device_info_without_handles) {
  client c;
  ASSERT_TRUE(c.open(server_->port(), false));
  ASSERT_TRUE(c.send(p::get_server_info{5}));
  auto info = c.wait_reply<p::server_info>();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->request, 5u);
  ASSERT_EQ(info->devices.size(), catalog_->size());
  auto has = [](const std::vector<p::info_entry>& entries, uint32_t param) {
    return std::any_of(entries.begin(), entries.end(), [&](const p::info_entry& e) { return e.param == param; });
  };
  EXPECT_TRUE(has(info->platform, CL_PLATFORM_NAME));
  EXPECT_TRUE(has(info->platform, CL_PLATFORM_VERSION));
  const auto& device = info->devices[0].info;
  EXPECT_TRUE(has(device, CL_DEVICE_NAME));
  EXPECT_TRUE(has(device, CL_DEVICE_MAX_WORK_ITEM_SIZES));
  EXPECT_TRUE(has(device, CL_DEVICE_EXTENSIONS));
  EXPECT_FALSE(has(device, CL_DEVICE_PLATFORM));
  EXPECT_FALSE(has(device, CL_DEVICE_PARENT_DEVICE));
}

TEST_P(daemon_test, many_pipelined_commands_complete_in_few_frames) {
  client c;
  ASSERT_TRUE(c.open(server_->port(), false));
  make_context_and_queue(c);
  constexpr int count = 2000;
  std::vector<uint8_t> burst;
  for (int i = 0; i < count; ++i) p::append_frame(burst, p::enqueue_marker{header(1000 + i, 2)});
  ASSERT_TRUE(c.control.send_raw(burst.data(), burst.size()));
  ASSERT_TRUE(c.pump_until([&] { return c.completions.size() == count; }));
  for (int i = 0; i < count; ++i) EXPECT_EQ(c.completions[1000 + i].status, CL_COMPLETE);
  EXPECT_LT(c.completion_frames, static_cast<size_t>(count)) << "completions were not coalesced";
  EXPECT_EQ(object_count(c), 2u);
}

TEST_P(daemon_test, a_failed_read_sends_no_data_only_its_error) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  make_context_and_queue(c);
  ASSERT_TRUE(c.send(p::create_buffer{3, 1, 0, 64, 0}));
  ASSERT_TRUE(c.send(p::create_sub_buffer{4, 3, 0, 0, 32}));
  ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(70, 2), 3, 32, 64}));
  EXPECT_EQ(c.wait_completion(70)->status, CL_INVALID_VALUE);
  ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(71, 2), 4, 0, 32}));
  EXPECT_EQ(c.wait_completion(71)->status, CL_COMPLETE);
  auto data = c.wait_bulk(71);
  ASSERT_TRUE(data);
  EXPECT_EQ(data->size(), 32u);
  EXPECT_EQ(c.bulk_data.count(70), 0u);
}

TEST_P(daemon_test, a_session_that_ends_with_live_objects_releases_them) {
  int64_t before = object_table::daemon_total();
  {
    client c;
    ASSERT_TRUE(c.open(server_->port()));
    make_context_and_queue(c);
    make_program(c);
    ASSERT_TRUE(c.send(p::create_buffer{3, 1, 0, 1024, 0}));
    ASSERT_TRUE(c.send(p::create_user_event{7, 1}));
    // A write whose bytes never come and a command behind a user event never set.
    ASSERT_TRUE(c.send(p::enqueue_write_buffer{header(80, 2, p::notify), 3, 0, 1024}));
    ASSERT_TRUE(c.send(p::enqueue_marker{header(81, 2, p::notify | p::keep_event, {7})}));
    EXPECT_EQ(object_count(c), 7u);
  }  // both connections close here
  for (int i = 0; i < 500 && (server_->session_count() != 0 || object_table::daemon_total() != before); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(server_->session_count(), 0u);
  EXPECT_EQ(object_table::daemon_total(), before);
}

TEST_P(daemon_test, goodbye_ends_the_session) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  make_context_and_queue(c);
  ASSERT_TRUE(c.send(p::goodbye{}));
  EXPECT_TRUE(c.control.closed_by_peer());
}

TEST_P(daemon_test, stop_ends_sessions_that_block_on_initial_contents) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  make_context_and_queue(c);
  ASSERT_TRUE(c.send(p::create_buffer{3, 1, 0, 64, 3}));  // contents never come
  ASSERT_TRUE(c.send(p::ping{1}));
  EXPECT_FALSE(c.wait_reply<p::pong>(200));
  server_->stop();
  EXPECT_TRUE(c.control.closed_by_peer());
}

// Kernel printf output goes to fd 1; the daemon makes that a pipe. Here fd 1
// is swapped for a pipe for the duration of the test only.
TEST_P(daemon_test, kernel_printf_reaches_the_client_before_the_completion) {
  std::fflush(stdout);
  int saved = ::dup(STDOUT_FILENO);
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  ::dup2(ends[1], STDOUT_FILENO);
  ::close(ends[1]);
  {
    printf_capture capture(unique_fd(ends[0]), STDERR_FILENO);
    capture.start();
    start_server(&capture);
    client c;
    if (c.open(server_->port())) {
      make_context_and_queue(c);
      c.send(p::create_program_with_source{10, 1, "kernel void hi(int x) { printf(\"hello %d\\n\", x); }"});
      c.send(p::build_program{1, 10, {}, "", {}});
      auto built = c.wait_reply<p::build_reply>(120000);
      c.send(p::create_kernel{2, 11, 10, "hi"});
      auto kernel = c.wait_reply<p::kernel_reply>();
      p::enqueue_ndrange run;
      run.header = header(90, 2);
      run.kernel = 11;
      run.work_dim = 1;
      run.global = {1, 1, 1};
      run.args = {{0, p::kernel_arg_kind::value, 4, {42, 0, 0, 0}, 0}};
      c.send(run);
      auto done = c.wait_completion(90);
      server_->stop();
      capture.stop();
      ::dup2(saved, STDOUT_FILENO);
      ::close(saved);
      saved = -1;
      ASSERT_TRUE(built && built->status == CL_SUCCESS);
      ASSERT_TRUE(kernel && kernel->status == CL_SUCCESS);
      ASSERT_TRUE(done);
      EXPECT_EQ(done->status, CL_COMPLETE);
      EXPECT_EQ(c.printf_text, "hello 42\n");
      ASSERT_FALSE(c.printf_seen_at.empty());
      EXPECT_EQ(c.printf_seen_at.front(), 0u) << "printf text arrived after the kernel's completion";
    }
    server_->stop();
    capture.stop();
  }
  if (saved >= 0) {
    ::dup2(saved, STDOUT_FILENO);
    ::close(saved);
  }
}

// SVM: every offset and size is checked against the allocation the daemon
// recorded, whatever a client sends.
TEST_P(daemon_test, svm_commands_stay_inside_their_allocation) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  make_context_and_queue(c);
  ASSERT_TRUE(c.send(p::svm_alloc{50, 3, 1, CL_MEM_READ_WRITE, 256, 0}));
  auto allocated = c.wait_reply<p::status_reply>();
  ASSERT_TRUE(allocated);
  ASSERT_EQ(allocated->status, CL_SUCCESS);

  // Reads, writes, copies and fills that reach outside, wrap around, or name no allocation.
  ASSERT_TRUE(c.send(p::enqueue_svm_read{header(20, 2), 3, 200, 100}));
  ASSERT_TRUE(c.send(p::enqueue_svm_read{header(21, 2), 3, UINT64_MAX, 2}));
  ASSERT_TRUE(c.send(p::enqueue_svm_read{header(22, 2), 99, 0, 16}));
  ASSERT_TRUE(c.send(p::enqueue_svm_read{header(23, 2), 3, 0, 0}));
  std::vector<uint8_t> junk(64, 0xEE);
  ASSERT_TRUE(c.send(p::enqueue_svm_write{header(24, 2), 3, 250, 64}));
  ASSERT_TRUE(c.send_bulk(24, junk.data(), junk.size()));
  ASSERT_TRUE(c.send(p::enqueue_svm_copy{header(25, 2), 3, 0, 3, 128, 200}));
  ASSERT_TRUE(c.send(p::enqueue_svm_copy{header(26, 2), 3, 0, 3, 8, 16}));
  ASSERT_TRUE(c.send(p::enqueue_svm_fill{header(27, 2), 3, {1, 2, 3, 4}, 128, 256}));
  ASSERT_TRUE(c.send(p::enqueue_svm_fill{header(28, 2), 3, {1, 2, 3}, 0, 12}));
  for (p::object_id id : {20, 21, 22, 23, 24, 25, 27, 28})
    EXPECT_EQ(c.wait_completion(id)->status, CL_INVALID_VALUE) << "command " << id;
  EXPECT_EQ(c.wait_completion(26)->status, CL_MEM_COPY_OVERLAP);

  // A kernel argument or exec info pointer at the end of the allocation is outside it.
  make_program(c);
  ASSERT_TRUE(c.send(p::check_kernel_arg{60, 11, p::kernel_arg{0, p::kernel_arg_kind::svm, 256, {}, 3}}));
  auto arg = c.wait_reply<p::status_reply>();
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->status, CL_INVALID_ARG_VALUE);
  ASSERT_TRUE(c.send(p::check_kernel_arg{61, 11, p::kernel_arg{0, p::kernel_arg_kind::svm, 255, {}, 3}}));
  arg = c.wait_reply<p::status_reply>();
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg->status, CL_SUCCESS);
  ASSERT_TRUE(c.send(p::set_kernel_exec_info{62, 11, {{3, 0}, {3, 256}}}));
  auto info = c.wait_reply<p::status_reply>();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->status, CL_INVALID_VALUE);

  // A buffer that would reach past the allocation is refused.
  ASSERT_TRUE(c.send(p::create_buffer{4, 1, CL_MEM_READ_WRITE, 200, 0, 3, 100}));
  ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(29, 2), 4, 0, 16}));
  EXPECT_EQ(c.wait_completion(29)->status, CL_INVALID_HOST_PTR);
  ASSERT_TRUE(c.send(p::release_object{4}));

  // What is inside works.
  std::vector<uint8_t> data(256);
  std::iota(data.begin(), data.end(), uint8_t{0});
  ASSERT_TRUE(c.send(p::enqueue_svm_write{header(30, 2), 3, 0, 256}));
  ASSERT_TRUE(c.send_bulk(30, data.data(), data.size(), 100));
  ASSERT_TRUE(c.send(p::enqueue_svm_read{header(31, 2), 3, 16, 64}));
  auto back = c.wait_bulk(31);
  ASSERT_TRUE(back);
  EXPECT_TRUE(std::equal(back->begin(), back->end(), data.begin() + 16));
  EXPECT_EQ(c.wait_completion(31)->status, CL_COMPLETE);

  // Released, the id names nothing.
  ASSERT_TRUE(c.send(p::release_object{3}));
  ASSERT_TRUE(c.send(p::enqueue_svm_read{header(32, 2), 3, 0, 16}));
  EXPECT_EQ(c.wait_completion(32)->status, CL_INVALID_VALUE);
  for (p::object_id id : {11, 10}) ASSERT_TRUE(c.send(p::release_object{id}));
  EXPECT_EQ(object_count(c), 2u);
}

TEST_P(daemon_test, svm_memory_outlives_its_id_while_a_buffer_stands_on_it) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  make_context_and_queue(c);
  ASSERT_TRUE(c.send(p::svm_alloc{50, 3, 1, CL_MEM_READ_WRITE, 1024, 0}));
  auto allocated = c.wait_reply<p::status_reply>();
  ASSERT_TRUE(allocated);
  ASSERT_EQ(allocated->status, CL_SUCCESS);
  std::vector<uint8_t> data(1024);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 13);
  ASSERT_TRUE(c.send(p::enqueue_svm_write{header(20, 2), 3, 0, 1024}));
  ASSERT_TRUE(c.send_bulk(20, data.data(), data.size()));
  ASSERT_TRUE(c.send(p::create_buffer{4, 1, CL_MEM_READ_WRITE, 512, 0, 3, 256}));
  // The client frees the allocation first (an application error); the buffer keeps it.
  ASSERT_TRUE(c.send(p::release_object{3}));
  ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(21, 2), 4, 0, 512}));
  auto back = c.wait_bulk(21);
  ASSERT_TRUE(back);
  EXPECT_TRUE(std::equal(back->begin(), back->end(), data.begin() + 256));
  EXPECT_EQ(c.wait_completion(21)->status, CL_COMPLETE);
  ASSERT_TRUE(c.send(p::release_object{4}));
  EXPECT_EQ(object_count(c), 2u);
}

// ---------------------------------------------------------------------------
// Several servers: two daemons in this process, one client session on each,
// joined by peer links (docs/protocol.md, "Peer links").

INSTANTIATE_TEST_SUITE_P(completions, daemon_test,
                         ::testing::Values(native::completion_mode::callbacks, native::completion_mode::polling),
                         mode_name);

class peers_test : public daemon_test {
 protected:
  void SetUp() override {
    daemon_test::SetUp();
    if (catalog_ == nullptr) return;
    server_config config;
    config.port = 0;
    config.handshake_timeout_s = 2;
    other_ = std::make_unique<server>(config, session_services{*catalog_, native::real_api(), nullptr, nullptr, {}});
    std::string error;
    ASSERT_TRUE(other_->start(error)) << error;
    ASSERT_TRUE(a_.open(server_->port()));
    ASSERT_TRUE(b_.open(other_->port()));
    make_context_and_queue(a_);
    make_context_and_queue(b_);
    // Peer 1 of each session is the other one.
    ASSERT_TRUE(a_.send(p::add_peer{1, address_of(*other_), b_.welcome.session, b_.welcome.peer_key}));
    ASSERT_TRUE(b_.send(p::add_peer{1, address_of(*server_), a_.welcome.session, a_.welcome.peer_key}));
  }
  void TearDown() override {
    if (other_) other_->stop();
    daemon_test::TearDown();
  }

  static std::string address_of(server& s) { return "127.0.0.1:" + std::to_string(s.port()); }

  /// Round trip: everything sent to `c` before has been handled.
  static void sync(client& c, uint64_t request) {
    ASSERT_TRUE(c.send(p::ping{request}));
    auto pong = c.wait_reply<p::pong>();
    ASSERT_TRUE(pong);
    ASSERT_EQ(pong->request, request);
  }

  /// The counter of `kind` in the daemon that `c` talks to.
  static p::link_counter counter_of(client& c, p::link_kind kind, uint64_t request) {
    p::link_counter sum;
    sum.kind = kind;
    if (!c.send(p::get_link_counters{request})) return sum;
    auto reply = c.wait_reply<p::link_counters>();
    EXPECT_TRUE(reply);
    if (!reply) return sum;
    EXPECT_EQ(reply->request, request);
    for (const auto& l : reply->links) {
      if (l.kind != kind) continue;
      sum.bytes_in += l.bytes_in;
      sum.bytes_out += l.bytes_out;
      sum.messages_in += l.messages_in;
      sum.messages_out += l.messages_out;
    }
    return sum;
  }

  /// Waits (polling the counters) until `c`'s daemon has taken `messages`
  /// frames in on peer links.
  static bool wait_peer_in(client& c, uint64_t messages) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (uint64_t request = 5000; std::chrono::steady_clock::now() < deadline; ++request) {
      if (counter_of(c, p::link_kind::peer_in, request).messages_in >= messages) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  std::vector<uint8_t> read_back(client& c, p::object_id command, p::object_id buffer, uint64_t size) {
    EXPECT_TRUE(c.send(p::enqueue_read_buffer{header(command, 2), buffer, 0, size}));
    auto data = c.wait_bulk(command);
    EXPECT_TRUE(data);
    EXPECT_EQ(c.wait_completion(command)->status, CL_COMPLETE);
    return data ? *data : std::vector<uint8_t>{};
  }

  std::unique_ptr<server> other_;
  client a_, b_;
};

// The client's objects exist under the same ids on every server of a
// context: the importer names the exported event by its own id.
TEST_P(peers_test, an_exported_event_completes_the_imported_one_whatever_comes_first) {
  // Import first, then the status.
  ASSERT_TRUE(a_.send(p::create_user_event{7, 1}));
  ASSERT_TRUE(b_.send(p::import_event{7, 1}));
  ASSERT_TRUE(b_.send(p::enqueue_marker{header(80, 2, p::notify, {7})}));
  ASSERT_TRUE(a_.send(p::export_event{7, 1, 90}));
  EXPECT_FALSE(b_.wait_completion(80, 200)) << "the imported event completed before the exported one";
  ASSERT_TRUE(a_.send(p::set_user_event_status{7, CL_COMPLETE}));
  auto done = b_.wait_completion(80);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, CL_COMPLETE);

  // The status first (a finished kept command), then the import.
  ASSERT_TRUE(a_.send(p::enqueue_marker{header(30, 2, p::keep_event)}));
  ASSERT_TRUE(a_.send(p::export_event{30, 1, 91}));
  ASSERT_TRUE(wait_peer_in(b_, 2)) << "the second status never reached the importer's daemon";
  ASSERT_TRUE(b_.send(p::import_event{30, 1}));
  ASSERT_TRUE(b_.send(p::enqueue_marker{header(81, 2, p::notify, {30})}));
  done = b_.wait_completion(81);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, CL_COMPLETE);

  // A failure travels too, and fails what waits on the import.
  ASSERT_TRUE(a_.send(p::create_user_event{8, 1}));
  ASSERT_TRUE(b_.send(p::import_event{8, 1}));
  ASSERT_TRUE(b_.send(p::enqueue_marker{header(82, 2, p::notify, {8})}));
  ASSERT_TRUE(a_.send(p::export_event{8, 1, 92}));
  sync(b_, 1);
  ASSERT_TRUE(a_.send(p::set_user_event_status{8, -42}));
  auto failed = b_.wait_completion(82);
  ASSERT_TRUE(failed) << "a command behind a failed import was never reported";
  EXPECT_LT(failed->status, 0);

  // Unknown events and peers are the client's mistakes, reported as such;
  // exports that were delivered report nothing.
  ASSERT_TRUE(a_.send(p::export_event{999, 1, 93}));
  ASSERT_TRUE(a_.send(p::export_event{7, 9, 94}));
  EXPECT_EQ(a_.wait_completion(93)->status, CL_INVALID_EVENT);
  EXPECT_EQ(a_.wait_completion(94)->status, CL_INVALID_VALUE);
  EXPECT_EQ(a_.completions.count(90) + a_.completions.count(91) + a_.completions.count(92), 0u);

  for (p::object_id id : {7, 30, 8}) ASSERT_TRUE(b_.send(p::release_object{id}));
  EXPECT_EQ(object_count(b_), 2u);
}

TEST_P(peers_test, migration_moves_a_buffer_over_the_peer_link_not_the_client) {
  constexpr uint64_t size = 3 * (1u << 20) + 123;  // several chunks' worth on any path
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 31 + 7);
  ASSERT_TRUE(a_.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, size, 0}));
  ASSERT_TRUE(a_.send(p::enqueue_write_buffer{header(20, 2, p::keep_event), 3, 0, size}));
  ASSERT_TRUE(a_.send_bulk(20, bytes.data(), size));
  ASSERT_TRUE(b_.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, size, 0}));
  ASSERT_TRUE(b_.send(p::create_buffer{4, 1, CL_MEM_READ_WRITE, size, 0}));
  p::link_counter bulk_before = counter_of(a_, p::link_kind::client_bulk, 1);

  // The command first on the destination: the write waits for bytes of unknown number.
  ASSERT_TRUE(b_.send(p::migrate_in{header(50, 2), 3, 0, size, 500}));
  sync(b_, 2);
  ASSERT_TRUE(a_.send(p::migrate_out{header(40, 0, p::notify, {20}), 3, 0, size, 1, 500, 0}));
  EXPECT_EQ(a_.wait_completion(40)->status, CL_COMPLETE);
  EXPECT_EQ(b_.wait_completion(50)->status, CL_COMPLETE);
  EXPECT_EQ(read_back(b_, 60, 3, size), bytes);

  // The bytes first: the write finds them all there.
  ASSERT_TRUE(a_.send(p::migrate_out{header(41, 0, p::notify), 3, 0, size, 1, 501, 0}));
  EXPECT_EQ(a_.wait_completion(41)->status, CL_COMPLETE);
  ASSERT_TRUE(b_.send(p::migrate_in{header(51, 2), 4, 0, size, 501}));
  EXPECT_EQ(b_.wait_completion(51)->status, CL_COMPLETE);
  EXPECT_EQ(read_back(b_, 61, 4, size), bytes);

  // None of it went through the source's client streams.
  p::link_counter bulk_after = counter_of(a_, p::link_kind::client_bulk, 3);
  EXPECT_LT(bulk_after.bytes_out - bulk_before.bytes_out, size);
  p::link_counter sent = counter_of(a_, p::link_kind::peer_out, 4);
  EXPECT_GE(sent.bytes_out, 2 * size);
  EXPECT_GE(counter_of(b_, p::link_kind::peer_in, 5).bytes_in, 2 * size);
  EXPECT_GT(counter_of(b_, p::link_kind::client_control, 6).messages_in, 0u);
}

TEST_P(peers_test, a_content_size_limits_the_bytes_moved) {
  constexpr uint64_t size = 4096;
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i + 1);
  ASSERT_TRUE(a_.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, size, 0}));
  ASSERT_TRUE(a_.send(p::create_buffer{4, 1, CL_MEM_READ_WRITE, 8, 0}));
  ASSERT_TRUE(a_.send(p::enqueue_write_buffer{header(20, 2, p::keep_event), 3, 0, size}));
  ASSERT_TRUE(a_.send_bulk(20, bytes.data(), size));
  auto set_content = [&](p::object_id command, uint64_t value) {
    uint8_t raw[8];
    std::memcpy(raw, &value, sizeof raw);  // little endian, like the wire
    ASSERT_TRUE(a_.send(p::enqueue_write_buffer{header(command, 2, p::notify), 4, 0, 8}));
    ASSERT_TRUE(a_.send_bulk(command, raw, 8));
    EXPECT_EQ(a_.wait_completion(command)->status, CL_COMPLETE);
  };
  ASSERT_TRUE(b_.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, size, 0}));
  ASSERT_TRUE(b_.send(p::enqueue_fill_buffer{header(21, 2, 0), 3, {0xEE}, 0, size}));

  // 1100 meaningful bytes; [1000, 2000) is asked for: 100 move.
  set_content(22, 1100);
  p::link_counter before = counter_of(b_, p::link_kind::peer_in, 1);
  ASSERT_TRUE(b_.send(p::migrate_in{header(50, 2), 3, 1000, 1000, 500}));
  sync(b_, 2);
  ASSERT_TRUE(a_.send(p::migrate_out{header(40, 0, p::notify, {20}), 3, 1000, 1000, 1, 500, 4}));
  EXPECT_EQ(a_.wait_completion(40)->status, CL_COMPLETE);
  EXPECT_EQ(b_.wait_completion(50)->status, CL_COMPLETE);
  p::link_counter after = counter_of(b_, p::link_kind::peer_in, 3);
  EXPECT_EQ(after.bytes_in - before.bytes_in, 8 + 24 + 100u) << "one frame of 100 bytes";
  EXPECT_EQ(after.messages_in - before.messages_in, 1u);
  std::vector<uint8_t> expected(size, 0xEE);
  std::copy(bytes.begin() + 1000, bytes.begin() + 1100, expected.begin() + 1000);
  EXPECT_EQ(read_back(b_, 60, 3, size), expected);

  // Nothing meaningful in the range: zero bytes move, and the write still completes.
  set_content(23, 500);
  ASSERT_TRUE(b_.send(p::migrate_in{header(51, 2), 3, 1000, 1000, 501}));
  sync(b_, 4);
  ASSERT_TRUE(a_.send(p::migrate_out{header(41, 0, p::notify), 3, 1000, 1000, 1, 501, 4}));
  EXPECT_EQ(a_.wait_completion(41)->status, CL_COMPLETE);
  EXPECT_EQ(b_.wait_completion(51)->status, CL_COMPLETE);
  EXPECT_EQ(read_back(b_, 61, 3, size), expected);

  // The same with the bytes first.
  set_content(24, 3000);
  ASSERT_TRUE(a_.send(p::migrate_out{header(42, 0, p::notify), 3, 0, size, 1, 502, 4}));
  EXPECT_EQ(a_.wait_completion(42)->status, CL_COMPLETE);
  ASSERT_TRUE(b_.send(p::migrate_in{header(52, 2), 3, 0, size, 502}));
  EXPECT_EQ(b_.wait_completion(52)->status, CL_COMPLETE);
  std::copy(bytes.begin(), bytes.begin() + 3000, expected.begin());
  EXPECT_EQ(read_back(b_, 62, 3, size), expected);
}

TEST_P(peers_test, unreachable_peers_and_aborted_transfers_fail_instead_of_hanging) {
  // Nothing listens on port 1.
  ASSERT_TRUE(a_.send(p::add_peer{2, "127.0.0.1:1", b_.welcome.session, b_.welcome.peer_key}));
  ASSERT_TRUE(a_.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, 64, 0}));
  ASSERT_TRUE(a_.send(p::create_user_event{7, 1}));
  ASSERT_TRUE(a_.send(p::migrate_out{header(40, 0, 0), 3, 0, 64, 2, 500, 0}));
  ASSERT_TRUE(a_.send(p::export_event{7, 2, 41}));
  ASSERT_TRUE(a_.send(p::set_user_event_status{7, CL_COMPLETE}));
  EXPECT_EQ(a_.wait_completion(40)->status, CL_DEVICE_NOT_AVAILABLE);
  EXPECT_EQ(a_.wait_completion(41)->status, CL_DEVICE_NOT_AVAILABLE);
  // A wrong key is refused by the peer: the same outcome.
  p::session_token wrong = b_.welcome.peer_key;
  wrong[5] ^= 1;
  ASSERT_TRUE(a_.send(p::add_peer{3, address_of(*other_), b_.welcome.session, wrong}));
  ASSERT_TRUE(a_.send(p::migrate_out{header(42, 0, 0), 3, 0, 64, 3, 501, 0}));
  EXPECT_EQ(a_.wait_completion(42)->status, CL_DEVICE_NOT_AVAILABLE);
  // The same index with other values is a violation; the same values are not.
  ASSERT_TRUE(a_.send(p::add_peer{2, "127.0.0.1:1", b_.welcome.session, b_.welcome.peer_key}));
  sync(a_, 1);

  // The source failed: the client aborts the transfer its destination waits for.
  ASSERT_TRUE(b_.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, 64, 0}));
  ASSERT_TRUE(b_.send(p::migrate_in{header(50, 2, p::keep_event), 3, 0, 64, 600}));
  ASSERT_TRUE(b_.send(p::enqueue_marker{header(51, 2, p::notify)}));
  EXPECT_FALSE(b_.wait_completion(51, 200)) << "the queue went on before the migration";
  ASSERT_TRUE(b_.send(p::abort_transfer{600, CL_DEVICE_NOT_AVAILABLE}));
  auto failed = b_.wait_completion(50);
  ASSERT_TRUE(failed) << "an aborted migrate_in was never reported";
  EXPECT_LT(failed->status, 0);
  EXPECT_TRUE(b_.wait_completion(51)) << "the queue did not go on after the failed migration";
  // An abort that comes first fails the migrate_in at once with its status.
  ASSERT_TRUE(b_.send(p::abort_transfer{601, -1234}));
  ASSERT_TRUE(b_.send(p::migrate_in{header(52, 2, 0), 3, 0, 64, 601}));
  EXPECT_EQ(b_.wait_completion(52)->status, -1234);

  ASSERT_TRUE(a_.send(p::add_peer{2, "127.0.0.1:2", b_.welcome.session, b_.welcome.peer_key}));
  EXPECT_TRUE(a_.control.closed_by_peer());
}

TEST_P(peers_test, garbage_on_a_peer_link_closes_only_that_link) {
  connection rogue(testing::connect_loopback(other_->port()));
  ASSERT_TRUE(rogue.send(testing::make_hello(p::stream_kind::peer, b_.welcome.session, b_.welcome.peer_key)));
  ASSERT_TRUE(rogue.expect<p::welcome>());
  ASSERT_TRUE(rogue.send(p::ping{1}));  // no peer message
  EXPECT_TRUE(rogue.closed_by_peer());
  connection truncated(testing::connect_loopback(other_->port()));
  ASSERT_TRUE(truncated.send(testing::make_hello(p::stream_kind::peer, b_.welcome.session, b_.welcome.peer_key)));
  ASSERT_TRUE(truncated.expect<p::welcome>());
  uint8_t frame[12] = {4, 0, 0, 0, 96, 0, 0, 0, 1, 2, 3, 4};  // peer_event_status with 4 of its 12 bytes
  ASSERT_TRUE(truncated.send_raw(frame, sizeof frame));
  EXPECT_TRUE(truncated.closed_by_peer());

  // The session and its real peer link go on.
  sync(b_, 1);
  ASSERT_TRUE(a_.send(p::create_user_event{7, 1}));
  ASSERT_TRUE(b_.send(p::import_event{7, 1}));
  ASSERT_TRUE(b_.send(p::enqueue_marker{header(80, 2, p::notify, {7})}));
  ASSERT_TRUE(a_.send(p::export_event{7, 1, 90}));
  ASSERT_TRUE(a_.send(p::set_user_event_status{7, CL_COMPLETE}));
  EXPECT_EQ(b_.wait_completion(80)->status, CL_COMPLETE);
}

INSTANTIATE_TEST_SUITE_P(completions, peers_test,
                         ::testing::Values(native::completion_mode::callbacks, native::completion_mode::polling),
                         mode_name);

// ---------------------------------------------------------------------------
// The daemon on the dry native API: handlers whose native side this host
// cannot run (PoCL 3.1 takes no IL), with fake handles.

// The bytes of a minimal SPIR-V module (header, Addresses and Kernel
// capabilities, Physical64 OpenCL memory model); the dry API takes any IL.
p::bytes minimal_spirv() {
  const uint32_t words[] = {0x07230203, 0x00010000, 0, 1, 0, 0x00020011, 4, 0x00020011, 6, 0x0003000e, 2, 2};
  p::bytes out(sizeof words);
  std::memcpy(out.data(), words, sizeof words);
  return out;
}

class dry_session_test : public ::testing::Test {
 protected:
  void SetUp() override {
    server_config config;
    config.port = 0;
    config.handshake_timeout_s = 2;
    server_ = std::make_unique<server>(config, session_services{catalog_, native::dry_api(), nullptr, nullptr, {}});
    std::string error;
    ASSERT_TRUE(server_->start(error)) << error;
  }
  void TearDown() override { server_->stop(); }

  static uint64_t object_count(client& c, uint64_t request = 900) {
    c.send(p::get_object_counts{request});
    auto counts = c.wait_reply<p::object_counts>();
    EXPECT_TRUE(counts);
    return counts ? counts->objects : ~0ull;
  }
  static std::optional<p::status_reply> status_of(client& c, uint64_t request) {
    auto reply = c.wait_reply<p::status_reply>();
    EXPECT_TRUE(reply);
    EXPECT_EQ(reply ? reply->request : 0, request);
    return reply;
  }

  native::device_catalog catalog_ = native::device_catalog::dry(1);
  std::unique_ptr<server> server_;
};

TEST_F(dry_session_test, il_program_is_created_built_and_released) {
  int64_t live = native::dry_live_handles();
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  ASSERT_TRUE(c.send(p::create_context{1, {0}}));
  ASSERT_TRUE(c.send(p::create_program_with_il{10, 5, 1, minimal_spirv()}));
  auto created = status_of(c, 10);
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, CL_SUCCESS);
  EXPECT_EQ(object_count(c), 2u);

  // Specialization constants reach the native call; bytes that are not
  // `size` bytes never do.
  ASSERT_TRUE(c.send(p::set_program_specialization_constant{11, 5, 3, 4, {1, 0, 0, 0}}));
  EXPECT_EQ(status_of(c, 11)->status, CL_SUCCESS);
  ASSERT_TRUE(c.send(p::set_program_specialization_constant{12, 5, 3, 8, {1, 0, 0}}));
  EXPECT_EQ(status_of(c, 12)->status, CL_INVALID_VALUE);
  ASSERT_TRUE(c.send(p::set_program_specialization_constant{13, 5, 3, 4, {}}));
  EXPECT_EQ(status_of(c, 13)->status, CL_SUCCESS) << "a NULL value is the native call's to judge";

  ASSERT_TRUE(c.send(p::build_program{14, 5, {}, "", {}}));
  auto built = c.wait_reply<p::build_reply>();
  ASSERT_TRUE(built);
  EXPECT_EQ(built->request, 14u);
  EXPECT_EQ(built->status, CL_SUCCESS);
  EXPECT_EQ(built->kernel_names, (std::vector<std::string>{"dry_kernel"}));
  ASSERT_TRUE(c.send(p::create_kernel{15, 6, 5, "dry_kernel"}));
  auto kernel = c.wait_reply<p::kernel_reply>();
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->status, CL_SUCCESS);
  EXPECT_EQ(object_count(c), 3u);

  for (p::object_id id : {6, 5, 1}) ASSERT_TRUE(c.send(p::release_object{id}));
  EXPECT_EQ(object_count(c), 0u);
  EXPECT_EQ(native::dry_live_handles(), live) << "a native handle was not released";
}

TEST_F(dry_session_test, il_program_id_used_twice_is_a_protocol_violation) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  ASSERT_TRUE(c.send(p::create_context{1, {0}}));
  ASSERT_TRUE(c.send(p::create_program_with_il{10, 5, 1, minimal_spirv()}));
  auto created = status_of(c, 10);
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, CL_SUCCESS);
  ASSERT_TRUE(c.send(p::create_program_with_il{11, 5, 1, minimal_spirv()}));
  EXPECT_TRUE(c.control.closed_by_peer());
}

TEST_F(dry_session_test, il_program_in_an_unknown_context_fails_and_leaves_no_entry) {
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  ASSERT_TRUE(c.send(p::create_context{1, {0}}));
  ASSERT_TRUE(c.send(p::create_program_with_il{10, 5, 99, minimal_spirv()}));
  EXPECT_EQ(status_of(c, 10)->status, CL_INVALID_CONTEXT);
  ASSERT_TRUE(c.send(p::create_program_with_il{11, 6, 1, {}}));
  EXPECT_EQ(status_of(c, 11)->status, CL_INVALID_VALUE);
  EXPECT_EQ(object_count(c), 1u) << "a failed creation was recorded";
  // The ids name nothing.
  ASSERT_TRUE(c.send(p::build_program{12, 5, {}, "", {}}));
  EXPECT_EQ(c.wait_reply<p::build_reply>()->status, CL_INVALID_PROGRAM);
  ASSERT_TRUE(c.send(p::set_program_specialization_constant{13, 6, 0, 4, {0, 0, 0, 0}}));
  EXPECT_EQ(status_of(c, 13)->status, CL_INVALID_PROGRAM);
  // A program from source takes no specialization constant, whatever a
  // client sends (PoCL 3.1 aborts on one that was never built).
  ASSERT_TRUE(c.send(p::create_program_with_source{7, 1, "kernel void k() {}"}));
  ASSERT_TRUE(c.send(p::set_program_specialization_constant{14, 7, 0, 4, {0, 0, 0, 0}}));
  EXPECT_EQ(status_of(c, 14)->status, CL_INVALID_PROGRAM);
  // Nothing here was a protocol error: the session still answers.
  ASSERT_TRUE(c.send(p::ping{15}));
  EXPECT_EQ(c.wait_reply<p::pong>()->request, 15u);
}

// A compiler that fails whatever asks for argument info (as NVIDIA's does for a
// kernel without arguments) and records the options of every try.
std::mutex rejecting_mutex;
std::vector<std::string> rejecting_options;
cl_int reject_arg_info(const char* options) {
  std::lock_guard lock(rejecting_mutex);
  rejecting_options.push_back(options ? options : "");
  return options && std::strstr(options, "-cl-kernel-arg-info") ? CL_BUILD_PROGRAM_FAILURE : CL_SUCCESS;
}
const native::api& arg_info_rejecting_api() {
  static const native::api table = [] {
    native::api t = native::dry_api();
    t.clBuildProgram = [](cl_program, cl_uint, const cl_device_id*, const char* options,
                          void(CL_CALLBACK*)(cl_program, void*), void*) { return reject_arg_info(options); };
    t.clCompileProgram = [](cl_program, cl_uint, const cl_device_id*, const char* options, cl_uint, const cl_program*,
                            const char**, void(CL_CALLBACK*)(cl_program, void*), void*) {
      const cl_int rc = reject_arg_info(options);
      return rc == CL_SUCCESS ? rc : CL_COMPILE_PROGRAM_FAILURE;
    };
    return t;
  }();
  return table;
}

TEST(build_options, a_build_that_fails_only_for_the_added_arg_info_is_retried_as_asked) {
  native::device_catalog catalog = native::device_catalog::dry(1);
  server_config config;
  config.port = 0;
  server s(config, session_services{catalog, arg_info_rejecting_api(), nullptr, nullptr, {}});
  std::string error;
  ASSERT_TRUE(s.start(error)) << error;
  auto tries = [] {
    std::lock_guard lock(rejecting_mutex);
    return std::exchange(rejecting_options, {});
  };
  client c;
  ASSERT_TRUE(c.open(s.port()));
  ASSERT_TRUE(c.send(p::create_context{1, {0}}));
  ASSERT_TRUE(c.send(p::create_program_with_source{5, 1, "kernel void empty(void) {}"}));

  ASSERT_TRUE(c.send(p::build_program{10, 5, {}, "-DX=1", {}}));
  auto built = c.wait_reply<p::build_reply>();
  ASSERT_TRUE(built);
  EXPECT_EQ(built->status, CL_SUCCESS);
  EXPECT_EQ(tries(), (std::vector<std::string>{"-DX=1 -cl-kernel-arg-info", "-DX=1"}));

  // Asked for by the client: its failure is the answer, with no second try.
  ASSERT_TRUE(c.send(p::build_program{11, 5, {}, "-cl-kernel-arg-info", {}}));
  built = c.wait_reply<p::build_reply>();
  ASSERT_TRUE(built);
  EXPECT_EQ(built->status, CL_BUILD_PROGRAM_FAILURE);
  EXPECT_EQ(tries(), (std::vector<std::string>{"-cl-kernel-arg-info"}));

  ASSERT_TRUE(c.send(p::compile_program{12, 5, {}, "", {}, {}, {}}));
  auto compiled = c.wait_reply<p::build_reply>();
  ASSERT_TRUE(compiled);
  EXPECT_EQ(compiled->status, CL_SUCCESS);
  EXPECT_EQ(tries(), (std::vector<std::string>{" -cl-kernel-arg-info", ""}));

  // A client of version 4 or 5 builds and compiles with the layout of 32 and 33.
  ASSERT_TRUE(c.send(p::build_program_v4{13, 5, {}, "-DY=2"}));
  built = c.wait_reply<p::build_reply>();
  ASSERT_TRUE(built);
  EXPECT_EQ(built->request, 13u);
  EXPECT_EQ(built->status, CL_SUCCESS);
  EXPECT_EQ(tries(), (std::vector<std::string>{"-DY=2 -cl-kernel-arg-info", "-DY=2"}));
  ASSERT_TRUE(c.send(p::compile_program_v4{14, 5, {}, "-DZ", {}, {}}));
  compiled = c.wait_reply<p::build_reply>();
  ASSERT_TRUE(compiled);
  EXPECT_EQ(compiled->request, 14u);
  EXPECT_EQ(compiled->status, CL_SUCCESS);
  EXPECT_EQ(tries(), (std::vector<std::string>{"-DZ -cl-kernel-arg-info", "-DZ"}));
  s.stop();
}

// A compiler that reads a build's headers the way a real one does, through
// the -I options it is given: it records the options, the directories they
// name and what it finds of axpy.h in them, and its log names the first
// directory's path, as a compiler's log names the files it read.
struct header_reader_state {
  std::mutex mutex;
  std::vector<std::string> options;
  std::vector<std::string> dirs;  // of the last build
  std::string found;              // the content of the first axpy.h in the dirs
  std::string log;
};
header_reader_state& header_reader() {
  static header_reader_state state;
  return state;
}
cl_int read_headers(const char* options) {
  auto& state = header_reader();
  std::lock_guard lock(state.mutex);
  state.options.push_back(options ? options : "");
  state.dirs.clear();
  state.found.clear();
  std::string text = options ? options : "";
  for (size_t at = text.find("-I"); at != std::string::npos; at = text.find("-I", at + 2)) {
    // An option starts the text or follows a space: a tree's random name
    // (when its own is taken) may hold "-I" too ("ferry-build-I...").
    if (at > 0 && text[at - 1] != ' ') continue;
    size_t end = text.find(' ', at);
    state.dirs.push_back(text.substr(at + 2, end == std::string::npos ? std::string::npos : end - at - 2));
  }
  for (const std::string& dir : state.dirs) {
    std::FILE* f = std::fopen((dir + "/axpy.h").c_str(), "rb");
    if (f == nullptr) continue;
    char buffer[64] = {};
    state.found.assign(buffer, std::fread(buffer, 1, sizeof buffer, f));
    std::fclose(f);
    break;
  }
  state.log = state.dirs.empty() ? "" : "warning: " + state.dirs[0] + "/axpy.h:1:2: seen";
  return CL_SUCCESS;
}
const native::api& header_reading_api() {
  static const native::api table = [] {
    native::api t = native::dry_api();
    t.clBuildProgram = [](cl_program, cl_uint, const cl_device_id*, const char* options,
                          void(CL_CALLBACK*)(cl_program, void*), void*) { return read_headers(options); };
    t.clCompileProgram = [](cl_program, cl_uint, const cl_device_id*, const char* options, cl_uint, const cl_program*,
                            const char**, void(CL_CALLBACK*)(cl_program, void*), void*) {
      return read_headers(options);
    };
    t.clGetProgramBuildInfo = [](cl_program, cl_device_id, cl_program_build_info param, size_t size, void* value,
                                 size_t* size_ret) -> cl_int {
      auto& state = header_reader();
      std::lock_guard lock(state.mutex);
      std::string answer;
      if (param == CL_PROGRAM_BUILD_LOG) answer = state.log;
      else if (param == CL_PROGRAM_BUILD_OPTIONS) answer = state.options.empty() ? "" : state.options.back();
      else return CL_INVALID_VALUE;
      if (size_ret) *size_ret = answer.size() + 1;
      if (value != nullptr) {
        if (size < answer.size() + 1) return CL_INVALID_VALUE;
        std::memcpy(value, answer.c_str(), answer.size() + 1);
      }
      return CL_SUCCESS;
    };
    return t;
  }();
  return table;
}

std::string query_text(client& c, uint64_t request, p::object_id program, cl_uint param) {
  EXPECT_TRUE(c.send(p::query{request, p::query_kind::program_build_info, program, 0, param, 0, {}}));
  auto reply = c.wait_reply<p::query_reply>();
  if (!reply || reply->status != CL_SUCCESS) {
    ADD_FAILURE() << "query " << param << " failed";
    return {};
  }
  std::string text(reply->value.begin(), reply->value.end());
  if (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

TEST(build_headers, the_compiler_reads_the_clients_headers_from_a_tree_that_is_gone_before_the_answer) {
  native::device_catalog catalog = native::device_catalog::dry(1);
  server_config config;
  config.port = 0;
  server s(config, session_services{catalog, header_reading_api(), nullptr, nullptr, {}});
  std::string error;
  ASSERT_TRUE(s.start(error)) << error;
  client c;
  ASSERT_TRUE(c.open(s.port()));
  ASSERT_TRUE(c.send(p::create_context{1, {0}}));
  ASSERT_TRUE(c.send(p::create_program_with_source{5, 1, "#include <axpy.h>\nkernel void k(void) {}"}));

  p::build_files files;
  files.working_dir = "/client/work";
  files.include_dirs = {"/client/inc", "/client/missing"};
  files.headers = {{"/client/inc/axpy.h", p::bytes{'A', 'X'}}};
  ASSERT_TRUE(c.send(p::build_program{10, 5, {}, "-I /client/inc -DX -Imissing", files}));
  auto built = c.wait_reply<p::build_reply>();
  ASSERT_TRUE(built);
  EXPECT_EQ(built->status, CL_SUCCESS);
  std::vector<std::string> dirs;
  {
    auto& state = header_reader();
    std::lock_guard lock(state.mutex);
    dirs = state.dirs;
    EXPECT_EQ(state.found, "AX");
  }
  // The working directory's mirror first, then each -I option's, all in one fresh tree.
  ASSERT_EQ(dirs.size(), 3u);
  const std::string tree = dirs[0].substr(0, dirs[0].find("/root/"));
  EXPECT_NE(tree.find("/ferry-build-"), std::string::npos) << tree;
  EXPECT_EQ(dirs[0], tree + "/root/client/work");
  EXPECT_EQ(dirs[1], tree + "/root/client/inc");
  EXPECT_EQ(dirs[2], tree + "/root/client/missing");
  EXPECT_FALSE(std::filesystem::exists(tree)) << "the tree outlived the build";
  // The log and the options are the client's.
  EXPECT_EQ(query_text(c, 11, 5, CL_PROGRAM_BUILD_LOG), "warning: /client/work/axpy.h:1:2: seen");
  EXPECT_EQ(query_text(c, 12, 5, CL_PROGRAM_BUILD_OPTIONS), "-I /client/inc -DX -Imissing");

  // A path with ".." fails the step with its options error, before the compiler runs.
  p::build_files bad = files;
  bad.headers[0].path = "/client/inc/../../etc/x.h";
  size_t runs = 0;
  {
    auto& state = header_reader();
    std::lock_guard lock(state.mutex);
    runs = state.options.size();
  }
  ASSERT_TRUE(c.send(p::build_program{13, 5, {}, "-I /client/inc -DX -Imissing", bad}));
  EXPECT_EQ(c.wait_reply<p::build_reply>()->status, CL_INVALID_BUILD_OPTIONS);
  ASSERT_TRUE(c.send(p::compile_program{14, 5, {}, "-I /client/inc -DX -Imissing", {}, {}, bad}));
  EXPECT_EQ(c.wait_reply<p::build_reply>()->status, CL_INVALID_COMPILER_OPTIONS);
  {
    auto& state = header_reader();
    std::lock_guard lock(state.mutex);
    EXPECT_EQ(state.options.size(), runs) << "the compiler ran for a refused request";
  }
  // Without files the options reach the compiler as they are, and the
  // answers are the compiler's own again.
  ASSERT_TRUE(c.send(p::build_program{15, 5, {}, "-DPLAIN", {}}));
  EXPECT_EQ(c.wait_reply<p::build_reply>()->status, CL_SUCCESS);
  EXPECT_EQ(query_text(c, 16, 5, CL_PROGRAM_BUILD_OPTIONS), "-DPLAIN");
  // Nothing here was a protocol error: the session still answers.
  ASSERT_TRUE(c.send(p::ping{17}));
  EXPECT_EQ(c.wait_reply<p::pong>()->request, 17u);
  s.stop();
}

TEST_F(dry_session_test, server_info_announces_the_peer_address_with_the_listening_port) {
  server_config config;
  config.port = 0;
  config.peer_address = "node7.example";
  server announcing(config, session_services{catalog_, native::dry_api(), nullptr, nullptr, {}});
  std::string error;
  ASSERT_TRUE(announcing.start(error)) << error;
  EXPECT_EQ(announcing.peer_address(), "node7.example:" + std::to_string(announcing.port()));
  client c;
  ASSERT_TRUE(c.open(announcing.port(), false));
  ASSERT_TRUE(c.send(p::get_server_info{1}));
  auto info = c.wait_reply<p::server_info>();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->peer_address, announcing.peer_address());
  // Without the flag it is empty.
  ASSERT_TRUE(c.send(p::get_server_info{2}));
  client plain;
  ASSERT_TRUE(plain.open(server_->port(), false));
  ASSERT_TRUE(plain.send(p::get_server_info{3}));
  info = plain.wait_reply<p::server_info>();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->peer_address, "");
  announcing.stop();
}

// ---------------------------------------------------------------------------
// Resuming a session after a lost connection (dry API: no device needed)

class resume_test : public ::testing::Test {
 protected:
  void start(double grace_s) {
    server_config config;
    config.port = 0;
    config.session_grace_s = grace_s;
    server_ = std::make_unique<server>(config, session_services{catalog_, native::dry_api(), nullptr, nullptr, {}});
    std::string error;
    ASSERT_TRUE(server_->start(error)) << error;
  }
  void TearDown() override {
    if (server_) server_->stop();
  }
  /// A new control connection that resumes the session `w` welcomed.
  connection resume(const p::welcome& w) {
    connection again(testing::connect_loopback(server_->port()));
    EXPECT_TRUE(again.send(testing::make_hello(p::stream_kind::control, w.session, w.secret)));
    return again;
  }

  native::device_catalog catalog_ = native::device_catalog::dry(1);
  std::unique_ptr<server> server_;
};

TEST_F(resume_test, a_resumed_session_gets_what_it_missed_and_runs_nothing_twice) {
  start(10);
  client c;
  ASSERT_TRUE(c.open(server_->port(), false));
  EXPECT_EQ(c.state.grace_ms, 10000u);
  ASSERT_TRUE(c.send(p::ping{1}));
  ASSERT_EQ(c.wait_reply<p::pong>()->request, 1u);
  // Two more requests whose answers the client never reads.
  ASSERT_TRUE(c.send(p::ping{2}));
  ASSERT_TRUE(c.send(p::ping{3}));
  ASSERT_TRUE(c.send(p::get_object_counts{4}));
  ASSERT_TRUE(c.control.expect<p::pong>());  // pong 2 is out: the session has run ping 2
  c.control = connection();                   // the connection breaks
  connection again = resume(c.welcome);
  auto welcome = again.expect<p::welcome>();
  ASSERT_TRUE(welcome);
  EXPECT_EQ(welcome->session, c.welcome.session);
  EXPECT_EQ(welcome->peer_key, c.welcome.peer_key);
  auto state = again.expect<p::session_state>();
  ASSERT_TRUE(state);
  EXPECT_EQ(state->control, 4u) << "every frame the client sent was received once";
  // The client has received one frame (pong 1): the rest comes again.
  ASSERT_TRUE(again.send(p::ack{1, 0}));
  auto pong2 = again.expect<p::pong>();
  ASSERT_TRUE(pong2);
  EXPECT_EQ(pong2->request, 2u);
  EXPECT_EQ(again.expect<p::pong>()->request, 3u);
  EXPECT_EQ(again.expect<p::object_counts>()->request, 4u);
  ASSERT_TRUE(again.send(p::ping{5}));
  EXPECT_EQ(again.expect<p::pong>()->request, 5u);
  EXPECT_EQ(server_->session_count(), 1u);
}

TEST_F(resume_test, a_resumption_that_claims_frames_never_sent_ends_the_session) {
  start(10);
  client c;
  ASSERT_TRUE(c.open(server_->port(), false));
  c.control = connection();
  connection again = resume(c.welcome);
  ASSERT_TRUE(again.expect<p::welcome>());
  ASSERT_TRUE(again.expect<p::session_state>());
  ASSERT_TRUE(again.send(p::ack{7, 0}));
  EXPECT_TRUE(again.closed_by_peer());
  for (int i = 0; i < 500 && server_->session_count() != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(server_->session_count(), 0u);
}

// Each lane counts its frames over its connections: a lane's new connection hears how many
// the session has (its session_state), as a resumed control stream does; the session's
// grant comes with every session_state.
TEST_F(resume_test, a_bulk_lane_connected_again_hears_how_many_of_its_frames_the_session_has) {
  start(10);
  client c;
  ASSERT_TRUE(c.open(server_->port()));
  ASSERT_EQ(c.state.bulk_lanes, 4u);
  connection lane;
  ASSERT_TRUE(c.open_lane(server_->port(), 2, lane));
  // Two chunks of a transfer whose command never comes, then a third of another.
  const std::vector<uint8_t> bytes(4096, 7);
  for (const auto& frame : {testing::bulk_frame(77, 0, 8192, bytes.data(), 4096),
                            testing::bulk_frame(77, 4096, 8192, bytes.data(), 4096),
                            testing::bulk_frame(78, 0, 100, bytes.data(), 100)})
    ASSERT_TRUE(lane.send_raw(frame.data(), frame.size()));
  ASSERT_TRUE(c.pump_until([&] { return c.last_lane_ack == p::lane_ack{{0, 3, 0}}; }))
      << "lane 2's three frames acknowledged";
  // A second connection of lane 2 replaces the first.
  connection again;
  auto state = c.open_lane(server_->port(), 2, again);
  ASSERT_TRUE(state);
  EXPECT_EQ(*state, (p::session_state{0, 3, 10000, 4}));
  // The control connection breaks; its resumption says the grant again, and the lanes
  // attach again with their counts.
  c.control = connection();
  connection control = resume(c.welcome);
  ASSERT_TRUE(control.expect<p::welcome>());
  auto resumed = control.expect<p::session_state>();
  ASSERT_TRUE(resumed);
  EXPECT_EQ(resumed->bulk_lanes, 4u);
  ASSERT_TRUE(control.send(p::ack{0, 0}));
  connection third;
  state = c.open_lane(server_->port(), 2, third);
  ASSERT_TRUE(state);
  EXPECT_EQ(state->bulk, 3u);
  // (Another connection: closing lane 2's would be a lost connection, which detaches the session.)
  connection fourth;
  state = c.open_lane(server_->port(), 1, fourth);
  ASSERT_TRUE(state);
  EXPECT_EQ(state->bulk, 0u);
}

TEST_F(resume_test, a_wrong_secret_or_an_expired_session_is_refused) {
  start(0.2);
  client c;
  ASSERT_TRUE(c.open(server_->port(), false));
  p::welcome wrong = c.welcome;
  wrong.secret[0] ^= 1;
  connection refused = resume(wrong);
  auto why = refused.expect<p::refused>();
  ASSERT_TRUE(why);
  EXPECT_EQ(why->code, static_cast<int32_t>(refusal::unknown_session));
  c.control = connection();
  // The grace period passes: the session is freed.
  for (int i = 0; i < 500 && server_->session_count() != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(server_->session_count(), 0u);
  connection late = resume(c.welcome);
  why = late.expect<p::refused>();
  ASSERT_TRUE(why);
  EXPECT_EQ(why->code, static_cast<int32_t>(refusal::unknown_session));
}

}  // namespace
}  // namespace ferry::server
