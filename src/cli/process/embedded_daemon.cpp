#include "cli/process/embedded_daemon.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>
#include <utility>

#include "cli/process/child_process.hpp"
#include "cli/process/ready_line.hpp"
#include "common/thread_name.hpp"

namespace ferry::cli {

namespace {

// An fd closed at scope exit unless released.
class unique_fd {
 public:
  explicit unique_fd(int fd = -1) : fd_(fd) {}
  ~unique_fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

// SIGTERM, then SIGKILL if the grace period passes; returns the wait status.
int terminate_and_reap(pid_t pid, std::chrono::milliseconds grace) {
  ::kill(pid, SIGTERM);
  if (auto status = wait_for_exit(pid, grace)) return *status;
  ::kill(pid, SIGKILL);
  return wait_for_exit(pid);
}

std::string seconds_text(std::chrono::milliseconds ms) {
  auto tenths = ms.count() / 100;
  std::string text = std::to_string(tenths / 10);
  if (tenths % 10 != 0) text += "." + std::to_string(tenths % 10);
  return text + " s";
}

struct spawned {
  pid_t pid;
  int stdout_fd;
};

// fork/exec rather than posix_spawn: the daemon gets its own process group (so a Ctrl-C
// meant for the program does not stop the server under it) and dies with us
// (PR_SET_PDEATHSIG), neither of which posix_spawn can arrange.
outcome<spawned> spawn_daemon(const daemon_options& options, environment& env) {
  std::vector<std::string> argv = {
      options.executable.string(), "--port", "0", "--listen", "127.0.0.1", "--device-type", "cpu"};
  // The program's output should not drown in the daemon's session notices;
  // FERRY_LOG, when set, chooses the daemon's level as it does everyone's.
  if (!env.has_non_empty("FERRY_LOG")) {
    argv.push_back("--log-level");
    argv.push_back("warn");
  }
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<char*> envp = env.envp();

  int out[2], exec_error[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return failure(std::string("pipe: ") + std::strerror(errno));
  unique_fd out_read(out[0]), out_write(out[1]);
  if (::pipe2(exec_error, O_CLOEXEC) != 0)
    return failure(std::string("pipe: ") + std::strerror(errno));
  unique_fd error_read(exec_error[0]), error_write(exec_error[1]);
  unique_fd dev_null(::open("/dev/null", O_RDONLY | O_CLOEXEC));

  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return failure(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    if (dev_null.get() >= 0) ::dup2(dev_null.get(), STDIN_FILENO);
    ::dup2(out_write.get(), STDOUT_FILENO);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGINT, &dfl, nullptr);
    ::sigaction(SIGTERM, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(args[0], args.data(), envp.data());
    int e = errno;
    [[maybe_unused]] ssize_t n = ::write(error_write.get(), &e, sizeof e);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists whichever runs first

  out_write.reset();
  error_write.reset();
  int e = 0;
  ssize_t n;
  do {
    n = ::read(error_read.get(), &e, sizeof e);
  } while (n < 0 && errno == EINTR);
  if (n == sizeof e) {
    wait_for_exit(pid);
    return failure("cannot start " + options.executable.string() + ": " + std::strerror(e));
  }
  return spawned{pid, out_read.release()};
}

void drain(int from, int stop) {
  char buffer[4096];
  for (;;) {
    pollfd fds[2] = {{from, POLLIN, 0}, {stop, POLLIN, 0}};
    int n = ::poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;
    if (fds[0].revents != 0) {
      ssize_t r = ::read(from, buffer, sizeof buffer);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return;
      write_all(STDERR_FILENO, std::string_view(buffer, static_cast<std::size_t>(r)));
      continue;
    }
    if (fds[1].revents != 0) return;
  }
}

}  // namespace

outcome<embedded_daemon, daemon_start_error> embedded_daemon::start(const daemon_options& options,
                                                                    environment env,
                                                                    int interrupt_fd) {
  std::error_code ec;
  if (!std::filesystem::exists(options.executable, ec)) {
    return failure(daemon_start_error{
        "cannot start the embedded server: " + options.executable.string() + " does not exist"});
  }
  auto child = spawn_daemon(options, env);
  if (!child) return failure(daemon_start_error{child.error()});
  pid_t pid = child.value().pid;
  unique_fd out(child.value().stdout_fd);

  auto fail = [&](std::string message, bool interrupted = false) {
    terminate_and_reap(pid, options.stop_grace);
    return failure(daemon_start_error{std::move(message), interrupted});
  };

  const std::string name = options.executable.filename().string();
  auto deadline = std::chrono::steady_clock::now() + options.ready_timeout;
  std::string pending;
  char buffer[1024];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return fail(name + " did not report READY within " + seconds_text(options.ready_timeout) +
                  "; stopped it");
    }
    pollfd fds[2] = {{out.get(), POLLIN, 0}, {interrupt_fd, POLLIN, 0}};
    int n = ::poll(fds, interrupt_fd >= 0 ? 2 : 1, static_cast<int>(left.count()) + 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(std::string("poll: ") + std::strerror(errno));
    if (interrupt_fd >= 0 && fds[1].revents != 0) {
      return fail("interrupted while waiting for " + name, true);
    }
    if (fds[0].revents == 0) continue;

    ssize_t r = ::read(out.get(), buffer, sizeof buffer);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      // EOF: it exited, or closed stdout without READY; give it a moment to go.
      if (auto status = wait_for_exit(pid, std::chrono::seconds(2))) {
        return failure(daemon_start_error{name + " " + describe_wait_status(*status) +
                                          " before it was ready"});
      }
      return fail(name + " closed its output without reporting READY; stopped it");
    }
    pending.append(buffer, static_cast<std::size_t>(r));
    std::size_t newline;
    while ((newline = pending.find('\n')) != std::string::npos) {
      std::string line = pending.substr(0, newline);
      pending.erase(0, newline + 1);
      if (auto port = parse_ready_line(line)) {
        write_all(STDERR_FILENO, pending);  // whatever followed READY is not ours either
        return embedded_daemon(pid, out.release(), *port, options.stop_grace);
      }
      // Not the READY line: pass it on where the daemon's logs go.
      write_all(STDERR_FILENO, line + "\n");
    }
    if (pending.size() > 64 * 1024) {
      return fail(name + " wrote 64 KiB to stdout without a newline; stopped it");
    }
  }
}

embedded_daemon::embedded_daemon(pid_t pid, int stdout_fd, std::uint16_t port,
                                 std::chrono::milliseconds grace)
    : pid_(pid), stdout_fd_(stdout_fd), port_(port), stop_grace_(grace) {
  if (::pipe2(drain_stop_, O_CLOEXEC) != 0) {
    drain_stop_[0] = drain_stop_[1] = -1;
  }
  drain_ = std::thread([from = stdout_fd_, stop = drain_stop_[0]] {
    name_this_thread("ferry-drain");
    drain(from, stop);
  });
}

embedded_daemon::embedded_daemon(embedded_daemon&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      stdout_fd_(std::exchange(other.stdout_fd_, -1)),
      drain_stop_{std::exchange(other.drain_stop_[0], -1), std::exchange(other.drain_stop_[1], -1)},
      port_(other.port_),
      stop_grace_(other.stop_grace_),
      wait_status_(other.wait_status_),
      drain_(std::move(other.drain_)) {}

embedded_daemon::~embedded_daemon() { stop(); }

std::string embedded_daemon::address() const { return "127.0.0.1:" + std::to_string(port_); }

int embedded_daemon::stop() {
  if (pid_ > 0) {
    wait_status_ = terminate_and_reap(pid_, stop_grace_);
    pid_ = -1;
  }
  if (drain_.joinable()) {
    // The daemon is gone; anything it wrote is in the pipe. Let the drain thread finish
    // what is there (EOF normally ends it first), unless a stray descendant holds the pipe.
    if (drain_stop_[1] >= 0) {
      char byte = 0;
      [[maybe_unused]] ssize_t n = ::write(drain_stop_[1], &byte, 1);
    }
    drain_.join();
  }
  for (int* fd : {&stdout_fd_, &drain_stop_[0], &drain_stop_[1]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  return wait_status_;
}

}  // namespace ferry::cli
