// gtest side of the integration harness: one ferryd per test executable, the loader
// environment set before the first OpenCL call, and child processes of the test
// executable itself (for tests that need a second client or a different environment).
//
// Every integration executable links suite_main.cpp and defines this_suite(). The
// loaders (ocl-icd, Khronos) read their variables once per process, which is why the
// environment, and so the daemon, belongs to the process rather than to one test.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "process.hpp"

namespace ferry::test {

/// True only in a developer's scratch build of these tests (FERRY_IT_SELF_CHECK), where
/// "Ferry" resolves to the native platform and no daemon runs, to check the tests'
/// own expectations against PoCL. tests/CMakeLists.txt never defines it.
#ifdef FERRY_IT_SELF_CHECK
inline constexpr bool self_check = true;
#else
inline constexpr bool self_check = false;
#endif

/// build/P: FERRY_BINARY_DIR from the environment, else the directory this executable was
/// configured in.
build_paths binary_paths();

/// A ferryd started with "--port 0 [extra_args]" for the lifetime of this object. Failures
/// to start, a non-zero exit status, or a daemon that ignores SIGTERM are test failures.
class daemon {
 public:
  /// `log_path`: where the daemon's stderr (its log) goes; empty: this process's stderr.
  /// `env`: changes to the daemon's environment (after the loader's).
  explicit daemon(std::vector<std::string> extra_args = {}, std::string log_path = {},
                  std::vector<env_change> env = {});
  ~daemon();
  daemon(const daemon&) = delete;
  daemon& operator=(const daemon&) = delete;

  bool started() const { return process_ != nullptr; }
  /// The daemon's main process.
  pid_t pid() const;
  std::uint16_t port() const;
  /// "127.0.0.1:<port>", the value for FERRY_SERVERS.
  std::string address() const;
  /// Sends SIGTERM and checks the daemon exits with status 0 (ADD_FAILURE otherwise).
  void stop();

 private:
  std::unique_ptr<daemon_process> process_;
};

/// The whole of a text file (a daemon's log); empty when it cannot be read.
std::string read_file(const std::string& path);

/// Sets FERRY_SERVERS, OCL_ICD_VENDORS and OCL_ICD_FILENAMES in this process. Must run before
/// the first OpenCL call; fails the test (ADD_FAILURE) when the build tree lacks libferry.
void set_ferry_env(loader_mode mode, const std::string& servers);

/// What an integration executable needs from its process. Each executable defines
/// this_suite() once.
struct suite_config {
  loader_mode loader = loader_mode::ferry_only;
  /// Start one ferryd for the whole executable and point FERRY_SERVERS at it.
  bool start_daemon = true;
  /// Point the loader at Ferry in this process. Off for suites whose parent process never
  /// calls OpenCL and only runs children with environments of their own.
  bool set_loader_env = true;
  std::vector<std::string> daemon_args;
  /// Changes to the daemons' environment.
  std::vector<env_change> daemon_env;
  /// How many daemons to start (with the same arguments); FERRY_SERVERS lists them all,
  /// in order.
  int daemon_count = 1;
};
suite_config this_suite();

/// The daemon of this executable (nullptr when the suite runs none, or in self-check mode);
/// with several, the first.
daemon* suite_daemon();
/// Every daemon of this executable, in FERRY_SERVERS order.
std::vector<daemon*> suite_daemons();

/// A child entry point: runs in a fresh process of this executable, started by
/// spawn_self(). Returns the process exit status.
using child_main = int (*)(const std::vector<std::string>& args);

struct child_registration {
  child_registration(const char* name, child_main main);
};

/// Defines a child entry point named `name`.
#define FERRY_IT_CHILD(name)                                                            \
  static int ferry_it_child_##name(const std::vector<std::string>& args);               \
  static const ::ferry::test::child_registration ferry_it_child_registration_##name(    \
      #name, &ferry_it_child_##name);                                                   \
  static int ferry_it_child_##name([[maybe_unused]] const std::vector<std::string>& args)

/// In a child entry point: reports a failed check on stdout (the parent shows it) and
/// makes the child exit with status 1.
#define CHILD_CHECK(condition, ...)          \
  do {                                       \
    if (!(condition)) {                      \
      std::printf("FAIL %s: ", #condition);  \
      std::printf(__VA_ARGS__);              \
      std::printf(" (line %d)\n", __LINE__); \
      std::fflush(stdout);                   \
      return 1;                              \
    }                                        \
  } while (0)

/// Starts this executable as a child running the entry point `name`. The child inherits this
/// process's environment (so the same FERRY_SERVERS) with `env` applied on top.
child_process spawn_self(std::string_view name, std::vector<std::string> args = {},
                         std::vector<env_change> env = {}, bool pipe_stdin = false);

/// Runs the child entry point `name` (with this process's environment plus `env`) and
/// expects it to exit 0 and print PASS within `timeout`; prints its output.
void expect_child_passes(const char* name, std::chrono::seconds timeout = std::chrono::seconds(240),
                         std::vector<env_change> env = {});

/// Runs the child entry point named in argv, if argv asks for one (used by suite_main).
std::optional<int> run_child_if_requested(int argc, char** argv);

/// Starts the suite's daemon and sets the environment before any test runs.
class suite_environment : public ::testing::Environment {
 public:
  void SetUp() override;
  void TearDown() override;
};

}  // namespace ferry::test
