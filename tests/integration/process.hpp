// Child processes, ferryd, and the loader environment for integration tests and
// benchmarks. Nothing here depends on gtest, so bench/ compiles this file too.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::test {

using clock = std::chrono::steady_clock;

/// Thrown when a child process cannot be started or misbehaves while starting.
class process_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One change to a child's environment: a value sets the variable, nullopt removes it.
struct env_change {
  std::string name;
  std::optional<std::string> value;
};

/// How to start a child.
struct spawn_options {
  /// argv[0] is the path of the executable (no PATH search).
  std::vector<std::string> argv;
  /// Applied, in order, to a copy of this process's environment.
  std::vector<env_change> env;
  /// Gives the parent a pipe from the child's stdout; otherwise the child inherits it.
  bool capture_stdout = true;
  /// Gives the parent a pipe to the child's stdin; otherwise the child inherits it.
  bool pipe_stdin = false;
  /// Appends the child's stderr to this file; empty: the child inherits stderr.
  std::string stderr_path;
};

/// A child started with fork/exec. The destructor kills (SIGKILL) and reaps a child that
/// is still running, so a failing test never leaves a process behind.
class child_process {
 public:
  /// Starts the child. Throws process_error when fork or exec fails (the exec error is
  /// reported by the child through a close-on-exec pipe, so it is never a silent hang).
  static child_process spawn(const spawn_options& options);

  child_process(child_process&& other) noexcept;
  child_process& operator=(child_process&& other) noexcept;
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;
  ~child_process();

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && !status_; }

  /// Reads one line from the child's stdout, without its '\n'. nullopt at end of file or
  /// when the deadline passes first (see timed_out()).
  std::optional<std::string> read_line(clock::time_point deadline);
  /// Reads the child's stdout until end of file or the deadline.
  std::string read_all(clock::time_point deadline);
  /// True when the last read stopped at its deadline.
  bool timed_out() const { return timed_out_; }

  /// Writes to the child's stdin (spawned with pipe_stdin).
  void write_stdin(std::string_view text);
  void close_stdin();

  /// Hands the stdout pipe over to the caller, who then owns (and closes) it.
  int release_stdout();

  void send_signal(int signal);
  /// Waits until the child exits or the deadline passes; returns the wait status
  /// (as from waitpid) or nullopt on timeout. Uses pidfd + poll, never a sleep loop.
  std::optional<int> wait(clock::time_point deadline);
  /// Sends SIGKILL if still running and reaps the child; returns its wait status.
  int kill_and_wait();

 private:
  child_process() = default;
  void close_fds();

  pid_t pid_ = -1;
  int pidfd_ = -1;
  int stdout_fd_ = -1;
  int stdin_fd_ = -1;
  std::optional<int> status_;
  std::string buffer_;  // stdout bytes read but not yet returned
  bool eof_ = false;
  bool timed_out_ = false;
};

/// "exited with status 3", "killed by signal 9 (SIGKILL, Killed)".
std::string describe_wait_status(int status);
bool exited_with(int status, int code);

/// The path of the running executable (for starting itself as a child).
std::string self_executable();

/// Environment variables that steer the OpenCL loader, as they were when this process
/// started. ferryd gets these back so it serves the native devices, whatever the test
/// process later sets for itself.
std::vector<env_change> startup_loader_env();

/// A running ferryd. Its stdout is drained on a named thread after "READY <port>", so
/// the daemon never blocks on a full pipe.
class daemon_process {
 public:
  struct options {
    std::string binary;                     // path of ferryd
    std::vector<std::string> extra_args;    // appended after "--port 0"
    std::string stderr_path;                // the daemon's log goes here (empty: inherited)
    std::vector<env_change> env;            // applied after the loader's startup environment
    std::chrono::milliseconds ready_timeout{20000};
  };

  /// Starts ferryd with "--port 0" and waits for "READY <port>". Throws process_error
  /// with whatever the daemon printed when it exits or times out first.
  static std::unique_ptr<daemon_process> start(const options& opts);
  ~daemon_process();

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return child_.pid(); }
  /// "127.0.0.1:<port>".
  std::string address() const;

  /// Sends SIGTERM and waits up to `timeout` for the exit; returns the wait status.
  /// Past the timeout the daemon is killed and process_error is thrown.
  int stop(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  bool stopped() const { return !child_.running(); }

  /// What the daemon wrote to stdout after its READY line (complete once stopped).
  std::string stdout_text() const;

 private:
  struct drain;
  daemon_process(child_process child, std::uint16_t port);
  child_process child_;
  std::uint16_t port_;
  std::unique_ptr<drain> drain_;
};

/// Which platforms the loader should offer to this process.
enum class loader_mode {
  /// Only Ferry: OCL_ICD_VENDORS=<bin>/etc/OpenCL/vendors/ferry.icd.
  ferry_only,
  /// Ferry and every native platform: OCL_ICD_VENDORS=<bin>/etc/OpenCL/vendors-all.
  ferry_and_native,
};

/// The paths of a build tree (build/P).
struct build_paths {
  std::string bin_dir;  // build/P
  std::string ferryd() const { return bin_dir + "/bin/ferryd"; }
  std::string libferry() const { return bin_dir + "/lib/libferry.so"; }
  std::string ferry_icd() const { return bin_dir + "/etc/OpenCL/vendors/ferry.icd"; }
  std::string vendors_all() const { return bin_dir + "/etc/OpenCL/vendors-all"; }
};

/// The environment that points both loaders (ocl-icd and Khronos) at Ferry, and Ferry at
/// `servers` (nullopt leaves FERRY_SERVERS alone). Throws process_error when the build
/// tree lacks the files the mode needs.
std::vector<env_change> loader_env(const build_paths& paths, loader_mode mode,
                                   const std::optional<std::string>& servers);

/// `root` and every process below it (from /proc), children after parents: a whole
/// ferryd (its main process and its session workers) for SIGKILL.
std::vector<pid_t> process_tree(pid_t root);

/// Applies changes to this process's environment (setenv/unsetenv). Must happen before the
/// first OpenCL call: the loaders read their variables once per process.
void apply_env(const std::vector<env_change>& changes);

}  // namespace ferry::test
