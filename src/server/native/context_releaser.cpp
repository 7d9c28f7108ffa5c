#include "server/native/context_releaser.hpp"

#include <atomic>

#include "common/log.hpp"

namespace ferry::server {
namespace {

// Set once the instance exists: pending() must not start the thread.
std::atomic<context_releaser*> created{nullptr};

}  // namespace

context_releaser::context_releaser() : thread_([this] { run(); }) { thread_.detach(); }

context_releaser& context_releaser::instance() {
  static auto* releaser = new context_releaser;  // never destroyed: its thread may be blocked for good
  created.store(releaser, std::memory_order_release);
  return *releaser;
}

void context_releaser::release(const native::api& api, cl_context context) {
  context_releaser& r = instance();
  {
    std::lock_guard lock(r.mutex_);
    r.queue_.push_back({&api, context});
  }
  r.wake_.notify_one();
}

size_t context_releaser::pending() {
  context_releaser* r = created.load(std::memory_order_acquire);
  if (r == nullptr) return 0;
  std::lock_guard lock(r->mutex_);
  return r->queue_.size() + r->busy_;
}

void context_releaser::run() {
  for (;;) {
    item next;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return !queue_.empty(); });
      next = queue_.front();
      queue_.pop_front();
      ++busy_;
    }
    const auto start = std::chrono::steady_clock::now();
    next.api->clReleaseContext(next.context);
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited > std::chrono::seconds(1))
      FERRY_DEBUG("native", "releasing a context took %.1f s",
                  std::chrono::duration<double>(waited).count());
    std::lock_guard lock(mutex_);
    --busy_;
  }
}

}  // namespace ferry::server
