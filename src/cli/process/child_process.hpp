// Starting and reaping child processes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cli/setup/environment.hpp"
#include "cli/outcome.hpp"

namespace ferry::cli {

/// Why a program could not be started.
struct spawn_error {
  int errno_value = 0;
  std::string message;
};

/// Starts argv[0] (searched in PATH when it has no '/') with `env`, in this process's
/// group, with default signal dispositions and an empty signal mask.
outcome<pid_t, spawn_error> spawn_program(const std::vector<std::string>& argv, environment& env);

/// Waits for `pid` to end and returns its wait status; retries on EINTR.
int wait_for_exit(pid_t pid);

/// Waits at most `timeout` for `pid` to end; its wait status, or nothing if it still runs.
std::optional<int> wait_for_exit(pid_t pid, std::chrono::milliseconds timeout);

/// A wait status as a shell reports it: the exit code, or 128 + the signal that killed it.
int shell_status(int wait_status);

/// "exited with status 3", "was killed by signal 9 (SIGKILL, Killed)".
std::string describe_wait_status(int wait_status);

}  // namespace ferry::cli
