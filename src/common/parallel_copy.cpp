#include "common/parallel_copy.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "common/log.hpp"
#include "common/thread_name.hpp"

namespace ferry {

struct parallel_copy::job {
  std::atomic<unsigned> left{0};  // parts not yet copied
};

parallel_copy::parallel_copy(unsigned helpers) {
  threads_.reserve(helpers);
  for (unsigned i = 0; i < helpers; ++i) threads_.emplace_back([this] { run(); });
}

parallel_copy::~parallel_copy() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_) t.join();
}

void parallel_copy::run() {
  name_this_thread("ferry-copy");
  for (;;) {
    part p;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return stop_ || !parts_.empty(); });
      if (parts_.empty()) return;  // stopping, nothing left
      p = parts_.front();
      parts_.pop_front();
    }
    std::memcpy(p.to, p.from, p.size);
    p.owner->left.fetch_sub(1, std::memory_order_release);
  }
}

bool parallel_copy::take_back(job& owner, part& taken) {
  std::lock_guard lock(mutex_);
  auto it = std::find_if(parts_.begin(), parts_.end(), [&](const part& p) { return p.owner == &owner; });
  if (it == parts_.end()) return false;
  taken = *it;
  parts_.erase(it);
  return true;
}

void parallel_copy::copy(void* to, const void* from, size_t size) {
  if (size == 0) return;  // either pointer may be null then, which memcpy must not see
  if (threads_.empty() || size < split_from) {
    std::memcpy(to, from, size);
    return;
  }
  auto* out = static_cast<uint8_t*>(to);
  const auto* in = static_cast<const uint8_t*>(from);
  // Equal parts on cache-line boundaries; the caller copies the last one.
  const size_t parts = threads_.size() + 1;
  const size_t each = ((size / parts) + 63) & ~size_t{63};
  job j;
  size_t at = 0;
  {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i + 1 < parts && at + each < size; ++i, at += each) {
      parts_.push_back({out + at, in + at, each, &j});
      j.left.fetch_add(1, std::memory_order_relaxed);
    }
  }
  ready_.notify_all();
  std::memcpy(out + at, in + at, size - at);
  // Helpers busy with another caller's copy: do the parts they have not begun.
  part p;
  while (take_back(j, p)) {
    std::memcpy(p.to, p.from, p.size);
    j.left.fetch_sub(1, std::memory_order_release);
  }
  // The rest are being copied now: a part takes a few hundred microseconds.
  while (j.left.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

unsigned parallel_copy::default_helpers(unsigned hardware_threads) {
  if (hardware_threads >= 16) return 3;
  if (hardware_threads >= 8) return 1;
  return 0;
}

parallel_copy& parallel_copy::shared() {
  static auto* copier = [] {
    unsigned helpers = default_helpers(std::thread::hardware_concurrency());
    if (const char* text = std::getenv("FERRY_COPY_THREADS"); text && *text) {
      char* end = nullptr;
      unsigned long n = std::strtoul(text, &end, 10);
      if (*end == '\0' && n >= 1 && n <= 8) helpers = static_cast<unsigned>(n - 1);
      else FERRY_WARN("net", "FERRY_COPY_THREADS=%s is not a thread count from 1 to 8; using %u", text, helpers + 1);
    }
    return new parallel_copy(helpers);  // used by threads until the process ends; never joined
  }();
  return *copier;
}

void copy_bytes(void* to, const void* from, size_t size) { parallel_copy::shared().copy(to, from, size); }

}  // namespace ferry
