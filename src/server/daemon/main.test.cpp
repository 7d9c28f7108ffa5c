// Tests of the ferryd executable itself: flags, exit codes, the READY line,
// the Unix socket, kernel printf through the real stdout pipe, SIGTERM.
// They run the ferryd built next to this test binary and are skipped when it
// is not there (e.g. only ferry_unit_tests was built).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CL/cl.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/testing/test_client.hpp"

namespace ferry::server {
namespace {

namespace p = protocol;
using testing::client;

std::filesystem::path ferryd_path() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : self.parent_path() / "ferryd";
}

// A running ferryd with pipes from its stdout and stderr.
class daemon_process {
 public:
  explicit daemon_process(std::vector<std::string> args) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], STDOUT_FILENO);
      ::dup2(err[1], STDERR_FILENO);
      std::vector<char*> argv;
      std::string path = ferryd_path();
      argv.push_back(path.data());
      for (auto& a : args) argv.push_back(a.data());
      // FERRY_TEST_PLATFORM picks the native platform to test on (default: any).
      std::string platform_flag = "--platform";
      std::string platform = std::getenv("FERRY_TEST_PLATFORM") ? std::getenv("FERRY_TEST_PLATFORM") : "";
      bool has_platform = false;
      for (auto& a : args) has_platform = has_platform || a == "--platform";
      if (!platform.empty() && !has_platform && !args.empty() && args[0] != "--help") {
        argv.push_back(platform_flag.data());
        argv.push_back(platform.data());
      }
      argv.push_back(nullptr);
      ::execv(path.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    out_ = out[0];
    err_ = err[0];
  }
  ~daemon_process() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      wait();
    }
    if (out_ >= 0) ::close(out_);
    if (err_ >= 0) ::close(err_);
  }

  /// The first stdout line, or nothing on timeout/EOF.
  std::optional<std::string> read_line(int timeout_ms = 60000) {
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd pfd{out_, POLLIN, 0};
      if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      char c;
      if (::read(out_, &c, 1) != 1) return std::nullopt;
      if (c == '\n') return line;
      line += c;
    }
  }
  std::optional<uint16_t> ready_port() {
    auto line = read_line();
    if (!line || line->rfind("READY ", 0) != 0) return std::nullopt;
    return static_cast<uint16_t>(std::stoi(line->substr(6)));
  }
  /// Waits for the exit (SIGKILL after `timeout_ms`); returns the wait status.
  int wait(int timeout_ms = 60000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!status_) {
      int status = 0;
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        status_ = status;
        break;
      }
      if (r < 0 && errno != EINTR) break;
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "ferryd did not exit in time; killing it";
        ::kill(pid_, SIGKILL);
        deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return status_.value_or(-1);
  }
  std::string stderr_text() {
    std::string text;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(err_, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
    return text;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  int err_ = -1;
  std::optional<int> status_;
};

class ferryd_binary : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(ferryd_path())) GTEST_SKIP() << "ferryd is not built next to the tests";
  }
};

TEST_F(ferryd_binary, bad_flags_exit_2_with_a_message) {
  daemon_process d({"--port", "http"});
  int status = d.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(d.stderr_text().find("--port"), std::string::npos);
}

TEST_F(ferryd_binary, a_bad_peer_address_exits_2_and_a_good_one_is_announced_with_the_real_port) {
  {
    daemon_process d({"--port", "0", "--peer-address", "node7:notaport"});
    int status = d.wait();
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2);
    EXPECT_NE(d.stderr_text().find("--peer-address"), std::string::npos) << d.stderr_text();
  }
  daemon_process d({"--port", "0", "--peer-address", "127.0.0.1", "--log-level", "warn"});
  auto port = d.ready_port();
  ASSERT_TRUE(port) << d.stderr_text();
  client c;
  ASSERT_TRUE(c.open(*port, false));
  ASSERT_TRUE(c.send(p::get_server_info{1}));
  auto info = c.wait_reply<p::server_info>();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->peer_address, "127.0.0.1:" + std::to_string(*port));
}

TEST_F(ferryd_binary, the_network_without_a_token_and_unusable_security_files_are_refused_at_start) {
  {
    daemon_process d({"--port", "0", "--listen", "0.0.0.0"});
    int status = d.wait();
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2);
    EXPECT_NE(d.stderr_text().find("--insecure-listen"), std::string::npos) << d.stderr_text();
  }
  {
    daemon_process d({"--port", "0", "--token-file", "/nonexistent/ferry-token"});
    int status = d.wait();
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);
    EXPECT_NE(d.stderr_text().find("cannot read the token file"), std::string::npos) << d.stderr_text();
  }
  {
    daemon_process d({"--port", "0", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"});
    int status = d.wait();
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);
    EXPECT_NE(d.stderr_text().find("cannot load the certificate"), std::string::npos) << d.stderr_text();
  }
}

TEST_F(ferryd_binary, a_file_root_that_is_no_directory_is_refused_at_start) {
  for (const char* root : {"/nonexistent/ferry-files", "/etc/hostname"}) {
    SCOPED_TRACE(root);
    daemon_process d({"--port", "0", "--file-root", root});
    int status = d.wait();
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);
    EXPECT_NE(d.stderr_text().find("is no directory"), std::string::npos) << d.stderr_text();
  }
}

