// A daemon under hostile input: while a well-behaved client (libferry, through the loader)
// runs vector adds on its own thread and checks every result, raw connections send every
// kind of malformed or abusive input, one case at a time. Each case must end one of two
// ways: the daemon answers with the OpenCL error the protocol specifies (a command's
// completion status, a reply's status, a refusal code), or it closes that connection
// (and, on a control or bulk stream, its session) and nothing else. After every case the
// good client completes another vector add; at the end a fresh session is served, and
// the suite's teardown checks that the daemon exits 0 on SIGTERM.
//
// Cases are grouped by what they attack, one table per test, one entry per kind of input.
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <thread>

#include "cl_helpers.hpp"
#include "kernels.hpp"
#include "wire.hpp"

namespace ferry::test {

suite_config this_suite() { return suite_config{}; }  // Ferry only, one daemon

namespace {

using wire::client;
using wire::connection;
using wire::header;
using wire::mem_arg;
namespace p = wire::p;

constexpr uint64_t u64_max = std::numeric_limits<uint64_t>::max();

// ---------------------------------------------------------------------------------------
// The well-behaved client

/// Vector adds on a thread of its own, on a queue of its own in the fixture's context;
/// every result is checked. The first error stops the loop and is kept.
class good_client {
 public:
  good_client(cl_context context, cl_device_id device, cl_program program) {
    cl_int rc = CL_SUCCESS;
    queue_ = queue_handle(clCreateCommandQueue(context, device, 0, &rc));
    EXPECT_CL_OK(rc);
    kernel_ = create_kernel(program, "vector_add");
    for (mem_handle* m : {&a_, &b_, &c_}) *m = create_buffer(context, CL_MEM_READ_WRITE, n * sizeof(float));
    thread_ = std::thread([this] { run(); });
  }
  ~good_client() { stop(); }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }
  uint64_t iterations() {
    std::lock_guard lock(mutex_);
    return iterations_;
  }
  std::string error() {
    std::lock_guard lock(mutex_);
    return error_;
  }
  /// Waits until `count` iterations have completed; false on an error or the deadline.
  bool wait_for(uint64_t count, std::chrono::seconds timeout = std::chrono::seconds(60)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return iterations_ >= count || !error_.empty(); }) &&
           error_.empty();
  }

 private:
  static constexpr size_t n = 4096;

  std::string iteration(uint64_t i) {
    std::vector<float> a(n), b(n), c(n, -1.0f);
    // Small integers and halves: every sum is exact in a float.
    for (size_t j = 0; j < n; ++j) {
      a[j] = static_cast<float>(j);
      b[j] = static_cast<float>(i % 10000) * 0.5f;
    }
    cl_mem args[3] = {a_, b_, c_};
    cl_int rc = clEnqueueWriteBuffer(queue_, a_, CL_FALSE, 0, n * sizeof(float), a.data(), 0, nullptr, nullptr);
    if (rc == CL_SUCCESS)
      rc = clEnqueueWriteBuffer(queue_, b_, CL_FALSE, 0, n * sizeof(float), b.data(), 0, nullptr, nullptr);
    for (cl_uint k = 0; k < 3 && rc == CL_SUCCESS; ++k) rc = clSetKernelArg(kernel_, k, sizeof(cl_mem), &args[k]);
    const size_t global = n;
    if (rc == CL_SUCCESS)
      rc = clEnqueueNDRangeKernel(queue_, kernel_, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
    if (rc == CL_SUCCESS)
      rc = clEnqueueReadBuffer(queue_, c_, CL_TRUE, 0, n * sizeof(float), c.data(), 0, nullptr, nullptr);
    if (rc != CL_SUCCESS) return "iteration " + std::to_string(i) + ": " + cl_error_name(rc);
    for (size_t j = 0; j < n; ++j) {
      if (c[j] != a[j] + b[j]) {
        return "iteration " + std::to_string(i) + ": c[" + std::to_string(j) + "] = " + std::to_string(c[j]) +
               ", expected " + std::to_string(a[j] + b[j]);
      }
    }
    return {};
  }

  void run() {
    for (uint64_t i = 0;; ++i) {
      {
        std::lock_guard lock(mutex_);
        if (stopping_) return;
      }
      std::string failed = iteration(i);
      std::lock_guard lock(mutex_);
      if (!failed.empty()) error_ = std::move(failed);
      else ++iterations_;
      changed_.notify_all();
      if (!error_.empty()) return;
    }
  }

  queue_handle queue_;
  kernel_handle kernel_;
  mem_handle a_, b_, c_;
  std::thread thread_;
  std::mutex mutex_;  // guards stopping_, iterations_, error_
  std::condition_variable changed_;
  bool stopping_ = false;
  uint64_t iterations_ = 0;
  std::string error_;
};

// ---------------------------------------------------------------------------------------
// Outcomes

void expect_closed(connection& c, const char* stream = "control") {
  EXPECT_TRUE(c.closed_by_peer(wire::close_timeout_ms)) << "the daemon kept the " << stream << " connection open";
}

/// A control or bulk violation ends the session: both of its connections close.
void expect_session_closed(client& c) {
  expect_closed(c.control);
  expect_closed(c.bulk, "bulk");
}

void expect_refused(connection& c, int32_t code) {
  auto refused = c.expect<p::refused>(wire::close_timeout_ms);
  ASSERT_TRUE(refused) << "no refusal (code " << code << ") came back";
  EXPECT_EQ(refused->code, code) << refused->reason;
  expect_closed(c);
}

/// The session still runs messages in order: a ping after everything is answered.
void expect_alive(client& c, uint64_t request = 4242) {
  ASSERT_TRUE(c.send(p::ping{request})) << "the daemon closed a session it should have kept";
  auto pong = c.wait_reply<p::pong>();
  ASSERT_TRUE(pong) << "the session ended instead of answering";
  EXPECT_EQ(pong->request, request);
}

