#include "process.hpp"

#include "common/wait_status.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include "common/thread_name.hpp"

extern char** environ;

namespace ferry::test {
namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Milliseconds left until `deadline`, for poll(); never negative.
int poll_timeout(clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
  return static_cast<int>(std::clamp<long long>(left.count(), 0, 1'000'000));
}

void close_fd(int& fd) {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
}

// The child's environment: ours with `changes` applied, built before fork so the child
// only makes async-signal-safe calls.
std::vector<std::string> build_environment(const std::vector<env_change>& changes) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  for (const auto& change : changes) {
    const std::string prefix = change.name + "=";
    std::erase_if(env, [&](const std::string& s) { return s.starts_with(prefix); });
    if (change.value) env.push_back(prefix + *change.value);
  }
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Captured by a static initializer, before main() can change anything.
const std::vector<env_change> startup_loader_env_ = [] {
  std::vector<env_change> out;
  for (const char* name : {"OCL_ICD_VENDORS", "OCL_ICD_FILENAMES"}) {
    const char* value = std::getenv(name);
    out.push_back({name, value ? std::optional<std::string>(value) : std::nullopt});
  }
  return out;
}();

}  // namespace

child_process child_process::spawn(const spawn_options& options) {
  if (options.argv.empty()) throw process_error("spawn: empty argv");
  std::vector<std::string> argv_storage = options.argv;
  std::vector<std::string> env_storage = build_environment(options.env);
  std::vector<char*> argv = c_strings(argv_storage);
  std::vector<char*> envp = c_strings(env_storage);

  int out_pipe[2] = {-1, -1};
  int in_pipe[2] = {-1, -1};
  int exec_error_pipe[2] = {-1, -1};
  auto cleanup = [&] {
    for (int* p : {out_pipe, in_pipe, exec_error_pipe}) {
      close_fd(p[0]);
      close_fd(p[1]);
    }
  };
  if ((options.capture_stdout && ::pipe2(out_pipe, O_CLOEXEC) != 0) ||
      (options.pipe_stdin && ::pipe2(in_pipe, O_CLOEXEC) != 0) ||
      ::pipe2(exec_error_pipe, O_CLOEXEC) != 0) {
    cleanup();
    throw process_error(errno_text("pipe2"));
  }

  const int err_fd = options.stderr_path.empty()
                         ? -1
                         : ::open(options.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (!options.stderr_path.empty() && err_fd < 0) {
    cleanup();
    throw process_error(errno_text(("open " + options.stderr_path).c_str()));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0 && err_fd >= 0) ::close(err_fd);
  if (pid < 0) {
    cleanup();
    throw process_error(errno_text("fork"));
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only. A child must not outlive a crashed test.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    if (out_pipe[1] >= 0 && ::dup2(out_pipe[1], STDOUT_FILENO) < 0) ::_exit(127);
    if (in_pipe[0] >= 0 && ::dup2(in_pipe[0], STDIN_FILENO) < 0) ::_exit(127);
    if (err_fd >= 0 && ::dup2(err_fd, STDERR_FILENO) < 0) ::_exit(127);
    // Sockets the parent's OpenCL driver holds must not leak into the child.
    ::syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
    ::execve(argv[0], argv.data(), envp.data());
    const int err = errno;
    [[maybe_unused]] auto n = ::write(exec_error_pipe[1], &err, sizeof err);
    ::_exit(127);
  }

  close_fd(out_pipe[1]);
  close_fd(in_pipe[0]);
  close_fd(exec_error_pipe[1]);
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(exec_error_pipe[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close_fd(exec_error_pipe[0]);

  child_process child;
  child.pid_ = pid;
  child.stdout_fd_ = out_pipe[0];
  child.stdin_fd_ = in_pipe[1];
  child.pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    child.kill_and_wait();
    throw process_error("cannot execute " + options.argv[0] + ": " + std::strerror(exec_errno));
  }
  return child;
}

child_process::child_process(child_process&& other) noexcept { *this = std::move(other); }

child_process& child_process::operator=(child_process&& other) noexcept {
  if (this != &other) {
    if (running()) kill_and_wait();
    close_fds();
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::exchange(other.pidfd_, -1);
    stdout_fd_ = std::exchange(other.stdout_fd_, -1);
    stdin_fd_ = std::exchange(other.stdin_fd_, -1);
    status_ = std::exchange(other.status_, std::nullopt);
    buffer_ = std::move(other.buffer_);
    eof_ = other.eof_;
    timed_out_ = other.timed_out_;
  }
  return *this;
}

child_process::~child_process() {
  if (running()) kill_and_wait();
  close_fds();
}

void child_process::close_fds() {
  close_fd(pidfd_);
  close_fd(stdout_fd_);
  close_fd(stdin_fd_);
}

std::optional<std::string> child_process::read_line(clock::time_point deadline) {
  timed_out_ = false;
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (eof_ || stdout_fd_ < 0) {
      if (buffer_.empty()) return std::nullopt;
      return std::exchange(buffer_, {});
    }
    pollfd pfd{stdout_fd_, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, poll_timeout(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out_ = true;
      return std::nullopt;
    }
    char chunk[4096];
    const ssize_t got = ::read(stdout_fd_, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      eof_ = true;
      continue;
    }
    buffer_.append(chunk, static_cast<size_t>(got));
  }
}

std::string child_process::read_all(clock::time_point deadline) {
  timed_out_ = false;
  while (!eof_ && stdout_fd_ >= 0) {
    pollfd pfd{stdout_fd_, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, poll_timeout(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out_ = true;
      break;
    }
    char chunk[4096];
    const ssize_t got = ::read(stdout_fd_, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      eof_ = true;
      break;
    }
    buffer_.append(chunk, static_cast<size_t>(got));
  }
  return std::exchange(buffer_, {});
}

void child_process::write_stdin(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(stdin_fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw process_error(errno_text("write to child stdin"));
    text.remove_prefix(static_cast<size_t>(n));
  }
}

void child_process::close_stdin() { close_fd(stdin_fd_); }

int child_process::release_stdout() { return std::exchange(stdout_fd_, -1); }

void child_process::send_signal(int signal) {
  if (running()) ::kill(pid_, signal);
}

std::optional<int> child_process::wait(clock::time_point deadline) {
  if (status_) return status_;
  if (pid_ <= 0) return std::nullopt;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      status_ = status;
      return status_;
    }
    if (r < 0 && errno != EINTR) throw process_error(errno_text("waitpid"));
    if (pidfd_ < 0) {
      // No pidfd (old kernel): block; the caller's deadline cannot be honoured.
      if (::waitpid(pid_, &status, 0) == pid_) {
        status_ = status;
        return status_;
      }
      continue;
    }
    pollfd pfd{pidfd_, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, poll_timeout(deadline));
    if (ready == 0) return std::nullopt;
  }
}

int child_process::kill_and_wait() {
  if (status_) return *status_;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = status;
  return status;
}

std::string describe_wait_status(int status) { return ferry::describe_wait_status(status); }

bool exited_with(int status, int code) { return WIFEXITED(status) && WEXITSTATUS(status) == code; }

std::string self_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw process_error("cannot read /proc/self/exe: " + ec.message());
  return path.string();
}

