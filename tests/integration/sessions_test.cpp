// Sessions against one daemon: kernel printf reaching the client's stdout, two client
// processes at once, and hostile connections that must not disturb a good client.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <sstream>

#include "cl_helpers.hpp"
#include "kernels.hpp"

namespace ferry::test {

suite_config this_suite() { return suite_config{}; }  // Ferry only, one daemon

namespace {

constexpr auto child_timeout = std::chrono::seconds(90);

constexpr const char* printf_source = R"CLC(
kernel void say(global const int* values, float f) {
  int i = (int)get_global_id(0);
  printf("ferry printf %d of %d: %d %.2f %s\n", i, (int)get_global_size(0), values[i], f, "hello");
}
)CLC";

// For children: the Ferry platform's first device, or nullptr (with a message on stderr).
cl_device_id child_ferry_device() {
  cl_platform_id platform = find_ferry_platform();
  if (platform == nullptr || (!self_check && platform_name(platform) != CL_FERRY_PLATFORM_NAME)) {
    std::fprintf(stderr, "child: no Ferry platform\n");
    return nullptr;
  }
  auto devices = platform_devices(platform);
  if (devices.empty()) {
    std::fprintf(stderr, "child: the Ferry platform has no devices\n");
    return nullptr;
  }
  return devices.front();
}

// A raw TCP connection to the daemon, speaking no protocol at all.
class raw_connection {
 public:
  explicit raw_connection(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~raw_connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;

  bool connected() const { return fd_ >= 0; }
  // Sends everything; false when the daemon has already closed the connection (which
  // is a fine outcome for hostile input).
  bool send(const std::vector<unsigned char>& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }
  // True when the daemon closes (or resets) the connection before the deadline; whatever
  // it says first (an error frame, a hello) is read and dropped.
  bool closed_by_peer(clock::time_point deadline) {
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
      if (left <= 0) return false;
      pollfd pfd{fd_, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(left));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return false;
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n == 0) return true;
      if (n < 0 && (errno == ECONNRESET || errno == EPIPE)) return true;
      if (n < 0 && errno != EINTR && errno != EAGAIN) return true;
    }
  }

 private:
  int fd_ = -1;
};

std::vector<unsigned char> frame_header(std::uint32_t payload_size, std::uint16_t message_id, std::uint16_t flags) {
  // The frame header of docs/protocol.md: u32 payload size, u16 message id, u16 flags,
  // little-endian. Message 1 is the hello every connection must start with.
  std::vector<unsigned char> out(8);
  for (int i = 0; i < 4; ++i) out[i] = static_cast<unsigned char>(payload_size >> (8 * i));
  out[4] = static_cast<unsigned char>(message_id);
  out[5] = static_cast<unsigned char>(message_id >> 8);
  out[6] = static_cast<unsigned char>(flags);
  out[7] = static_cast<unsigned char>(flags >> 8);
  return out;
}

}  // namespace

// Runs a kernel that prints, between two lines of the child's own.
FERRY_IT_CHILD(printf_kernel) {
  cl_device_id device = child_ferry_device();
  if (device == nullptr) return 3;
  std::printf("BEGIN\n");
  std::fflush(stdout);
  cl_int rc = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  cl_command_queue queue = rc == CL_SUCCESS ? clCreateCommandQueue(context, device, 0, &rc) : nullptr;
  if (rc != CL_SUCCESS) {
    std::fprintf(stderr, "child: context/queue: %s\n", cl_error_name(rc).c_str());
    return 1;
  }
  const char* src = printf_source;
  cl_program program = clCreateProgramWithSource(context, 1, &src, nullptr, &rc);
  if (rc == CL_SUCCESS) rc = clBuildProgram(program, 1, &device, "", nullptr, nullptr);
  if (rc != CL_SUCCESS) {
    std::fprintf(stderr, "child: build: %s\n%s\n", cl_error_name(rc).c_str(), build_log(program, device).c_str());
    return 1;
  }
  cl_kernel kernel = clCreateKernel(program, "say", &rc);
  const cl_int values[4] = {0, 10, 20, 30};
  cl_mem mem = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof values,
                              const_cast<cl_int*>(values), &rc);
  const float f = 3.5f;
  const size_t global = 4, local = 1;
  if (rc == CL_SUCCESS) rc = clSetKernelArg(kernel, 0, sizeof mem, &mem);
  if (rc == CL_SUCCESS) rc = clSetKernelArg(kernel, 1, sizeof f, &f);
  if (rc == CL_SUCCESS) rc = clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr);
  if (rc == CL_SUCCESS) rc = clFinish(queue);
  if (rc != CL_SUCCESS) {
    std::fprintf(stderr, "child: run: %s\n", cl_error_name(rc).c_str());
    return 1;
  }
  std::fflush(stdout);
  std::printf("END\n");
  std::fflush(stdout);
  clReleaseMemObject(mem);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}