TEST_F(ferryd_binary, help_exits_0) {
  daemon_process d({"--help"});
  auto first = d.read_line();
  ASSERT_TRUE(first);
  EXPECT_NE(first->find("usage"), std::string::npos);
  int status = d.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(ferryd_binary, no_matching_device_exits_1_naming_what_it_saw) {
  daemon_process d({"--port", "0", "--platform", "no-such-platform-anywhere"});
  int status = d.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::string text = d.stderr_text();
  EXPECT_NE(text.find("no-such-platform-anywhere"), std::string::npos) << text;
  EXPECT_NE(text.find("platforms seen"), std::string::npos) << text;
}

TEST_F(ferryd_binary, a_worker_that_is_never_ready_in_time_stops_the_start_with_the_reason) {
  // No worker loads PoCL within a millisecond: the first one is ended, and so is the daemon.
  daemon_process d({"--port", "0", "--worker-start-timeout", "0.001"});
  int status = d.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::string text = d.stderr_text();
  EXPECT_NE(text.find("not ready within the start timeout (--worker-start-timeout)"), std::string::npos) << text;
}

TEST_F(ferryd_binary, list_devices_numbers_the_matching_devices_and_exits_0) {
  daemon_process d({"--device-type", "cpu", "--list-devices", "--log-level", "warn"});
  auto first = d.read_line();
  ASSERT_TRUE(first) << d.stderr_text();
  EXPECT_EQ(first->rfind("0: cpu, ", 0), 0u) << *first;
  EXPECT_NE(first->find(" GiB ("), std::string::npos) << *first;
  int status = d.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(ferryd_binary, a_device_that_is_not_there_exits_1_listing_those_that_are) {
  daemon_process d({"--port", "0", "--device-type", "cpu", "--device", "0,7"});
  int status = d.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::string text = d.stderr_text();
  EXPECT_NE(text.find("--device 7: only"), std::string::npos) << text;
  EXPECT_NE(text.find("--device-type cpu:"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  0: cpu, "), std::string::npos) << text;
}

TEST_F(ferryd_binary, a_gpu_asked_for_on_a_host_without_one_names_the_missing_driver) {
  daemon_process d({"--port", "0", "--device-type", "gpu", "--log-level", "warn"});
  if (d.ready_port()) GTEST_SKIP() << "this host has an OpenCL GPU";
  int status = d.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::string text = d.stderr_text();
  EXPECT_NE(text.find("no OpenCL device matches --device-type gpu"), std::string::npos) << text;
  EXPECT_NE(text.find("libnvidia-opencl.so.1"), std::string::npos) << text;
}

TEST_F(ferryd_binary, serves_tcp_and_unix_then_stops_cleanly_on_sigterm) {
  std::string socket_path = "/tmp/ferryd-test-" + std::to_string(::getpid()) + ".sock";
  daemon_process d({"--port", "0", "--unix", socket_path, "--log-level", "warn"});
  auto port = d.ready_port();
  ASSERT_TRUE(port) << d.stderr_text();
  client c;
  ASSERT_TRUE(c.open(*port));
  ASSERT_TRUE(c.send(p::create_context{1, {0}}));
  ASSERT_TRUE(c.send(p::ping{5}));
  EXPECT_EQ(c.wait_reply<p::pong>()->request, 5u);

  endpoint unix_endpoint;
  std::string error;
  ASSERT_TRUE(parse_endpoint("unix:" + socket_path, 0, unix_endpoint, error)) << error;
  testing::connection u(connect_endpoint(unix_endpoint, 5000, error));
  ASSERT_TRUE(u.valid()) << error;
  ASSERT_TRUE(u.send(testing::make_hello(p::stream_kind::control)));
  EXPECT_TRUE(u.expect<p::welcome>());

  ASSERT_EQ(::kill(d.pid(), SIGTERM), 0);
  int status = d.wait();
  ASSERT_TRUE(WIFEXITED(status)) << "ferryd died of a signal";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(c.control.closed_by_peer(1000));
  EXPECT_FALSE(std::filesystem::exists(socket_path)) << "the Unix socket file was left behind";
}

TEST_F(ferryd_binary, kernel_printf_is_forwarded_and_ready_stays_alone_on_stdout) {
  daemon_process d({"--port", "0", "--device-type", "all"});
  auto port = d.ready_port();
  ASSERT_TRUE(port) << d.stderr_text();
  client c;
  ASSERT_TRUE(c.open(*port));
  c.send(p::create_context{1, {0}});
  c.send(p::create_queue{2, 1, 0, 0});
  c.send(p::create_program_with_source{10, 1, "kernel void hi() { printf(\"from kernel %d\\n\", 7); }"});
  c.send(p::build_program{1, 10, {}, "", {}});
  auto built = c.wait_reply<p::build_reply>(120000);
  ASSERT_TRUE(built);
  ASSERT_EQ(built->status, CL_SUCCESS);
  c.send(p::create_kernel{2, 11, 10, "hi"});
  ASSERT_EQ(c.wait_reply<p::kernel_reply>()->status, CL_SUCCESS);
  p::enqueue_ndrange run;
  run.header.command = 90;
  run.header.queue = 2;
  run.header.flags = p::notify;
  run.kernel = 11;
  run.work_dim = 1;
  run.global = {2, 1, 1};
  c.send(run);
  auto done = c.wait_completion(90);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, CL_COMPLETE);
  EXPECT_EQ(c.printf_text, "from kernel 7\nfrom kernel 7\n");
  ASSERT_FALSE(c.printf_seen_at.empty());
  EXPECT_EQ(c.printf_seen_at.front(), 0u);
  ::kill(d.pid(), SIGTERM);
  EXPECT_EQ(d.wait(), 0);
  // Nothing but READY reached the daemon's real stdout.
  EXPECT_FALSE(d.read_line(100).has_value());
}

}  // namespace
}  // namespace ferry::server
