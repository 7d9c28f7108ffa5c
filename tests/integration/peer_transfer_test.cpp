// Buffer ranges between the sessions of two programs (cl_ext_ferry.h:
// clEnqueueReceiveFromPeerFERRY, clEnqueueSendToPeerFERRY), the transfer library's way to a
// server-to-server halo exchange: this process receives and hands the ticket to a child
// process, which sends from a session of its own, on the same daemon or on a second one.
// The bytes arrive whole; the send waits for the kernel before it in its in-order queue;
// malformed tickets are refused at the call; a ticket with a wrong key fails its send, and
// the receive still takes the right sender's bytes.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cl_helpers.hpp"

namespace ferry::test {

suite_config this_suite() { return suite_config{}; }  // Ferry only, one daemon

namespace {

constexpr const char* fill_kernel = R"CLC(
kernel void fill_pattern(global uchar* bytes, uint seed) {
  size_t i = get_global_id(0);
  bytes[i] = (uchar)(i * 7u + seed + (i >> 11));
}
)CLC";

unsigned char pattern_byte(size_t i, unsigned seed) {
  return static_cast<unsigned char>(static_cast<unsigned>(i) * 7u + seed + static_cast<unsigned>(i >> 11));
}

std::string to_hex(const cl_ferry_peer_ticket& ticket) {
  static const char digits[] = "0123456789abcdef";
  const auto* bytes = reinterpret_cast<const unsigned char*>(&ticket);
  std::string out;
  for (size_t i = 0; i < sizeof ticket; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

bool from_hex(const std::string& text, cl_ferry_peer_ticket& ticket) {
  if (text.size() != 2 * sizeof ticket) return false;
  auto* bytes = reinterpret_cast<unsigned char*>(&ticket);
  for (size_t i = 0; i < sizeof ticket; ++i) bytes[i] = static_cast<unsigned char>(std::stoi(text.substr(2 * i, 2), nullptr, 16));
  return true;
}

template <class Function>
Function extension(cl_platform_id platform, const char* name) {
  return reinterpret_cast<Function>(ferry_extension(platform, name));
}

}  // namespace

// The sender: a session of its own. args: the ticket (hex), the buffer offset to send
// from, "bad-key" to send once with a spoiled key first.
FERRY_IT_CHILD(send_with_ticket) {
  CHILD_CHECK(args.size() >= 2, "usage: ticket offset [bad-key]");
  cl_ferry_peer_ticket ticket{};
  CHILD_CHECK(from_hex(args[0], ticket), "a malformed ticket");
  const size_t offset = std::stoul(args[1]);
  cl_side side;
  const std::string opened = try_open_side(side, find_ferry_platform());
  CHILD_CHECK(opened.empty(), "%s", opened.c_str());
  const cl_platform_id platform = side.platform;
  const cl_context context = side.context;
  const cl_command_queue queue = side.queue;
  const cl_device_id device = side.device;
  cl_int rc = CL_SUCCESS;
  const size_t total = offset + ticket.size;
  mem_handle source(clCreateBuffer(context, CL_MEM_READ_WRITE, std::max<size_t>(total, 1), nullptr, &rc));
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateBuffer: %s", cl_error_name(rc).c_str());
  program_handle program = build_program(context, device, fill_kernel);
  CHILD_CHECK(program, "no program");
  kernel_handle kernel(clCreateKernel(program, "fill_pattern", &rc));
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateKernel: %s", cl_error_name(rc).c_str());
  const cl_uint seed = 3;
  clSetKernelArg(kernel, 0, sizeof(cl_mem), source.address());
  clSetKernelArg(kernel, 1, sizeof seed, &seed);
  auto send = extension<clEnqueueSendToPeerFERRY_fn>(platform, "clEnqueueSendToPeerFERRY");
  CHILD_CHECK(send != nullptr, "no clEnqueueSendToPeerFERRY");
  // Bad tickets are refused at the call.
  cl_ferry_peer_ticket unterminated = ticket;
  std::memset(unterminated.address, 'x', sizeof unterminated.address);
  CHILD_CHECK(send(queue, source, offset, &unterminated, 0, nullptr, nullptr) == CL_INVALID_VALUE, "unterminated");
  CHILD_CHECK(send(queue, source, offset, nullptr, 0, nullptr, nullptr) == CL_INVALID_VALUE, "no ticket");
  CHILD_CHECK(send(queue, source, total, &ticket, 0, nullptr, nullptr) == (ticket.size ? CL_INVALID_VALUE : CL_SUCCESS),
              "a range past the end");
  if (args.size() > 2 && args[2] == "bad-key") {
    // On a queue of its own: a failed command fails the later ones of its in-order queue
    // on some platforms (PoCL), as any failed command does.
    queue_handle apart(clCreateCommandQueueWithProperties(context, device, nullptr, &rc));
    CHILD_CHECK(rc == CL_SUCCESS, "clCreateCommandQueue: %s", cl_error_name(rc).c_str());
    cl_ferry_peer_ticket spoiled = ticket;
    spoiled.peer_key[0] ^= 0xFF;
    event_handle refused;
    CHILD_CHECK(send(apart, source, offset, &spoiled, 0, nullptr, refused.out()) == CL_SUCCESS, "the spoiled send");
    clWaitForEvents(1, refused.address());
    cl_int status = CL_COMPLETE;
    clGetEventInfo(refused, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    CHILD_CHECK(status < 0, "a send with a wrong key ended with %d", status);
  }
  // The kernel fills the buffer; the send behind it in the in-order queue sees its bytes.
  if (total > 0) {
    rc = clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &total, nullptr, 0, nullptr, nullptr);
    CHILD_CHECK(rc == CL_SUCCESS, "clEnqueueNDRangeKernel: %s", cl_error_name(rc).c_str());
  }
  event_handle sent;
  rc = send(queue, source, offset, &ticket, 0, nullptr, sent.out());
  CHILD_CHECK(rc == CL_SUCCESS, "clEnqueueSendToPeerFERRY: %s", cl_error_name(rc).c_str());
  // A kernel behind the send (in-order) may overwrite the range: the send has read it.
  if (total > 0) {
    const cl_uint other = 99;
    clSetKernelArg(kernel, 1, sizeof other, &other);
    rc = clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &total, nullptr, 0, nullptr, nullptr);
    CHILD_CHECK(rc == CL_SUCCESS, "clEnqueueNDRangeKernel after the send: %s", cl_error_name(rc).c_str());
  }
  rc = clWaitForEvents(1, sent.address());
  CHILD_CHECK(rc == CL_SUCCESS, "the send ended with %s", cl_error_name(rc).c_str());
  CHILD_CHECK(clFinish(queue) == CL_SUCCESS, "clFinish");
  std::printf("PASS\n");
  return 0;
}

class peer_transfer : public ferry_test {
 protected:
  /// Receives `size` bytes at `at` of a new buffer from a child that sends them from
  /// offset `from` of its own, with FERRY_SERVERS `servers` (empty: this process's).
  void exchange(size_t size, size_t at, size_t from, const std::string& servers, bool bad_key = false) {
    SCOPED_TRACE("size " + std::to_string(size) + (servers.empty() ? ", same daemon" : ", another daemon"));
    auto receive = extension<clEnqueueReceiveFromPeerFERRY_fn>(platform_, "clEnqueueReceiveFromPeerFERRY");
    ASSERT_NE(receive, nullptr);
    mem_handle target = buffer(CL_MEM_READ_WRITE, at + size + 8);
    const std::vector<unsigned char> blank(at + size + 8, 0xEE);
    ASSERT_CL_OK(clEnqueueWriteBuffer(queue_, target, CL_TRUE, 0, blank.size(), blank.data(), 0, nullptr, nullptr));
    cl_ferry_peer_ticket ticket{};
    EXPECT_EQ(receive(queue_, target, at, size, 0, nullptr, nullptr, nullptr), CL_INVALID_VALUE);
    EXPECT_EQ(receive(queue_, target, at + 9, size, 0, nullptr, nullptr, &ticket), CL_INVALID_VALUE);
    event_handle received;
    ASSERT_CL_OK(receive(queue_, target, at, size, 0, nullptr, received.out(), &ticket));
    EXPECT_EQ(ticket.size, size);
    std::vector<std::string> args = {to_hex(ticket), std::to_string(from)};
    if (bad_key) args.push_back("bad-key");
    std::vector<env_change> env;
    if (!servers.empty()) env.push_back({"FERRY_SERVERS", servers});
    const auto deadline = clock::now() + std::chrono::seconds(120);
    child_process child = spawn_self("send_with_ticket", args, env);
    const std::string out = child.read_all(deadline);
    const std::optional<int> status = child.wait(deadline);
    if (!status) child.kill_and_wait();
    ASSERT_TRUE(status.has_value()) << "the sender hung:\n" << out;
    EXPECT_TRUE(exited_with(*status, 0)) << describe_wait_status(*status) << "\n" << out;
    EXPECT_NE(out.find("PASS"), std::string::npos) << out;
    ASSERT_CL_OK(clWaitForEvents(1, received.address()));
    std::vector<unsigned char> got(blank.size());
    ASSERT_CL_OK(clEnqueueReadBuffer(queue_, target, CL_TRUE, 0, got.size(), got.data(), 0, nullptr, nullptr));
    std::vector<unsigned char> expected = blank;
    for (size_t i = 0; i < size; ++i) expected[at + i] = pattern_byte(from + i, 3);
    EXPECT_TRUE(got == expected) << "the received bytes differ";
  }
};

TEST_F(peer_transfer, ranges_go_from_one_programs_session_to_anothers_on_the_same_daemon) {
  for (size_t size : {size_t{1}, size_t{4096}, (size_t{20} << 20) + 3}) exchange(size, 5, 17, "");
}

TEST_F(peer_transfer, ranges_go_between_sessions_on_two_daemons) {
  if (self_check) GTEST_SKIP() << "needs a second daemon";
  daemon other;
  ASSERT_TRUE(other.started());
  for (size_t size : {size_t{1}, (size_t{9} << 20) + 1}) exchange(size, 0, 100, other.address());
}

TEST_F(peer_transfer, a_send_with_a_wrong_key_fails_and_the_receive_takes_the_right_one) {
  exchange(4096, 3, 0, "", true);
}

}  // namespace ferry::test
