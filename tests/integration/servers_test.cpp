// How libferry finds (or fails to find) its servers. Each case needs its own environment,
// and the loader reads it once per process, so every test runs a child of this executable;
// the parent never calls OpenCL itself.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cl_helpers.hpp"

namespace ferry::test {

suite_config this_suite() {
  suite_config config;
  config.set_loader_env = false;  // children get theirs from each test
  return config;
}

namespace {

constexpr auto child_timeout = std::chrono::seconds(60);

// A fresh empty directory, removed at the end of the test.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ferry-it-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~temp_dir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The environment of a child that reaches Ferry only (not the native platform), with no
// server configuration beyond `servers` and the files in `home`.
std::vector<env_change> child_env(const std::optional<std::string>& servers, const std::string& home) {
  std::vector<env_change> env;
  try {
    env = loader_env(binary_paths(), loader_mode::ferry_only, std::nullopt);
  } catch (const process_error& e) {
    ADD_FAILURE() << e.what();
  }
  env.push_back({"FERRY_SERVERS", servers});
  env.push_back({"FERRY_CONFIG", std::nullopt});
  env.push_back({"HOME", home});
  env.push_back({"XDG_CONFIG_HOME", home + "/.config"});
  return env;
}

struct child_outcome {
  std::string out;
  std::optional<int> status;
  std::chrono::milliseconds elapsed;
};

child_outcome run_child(std::string_view name, std::vector<env_change> env,
                        std::chrono::seconds timeout = child_timeout) {
  const auto start = clock::now();
  child_outcome result;
  try {
    child_process child = spawn_self(name, {}, std::move(env));
    result.out = child.read_all(start + timeout);
    result.status = child.wait(start + timeout);
    if (!result.status) child.kill_and_wait();
  } catch (const process_error& e) {
    ADD_FAILURE() << e.what();
  }
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - start);
  return result;
}

// The report of the device_count child: "platform=<0|1> rc=<code> count=<n>".
struct device_report {
  int platform = -1;
  cl_int rc = 1;
  unsigned count = 0;
};
device_report parse_report(const std::string& out) {
  device_report r;
  const size_t at = out.find("platform=");
  if (at != std::string::npos) std::sscanf(out.c_str() + at, "platform=%d rc=%d count=%u", &r.platform, &r.rc, &r.count);
  return r;
}

// A server that accepts connections and then either says nothing or talks garbage.
class fake_server {
 public:
  enum class behaviour { silent, garbage };
  explicit fake_server(behaviour b) : behaviour_(b) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(fd_, 16) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
      return;
    }
    port_ = ntohs(address.sin_port);
    if (::pipe2(wake_, O_CLOEXEC) != 0) return;
    thread_ = std::thread([this] { serve(); });
  }
  ~fake_server() {
    if (thread_.joinable()) {
      [[maybe_unused]] auto n = ::write(wake_[1], "x", 1);
      thread_.join();
    }
    for (int fd : accepted_) ::close(fd);
    for (int fd : {fd_, wake_[0], wake_[1]})
      if (fd >= 0) ::close(fd);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_.load(); }

 private:
  void serve() {
    for (;;) {
      pollfd pfds[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      if (::poll(pfds, 2, -1) < 0) continue;
      if (pfds[1].revents != 0) return;
      const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      ++connections_;
      if (behaviour_ == behaviour::garbage) {
        const char reply[] = "HTTP/1.1 400 Bad Request\r\n\r\n\xff\xff\xff\xff\x01\x00\x00\x00garbage";
        [[maybe_unused]] auto n = ::send(client, reply, sizeof reply, MSG_NOSIGNAL);
        ::close(client);
      } else {
        accepted_.push_back(client);  // held open, never answered
      }
    }
  }

  behaviour behaviour_;
  int fd_ = -1;
  int wake_[2] = {-1, -1};
  std::uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  std::vector<int> accepted_;  // only the server thread touches it until the join
  std::thread thread_;
};

}  // namespace

// Reports whether the Ferry platform is there and what clGetDeviceIDs says.
FERRY_IT_CHILD(device_count) {
  cl_platform_id platform = find_ferry_platform();
  cl_uint count = 0;
  const cl_int rc = platform ? clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) : CL_INVALID_PLATFORM;
  std::printf("platform=%d rc=%d count=%u\n", platform != nullptr, rc, count);
  return 0;
}

