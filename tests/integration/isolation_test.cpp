// Sessions are isolated: a second client that names the first one's object ids, whether
// as strangers (ids it never created) or as its own objects under the same numbers, gets
// the errors the protocol specifies and leaves the first client's buffer, kernel and
// events exactly as they were.
//
// Client A is the real application path (libferry through the loader). Client B is a raw
// wire client on a session of its own. libferry draws every id from one process-wide
// counter that starts at 1 (src/client/core/objects.cpp) and uses each id for exactly
// one message it sends (this test calls nothing that names several objects in one
// message, like clCreateKernelsInProgram), so A's process has drawn no id above the
// number of control messages it has sent (clFerryGetMessageCounts). B names every id up
// to twice that, which includes each of A's exact ids.
#include <algorithm>
#include <map>

#include "cl_helpers.hpp"
#include "kernels.hpp"
#include "wire.hpp"

namespace ferry::test {

suite_config this_suite() { return suite_config{}; }  // Ferry only, one daemon

namespace {

using wire::header;
using wire::mem_arg;
namespace p = wire::p;

constexpr size_t element_count = 1024;

// B's own ids, far above anything A's process draws.
constexpr p::object_id b_base = p::object_id{1} << 40;
constexpr p::object_id b_context = b_base + 1, b_queue = b_base + 2, b_buffer = b_base + 3, b_program = b_base + 4,
                       b_kernel = b_base + 5;
constexpr size_t b_buffer_size = 256;

cl_int pattern(size_t i) { return static_cast<cl_int>(i * 7 + 3); }

// What A holds while B attacks: a buffer with known contents, the kernel add_one, a user
// event, and add_one enqueued behind that user event on a second buffer of zeros (so that
// a stranger who could set the user event would make the kernel run early). The gated
// kernel has a buffer of its own because some platforms order every command on a buffer
// behind the last one, whatever its queue, and A reads `data` while the kernel waits.
struct client_a {
  mem_handle data;
  mem_handle counter;
  program_handle program;
  kernel_handle kernel;
  event_handle gate;
  event_handle gated;
  queue_handle reader;  // reads while the main queue waits behind `gate`
};

class isolation : public ferry_test {
 protected:
  void make_client_a(client_a& a) {
    std::vector<cl_int> host(element_count);
    for (size_t i = 0; i < element_count; ++i) host[i] = pattern(i);
    a.data = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, element_count * sizeof(cl_int), host.data());
    ASSERT_TRUE(a.data);
    std::vector<cl_int> zeros(element_count, 0);
    a.counter = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, element_count * sizeof(cl_int), zeros.data());
    ASSERT_TRUE(a.counter);
    a.program = build(kernels::basics);
    ASSERT_TRUE(a.program);
    a.kernel = create_kernel(a.program, "add_one");
    ASSERT_TRUE(a.kernel);
    cl_mem m = a.counter;
    ASSERT_CL_OK(clSetKernelArg(a.kernel, 0, sizeof m, &m));
    cl_int rc = CL_SUCCESS;
    a.gate = event_handle(clCreateUserEvent(context_, &rc));
    ASSERT_CL_OK(rc);
    const size_t n = element_count;
    ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, a.kernel, 1, nullptr, &n, nullptr, 1, a.gate.address(), a.gated.out()));
    ASSERT_CL_OK(clFlush(queue_));
    a.reader = queue_handle(clCreateCommandQueue(context_, device_, 0, &rc));
    ASSERT_CL_OK(rc);
  }

  // One past the highest id A's process can have drawn so far, doubled for margin.
  p::object_id id_bound() {
    auto get_counts = reinterpret_cast<clFerryGetMessageCounts_fn>(ferry_extension(platform_, "clFerryGetMessageCounts"));
    EXPECT_NE(get_counts, nullptr);
    if (get_counts == nullptr) return 0;
    cl_ulong sent = 0;
    EXPECT_CL_OK(get_counts(device_, &sent, nullptr));
    EXPECT_GT(sent, 0u);
    EXPECT_LT(sent, b_base / 4);
    return 2 * sent + 16;
  }

  std::vector<cl_int> read_all(cl_command_queue queue, cl_mem mem) {
    std::vector<cl_int> out(element_count, -1);
    EXPECT_CL_OK(clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, out.size() * sizeof(cl_int), out.data(), 0, nullptr, nullptr));
    return out;
  }

  static void expect_pattern(const std::vector<cl_int>& values, cl_int plus, const char* when) {
    size_t wrong = 0;
    for (size_t i = 0; i < values.size(); ++i) wrong += values[i] != pattern(i) + plus;
    EXPECT_EQ(wrong, 0u) << when << ": " << wrong << " of " << values.size() << " values differ; first: " << values[0]
                         << " (expected " << pattern(0) + plus << ")";
  }

  // After B is done (its pong proves the daemon ran every message B sent): A's buffer
  // still holds its contents, the kernel behind the user event has not run, and all of
  // it works: the user event releases the kernel, which adds one, and runs again.
  void check_client_a_untouched_and_usable(client_a& a) {
    const cl_int gated_status = event_status(a.gated);
    EXPECT_NE(gated_status, CL_COMPLETE) << "A's kernel ran before A set its user event";
    EXPECT_GE(gated_status, 0) << "A's kernel failed: " << cl_error_name(gated_status);
    expect_pattern(read_all(a.reader, a.data), 0, "A's buffer after B");

    ASSERT_CL_OK(clSetUserEventStatus(a.gate, CL_COMPLETE));
    ASSERT_CL_OK(clWaitForEvents(1, a.gated.address()));
    EXPECT_EQ(event_status(a.gated), CL_COMPLETE);
    const std::vector<cl_int> counted = read_all(queue_, a.counter);
    EXPECT_EQ(std::count(counted.begin(), counted.end(), 1), static_cast<std::ptrdiff_t>(element_count))
        << "A's gated kernel did not run exactly once";

    cl_mem m = a.data;
    ASSERT_CL_OK(clSetKernelArg(a.kernel, 0, sizeof m, &m));
    const size_t n = element_count;
    ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, a.kernel, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    expect_pattern(read_all(queue_, a.data), 1, "A's buffer after A's kernel ran on it");
    EXPECT_EQ(info_string(FERRY_IT_INFO_QUERY(clGetKernelInfo, a.kernel.get(), CL_KERNEL_FUNCTION_NAME)), "add_one");
  }

  uint64_t object_count(wire::client& c, uint64_t request) {
    EXPECT_TRUE(c.send(p::get_object_counts{request}));
    auto counts = c.wait_reply<p::object_counts>();
    EXPECT_TRUE(counts);
    return counts ? counts->objects : ~uint64_t{0};
  }

  // B's context, queue, a buffer filled with 0x11, and the basics program with add_one.
  void make_client_b(wire::client& b) {
    ASSERT_TRUE(b.open(suite_daemon()->port()));
    ASSERT_TRUE(b.send(p::create_context{b_context, {0}}));
    ASSERT_TRUE(b.send(p::create_queue{b_queue, b_context, 0, 0}));
    ASSERT_TRUE(b.send(p::create_buffer{b_buffer, b_context, CL_MEM_READ_WRITE, b_buffer_size, 0}));
    ASSERT_TRUE(b.send(p::enqueue_fill_buffer{header(b_base + 10, b_queue), b_buffer, {0x11}, 0, b_buffer_size}));
    ASSERT_TRUE(b.send(p::create_program_with_source{b_program, b_context, kernels::basics}));
    ASSERT_TRUE(b.send(p::build_program{b_base + 11, b_program, {}, "", {}}));
    auto built = b.wait_reply<p::build_reply>(120000);
    ASSERT_TRUE(built);
    ASSERT_EQ(cl_status{built->status}, cl_status{CL_SUCCESS});
    ASSERT_TRUE(b.send(p::create_kernel{b_base + 12, b_kernel, b_program, "add_one"}));
    auto made = b.wait_reply<p::kernel_reply>();
    ASSERT_TRUE(made);
    ASSERT_EQ(cl_status{made->status}, cl_status{CL_SUCCESS});
    auto filled = b.wait_completion(b_base + 10);
    ASSERT_TRUE(filled);
    ASSERT_EQ(cl_status{filled->status}, cl_status{CL_COMPLETE});
  }
};