void expect_status(client& c, p::object_id command, cl_int status, const char* what = "") {
  auto done = c.wait_completion(command);
  ASSERT_TRUE(done) << "no completion for command " << command << " " << what;
  EXPECT_EQ(cl_status{done->status}, cl_status{status}) << "command " << command << " " << what;
}

// ---------------------------------------------------------------------------------------
// Raw sessions

constexpr p::object_id context_id = 1, queue_id = 2, buffer_a = 3, buffer_b = 4, program_id = 10, kernel_id = 11;
constexpr uint64_t buffer_size = 4096;

void open_session(client& c, uint16_t port) {
  ASSERT_TRUE(c.open(port)) << "no session";
  ASSERT_TRUE(c.send(p::create_context{context_id, {0}}));
  ASSERT_TRUE(c.send(p::create_queue{queue_id, context_id, 0, 0}));
}

/// Context 1, queue 2, buffers 3 (0x5A) and 4 (0xA5) of 4096 bytes.
void open_with_buffers(client& c, uint16_t port) {
  ASSERT_NO_FATAL_FAILURE(open_session(c, port));
  ASSERT_TRUE(c.send(p::create_buffer{buffer_a, context_id, CL_MEM_READ_WRITE, buffer_size, 0}));
  ASSERT_TRUE(c.send(p::create_buffer{buffer_b, context_id, CL_MEM_READ_WRITE, buffer_size, 0}));
  ASSERT_TRUE(c.send(p::enqueue_fill_buffer{header(90, queue_id), buffer_a, {0x5A}, 0, buffer_size}));
  ASSERT_TRUE(c.send(p::enqueue_fill_buffer{header(91, queue_id), buffer_b, {0xA5}, 0, buffer_size}));
  expect_status(c, 90, CL_COMPLETE);
  expect_status(c, 91, CL_COMPLETE);
}

/// Both buffers of open_with_buffers still hold their fill.
void expect_buffers_intact(client& c, p::object_id first_command) {
  for (auto [buffer, fill] : {std::pair{buffer_a, uint8_t{0x5A}}, std::pair{buffer_b, uint8_t{0xA5}}}) {
    const p::object_id read = first_command++;
    ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(read, queue_id), buffer, 0, buffer_size}));
    auto bytes = c.wait_bulk(read);
    ASSERT_TRUE(bytes) << "no bytes for buffer " << buffer;
    EXPECT_EQ(*bytes, std::vector<uint8_t>(buffer_size, fill)) << "buffer " << buffer << " changed";
    expect_status(c, read, CL_COMPLETE);
  }
}

/// Program 10 (the basics), built, and kernel 11 = add_one.
void add_kernel(client& c) {
  ASSERT_TRUE(c.send(p::create_program_with_source{program_id, context_id, kernels::basics}));
  ASSERT_TRUE(c.send(p::build_program{80, program_id, {}, "", {}}));
  auto built = c.wait_reply<p::build_reply>(120000);
  ASSERT_TRUE(built);
  ASSERT_EQ(cl_status{built->status}, cl_status{CL_SUCCESS});
  ASSERT_TRUE(c.send(p::create_kernel{81, kernel_id, program_id, "add_one"}));
  auto made = c.wait_reply<p::kernel_reply>();
  ASSERT_TRUE(made);
  ASSERT_EQ(cl_status{made->status}, cl_status{CL_SUCCESS});
}

p::enqueue_ndrange run_kernel(p::object_id command, p::object_id kernel, std::vector<p::kernel_arg> args) {
  p::enqueue_ndrange run;
  run.header = header(command, queue_id);
  run.kernel = kernel;
  run.work_dim = 1;
  run.global = {16, 1, 1};
  run.args = std::move(args);
  return run;
}

p::hello hello_for(p::stream_kind stream, const p::session_token& session = {}, const p::session_token& secret = {}) {
  return p::make_hello(stream, session, secret, "hostile-input-test");
}

p::session_token token(uint8_t seed) {
  p::session_token t;
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<uint8_t>(seed * 31 + i * 7 + 1);
  return t;
}

std::vector<uint8_t> bytes_of(size_t size, uint8_t value) { return std::vector<uint8_t>(size, value); }

// ---------------------------------------------------------------------------------------
// Fixture

struct hostile_case {
  const char* name;
  std::function<void(uint16_t port)> run;
};

class hostile_input : public ferry_test {
 protected:
  void SetUp() override {
    ferry_test::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    program_ = build(kernels::vector_add);
    ASSERT_TRUE(program_);
    good_ = std::make_unique<good_client>(context_, device_, program_);
    ASSERT_TRUE(good_->wait_for(1)) << good_->error();
  }
  void TearDown() override {
    if (good_) good_->stop();
    good_.reset();
    program_.reset();
    ferry_test::TearDown();
  }

  void run_cases(const std::vector<hostile_case>& cases) {
    if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
    ASSERT_NE(suite_daemon(), nullptr);
    const uint16_t port = suite_daemon()->port();
    for (const hostile_case& c : cases) {
      SCOPED_TRACE(c.name);
      const int parts_before = ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
      c.run(port);
      // The good client goes on: one more checked vector add after each case.
      const uint64_t done = good_->iterations();
      ASSERT_TRUE(good_->wait_for(done + 1)) << "the good client stopped after \"" << c.name << "\": " << good_->error();
      const bool failed =
          ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count() != parts_before;
      std::printf("[ hostile  ] %s: %s\n", c.name, failed ? "FAILED" : "ok");
    }
    // A new session is served once everything is over.
    client fresh;
    ASSERT_NO_FATAL_FAILURE(open_with_buffers(fresh, port));
    ASSERT_NO_FATAL_FAILURE(expect_buffers_intact(fresh, 100));
    ASSERT_NO_FATAL_FAILURE(expect_alive(fresh));
    ASSERT_TRUE(fresh.send(p::goodbye{0}));
    good_->stop();
    EXPECT_EQ(good_->error(), "");
    EXPECT_GT(good_->iterations(), cases.size());
  }

