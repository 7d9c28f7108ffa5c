#include "common/thread_stacks.hpp"

#include <dirent.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace ferry {
namespace {

std::atomic<int> target_fd{-1};
std::atomic<bool> written{false};

// Async-signal-safe only: no allocation, no locks.
void write_own_stack(int) {
  const int fd = target_fd.load();
  if (fd < 0) return;
  char name[32] = {};
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%ld/comm", static_cast<long>(syscall(SYS_gettid)));
  if (int comm = ::open(path, O_RDONLY); comm >= 0) {
    ssize_t n = ::read(comm, name, sizeof name - 1);
    if (n > 0 && name[n - 1] == '\n') name[n - 1] = '\0';
    ::close(comm);
  }
  char header[96];
  int length = std::snprintf(header, sizeof header, "--- thread %ld (%s)\n", static_cast<long>(syscall(SYS_gettid)),
                             name);
  ssize_t ignored = ::write(fd, header, static_cast<size_t>(length));
  (void)ignored;
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), fd);
  written.store(true);
}

}  // namespace

void write_thread_stacks(int fd) {
  static std::mutex one_at_a_time;
  std::lock_guard lock(one_at_a_time);
  // backtrace() loads libgcc on first use, which is not safe in a handler.
  void* warm[1];
  backtrace(warm, 1);
  target_fd.store(fd);
  // Installed for good: a thread that blocks the signal now may take it
  // later, and the default action would end the process.
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_handler = &write_own_stack;
    sigemptyset(&action.sa_mask);
    return sigaction(SIGUSR2, &action, nullptr) == 0;
  }();
  if (!installed) return;
  if (DIR* tasks = ::opendir("/proc/self/task")) {
    while (dirent* entry = ::readdir(tasks)) {
      if (entry->d_name[0] == '.') continue;
      written.store(false);
      if (syscall(SYS_tgkill, ::getpid(), std::atoi(entry->d_name), SIGUSR2) != 0) continue;
      // Each thread writes before the next is asked, so the stacks do not interleave.
      auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
      while (!written.load() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ::closedir(tasks);
  }
  target_fd.store(-1);
}

}  // namespace ferry