// The replies B expects, in the order it asked for them.
struct expected_reply {
  uint16_t message;
  uint64_t request;
  cl_int status;
  std::string what;
};

}  // namespace

TEST_F(isolation, a_stranger_naming_a_clients_ids_gets_errors_and_changes_nothing) {
  if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
  client_a a;
  ASSERT_NO_FATAL_FAILURE(make_client_a(a));
  const p::object_id bound = id_bound();
  ASSERT_GT(bound, 0u);

  wire::client b;
  ASSERT_NO_FATAL_FAILURE(make_client_b(b));
  // A peer to export to, so that export_event judges the event rather than the peer
  // (the address is never dialled: nothing is exported).
  ASSERT_TRUE(b.send(p::add_peer{9, "127.0.0.1:1", p::session_token{1}, p::session_token{2}}));

  std::map<p::object_id, std::pair<cl_int, std::string>> expected_completions;
  std::vector<expected_reply> expected_replies;
  p::object_id next = b_base + 1000;
  const std::vector<uint8_t> junk(16, 0xEE);
  for (p::object_id id = 1; id <= bound; ++id) {
    const std::string of = " of id " + std::to_string(id);
    auto command = [&](cl_int status, const std::string& what) {
      const p::object_id c = next++;
      expected_completions[c] = {status, what + of};
      return c;
    };
    auto request = [&](uint16_t message, cl_int status, const std::string& what) {
      const uint64_t r = next++;
      expected_replies.push_back({message, r, status, what + of});
      return r;
    };
    // Buffer contents: read, write (its bytes sent too), fill, copy either way.
    ASSERT_TRUE(b.send(p::enqueue_read_buffer{header(command(CL_INVALID_MEM_OBJECT, "read"), b_queue), id, 0, 16}));
    const p::object_id write = command(CL_INVALID_MEM_OBJECT, "write");
    ASSERT_TRUE(b.send(p::enqueue_write_buffer{header(write, b_queue), id, 0, junk.size()}));
    ASSERT_TRUE(b.send_bulk(write, junk.data(), junk.size()));
    ASSERT_TRUE(b.send(p::enqueue_fill_buffer{header(command(CL_INVALID_MEM_OBJECT, "fill"), b_queue), id,
                                              {0xEE, 0xEE, 0xEE, 0xEE}, 0, 16}));
    ASSERT_TRUE(b.send(p::enqueue_copy_buffer{header(command(CL_INVALID_MEM_OBJECT, "copy from"), b_queue), id,
                                              b_buffer, 0, 0, 16}));
    ASSERT_TRUE(b.send(p::enqueue_copy_buffer{header(command(CL_INVALID_MEM_OBJECT, "copy into"), b_queue), b_buffer,
                                              id, 0, 0, 16}));
    // Kernels: as the kernel, and as a kernel's buffer argument.
    p::enqueue_ndrange run;
    run.header = header(command(CL_INVALID_KERNEL, "run kernel"), b_queue);
    run.kernel = id;
    run.work_dim = 1;
    run.global = {4, 1, 1};
    run.args = {mem_arg(0, b_buffer)};
    ASSERT_TRUE(b.send(run));
    run.header = header(command(CL_INVALID_MEM_OBJECT, "kernel argument"), b_queue);
    run.kernel = b_kernel;
    run.args = {mem_arg(0, id)};
    ASSERT_TRUE(b.send(run));
    ASSERT_TRUE(b.send(p::check_kernel_arg{request(uint16_t(p::message_id::status_reply), CL_INVALID_KERNEL,
                                                   "check_kernel_arg"),
                                           id, mem_arg(0, b_buffer)}));
    // Queues and events: as the queue, in a wait list, exported.
    ASSERT_TRUE(b.send(p::enqueue_marker{header(command(CL_INVALID_COMMAND_QUEUE, "marker on queue"), id)}));
    ASSERT_TRUE(b.send(p::enqueue_marker{
        header(command(CL_INVALID_EVENT_WAIT_LIST, "wait list"), b_queue, p::notify, {id})}));
    const p::object_id export_command = command(CL_INVALID_EVENT, "export_event");
    ASSERT_TRUE(b.send(p::export_event{id, 9, export_command}));
    // Programs and kernels: queried, built, asked for a kernel.
    ASSERT_TRUE(b.send(p::query{request(uint16_t(p::message_id::query_reply), CL_INVALID_KERNEL, "kernel query"),
                                p::query_kind::kernel_info, id, 0, CL_KERNEL_FUNCTION_NAME, 0, {}}));
    ASSERT_TRUE(b.send(p::query{request(uint16_t(p::message_id::query_reply), CL_INVALID_PROGRAM, "program query"),
                                p::query_kind::program_info, id, 0, CL_PROGRAM_NUM_KERNELS, 0, {}}));
    ASSERT_TRUE(b.send(p::query{request(uint16_t(p::message_id::query_reply), CL_INVALID_CONTEXT, "image formats"),
                                p::query_kind::supported_image_formats, id, 0, CL_MEM_OBJECT_IMAGE2D, 0,
                                wire::payload_of(uint64_t{CL_MEM_READ_WRITE})}));
    ASSERT_TRUE(b.send(p::build_program{request(uint16_t(p::message_id::build_reply), CL_INVALID_PROGRAM, "build"),
                                        id, {}, "", {}}));
    ASSERT_TRUE(b.send(p::create_kernel{request(uint16_t(p::message_id::kernel_reply), CL_INVALID_PROGRAM,
                                                "create_kernel"),
                                        next++, id, "add_one"}));
    // Objects made inside A's: they fail, and a command on them reports the failure.
    // (A read of such an object reports the error its creation failed with.)
    const p::object_id buffer_in_it = next++, sub_buffer_of_it = next++;
    ASSERT_TRUE(b.send(p::create_buffer{buffer_in_it, id, CL_MEM_READ_WRITE, 16, 0}));
    ASSERT_TRUE(b.send(p::enqueue_read_buffer{
        header(command(CL_INVALID_CONTEXT, "read of a buffer made in the context"), b_queue), buffer_in_it, 0, 16}));
    ASSERT_TRUE(b.send(p::create_sub_buffer{sub_buffer_of_it, id, CL_MEM_READ_WRITE, 0, 16}));
    ASSERT_TRUE(b.send(p::enqueue_read_buffer{
        header(command(CL_INVALID_MEM_OBJECT, "read of a sub-buffer of the buffer"), b_queue), sub_buffer_of_it, 0,
        16}));
    // No reply exists for these; the daemon must ignore them (checked on A's side below).
    ASSERT_TRUE(b.send(p::set_user_event_status{id, CL_COMPLETE}));
    ASSERT_TRUE(b.send(p::set_user_event_status{id, -1234}));
    ASSERT_TRUE(b.send(p::flush_queue{id}));
  }
  // Releases last, so that everything above met A's objects alive if they were visible.
  for (p::object_id id = 1; id <= bound; ++id) ASSERT_TRUE(b.send(p::release_object{id}));
  ASSERT_TRUE(b.send(p::ping{77}));
  auto pong = b.wait_reply<p::pong>(60000);
  ASSERT_TRUE(pong) << "B's session ended: one of its messages was taken as a protocol violation";
  EXPECT_EQ(pong->request, 77u);

  for (const auto& [command, want] : expected_completions) {
    auto got = b.wait_completion(command, 30000);
    ASSERT_TRUE(got) << "no completion for " << want.second;
    EXPECT_EQ(cl_status{got->status}, cl_status{want.first}) << want.second;
  }
  for (const expected_reply& want : expected_replies) {
    uint64_t request = 0;
    cl_int status = 1;
    switch (static_cast<p::message_id>(want.message)) {
      case p::message_id::status_reply: {
        auto r = b.wait_reply<p::status_reply>();
        ASSERT_TRUE(r) << want.what;
        request = r->request, status = r->status;
        break;
      }
      case p::message_id::query_reply: {
        auto r = b.wait_reply<p::query_reply>();
        ASSERT_TRUE(r) << want.what;
        EXPECT_TRUE(r->value.empty()) << want.what;
        request = r->request, status = r->status;
        break;
      }
      case p::message_id::build_reply: {
        auto r = b.wait_reply<p::build_reply>();
        ASSERT_TRUE(r) << want.what;
        request = r->request, status = r->status;
        break;
      }
      case p::message_id::kernel_reply: {
        auto r = b.wait_reply<p::kernel_reply>();
        ASSERT_TRUE(r) << want.what;
        EXPECT_TRUE(r->kernels.empty()) << want.what;
        request = r->request, status = r->status;
        break;
      }
      default:
        FAIL() << "unexpected reply kind " << want.message;
    }
    EXPECT_EQ(request, want.request) << want.what;
    EXPECT_EQ(cl_status{status}, cl_status{want.status}) << want.what;
  }

  // B's own objects: its five, plus the two failed creations per id, which it holds
  // (the client would release them); nothing of B's went with the releases of A's ids.
  EXPECT_EQ(object_count(b, 78), 5 + 2 * bound);
  // No copy from A's buffer landed in B's.
  ASSERT_TRUE(b.send(p::enqueue_read_buffer{header(next, b_queue), b_buffer, 0, b_buffer_size}));
  auto mine = b.wait_bulk(next);
  ASSERT_TRUE(mine);
  EXPECT_EQ(*mine, std::vector<uint8_t>(b_buffer_size, 0x11));
  auto read_done = b.wait_completion(next);
  ASSERT_TRUE(read_done);
  EXPECT_EQ(read_done->status, CL_COMPLETE);
  ASSERT_TRUE(b.send(p::goodbye{0}));

  check_client_a_untouched_and_usable(a);
}

