#include "transfer/worker_pool.hpp"

#include <sys/prctl.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

#include "common/thread_name.hpp"

namespace ferry::transfer {
namespace {

class pool {
 public:
  bool run(std::function<void()> task) {
    std::unique_lock lock(mutex_);
    tasks_.push_back(std::move(task));
    if (idle_ >= tasks_.size()) {
      ready_.notify_one();
      return true;
    }
    try {
      std::thread([this] { serve(); }).detach();
      ++threads_;
    } catch (const std::system_error&) {
      tasks_.pop_back();
      return false;
    }
    return true;
  }

 private:
  void serve() {
    name_this_thread("ferry-transfer");
    // Transfers wait for MPI in short sleeps (mpi_waits.cpp): the default
    // timer slack of 50 us would stretch each.
    ::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    std::unique_lock lock(mutex_);
    for (;;) {
      if (tasks_.empty()) {
        ++idle_;
        const bool woken = ready_.wait_for(lock, idle_for, [&] { return !tasks_.empty(); });
        --idle_;
        if (!woken) {
          --threads_;
          return;
        }
      }
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
  }

  static constexpr std::chrono::seconds idle_for{5};
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  size_t idle_ = 0, threads_ = 0;
};

pool& the_pool() {
  static auto* p = new pool;  // threads may outlive static destruction: never destroyed
  return *p;
}

// Tasks waiting behind a running one of the same key. A key with an entry
// has a pool task draining it; the entry goes once drained.
class chains {
 public:
  void run_after(const void* key, std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      auto [it, created] = waiting_.try_emplace(key);
      it->second.push_back(std::move(task));
      if (!created) return;
    }
    // No thread to be had: the caller drains the chain itself.
    if (!the_pool().run([this, key] { drain(key); })) drain(key);
  }

 private:
  void drain(const void* key) {
    for (;;) {
      std::function<void()> next;
      {
        std::lock_guard lock(mutex_);
        auto it = waiting_.find(key);
        if (it->second.empty()) {
          waiting_.erase(it);
          return;
        }
        next = std::move(it->second.front());
        it->second.pop_front();
      }
      next();
    }
  }

  std::mutex mutex_;
  std::map<const void*, std::deque<std::function<void()>>> waiting_;
};

chains& the_chains() {
  static auto* c = new chains;
  return *c;
}

}  // namespace

bool run_in_background(std::function<void()> task) { return the_pool().run(std::move(task)); }

void run_after(const void* key, std::function<void()> task) {
  the_chains().run_after(key, std::move(task));
}

}  // namespace ferry::transfer