// Runs a vector add on the Ferry platform's first device.
FERRY_IT_CHILD(vector_add) {
  cl_platform_id platform = find_ferry_platform();
  if (platform == nullptr) {
    std::printf("no Ferry platform\n");
    return 3;
  }
  auto devices = platform_devices(platform);
  if (devices.empty()) {
    std::printf("no devices\n");
    return 4;
  }
  const std::string error = run_vector_add(devices.front(), 10000, 1.5f);
  std::printf("%s\n", error.empty() ? "OK" : error.c_str());
  return error.empty() ? 0 : 1;
}

// Writes more than a shared-memory window holds (40 MiB and a bit: more
// chunks than the window has slots), then 3 MiB over it at an odd offset
// without blocking, and reads everything back.
FERRY_IT_CHILD(large_write) {
  cl_platform_id platform = find_ferry_platform();
  CHILD_CHECK(platform != nullptr, "no Ferry platform");
  auto devices = platform_devices(platform);
  CHILD_CHECK(!devices.empty(), "no devices");
  cl_int rc = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &devices.front(), nullptr, nullptr, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateContext: %d", rc);
  cl_command_queue queue = clCreateCommandQueue(context, devices.front(), 0, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateCommandQueue: %d", rc);
  const size_t size = (40u << 20) + 12345, patch_at = (5u << 20) + 7, patch = 3u << 20;
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, size, nullptr, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateBuffer: %d", rc);
  std::vector<uint8_t> expected(size), patch_bytes(patch), got(size, 0);
  for (size_t i = 0; i < size; ++i) expected[i] = static_cast<uint8_t>(i * 13 + (i >> 16));
  for (size_t i = 0; i < patch; ++i) patch_bytes[i] = static_cast<uint8_t>(255 - i * 3);
  rc = clEnqueueWriteBuffer(queue, buffer, CL_TRUE, 0, size, expected.data(), 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS, "clEnqueueWriteBuffer: %d", rc);
  rc = clEnqueueWriteBuffer(queue, buffer, CL_FALSE, patch_at, patch, patch_bytes.data(), 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS, "clEnqueueWriteBuffer (patch): %d", rc);
  rc = clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, size, got.data(), 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS, "clEnqueueReadBuffer: %d", rc);
  std::copy(patch_bytes.begin(), patch_bytes.end(), expected.begin() + patch_at);
  size_t first_wrong = size;
  for (size_t i = 0; i < size && first_wrong == size; ++i)
    if (got[i] != expected[i]) first_wrong = i;
  CHILD_CHECK(first_wrong == size, "byte %zu is %d, expected %d", first_wrong, got[first_wrong],
              expected[first_wrong]);
  clReleaseMemObject(buffer);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  std::printf("OK\n");
  return 0;
}

// Reads more than a read window holds (100 MiB and a bit, in pieces), an
// odd range at an odd offset without blocking, and a small read, each
// checked byte for byte against what was written.
FERRY_IT_CHILD(large_read) {
  cl_platform_id platform = find_ferry_platform();
  CHILD_CHECK(platform != nullptr, "no Ferry platform");
  auto devices = platform_devices(platform);
  CHILD_CHECK(!devices.empty(), "no devices");
  cl_int rc = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &devices.front(), nullptr, nullptr, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateContext: %d", rc);
  cl_command_queue queue = clCreateCommandQueue(context, devices.front(), 0, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateCommandQueue: %d", rc);
  const size_t size = (100u << 20) + 4097;
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, size, nullptr, &rc);
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateBuffer: %d", rc);
  std::vector<uint8_t> expected(size);
  for (size_t i = 0; i < size; ++i) expected[i] = static_cast<uint8_t>(i * 29 + (i >> 12));
  rc = clEnqueueWriteBuffer(queue, buffer, CL_TRUE, 0, size, expected.data(), 0, nullptr, nullptr);
  CHILD_CHECK(rc == CL_SUCCESS, "clEnqueueWriteBuffer: %d", rc);
  struct range {
    size_t offset, size;
    cl_bool blocking;
  };
  // Twice the whole buffer: the first read's full chunks make the client offer its window.
  for (range r : {range{0, size, CL_TRUE}, range{0, size, CL_TRUE}, range{(7u << 20) + 3, (33u << 20) + 17, CL_FALSE},
                  range{size - 100, 100, CL_TRUE}}) {
    std::vector<uint8_t> got(r.size, 0);
    cl_event done = nullptr;
    rc = clEnqueueReadBuffer(queue, buffer, r.blocking, r.offset, r.size, got.data(), 0, nullptr, &done);
    CHILD_CHECK(rc == CL_SUCCESS, "clEnqueueReadBuffer at %zu of %zu bytes: %d", r.offset, r.size, rc);
    rc = clWaitForEvents(1, &done);
    CHILD_CHECK(rc == CL_SUCCESS, "clWaitForEvents: %d", rc);
    clReleaseEvent(done);
    size_t first_wrong = r.size;
    for (size_t i = 0; i < r.size && first_wrong == r.size; ++i)
      if (got[i] != expected[r.offset + i]) first_wrong = i;
    CHILD_CHECK(first_wrong == r.size, "read at %zu: byte %zu is %d, expected %d", r.offset, first_wrong,
                first_wrong < r.size ? got[first_wrong] : 0, first_wrong < r.size ? expected[r.offset + first_wrong] : 0);
  }
  clReleaseMemObject(buffer);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  std::printf("OK\n");
  return 0;
}