TEST_F(isolation, the_same_ids_in_another_session_name_only_that_sessions_objects) {
  if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
  client_a a;
  ASSERT_NO_FATAL_FAILURE(make_client_a(a));
  const p::object_id bound = id_bound();
  ASSERT_GT(bound, 3u);

  // B takes every id A's process may hold for objects of its own: 1 its context, 2 its
  // queue, then buffers (even ids, filled with 0xEE) and user events (odd ids, set).
  wire::client b;
  ASSERT_TRUE(b.open(suite_daemon()->port()));
  ASSERT_TRUE(b.send(p::create_context{1, {0}}));
  ASSERT_TRUE(b.send(p::create_queue{2, 1, 0, 0}));
  p::object_id next = b_base + 1000;
  std::vector<p::object_id> fills;
  for (p::object_id id = 3; id <= bound; ++id) {
    if (id % 2 == 0) {
      ASSERT_TRUE(b.send(p::create_buffer{id, 1, CL_MEM_READ_WRITE, 64, 0}));
      fills.push_back(next);
      ASSERT_TRUE(b.send(p::enqueue_fill_buffer{header(next++, 2), id, {0xEE}, 0, 64}));
    } else {
      ASSERT_TRUE(b.send(p::create_user_event{id, 1}));
      ASSERT_TRUE(b.send(p::set_user_event_status{id, CL_COMPLETE}));
    }
  }
  // A marker behind all of B's user events completes: they are B's, and B set them.
  std::vector<p::object_id> events;
  for (p::object_id id = 3; id <= bound; ++id)
    if (id % 2 == 1) events.push_back(id);
  const p::object_id marker = next++;
  ASSERT_TRUE(b.send(p::enqueue_marker{header(marker, 2, p::notify, events)}));
  for (p::object_id fill : fills) {
    auto done = b.wait_completion(fill, 30000);
    ASSERT_TRUE(done);
    EXPECT_EQ(done->status, CL_COMPLETE);
  }
  auto marked = b.wait_completion(marker, 30000);
  ASSERT_TRUE(marked);
  EXPECT_EQ(marked->status, CL_COMPLETE);
  EXPECT_EQ(object_count(b, next++), bound);
  // Each of B's buffers holds B's bytes.
  for (p::object_id id = 4; id <= bound; id += 2) {
    const p::object_id read = next++;
    ASSERT_TRUE(b.send(p::enqueue_read_buffer{header(read, 2), id, 0, 64}));
    auto bytes = b.wait_bulk(read);
    ASSERT_TRUE(bytes);
    EXPECT_EQ(*bytes, std::vector<uint8_t>(64, 0xEE)) << "B's buffer " << id;
  }
  for (p::object_id id = bound; id >= 1; --id) ASSERT_TRUE(b.send(p::release_object{id}));
  EXPECT_EQ(object_count(b, next++), 0u);
  ASSERT_TRUE(b.send(p::goodbye{0}));

  check_client_a_untouched_and_usable(a);
}

}  // namespace ferry::test