// Holds a context, a queue and three buffers, reports its object counts, then runs
// vector adds until its stdin says STOP; releases everything and checks its counts are 0.
FERRY_IT_CHILD(busy_session) {
  cl_device_id device = child_ferry_device();
  if (device == nullptr) return 3;
  cl_platform_id platform = nullptr;
  clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr);
  cl_int rc = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  std::vector<cl_mem> held;
  for (int i = 0; i < 3 && rc == CL_SUCCESS; ++i) held.push_back(clCreateBuffer(context, CL_MEM_READ_WRITE, 1024, nullptr, &rc));
  if (rc != CL_SUCCESS) {
    std::fprintf(stderr, "child: setup: %s\n", cl_error_name(rc).c_str());
    return 1;
  }
  auto counts = object_counts(platform, device, &rc);
  if (!self_check && !counts) {
    std::fprintf(stderr, "child: clFerryGetObjectCounts: %s\n", cl_error_name(rc).c_str());
    return 1;
  }
  std::printf("HOLDING client=%llu server=%llu\n", counts ? static_cast<unsigned long long>(counts->client_objects) : 0ull,
              counts ? static_cast<unsigned long long>(counts->server_objects) : 0ull);
  std::fflush(stdout);
  int iterations = 0;
  for (;;) {
    const std::string error = run_vector_add(device, 8192, 2.0f + static_cast<float>(iterations));
    if (!error.empty()) {
      std::fprintf(stderr, "child: vector add %d: %s\n", iterations, error.c_str());
      return 1;
    }
    ++iterations;
    pollfd pfd{STDIN_FILENO, POLLIN, 0};
    if (::poll(&pfd, 1, 0) > 0) break;  // STOP (or the parent went away)
  }
  for (cl_mem m : held) clReleaseMemObject(m);
  clReleaseContext(context);
  counts = object_counts(platform, device, &rc);
  if (counts && (counts->client_objects != 0 || counts->server_objects != 0)) {
    std::fprintf(stderr, "child: leaked client=%llu server=%llu\n", static_cast<unsigned long long>(counts->client_objects),
                 static_cast<unsigned long long>(counts->server_objects));
    return 1;
  }
  std::printf("DONE iterations=%d\n", iterations);
  return 0;
}

using sessions = ferry_test;

TEST_F(sessions, kernel_printf_output_arrives_on_the_client_stdout) {
  child_process child = spawn_self("printf_kernel");
  const std::string out = child.read_all(clock::now() + child_timeout);
  ASSERT_FALSE(child.timed_out()) << "the child did not finish; output so far:\n" << out;
  const auto status = child.wait(clock::now() + child_timeout);
  ASSERT_TRUE(status.has_value());
  ASSERT_TRUE(exited_with(*status, 0)) << describe_wait_status(*status) << "\n" << out;
  const size_t begin = out.find("BEGIN\n"), end = out.find("END\n");
  ASSERT_NE(begin, std::string::npos) << out;
  ASSERT_NE(end, std::string::npos) << out;
  for (int i = 0; i < 4; ++i) {
    const std::string line = "ferry printf " + std::to_string(i) + " of 4: " + std::to_string(10 * i) + " 3.50 hello\n";
    const size_t at = out.find(line);
    ASSERT_NE(at, std::string::npos) << "missing \"" << line << "\" in:\n" << out;
    EXPECT_EQ(out.find(line, at + 1), std::string::npos) << "printed twice: " << line;
    // Output of a finished kernel is on stdout by the time clFinish returns.
    EXPECT_GT(at, begin) << out;
    EXPECT_LT(at, end) << out;
  }
}

