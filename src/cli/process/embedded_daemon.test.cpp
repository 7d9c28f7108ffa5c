#include "cli/process/embedded_daemon.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>

namespace ferry::cli {
namespace {

// Fake daemons: small shell scripts that behave like ferryd in one way each.
class embedded_daemon_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ferry_cli_daemon_test." + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path script(const std::string& name, const std::string& body,
                               bool executable = true) {
    auto path = dir_ / name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    ::chmod(path.c_str(), executable ? 0755 : 0644);
    return path;
  }

  daemon_options options(const std::filesystem::path& exe) {
    daemon_options o;
    o.executable = exe;
    o.ready_timeout = std::chrono::seconds(20);
    o.stop_grace = std::chrono::seconds(5);
    return o;
  }

  std::filesystem::path dir_;
};

TEST_F(embedded_daemon_test, start_waits_for_ready_and_stop_terminates) {
  auto args_file = dir_ / "args";
  auto exe = script(
      "ready",
      "echo \"$@\" > \"$FAKE_ARGS_FILE\"\necho 'a log line'\necho 'READY 4321'\nexec sleep 300");
  auto o = options(exe);
  o.extra_args = {"--log-level", "debug"};
  environment env = environment::current();
  env.set("FAKE_ARGS_FILE", args_file.string());
  env.unset("FERRY_LOG");  // without it the daemon is asked for warnings only

  auto daemon = embedded_daemon::start(o, env, -1);
  ASSERT_TRUE(daemon) << daemon.error().message;
  EXPECT_EQ(daemon.value().port(), 4321);
  EXPECT_EQ(daemon.value().address(), "127.0.0.1:4321");

  std::stringstream args;
  args << std::ifstream(args_file).rdbuf();
  // Extra arguments come last, so they override the defaults before them.
  EXPECT_EQ(args.str(), "--port 0 --listen 127.0.0.1 --device-type cpu --log-level warn --log-level debug\n");

  int status = daemon.value().stop();
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(daemon.value().stop(), status);  // idempotent
}

TEST_F(embedded_daemon_test, daemon_runs_in_its_own_process_group) {
  auto exe = script("ready", "echo 'READY 1'\nexec sleep 300");
  auto daemon = embedded_daemon::start(options(exe), environment::current(), -1);
  ASSERT_TRUE(daemon) << daemon.error().message;
  EXPECT_EQ(::getpgid(daemon.value().pid()), daemon.value().pid());
}

TEST_F(embedded_daemon_test, early_exit_is_reported_with_its_status) {
  auto exe = script("early", "echo 'bad flag' >&2\nexit 3");
  auto daemon = embedded_daemon::start(options(exe), environment::current(), -1);
  ASSERT_FALSE(daemon);
  EXPECT_NE(daemon.error().message.find("exited with status 3"), std::string::npos)
      << daemon.error().message;
  EXPECT_FALSE(daemon.error().interrupted);
}

TEST_F(embedded_daemon_test, silent_daemon_times_out_and_is_stopped) {
  auto exe = script("silent", "exec sleep 300");
  auto o = options(exe);
  o.ready_timeout = std::chrono::milliseconds(200);
  auto daemon = embedded_daemon::start(o, environment::current(), -1);
  ASSERT_FALSE(daemon);
  EXPECT_NE(daemon.error().message.find("did not report READY"), std::string::npos)
      << daemon.error().message;
}

TEST_F(embedded_daemon_test, readable_interrupt_fd_stops_the_wait) {
  auto exe = script("silent", "exec sleep 300");
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ASSERT_EQ(::write(p[1], "x", 1), 1);
  auto daemon = embedded_daemon::start(options(exe), environment::current(), p[0]);
  ::close(p[0]);
  ::close(p[1]);
  ASSERT_FALSE(daemon);
  EXPECT_TRUE(daemon.error().interrupted);
}

TEST_F(embedded_daemon_test, missing_or_unexecutable_daemon_is_reported) {
  auto missing = embedded_daemon::start(options(dir_ / "nope"), environment::current(), -1);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("does not exist"), std::string::npos);

  auto plain = script("plain", "exit 0", false);
  auto denied = embedded_daemon::start(options(plain), environment::current(), -1);
  ASSERT_FALSE(denied);
  EXPECT_NE(denied.error().message.find("cannot start"), std::string::npos)
      << denied.error().message;
}

}  // namespace
}  // namespace ferry::cli