class servers : public ::testing::Test {
 protected:
  void SetUp() override {
    if constexpr (self_check) GTEST_SKIP() << "needs libferry and ferryd";
    ASSERT_NE(suite_daemon(), nullptr);
    ASSERT_FALSE(home_.path().empty());
  }
  void expect_no_devices(const std::optional<std::string>& servers, std::chrono::seconds within) {
    auto result = run_child("device_count", child_env(servers, home_.path()), within);
    ASSERT_TRUE(result.status.has_value()) << "the child hung for " << within.count() << " s:\n" << result.out;
    ASSERT_TRUE(exited_with(*result.status, 0)) << describe_wait_status(*result.status) << "\n" << result.out;
    const device_report r = parse_report(result.out);
    EXPECT_EQ(r.platform, 1) << "the Ferry platform must exist even without servers:\n" << result.out;
    // CL_DEVICE_NOT_FOUND if no OpenCL devices that matched device_type were found.
    EXPECT_CL(CL_DEVICE_NOT_FOUND, r.rc) << result.out;
    EXPECT_EQ(r.count, 0u);
  }
  void expect_vector_add_works(std::vector<env_change> env) {
    auto result = run_child("vector_add", std::move(env));
    ASSERT_TRUE(result.status.has_value()) << "the child hung:\n" << result.out;
    EXPECT_TRUE(exited_with(*result.status, 0)) << describe_wait_status(*result.status) << "\n" << result.out;
    EXPECT_EQ(result.out, "OK\n");
  }

  temp_dir home_;
};

TEST_F(servers, no_server_configured_means_no_devices) {
  ASSERT_NO_FATAL_FAILURE(expect_no_devices(std::nullopt, std::chrono::seconds(30)));
  // FERRY_CONFIG naming a missing file is no configuration either.
  auto env = child_env(std::nullopt, home_.path());
  env.push_back({"FERRY_CONFIG", "/nonexistent/ferry/config"});
  auto result = run_child("device_count", env, std::chrono::seconds(30));
  ASSERT_TRUE(result.status.has_value()) << result.out;
  EXPECT_CL(CL_DEVICE_NOT_FOUND, parse_report(result.out).rc) << result.out;
}

TEST_F(servers, unreachable_server_means_no_devices_without_hanging) {
  ASSERT_NO_FATAL_FAILURE(expect_no_devices("127.0.0.1:1", std::chrono::seconds(20)));
}

TEST_F(servers, garbage_speaking_server_means_no_devices) {
  fake_server fake(fake_server::behaviour::garbage);
  ASSERT_NO_FATAL_FAILURE(expect_no_devices(fake.address(), std::chrono::seconds(20)));
  EXPECT_GE(fake.connections(), 1);
}

TEST_F(servers, silent_server_times_out_instead_of_hanging) {
  fake_server fake(fake_server::behaviour::silent);
  ASSERT_NO_FATAL_FAILURE(expect_no_devices(fake.address(), std::chrono::seconds(30)));
  EXPECT_GE(fake.connections(), 1);
}

TEST_F(servers, unreachable_entries_do_not_hide_reachable_ones) {
  auto env = child_env("127.0.0.1:1," + suite_daemon()->address(), home_.path());
  ASSERT_NO_FATAL_FAILURE(expect_vector_add_works(env));
}

TEST_F(servers, config_file_names_the_server) {
  const std::string file = home_.path() + "/ferry.conf";
  std::ofstream(file) << "# test configuration\n\nserver " << suite_daemon()->address() << "\n";
  auto env = child_env(std::nullopt, home_.path());
  env.push_back({"FERRY_CONFIG", file});
  ASSERT_NO_FATAL_FAILURE(expect_vector_add_works(env));
}