TEST_F(sessions, two_client_processes_get_isolated_sessions) {
  cl_int rc = CL_SUCCESS;
  const auto before = object_counts(platform_, device_, &rc);
  if constexpr (!self_check) {
    ASSERT_TRUE(before.has_value()) << cl_error_name(rc);
  }
  child_process child = spawn_self("busy_session", {}, {}, /*pipe_stdin=*/true);
  const auto deadline = clock::now() + child_timeout;
  auto holding = child.read_line(deadline);
  ASSERT_TRUE(holding.has_value()) << (child.timed_out() ? "timed out" : "child exited");
  unsigned long long child_client = 0, child_server = 0;
  ASSERT_EQ(std::sscanf(holding->c_str(), "HOLDING client=%llu server=%llu", &child_client, &child_server), 2) << *holding;
  if constexpr (!self_check) {
    // The child counts its own objects (context + 3 buffers), not ours; we do not see its.
    EXPECT_GE(child_client, 4u);
    EXPECT_GE(child_server, 4u);
    const auto during = object_counts(platform_, device_, &rc);
    ASSERT_TRUE(during.has_value());
    EXPECT_EQ(during->client_objects, before->client_objects);
    EXPECT_EQ(during->server_objects, before->server_objects);
  }
  // Both sessions compute at once.
  for (int i = 0; i < 3; ++i) {
    const std::string error = run_vector_add(device_, 4096, 1.0f + static_cast<float>(i));
    EXPECT_EQ(error, "") << "parent vector add " << i;
  }
  child.write_stdin("STOP\n");
  child.close_stdin();
  auto done = child.read_line(deadline);
  ASSERT_TRUE(done.has_value()) << "no DONE line from the child";
  int iterations = 0;
  EXPECT_EQ(std::sscanf(done->c_str(), "DONE iterations=%d", &iterations), 1) << *done;
  EXPECT_GE(iterations, 1);
  const auto status = child.wait(deadline);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(exited_with(*status, 0)) << describe_wait_status(*status);
}

TEST_F(sessions, hostile_connections_are_closed_and_good_clients_keep_working) {
  if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
  ASSERT_NE(suite_daemon(), nullptr);
  const std::uint16_t port = suite_daemon()->port();
  ASSERT_EQ(run_vector_add(device_, 2048, 3.0f), "");

  // A connection that stalls inside a header stays open the whole time; the daemon must
  // keep serving everyone else meanwhile.
  raw_connection stalled(port);
  ASSERT_TRUE(stalled.connected());
  ASSERT_TRUE(stalled.send({0x10, 0x00, 0x00}));

  std::mt19937 random(20240601);
  std::vector<unsigned char> noise(4096);
  for (auto& b : noise) b = static_cast<unsigned char>(random());
  std::vector<unsigned char> http = {'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P', '/', '1', '.', '1', '\r', '\n', '\r', '\n'};
  auto with_payload = [](std::vector<unsigned char> header, size_t size, unsigned char fill) {
    header.insert(header.end(), size, fill);
    return header;
  };
  const std::pair<const char*, std::vector<unsigned char>> hostile[] = {
      {"random bytes", noise},
      {"an HTTP request", http},
      {"a 4 GiB hello", frame_header(0xffffffffu, 1, 0)},
      {"an unknown first message", with_payload(frame_header(16, 0xffff, 0), 16, 0)},
      {"a hello with reserved flags", with_payload(frame_header(16, 1, 0xffff), 16, 0)},
      {"a hello with a garbage body", with_payload(frame_header(64, 1, 0), 64, 0xff)},
      {"a hello announcing a huge array", with_payload(frame_header(64, 1, 0), 64, 0x7f)},
  };
  for (const auto& [what, bytes] : hostile) {
    SCOPED_TRACE(what);
    raw_connection raw(port);
    ASSERT_TRUE(raw.connected());
    raw.send(bytes);
    EXPECT_TRUE(raw.closed_by_peer(clock::now() + std::chrono::seconds(10))) << "the daemon kept the connection open";
  }
  // A connection that closes halfway through a header.
  {
    raw_connection raw(port);
    ASSERT_TRUE(raw.send({0x01, 0x02}));
  }
  // The good client, its existing context and queue included, still works.
  ASSERT_EQ(run_vector_add(device_, 2048, 5.0f), "");
  auto program = build(kernels::basics);
  ASSERT_TRUE(program);
  auto kernel = create_kernel(program, "iota");
  auto mem = buffer(CL_MEM_READ_WRITE, 64 * sizeof(cl_int));
  cl_mem m = mem;
  const cl_int base = 9;
  ASSERT_CL_OK(clSetKernelArg(kernel, 0, sizeof m, &m));
  ASSERT_CL_OK(clSetKernelArg(kernel, 1, sizeof base, &base));
  const size_t n = 64;
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
  std::vector<cl_int> out(n);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, n * sizeof(cl_int), out.data(), 0, nullptr, nullptr));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], base + static_cast<cl_int>(i));
}

}  // namespace ferry::test
