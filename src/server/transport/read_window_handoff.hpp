// Where a bulk stream's read window (common/bulk_window.hpp, version 8) goes
// from the stream's bulk reader, which receives read_window_offer, to the
// stream's bulk writer, which fills its slots. One per bulk stream, so a
// window never outlives the stream it was offered on.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "common/bulk_window.hpp"

namespace ferry::server {

class read_window_handoff {
 public:
  void offer(std::unique_ptr<bulk_window> window) {
    std::lock_guard lock(mutex_);
    window_ = std::move(window);
    offered_.store(true, std::memory_order_release);
  }
  /// The window, once offered (null before).
  std::unique_ptr<bulk_window> take() {
    if (!offered_.load(std::memory_order_acquire)) return nullptr;
    std::lock_guard lock(mutex_);
    return std::move(window_);
  }

 private:
  std::mutex mutex_;  // guards window_
  std::atomic<bool> offered_{false};
  std::unique_ptr<bulk_window> window_;
};

}  // namespace ferry::server