TEST_F(servers, xdg_config_home_is_read_when_nothing_else_is_set) {
  std::filesystem::create_directories(home_.path() + "/.config/ferry");
  std::ofstream(home_.path() + "/.config/ferry/config") << "server " << suite_daemon()->address() << "  # the test daemon\n";
  ASSERT_NO_FATAL_FAILURE(expect_vector_add_works(child_env(std::nullopt, home_.path())));
}

TEST_F(servers, unix_socket_servers_work) {
  const std::string socket_path = home_.path() + "/ferryd.sock";
  daemon unix_daemon({"--unix", socket_path});
  ASSERT_TRUE(unix_daemon.started());
  ASSERT_NO_FATAL_FAILURE(expect_vector_add_works(child_env("unix:" + socket_path, home_.path())));
}

// Runs child `program` against a daemon on a Unix socket, with the shared-memory
// windows and then with FERRY_BULK_WINDOW=0: both must succeed, and the daemon's log
// must say `shared` ("shares a bulk window", "shares a read window") once, for the
// first run only.
void expect_one_window_shared(const temp_dir& home, const std::string& program, const std::string& shared) {
  const std::string socket_path = home.path() + "/ferryd.sock", log = home.path() + "/ferryd.log";
  auto shared_windows = [&] {
    std::ifstream in(log);
    std::string line;
    int count = 0;
    while (std::getline(in, line)) count += line.find(shared) != std::string::npos;
    return count;
  };
  daemon unix_daemon({"--unix", socket_path, "--log-level", "info"}, log);
  ASSERT_TRUE(unix_daemon.started());
  auto result = run_child(program, child_env("unix:" + socket_path, home.path()));
  ASSERT_TRUE(result.status.has_value()) << "the child hung:\n" << result.out;
  EXPECT_TRUE(exited_with(*result.status, 0)) << describe_wait_status(*result.status) << "\n" << result.out;
  EXPECT_EQ(result.out, "OK\n");
  EXPECT_EQ(shared_windows(), 1) << "the client did not share the window (" << shared << "):\n" << read_file(log);
  // FERRY_BULK_WINDOW=0: the same bytes, on the socket.
  auto env = child_env("unix:" + socket_path, home.path());
  env.push_back({"FERRY_BULK_WINDOW", "0"});
  result = run_child(program, env);
  ASSERT_TRUE(result.status.has_value()) << "the child hung:\n" << result.out;
  EXPECT_TRUE(exited_with(*result.status, 0)) << describe_wait_status(*result.status) << "\n" << result.out;
  EXPECT_EQ(result.out, "OK\n");
  EXPECT_EQ(shared_windows(), 1) << "FERRY_BULK_WINDOW=0 shared a window (" << shared << "):\n" << read_file(log);
}

TEST_F(servers, large_writes_to_a_daemon_on_a_unix_socket_go_through_shared_memory) {
  expect_one_window_shared(home_, "large_write", "shares a bulk window");
}

TEST_F(servers, large_reads_from_a_daemon_on_a_unix_socket_come_through_a_read_window) {
  expect_one_window_shared(home_, "large_read", "shares a read window");
}

TEST_F(servers, large_reads_over_tcp_arrive_byte_for_byte) {
  daemon tcp_daemon;
  ASSERT_TRUE(tcp_daemon.started());
  auto result = run_child("large_read", child_env(tcp_daemon.address(), home_.path()));
  ASSERT_TRUE(result.status.has_value()) << "the child hung:\n" << result.out;
  EXPECT_TRUE(exited_with(*result.status, 0)) << describe_wait_status(*result.status) << "\n" << result.out;
  EXPECT_EQ(result.out, "OK\n");
}

TEST_F(servers, daemon_rejects_bad_flags_with_status_2) {
  spawn_options opts;
  opts.argv = {binary_paths().ferryd(), "--port", "0", "--no-such-flag"};
  child_process child = child_process::spawn(opts);
  const std::string out = child.read_all(clock::now() + std::chrono::seconds(20));
  const auto status = child.wait(clock::now() + std::chrono::seconds(20));
  ASSERT_TRUE(status.has_value()) << "ferryd kept running with a bad flag";
  EXPECT_TRUE(exited_with(*status, 2)) << describe_wait_status(*status);
  EXPECT_EQ(out.find("READY"), std::string::npos) << "a daemon with a bad flag must not start listening";
}

}  // namespace ferry::test