  program_handle program_;
  std::unique_ptr<good_client> good_;
};

}  // namespace

// ---------------------------------------------------------------------------------------
// Frames on a live control stream

TEST_F(hostile_input, malformed_frames_close_only_their_own_session) {
  // Each case opens its own session (control and bulk) and breaks its control stream.
  auto broken = [](std::vector<uint8_t> bytes) {
    return [bytes](uint16_t port) {
      client c;
      ASSERT_TRUE(c.open(port));
      wire::send_bytes(c.control, bytes);
      expect_session_closed(c);
    };
  };
  const auto ping_payload = wire::payload_of(p::ping{1});
  auto with_trailing = ping_payload;
  with_trailing.insert(with_trailing.end(), {1, 2, 3, 4});
  // create_program_with_source: id, context, then a string announcing 1000 bytes of 10.
  auto short_string = wire::payload_of(p::create_program_with_source{50, 1, ""});
  short_string.resize(short_string.size() - 4);
  for (uint8_t b : {0xE8, 0x03, 0x00, 0x00}) short_string.push_back(b);
  short_string.resize(short_string.size() + 10, 'x');
  // create_context: id, then a device count of UINT32_MAX.
  auto huge_count = wire::payload_of(uint64_t{50});
  huge_count.insert(huge_count.end(), {0xFF, 0xFF, 0xFF, 0xFF});
  p::enqueue_marker long_wait{header(60, queue_id)};
  long_wait.header.wait_list.assign(p::max_wait_list + 1, 7);

  const std::vector<hostile_case> cases = {
      {"a frame header, then the client closes",
       [](uint16_t port) {
         client c;
         ASSERT_TRUE(c.open(port));
         wire::send_bytes(c.control, wire::raw_frame(8, uint16_t(p::message_id::ping), 0));
         wire::half_close(c.control);
         expect_closed(c.control);
       }},
      {"half a frame header, then the client closes",
       [](uint16_t port) {
         client c;
         ASSERT_TRUE(c.open(port));
         auto head = wire::raw_frame(8, uint16_t(p::message_id::ping), 0);
         head.resize(4);
         wire::send_bytes(c.control, head);
         wire::half_close(c.control);
         expect_closed(c.control);
       }},
      {"a payload length above the control frame limit",
       broken(wire::raw_frame(p::max_control_payload + 1, uint16_t(p::message_id::ping), 0))},
      {"a payload length of UINT32_MAX",
       broken(wire::raw_frame(0xFFFFFFFFu, uint16_t(p::message_id::create_program_with_source), 0))},
      {"a message above its own limit",
       broken(wire::raw_frame(65, uint16_t(p::message_id::ping), 0, bytes_of(65, 0)))},
      {"a payload shorter than its fields",
       broken(wire::raw_frame(4, uint16_t(p::message_id::ping), 0, bytes_of(4, 0)))},
      {"trailing bytes after the last field",
       broken(wire::raw_frame(uint32_t(with_trailing.size()), uint16_t(p::message_id::ping), 0, with_trailing))},
      {"a string length past the end of the frame",
       broken(wire::raw_frame(uint32_t(short_string.size()), uint16_t(p::message_id::create_program_with_source), 0,
                              short_string))},
      {"a vector count of UINT32_MAX",
       broken(wire::raw_frame(uint32_t(huge_count.size()), uint16_t(p::message_id::create_context), 0, huge_count))},
      {"an unknown message id", broken(wire::raw_frame(8, 0x7FFF, 0, bytes_of(8, 0)))},
      {"an unassigned id inside the table's range", broken(wire::raw_frame(8, 5, 0, bytes_of(8, 0)))},
      {"a message that only travels to clients (completions)", broken(wire::frame_of(p::completions{}))},
      {"a message that only travels to clients (pong)", broken(wire::frame_of(p::pong{1}))},
      {"reserved frame flags", broken(wire::frame_of(p::ping{1}, 1))},
      {"a second hello on a live control stream", broken(wire::frame_of(hello_for(p::stream_kind::control)))},
      {"a peer-link message on a control stream", broken(wire::frame_of(p::peer_event_status{1, 0}))},
      {"bulk data on the control stream", broken(wire::bulk_frame(1, 0, 4, bytes_of(4, 1)))},
      {"an object id created twice",
       [](uint16_t port) {
         client c;
         ASSERT_TRUE(c.open(port));
         ASSERT_TRUE(c.send(p::create_context{1, {0}}));
         ASSERT_TRUE(c.send(p::create_context{1, {0}}));
         expect_session_closed(c);
       }},
      {"a wait list above max_wait_list",
       [long_wait](uint16_t port) {
         client c;
         ASSERT_NO_FATAL_FAILURE(open_session(c, port));
         ASSERT_TRUE(c.send(long_wait));
         expect_session_closed(c);
       }},
      {"an ack of frames never sent",
       [](uint16_t port) {
         client c;
         ASSERT_TRUE(c.open(port));
         ASSERT_TRUE(c.send(p::ack{1u << 30, 0}));
         expect_session_closed(c);
       }},
      {"an add_peer that contradicts an earlier one",
       [](uint16_t port) {
         client c;
         ASSERT_TRUE(c.open(port));
         ASSERT_TRUE(c.send(p::add_peer{1, "127.0.0.1:1", token(1), token(2)}));
         ASSERT_TRUE(c.send(p::add_peer{1, "127.0.0.1:1", token(1), token(2)}));  // the same again is harmless
         expect_alive(c);
         ASSERT_TRUE(c.send(p::add_peer{1, "127.0.0.1:2", token(1), token(2)}));
         expect_session_closed(c);
       }},
  };
  run_cases(cases);
}