std::vector<env_change> startup_loader_env() { return startup_loader_env_; }

// Reads the daemon's stdout until end of file (or until told to stop), so a daemon that
// prints never blocks on a full pipe.
struct daemon_process::drain {
  int fd;
  int wake[2] = {-1, -1};
  mutable std::mutex mutex;
  std::string text;  // guarded by mutex
  std::thread thread;

  drain(int stdout_fd, std::string already_read) : fd(stdout_fd), text(std::move(already_read)) {
    if (::pipe2(wake, O_CLOEXEC) != 0) throw process_error(errno_text("pipe2"));
    thread = std::thread([this] { run(); });
  }
  ~drain() {
    char byte = 0;
    [[maybe_unused]] auto n = ::write(wake[1], &byte, 1);
    thread.join();
    close_fd(wake[0]);
    close_fd(wake[1]);
    close_fd(fd);
  }
  void run() {
    ::ferry::name_this_thread("ferryd-stdout");
    bool stopping = false;
    for (;;) {
      pollfd pfds[2] = {{fd, POLLIN, 0}, {wake[0], POLLIN, 0}};
      // Once woken, take only what is already buffered, then stop.
      const int ready = ::poll(pfds, 2, stopping ? 0 : -1);
      if (ready < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (pfds[1].revents != 0) stopping = true;
      if (pfds[0].revents == 0) {
        if (stopping) return;
        continue;
      }
      char chunk[4096];
      const ssize_t got = ::read(fd, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return;
      std::lock_guard lock(mutex);
      text.append(chunk, static_cast<size_t>(got));
    }
  }
};

daemon_process::daemon_process(child_process child, std::uint16_t port)
    : child_(std::move(child)), port_(port) {}

std::unique_ptr<daemon_process> daemon_process::start(const options& opts) {
  spawn_options spawn;
  spawn.argv = {opts.binary, "--port", "0"};
  spawn.argv.insert(spawn.argv.end(), opts.extra_args.begin(), opts.extra_args.end());
  spawn.env = startup_loader_env();
  spawn.env.insert(spawn.env.end(), opts.env.begin(), opts.env.end());
  spawn.capture_stdout = true;
  spawn.stderr_path = opts.stderr_path;
  child_process child = child_process::spawn(spawn);

  const auto deadline = clock::now() + opts.ready_timeout;
  std::string seen;
  for (;;) {
    std::optional<std::string> line = child.read_line(deadline);
    if (!line) {
      const bool timed_out = child.timed_out();
      const int status = child.kill_and_wait();
      throw process_error(
          opts.binary + (timed_out ? " printed no READY line within " +
                                         std::to_string(opts.ready_timeout.count()) + " ms"
                                   : " closed stdout before READY (" +
                                         describe_wait_status(status) + ")") +
          (seen.empty() ? std::string() : "; stdout was:\n" + seen));
    }
    if (line->starts_with("READY ")) {
      char* end = nullptr;
      const unsigned long port = std::strtoul(line->c_str() + 6, &end, 10);
      if (end == line->c_str() + 6 || *end != '\0' || port == 0 || port > 65535) {
        child.kill_and_wait();
        throw process_error("malformed ready line from ferryd: \"" + *line + "\"");
      }
      // Whatever followed READY in the same read stays in the child's buffer; the drain
      // thread takes the descriptor from here on.
      std::string rest = child.read_all(clock::now());
      const int fd = child.release_stdout();
      auto daemon = std::unique_ptr<daemon_process>(
          new daemon_process(std::move(child), static_cast<std::uint16_t>(port)));
      daemon->drain_ = std::make_unique<drain>(fd, std::move(rest));
      return daemon;
    }
    seen += *line + "\n";
  }
}

daemon_process::~daemon_process() {
  if (child_.running()) {
    try {
      stop();
    } catch (const process_error&) {
    }
  }
  drain_.reset();
}

std::string daemon_process::address() const { return "127.0.0.1:" + std::to_string(port_); }

int daemon_process::stop(std::chrono::milliseconds timeout) {
  child_.send_signal(SIGTERM);
  std::optional<int> status = child_.wait(clock::now() + timeout);
  if (!status) {
    child_.kill_and_wait();
    throw process_error("ferryd did not exit within " + std::to_string(timeout.count()) +
                        " ms of SIGTERM; killed");
  }
  return *status;
}

std::string daemon_process::stdout_text() const {
  if (!drain_) return {};
  std::lock_guard lock(drain_->mutex);
  return drain_->text;
}

std::vector<env_change> loader_env(const build_paths& paths, loader_mode mode,
                                   const std::optional<std::string>& servers) {
  namespace fs = std::filesystem;
  std::vector<env_change> env;
  auto require = [](const std::string& path) {
    if (!fs::exists(path))
      throw process_error(path + " does not exist (is libferry built in this build tree?)");
  };
  require(paths.libferry());
  if (mode == loader_mode::ferry_only) {
    require(paths.ferry_icd());
    env.push_back({"OCL_ICD_VENDORS", paths.ferry_icd()});
    env.push_back({"OCL_ICD_FILENAMES", paths.libferry()});
  } else {
    require(paths.vendors_all());
    // The Khronos loader wants the libraries themselves: each .icd file names one.
    std::vector<std::string> libraries = {paths.libferry()};
    std::vector<fs::path> icds;
    for (const auto& entry : fs::directory_iterator(paths.vendors_all()))
      if (entry.path().extension() == ".icd") icds.push_back(entry.path());
    std::sort(icds.begin(), icds.end());
    for (const auto& icd : icds) {
      std::ifstream in(icd);
      std::string library;
      std::getline(in, library);
      while (!library.empty() && std::isspace(static_cast<unsigned char>(library.back())))
        library.pop_back();
      if (!library.empty() && std::find(libraries.begin(), libraries.end(), library) == libraries.end())
        libraries.push_back(library);
    }
    std::string joined;
    for (const auto& library : libraries) joined += (joined.empty() ? "" : ":") + library;
    env.push_back({"OCL_ICD_VENDORS", paths.vendors_all()});
    env.push_back({"OCL_ICD_FILENAMES", joined});
  }
  if (servers) env.push_back({"FERRY_SERVERS", *servers});
  return env;
}

void apply_env(const std::vector<env_change>& changes) {
  for (const auto& change : changes) {
    if (change.value)
      ::setenv(change.name.c_str(), change.value->c_str(), 1);
    else
      ::unsetenv(change.name.c_str());
  }
}

std::vector<pid_t> process_tree(pid_t root) {
  std::vector<pid_t> tree{root};
  for (size_t i = 0; i < tree.size(); ++i) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream stat(entry.path() / "stat");
      std::string text;
      std::getline(stat, text);
      // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
      const size_t close = text.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(text.substr(close + 1));
      char state = 0;
      pid_t parent = 0;
      rest >> state >> parent;
      if (parent == tree[i]) tree.push_back(static_cast<pid_t>(std::stoi(name)));
    }
  }
  return tree;
}

}  // namespace ferry::test
