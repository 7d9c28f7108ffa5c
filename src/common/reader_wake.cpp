#include "common/reader_wake.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "common/spare_cores.hpp"

namespace ferry {

std::chrono::microseconds reader_wake::window() {
  static const std::chrono::microseconds value = [] {
    if (const char* text = std::getenv("FERRY_READER_SPIN_US")) return std::chrono::microseconds(std::atoi(text));
    return std::chrono::microseconds(host_has_spare_cores() ? 300 : 0);
  }();
  return value;
}

reader_wake::reader_wake(std::chrono::microseconds spin) : spin_(spin) {
  if (spin_.count() > 0) event_ = unique_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
}

void reader_wake::open_window(std::chrono::microseconds length, bool wake_now) {
  if (event_.get() < 0) return;
  const int64_t until = (clock::now() + length).time_since_epoch().count();
  int64_t now_until = spin_until_.load(std::memory_order_seq_cst);
  while (now_until < until && !spin_until_.compare_exchange_weak(now_until, until, std::memory_order_seq_cst)) {
  }
  if (wake_now) wake();
}

void reader_wake::wake() {
  if (event_.get() < 0) return;
  // Seen sleeping: it has not yet seen the window (wait_readable says why).
  // One write until the reader has read it.
  if (sleeping_.load(std::memory_order_seq_cst) && !wake_sent_.exchange(true, std::memory_order_seq_cst)) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(event_.get(), &one, sizeof one);
  }
}

bool reader_wake::polling(const std::function<bool()>& keep_polling) const {
  return clock::now().time_since_epoch().count() < spin_until_.load(std::memory_order_seq_cst) &&
         (!keep_polling || keep_polling());
}

bool reader_wake::wait_readable(int socket, const std::function<bool()>& keep_polling) {
  if (event_.get() < 0) return true;
  auto in_window = [&] { return polling(keep_polling); };
  for (;;) {
    while (in_window()) {
      pollfd look{socket, POLLIN, 0};
      const int n = ::poll(&look, 1, 0);
      if (n > 0) return true;
      if (n < 0 && errno != EINTR) return false;
    }
    sleeping_.store(true, std::memory_order_seq_cst);
    // open_window() stores the window, then looks at sleeping_; this
    // stores sleeping_, then looks at the window: one of them sees the other.
    if (in_window()) {
      sleeping_.store(false, std::memory_order_relaxed);
      continue;
    }
    pollfd both[2] = {{socket, POLLIN, 0}, {event_.get(), POLLIN, 0}};
    const int n = ::poll(both, 2, -1);
    sleeping_.store(false, std::memory_order_relaxed);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (both[1].revents & POLLIN) {
      uint64_t count = 0;
      if (::read(event_.get(), &count, sizeof count) == sizeof count) wakes_.fetch_add(1);
      // Before the window is looked at again: a wake skipped meanwhile
      // stored its window first.
      wake_sent_.store(false, std::memory_order_seq_cst);
    }
    // Readable, closed or failed: the read says which.
    if (both[0].revents != 0) return true;
  }
}

}  // namespace ferry
