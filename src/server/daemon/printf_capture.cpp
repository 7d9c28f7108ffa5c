#include "server/daemon/printf_capture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "protocol/dispatch.hpp"
#include "server/transport/control_writer.hpp"

namespace ferry::server {

bool printf_capture::redirect_stdout(unique_fd& original_stdout, unique_fd& read_end, std::string& error) {
  std::fflush(stdout);
  int saved = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (saved < 0) {
    error = std::string("cannot duplicate stdout: ") + std::strerror(errno);
    return false;
  }
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    ::close(saved);
    error = std::string("cannot create the printf pipe: ") + std::strerror(errno);
    return false;
  }
  if (::dup2(ends[1], STDOUT_FILENO) < 0) {
    error = std::string("cannot redirect stdout: ") + std::strerror(errno);
    ::close(saved);
    ::close(ends[0]);
    ::close(ends[1]);
    return false;
  }
  ::close(ends[1]);
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  original_stdout.reset(saved);
  read_end.reset(ends[0]);
  return true;
}

printf_capture::printf_capture(unique_fd read_end, int fallback_fd)
    : read_end_(std::move(read_end)), fallback_fd_(fallback_fd), wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  int flags = ::fcntl(read_end_.get(), F_GETFL);
  ::fcntl(read_end_.get(), F_SETFL, flags | O_NONBLOCK);
  buffer_.resize(64 * 1024);
}

printf_capture::~printf_capture() { stop(); }

void printf_capture::start() {
  thread_ = std::thread([this] {
    name_this_thread("ferryd-printf");
    run();
  });
}

void printf_capture::stop() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  ssize_t ignored = ::write(wake_.get(), &one, sizeof one);
  (void)ignored;
  thread_.join();
  std::lock_guard lock(mutex_);
  drain_locked(nullptr, nullptr);
}

void printf_capture::attribute_to(const std::shared_ptr<control_outbox>& outbox, uint64_t key) {
  // Cheap when the same session keeps enqueueing (the usual case).
  if (target_key_.load(std::memory_order_relaxed) == key) return;
  std::lock_guard lock(mutex_);
  target_ = outbox;
  target_key_.store(key, std::memory_order_relaxed);
}

void printf_capture::drain(control_outbox* caller, std::vector<uint8_t>& out) {
  std::lock_guard lock(mutex_);
  drain_locked(caller, &out);
}

void printf_capture::drain_locked(control_outbox* caller, std::vector<uint8_t>* out) {
  // Text the capture thread routed to the caller before its writer got here.
  if (caller && out) caller->take_printf(*out);
  for (;;) {
    ssize_t n = ::read(read_end_.get(), buffer_.data(), buffer_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    std::shared_ptr<control_outbox> target = target_.lock();
    if (target && target.get() == caller && out) {
      protocol::printf_output message;
      message.text.assign(buffer_.begin(), buffer_.begin() + n);
      protocol::append_frame(*out, message);
    } else if (target && !target->closed()) {
      target->push_printf(buffer_.data(), static_cast<size_t>(n));
    } else {
      // Nobody to send it to: keep it visible in the daemon's log stream.
      ssize_t ignored = ::write(fallback_fd_, buffer_.data(), static_cast<size_t>(n));
      (void)ignored;
    }
  }
}

void printf_capture::run() {
  pollfd fds[2] = {{read_end_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
  for (;;) {
    int ready = ::poll(fds, 2, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      FERRY_ERROR("printf", "poll on the printf pipe failed: %s", std::strerror(errno));
      return;
    }
    if (fds[1].revents) return;
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      std::lock_guard lock(mutex_);
      drain_locked(nullptr, nullptr);
      if ((fds[0].revents & POLLHUP) && !(fds[0].revents & POLLIN)) return;
    }
  }
}

}  // namespace ferry::server