// ---------------------------------------------------------------------------------------
// The first frame of a connection

TEST_F(hostile_input, bad_hellos_are_refused_or_closed) {
  auto closes = [](std::vector<uint8_t> bytes) {
    return [bytes](uint16_t port) {
      connection c = wire::dial(port);
      ASSERT_TRUE(c.valid());
      wire::send_bytes(c, bytes);
      expect_closed(c);
    };
  };
  auto refuses = [](std::function<p::hello()> make, int32_t code) {
    return [make, code](uint16_t port) {
      connection c = wire::dial(port);
      ASSERT_TRUE(c.valid());
      ASSERT_TRUE(c.send(make()));
      expect_refused(c, code);
    };
  };
  std::mt19937 random(20240607);
  std::vector<uint8_t> noise(4096);
  for (auto& b : noise) b = static_cast<uint8_t>(random());
  noise[4] = 0xAB;  // whatever the seed, not a hello's id
  const std::string http = "GET / HTTP/1.1\r\nHost: ferry\r\n\r\n";
  auto hello_payload = wire::payload_of(hello_for(p::stream_kind::control));
  auto hello_trailing = hello_payload;
  hello_trailing.insert(hello_trailing.end(), {9, 9, 9, 9});
  auto hello_half = wire::raw_frame(uint32_t(hello_payload.size()), uint16_t(p::message_id::hello), 0, hello_payload);
  hello_half.resize(hello_half.size() / 2);

  const std::vector<hostile_case> cases = {
      {"random bytes instead of a hello", closes(noise)},
      {"an HTTP request instead of a hello", closes(std::vector<uint8_t>(http.begin(), http.end()))},
      {"a first frame that is not a hello", closes(wire::frame_of(p::ping{1}))},
      {"a hello with reserved flags", closes(wire::frame_of(hello_for(p::stream_kind::control), 0x8000))},
      {"a hello above its size limit", closes(wire::raw_frame(4097, uint16_t(p::message_id::hello), 0))},
      {"a hello with trailing bytes",
       closes(wire::raw_frame(uint32_t(hello_trailing.size()), uint16_t(p::message_id::hello), 0, hello_trailing))},
      {"half a hello, then the client closes",
       [hello_half](uint16_t port) {
         connection c = wire::dial(port);
         ASSERT_TRUE(c.valid());
         wire::send_bytes(c, hello_half);
         wire::half_close(c);
         expect_closed(c);
       }},
      {"a hello with a bad magic",
       refuses([] {
         auto h = hello_for(p::stream_kind::control);
         h.magic = 0x31595247;
         return h;
       }, 1)},
      {"a hello with no common version",
       refuses([] {
         auto h = hello_for(p::stream_kind::control);
         h.min_version = h.max_version = 999;
         return h;
       }, 2)},
      {"a hello with an inverted version range",
       refuses([] {
         auto h = hello_for(p::stream_kind::control);
         h.min_version = p::max_version + 1;
         h.max_version = 1;
         return h;
       }, 2)},
      {"a hello with an unknown stream kind",
       refuses([] {
         auto h = hello_for(p::stream_kind::control);
         h.stream = static_cast<p::stream_kind>(9);
         return h;
       }, 4)},
      {"a bulk hello without a session", refuses([] { return hello_for(p::stream_kind::bulk); }, 3)},
      {"a bulk hello for an unknown session",
       refuses([] { return hello_for(p::stream_kind::bulk, token(3), token(4)); }, 3)},
      {"resuming an unknown session", refuses([] { return hello_for(p::stream_kind::control, token(5), token(6)); }, 3)},
      {"a peer link into an unknown session",
       refuses([] {
         auto h = hello_for(p::stream_kind::peer, token(7), token(8));
         h.link = token(9);
         return h;
       }, 3)},
      {"a bulk stream with a live session's id and a wrong secret",
       [](uint16_t port) {
         client live;
         ASSERT_TRUE(live.open(port, /*with_bulk=*/false));
         connection thief = wire::dial(port);
         ASSERT_TRUE(thief.send(hello_for(p::stream_kind::bulk, live.welcome.session, live.welcome.peer_key)));
         expect_refused(thief, 3);
         // The session's own bulk stream still attaches, and the session is served.
         live.bulk = wire::dial(port);
         ASSERT_TRUE(live.bulk.send(hello_for(p::stream_kind::bulk, live.welcome.session, live.welcome.secret)));
         ASSERT_TRUE(live.bulk.expect<p::welcome>());
         expect_alive(live);
       }},
      {"a second bulk stream for a session",
       [](uint16_t port) {
         client live;
         ASSERT_TRUE(live.open(port));
         connection second = wire::dial(port);
         ASSERT_TRUE(second.send(hello_for(p::stream_kind::bulk, live.welcome.session, live.welcome.secret)));
         expect_refused(second, 5);
         expect_alive(live);
       }},
      {"a peer link with a live session's id and a wrong key",
       [](uint16_t port) {
         client live;
         ASSERT_TRUE(live.open(port));
         connection thief = wire::dial(port);
         auto h = hello_for(p::stream_kind::peer, live.welcome.session, live.welcome.secret);
         h.link = token(10);
         ASSERT_TRUE(thief.send(h));
         expect_refused(thief, 3);
         expect_alive(live);
       }},
      {"resuming a live session with a wrong secret",
       [](uint16_t port) {
         client live;
         ASSERT_TRUE(live.open(port));
         connection thief = wire::dial(port);
         ASSERT_TRUE(thief.send(hello_for(p::stream_kind::control, live.welcome.session, live.welcome.peer_key)));
         expect_refused(thief, 3);
         // The live connection was not dropped for the impostor.
         expect_alive(live);
       }},
  };
  run_cases(cases);
}

// ---------------------------------------------------------------------------------------
// Ids: released, never created, another session's

