// The local ferryd that `ferry run` starts when no server is configured.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli/setup/environment.hpp"
#include "cli/outcome.hpp"

namespace ferry::cli {

struct daemon_options {
  std::filesystem::path executable;
  /// Appended after the defaults "--port 0 --listen 127.0.0.1 --device-type cpu".
  std::vector<std::string> extra_args;
  std::chrono::milliseconds ready_timeout{30000};
  /// How long stop() waits after SIGTERM before it sends SIGKILL.
  std::chrono::milliseconds stop_grace{10000};
};

/// Why the daemon did not become ready.
struct daemon_start_error {
  std::string message;
  /// True when `interrupt_fd` woke the wait (the caller knows which signal it was).
  bool interrupted = false;
};

/// A running ferryd child, stopped (SIGTERM, then waited for) by stop() or the destructor.
class embedded_daemon {
 public:
  /// Starts the daemon with `env` and waits until it prints "READY <port>". Gives up when
  /// it exits first, when ready_timeout passes, or when `interrupt_fd` becomes readable.
  static outcome<embedded_daemon, daemon_start_error> start(const daemon_options& options,
                                                            environment env, int interrupt_fd);

  embedded_daemon(embedded_daemon&& other) noexcept;
  embedded_daemon& operator=(embedded_daemon&&) = delete;
  embedded_daemon(const embedded_daemon&) = delete;
  ~embedded_daemon();

  std::uint16_t port() const { return port_; }
  /// "127.0.0.1:<port>", for FERRY_SERVERS.
  std::string address() const;
  pid_t pid() const { return pid_; }

  /// Sends SIGTERM and waits for the daemon to end (SIGKILL after stop_grace). Returns its
  /// wait status. Idempotent.
  int stop();

 private:
  embedded_daemon(pid_t pid, int stdout_fd, std::uint16_t port, std::chrono::milliseconds grace);

  pid_t pid_ = -1;
  int stdout_fd_ = -1;  // read end of the daemon's stdout; read only by drain_ while it runs
  int drain_stop_[2] = {-1, -1};  // written once the daemon is reaped, to end drain_
  std::uint16_t port_ = 0;
  std::chrono::milliseconds stop_grace_;
  int wait_status_ = 0;
  // Copies whatever the daemon writes to stdout after READY to our stderr, so that it can
  // never block on a full pipe. Ends at EOF or when drain_stop_ is written.
  std::thread drain_;
};

}  // namespace ferry::cli
