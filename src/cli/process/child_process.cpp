#include "cli/process/child_process.hpp"

#include "common/wait_status.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

namespace ferry::cli {

namespace {

// posix_spawn's attributes and file actions, released on every path.
struct spawn_attributes {
  posix_spawnattr_t attr;
  spawn_attributes() { posix_spawnattr_init(&attr); }
  ~spawn_attributes() { posix_spawnattr_destroy(&attr); }
  spawn_attributes(const spawn_attributes&) = delete;
  spawn_attributes& operator=(const spawn_attributes&) = delete;
};

}  // namespace

outcome<pid_t, spawn_error> spawn_program(const std::vector<std::string>& argv, environment& env) {
  if (argv.empty()) return failure(spawn_error{EINVAL, "no program given"});

  spawn_attributes attributes;
  // The program must not inherit the handlers' effects: reset what we catch to the
  // default and give it an empty mask even if the caller blocked signals around the call.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attributes.attr, &defaults);
  posix_spawnattr_setsigmask(&attributes.attr, &empty);
  posix_spawnattr_setflags(&attributes.attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp = env.envp();

  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], nullptr, &attributes.attr, args.data(), envp.data());
  if (rc != 0) {
    return failure(spawn_error{rc, "cannot run '" + argv[0] + "': " + std::strerror(rc)});
  }
  return pid;
}

int wait_for_exit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 0;
  }
  return status;
}

std::optional<int> wait_for_exit(pid_t pid, std::chrono::milliseconds timeout) {
  // No portable way to wait on a pid with a timeout before pidfd; poll with a short step.
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return 0;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

std::string describe_wait_status(int wait_status) {
  const std::string text = ferry::describe_wait_status(wait_status);
  return WIFSIGNALED(wait_status) ? "was " + text : text;
}

}  // namespace ferry::cli