TEST_F(hostile_input, stale_unknown_and_foreign_ids_fail_with_the_matching_error) {
  const std::vector<hostile_case> cases = {
      {"a released buffer",
       [](uint16_t port) {
         client c;
         ASSERT_NO_FATAL_FAILURE(open_with_buffers(c, port));
         ASSERT_TRUE(c.send(p::create_buffer{20, context_id, CL_MEM_READ_WRITE, 64, 0}));
         ASSERT_TRUE(c.send(p::release_object{20}));
         ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(200, queue_id), 20, 0, 16}));
         ASSERT_TRUE(c.send(p::enqueue_write_buffer{header(201, queue_id), 20, 0, 16}));
         ASSERT_TRUE(c.send_bulk(201, bytes_of(16, 1).data(), 16));
         ASSERT_TRUE(c.send(p::enqueue_fill_buffer{header(202, queue_id), 20, {1}, 0, 16}));
         ASSERT_TRUE(c.send(p::enqueue_copy_buffer{header(203, queue_id), 20, buffer_a, 0, 0, 16}));
         ASSERT_TRUE(c.send(p::enqueue_copy_buffer{header(204, queue_id), buffer_a, 20, 0, 0, 16}));
         ASSERT_TRUE(c.send(p::create_sub_buffer{21, 20, CL_MEM_READ_WRITE, 0, 16}));
         ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(205, queue_id), 21, 0, 16}));
         for (p::object_id command = 200; command <= 205; ++command) expect_status(c, command, CL_INVALID_MEM_OBJECT);
         expect_buffers_intact(c, 210);
         expect_alive(c);
       }},
      {"a released queue",
       [](uint16_t port) {
         client c;
         ASSERT_NO_FATAL_FAILURE(open_with_buffers(c, port));
         ASSERT_TRUE(c.send(p::create_queue{20, context_id, 0, 0}));
         ASSERT_TRUE(c.send(p::release_object{20}));
         ASSERT_TRUE(c.send(p::enqueue_marker{header(200, 20)}));
         ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(201, 20), buffer_a, 0, 16}));
         ASSERT_TRUE(c.send(p::flush_queue{20}));
         expect_status(c, 200, CL_INVALID_COMMAND_QUEUE);
         expect_status(c, 201, CL_INVALID_COMMAND_QUEUE);
         expect_alive(c);
       }},
      {"a released user event",
       [](uint16_t port) {
         client c;
         ASSERT_NO_FATAL_FAILURE(open_session(c, port));
         ASSERT_TRUE(c.send(p::create_user_event{20, context_id}));
         ASSERT_TRUE(c.send(p::release_object{20}));
         ASSERT_TRUE(c.send(p::set_user_event_status{20, CL_COMPLETE}));
         ASSERT_TRUE(c.send(p::enqueue_marker{header(200, queue_id, p::notify, {20})}));
         expect_status(c, 200, CL_INVALID_EVENT_WAIT_LIST);
         expect_alive(c);
       }},
      {"a released command event",
       [](uint16_t port) {
         client c;
         ASSERT_NO_FATAL_FAILURE(open_session(c, port));
         ASSERT_TRUE(c.send(p::enqueue_marker{header(200, queue_id, p::notify | p::keep_event)}));
         expect_status(c, 200, CL_COMPLETE);
         ASSERT_TRUE(c.send(p::release_object{200}));
         ASSERT_TRUE(c.send(p::enqueue_marker{header(201, queue_id, p::notify, {200})}));
         expect_status(c, 201, CL_INVALID_EVENT_WAIT_LIST);
         expect_alive(c);
       }},
      {"a released context",
       [](uint16_t port) {
         client c;
         ASSERT_NO_FATAL_FAILURE(open_session(c, port));
         ASSERT_TRUE(c.send(p::create_context{20, {0}}));
         ASSERT_TRUE(c.send(p::release_object{20}));
         // Creations in it fail; a command on what they made reports why.
         ASSERT_TRUE(c.send(p::create_buffer{21, 20, CL_MEM_READ_WRITE, 64, 0}));
         ASSERT_TRUE(c.send(p::create_queue{22, 20, 0, 0}));
         ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(200, queue_id), 21, 0, 16}));
         ASSERT_TRUE(c.send(p::enqueue_marker{header(201, 22)}));
         expect_status(c, 200, CL_INVALID_CONTEXT);
         expect_status(c, 201, CL_INVALID_CONTEXT);
         expect_alive(c);
       }},
      {"a released program and kernel",
       [](uint16_t port) {
         client c;
         ASSERT_NO_FATAL_FAILURE(open_with_buffers(c, port));
         ASSERT_NO_FATAL_FAILURE(add_kernel(c));
         ASSERT_TRUE(c.send(p::release_object{kernel_id}));
         ASSERT_TRUE(c.send(run_kernel(200, kernel_id, {mem_arg(0, buffer_a)})));
         ASSERT_TRUE(c.send(p::query{300, p::query_kind::kernel_info, kernel_id, 0, CL_KERNEL_FUNCTION_NAME, 0, {}}));
         ASSERT_TRUE(c.send(p::release_object{program_id}));
         ASSERT_TRUE(c.send(p::build_program{301, program_id, {}, "", {}}));
         ASSERT_TRUE(c.send(p::create_kernel{302, 30, program_id, "add_one"}));
         expect_status(c, 200, CL_INVALID_KERNEL);
         auto queried = c.wait_reply<p::query_reply>();
         ASSERT_TRUE(queried);
         EXPECT_EQ(cl_status{queried->status}, cl_status{CL_INVALID_KERNEL});
         auto built = c.wait_reply<p::build_reply>();
         ASSERT_TRUE(built);
         EXPECT_EQ(cl_status{built->status}, cl_status{CL_INVALID_PROGRAM});
         auto made = c.wait_reply<p::kernel_reply>();
         ASSERT_TRUE(made);
         EXPECT_EQ(cl_status{made->status}, cl_status{CL_INVALID_PROGRAM});
         expect_buffers_intact(c, 210);
       }},
      {"ids never created",
       [](uint16_t port) {
         client c;
         ASSERT_NO_FATAL_FAILURE(open_with_buffers(c, port));
         ASSERT_NO_FATAL_FAILURE(add_kernel(c));
         ASSERT_TRUE(c.send(p::add_peer{1, "127.0.0.1:1", token(1), token(2)}));
         ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(200, queue_id), 1000, 0, 16}));
         ASSERT_TRUE(c.send(run_kernel(201, 1001, {mem_arg(0, buffer_a)})));
         ASSERT_TRUE(c.send(p::enqueue_marker{header(202, 1002)}));
         ASSERT_TRUE(c.send(p::enqueue_marker{header(203, queue_id, p::notify, {1003})}));
         ASSERT_TRUE(c.send(run_kernel(204, kernel_id, {mem_arg(0, 1004)})));
         ASSERT_TRUE(c.send(p::export_event{1005, 1, 205}));
         ASSERT_TRUE(c.send(p::query{300, p::query_kind::program_info, 1006, 0, CL_PROGRAM_NUM_KERNELS, 0, {}}));
         ASSERT_TRUE(c.send(p::check_kernel_arg{301, 1007, mem_arg(0, buffer_a)}));
         // No reply exists for these: ignored.
         ASSERT_TRUE(c.send(p::release_object{1008}));
         ASSERT_TRUE(c.send(p::set_user_event_status{1009, CL_COMPLETE}));
         ASSERT_TRUE(c.send(p::flush_queue{1010}));
         expect_status(c, 200, CL_INVALID_MEM_OBJECT);
         expect_status(c, 201, CL_INVALID_KERNEL);
         expect_status(c, 202, CL_INVALID_COMMAND_QUEUE);
         expect_status(c, 203, CL_INVALID_EVENT_WAIT_LIST);
         expect_status(c, 204, CL_INVALID_MEM_OBJECT);
         expect_status(c, 205, CL_INVALID_EVENT);
         auto queried = c.wait_reply<p::query_reply>();
         ASSERT_TRUE(queried);
         EXPECT_EQ(cl_status{queried->status}, cl_status{CL_INVALID_PROGRAM});
         auto checked = c.wait_reply<p::status_reply>();
         ASSERT_TRUE(checked);
         EXPECT_EQ(cl_status{checked->status}, cl_status{CL_INVALID_KERNEL});
         expect_buffers_intact(c, 210);
         expect_alive(c);
       }},
      {"wait lists naming another session's events",
       [](uint16_t port) {
         client owner, stranger;
         ASSERT_NO_FATAL_FAILURE(open_session(owner, port));
         ASSERT_NO_FATAL_FAILURE(open_session(stranger, port));
         ASSERT_TRUE(owner.send(p::create_user_event{20, context_id}));
         ASSERT_TRUE(owner.send(p::enqueue_marker{header(21, queue_id, p::notify | p::keep_event, {20})}));
         ASSERT_TRUE(stranger.send(p::enqueue_marker{header(200, queue_id, p::notify, {20})}));
         ASSERT_TRUE(stranger.send(p::enqueue_marker{header(201, queue_id, p::notify, {21})}));
         ASSERT_TRUE(stranger.send(p::set_user_event_status{20, CL_COMPLETE}));
         expect_status(stranger, 200, CL_INVALID_EVENT_WAIT_LIST);
         expect_status(stranger, 201, CL_INVALID_EVENT_WAIT_LIST);
         expect_alive(stranger);
         // The owner's marker still waits for the owner's user event, and only for it.
         EXPECT_FALSE(owner.completions.count(21));
         ASSERT_TRUE(owner.send(p::set_user_event_status{20, CL_COMPLETE}));
         expect_status(owner, 21, CL_COMPLETE);
       }},
      {"handle bytes as a buffer argument",
       [](uint16_t port) {
         client c;
         ASSERT_NO_FATAL_FAILURE(open_with_buffers(c, port));
         ASSERT_NO_FATAL_FAILURE(add_kernel(c));
         // A value argument where the kernel takes a pointer: the bytes would be a native handle.
         p::kernel_arg forged{0, p::kernel_arg_kind::value, 8, bytes_of(8, 0x41), 0};
         ASSERT_TRUE(c.send(run_kernel(200, kernel_id, {forged})));
         ASSERT_TRUE(c.send(p::check_kernel_arg{300, kernel_id, forged}));
         expect_status(c, 200, CL_INVALID_MEM_OBJECT);
         auto checked = c.wait_reply<p::status_reply>();
         ASSERT_TRUE(checked);
         EXPECT_EQ(cl_status{checked->status}, cl_status{CL_INVALID_MEM_OBJECT});
         expect_buffers_intact(c, 210);
       }},
      {"an unknown kernel argument kind",
       [](uint16_t port) {
         client c;
         ASSERT_NO_FATAL_FAILURE(open_with_buffers(c, port));
         ASSERT_NO_FATAL_FAILURE(add_kernel(c));
         p::kernel_arg odd{0, static_cast<p::kernel_arg_kind>(200), 8, {}, buffer_a};
         ASSERT_TRUE(c.send(run_kernel(200, kernel_id, {odd})));
         expect_session_closed(c);
       }},
  };
  run_cases(cases);
}

