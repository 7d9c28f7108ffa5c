#include "cli/process/signal_relay.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cassert>
#include <cerrno>

namespace ferry::cli {

namespace {

// Shared with the handler, so only lock-free atomics and a plain fd written before install.
std::atomic<pid_t> target_pid{0};
std::atomic<int> first_signal{0};
int wake_write_fd = -1;
static_assert(std::atomic<pid_t>::is_always_lock_free);
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void relay_signal(int sig, siginfo_t* info, void*) {
  int saved_errno = errno;
  int expected = 0;
  first_signal.compare_exchange_strong(expected, sig);
  pid_t pid = target_pid.load();
  bool from_terminal = info != nullptr && info->si_code == SI_KERNEL;
  if (pid > 0 && !from_terminal) ::kill(pid, sig);
  char byte = static_cast<char>(sig);
  [[maybe_unused]] ssize_t n = ::write(wake_write_fd, &byte, 1);  // full pipe: already awake
  errno = saved_errno;
}

}  // namespace

signal_relay::signal_relay() {
  [[maybe_unused]] int rc = ::pipe2(pipe_, O_CLOEXEC | O_NONBLOCK);
  assert(rc == 0 && wake_write_fd == -1);
  wake_write_fd = pipe_[1];
  first_signal = 0;
  target_pid = 0;

  struct sigaction action {};
  action.sa_sigaction = relay_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &previous_int_);
  ::sigaction(SIGTERM, &action, &previous_term_);
}

signal_relay::~signal_relay() {
  ::sigaction(SIGINT, &previous_int_, nullptr);
  ::sigaction(SIGTERM, &previous_term_, nullptr);
  target_pid = 0;
  wake_write_fd = -1;
  ::close(pipe_[0]);
  ::close(pipe_[1]);
}

int signal_relay::wake_fd() const { return pipe_[0]; }

int signal_relay::received() const { return first_signal.load(); }

void signal_relay::forward_to(pid_t pid) { target_pid = pid; }

signal_relay::hold::hold() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

signal_relay::hold::~hold() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

}  // namespace ferry::cli