// ---------------------------------------------------------------------------------------
// Offsets and sizes outside the buffer

TEST_F(hostile_input, out_of_range_offsets_and_sizes_fail_with_cl_invalid_value) {
  // Each case sends one command on buffer 3 (4096 bytes), expects `status`, then checks
  // that neither buffer changed and the session goes on.
  struct range_case {
    const char* name;
    std::function<void(client&)> send;  // sends command 200
    cl_int status = CL_INVALID_VALUE;
  };
  auto write = [](uint64_t offset, uint64_t size, size_t bytes_sent) {
    return [=](client& c) {
      ASSERT_TRUE(c.send(p::enqueue_write_buffer{header(200, queue_id), buffer_a, offset, size}));
      if (bytes_sent) {
        ASSERT_TRUE(c.send_bulk(200, bytes_of(bytes_sent, 0xEE).data(), bytes_sent));
      }
    };
  };
  auto read = [](uint64_t offset, uint64_t size) {
    return [=](client& c) { ASSERT_TRUE(c.send(p::enqueue_read_buffer{header(200, queue_id), buffer_a, offset, size})); };
  };
  auto fill = [](std::vector<uint8_t> pattern, uint64_t offset, uint64_t size) {
    return [=](client& c) {
      ASSERT_TRUE(c.send(p::enqueue_fill_buffer{header(200, queue_id), buffer_a, pattern, offset, size}));
    };
  };
  auto copy = [](p::object_id from, p::object_id to, uint64_t from_offset, uint64_t to_offset, uint64_t size) {
    return [=](client& c) {
      ASSERT_TRUE(c.send(p::enqueue_copy_buffer{header(200, queue_id), from, to, from_offset, to_offset, size}));
    };
  };
  auto copy_rect = [](p::size3 from, p::size3 to, p::size3 region, uint64_t row_pitch, uint64_t slice_pitch) {
    return [=](client& c) {
      ASSERT_TRUE(c.send(p::enqueue_copy_buffer_rect{header(200, queue_id), buffer_a, buffer_b, from, to, region,
                                                     row_pitch, slice_pitch, 0, 0}));
    };
  };
  auto sub_buffer = [](uint64_t origin, uint64_t size) {
    return [=](client& c) {
      ASSERT_TRUE(c.send(p::create_sub_buffer{20, buffer_a, CL_MEM_READ_WRITE, origin, size}));
      ASSERT_TRUE(c.send(p::enqueue_fill_buffer{header(200, queue_id), 20, {0xEE}, 0, size}));
    };
  };
  auto from_file = [](uint64_t offset, uint64_t size, std::string path, uint64_t file_offset) {
    return [=](client& c) {
      ASSERT_TRUE(c.send(p::file_to_buffer{header(200, queue_id), buffer_a, offset, size, path, file_offset}));
    };
  };
  auto to_file = [](uint64_t offset, uint64_t size, std::string path, uint64_t file_offset) {
    return [=](client& c) {
      ASSERT_TRUE(c.send(p::buffer_to_file{header(200, queue_id), buffer_a, offset, size, path, file_offset}));
    };
  };
  const uint64_t wraps = u64_max - 127;  // offset + 256 wraps around to 128
  const std::vector<range_case> ranges = {
      {"read past the end", read(4000, 200)},
      {"read at offset UINT64_MAX", read(u64_max, 16)},
      {"read of UINT64_MAX bytes", read(16, u64_max)},
      {"read whose end wraps around", read(wraps, 256)},
      {"read of 0 bytes", read(0, 0)},
      {"write past the end", write(4000, 200, 200)},
      {"write whose end wraps around", write(wraps, 256, 256)},
      {"write of UINT64_MAX bytes", write(0, u64_max, 0)},
      {"write of 0 bytes", write(0, 0, 0)},
      {"fill past the end", fill({1, 2, 3, 4}, 4000, 200)},
      {"fill whose end wraps around", fill({1, 2, 3, 4}, wraps, 256)},
      {"fill of nearly UINT64_MAX bytes", fill({1, 2, 3, 4}, 0, u64_max - 3)},
      {"fill with an empty pattern", fill({}, 0, 16)},
      {"fill with a 3-byte pattern", fill({1, 2, 3}, 0, 15)},
      {"fill with a 256-byte pattern", fill(bytes_of(256, 1), 0, 256)},
      {"copy from past the end", copy(buffer_a, buffer_b, 4000, 0, 200)},
      {"copy into past the end", copy(buffer_b, buffer_a, 0, 4000, 200)},
      {"copy whose source end wraps around", copy(buffer_a, buffer_b, wraps, 0, 256)},
      {"copy whose destination end wraps around", copy(buffer_b, buffer_a, 0, wraps, 256)},
      {"copy of UINT64_MAX bytes", copy(buffer_a, buffer_b, 0, 0, u64_max)},
      {"copy onto itself, overlapping", copy(buffer_a, buffer_a, 0, 8, 64), CL_MEM_COPY_OVERLAP},
      {"read_rect with a region of UINT64_MAX rows",
       [](client& c) {
         ASSERT_TRUE(c.send(p::enqueue_read_buffer_rect{header(200, queue_id), buffer_a, {0, 0, 0}, {16, u64_max, 1},
                                                        0, 0}));
       }},
      {"read_rect with a slice pitch past the end",
       [](client& c) {
         ASSERT_TRUE(c.send(p::enqueue_read_buffer_rect{header(200, queue_id), buffer_a, {0, 0, 0}, {16, 1, 2}, 16,
                                                        u64_max / 2}));
       }},
      {"write_rect with an origin past the end",
       [](client& c) {
         ASSERT_TRUE(c.send(p::enqueue_write_buffer_rect{header(200, queue_id), buffer_a, {4000, 0, 0}, {200, 1, 1},
                                                         0, 0}));
         ASSERT_TRUE(c.send_bulk(200, bytes_of(200, 0xEE).data(), 200));
       }},
      {"copy_rect whose source origin wraps around", copy_rect({wraps, 0, 0}, {0, 0, 0}, {256, 1, 1}, 0, 0)},
      {"copy_rect with a row pitch of 2^62", copy_rect({0, 0, 0}, {0, 0, 0}, {16, 2, 1}, uint64_t{1} << 62, 0)},
      {"a sub-buffer past the end", sub_buffer(3968, 256)},
      {"a sub-buffer whose end wraps around", sub_buffer(wraps, 256)},
      // Files (protocol 9): the range and path are checked before the server's root, so this
      // daemon, which has none, fails the last case alone with CL_INVALID_OPERATION.
      {"file to buffer past the end", from_file(4000, 200, "data.bin", 0)},
      {"file to buffer whose end wraps around", from_file(wraps, 256, "data.bin", 0)},
      {"buffer to file past the largest file offset", to_file(0, 256, "data.bin", u64_max - 128)},
      {"buffer to file with an empty path", to_file(0, 16, "", 0)},
      {"file to buffer with a NUL byte in its path", from_file(0, 16, std::string("a\0b", 3), 0)},
      {"file to buffer with a path of 4096 bytes", from_file(0, 16, std::string(4096, 'a'), 0)},
      {"file to buffer on a daemon without --file-root", from_file(0, 16, "data.bin", 0), CL_INVALID_OPERATION},
  };
  std::vector<hostile_case> cases;
  for (const range_case& r : ranges) {
    cases.push_back({r.name, [r](uint16_t port) {
                       client c;
                       ASSERT_NO_FATAL_FAILURE(open_with_buffers(c, port));
                       ASSERT_NO_FATAL_FAILURE(r.send(c));
                       expect_status(c, 200, r.status);
                       expect_buffers_intact(c, 210);
                       expect_alive(c);
                     }});
  }
  run_cases(cases);
}

// ---------------------------------------------------------------------------------------
// The bulk stream

TEST_F(hostile_input, bulk_stream_abuse_closes_only_its_session) {
  auto broken = [](std::vector<std::vector<uint8_t>> frames) {
    return [frames](uint16_t port) {
      client c;
      ASSERT_TRUE(c.open(port));
      for (const auto& f : frames) wire::send_bytes(c.bulk, f);
      expect_session_closed(c);
    };
  };
  const std::vector<hostile_case> cases = {
      {"a chunk past its transfer's end", broken({wire::bulk_frame(5, 10, 12, bytes_of(4, 1))})},
      {"more bytes than the transfer's total",
       broken({wire::bulk_frame(6, 0, 16, bytes_of(16, 1)), wire::bulk_frame(6, 0, 16, bytes_of(16, 1))})},
      {"a transfer whose total changes",
       broken({wire::bulk_frame(7, 0, 32, bytes_of(16, 1)), wire::bulk_frame(7, 16, 64, bytes_of(16, 1))})},
      {"a total above max_transfer_size", broken({wire::bulk_frame(8, 0, p::max_transfer_size + 1, {})})},
      // Within the protocol's limit, but more than any staging can hold here (the case
      // assumes less than 1 TiB of memory and swap; ASan aborted the daemon on it).
      {"a total of max_transfer_size for no command", broken({wire::bulk_frame(8, 0, p::max_transfer_size, {})})},
      {"a chunk above max_bulk_chunk",
       broken({wire::raw_frame(p::max_bulk_chunk + p::bulk_prefix_size + 1, uint16_t(p::message_id::bulk_data), 0)})},
      {"a payload shorter than the bulk prefix",
       broken({wire::raw_frame(10, uint16_t(p::message_id::bulk_data), 0, bytes_of(10, 0))})},
      {"a control message on the bulk stream", broken({wire::frame_of(p::ping{1})})},
      {"reserved flags on the bulk stream", broken({wire::bulk_frame(9, 0, 4, bytes_of(4, 1), 1)})},
      {"write bytes that disagree with the write's size",
       [](uint16_t port) {
         client c;
         ASSERT_NO_FATAL_FAILURE(open_with_buffers(c, port));
         ASSERT_TRUE(c.send(p::enqueue_write_buffer{header(200, queue_id), buffer_a, 0, 64}));
         ASSERT_TRUE(c.send_bulk(200, bytes_of(32, 0xEE).data(), 32));
         expect_session_closed(c);
       }},
      {"bytes for a transfer no command claims",
       [](uint16_t port) {
         client c;
         ASSERT_NO_FATAL_FAILURE(open_with_buffers(c, port));
         ASSERT_TRUE(c.send_bulk(5000, bytes_of(64, 0xEE).data(), 64));
         expect_alive(c);
         expect_buffers_intact(c, 210);
         // The session's own writes still land.
         ASSERT_TRUE(c.send(p::enqueue_write_buffer{header(220, queue_id), buffer_b, 0, 64}));
         ASSERT_TRUE(c.send_bulk(220, bytes_of(64, 0x33).data(), 64));
         expect_status(c, 220, CL_COMPLETE);
       }},
      {"bytes for a write that failed",
       [](uint16_t port) {
         client c;
         ASSERT_NO_FATAL_FAILURE(open_with_buffers(c, port));
         ASSERT_TRUE(c.send(p::enqueue_write_buffer{header(200, queue_id), 999, 0, 64}));
         expect_status(c, 200, CL_INVALID_MEM_OBJECT);
         ASSERT_TRUE(c.send_bulk(200, bytes_of(64, 0xEE).data(), 64));
         expect_alive(c);
         expect_buffers_intact(c, 210);
       }},
      {"a write whose bytes never come, then goodbye",
       [](uint16_t port) {
         client c;
         ASSERT_NO_FATAL_FAILURE(open_with_buffers(c, port));
         ASSERT_TRUE(c.send(p::enqueue_write_buffer{header(200, queue_id), buffer_a, 0, 64}));
         expect_alive(c);
         EXPECT_FALSE(c.completions.count(200)) << "a write completed without its bytes";
         ASSERT_TRUE(c.send(p::goodbye{0}));
         expect_closed(c.control);
       }},
  };
  run_cases(cases);
}

}  // namespace ferry::test
