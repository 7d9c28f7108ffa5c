#include "server/transport/completion_poller.hpp"

#include <cstdlib>

#include <sys/prctl.h>

#include <algorithm>

#include "common/spare_cores.hpp"
#include "server/session/session_core.hpp"
#include "server/transport/callback_pool.hpp"

namespace ferry::server {

completion_poller& completion_poller::instance() {
  static auto* poller = new completion_poller;  // outlives every session; never joined
  return *poller;
}

completion_poller::completion_poller() : thread_([this] { run(); }) {}

completion_poller::~completion_poller() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void completion_poller::watch(const native::api& api, callback_slot* slot) {
  {
    std::lock_guard lock(mutex_);
    incoming_.push_back({&api, slot});
    ++count_;
  }
  wake_.notify_one();
}

size_t completion_poller::watched() const {
  std::lock_guard lock(mutex_);
  return count_;
}

std::chrono::microseconds completion_poller::longest_pause() {
  if (const char* text = std::getenv("FERRY_POLL_MAX_PAUSE_US")) return std::chrono::microseconds(std::atoi(text));
  return host_has_spare_cores() ? max_pause_many_cores : max_pause;
}

void completion_poller::run() {
  // Pauses of a few microseconds need a tight timer: the default slack of
  // 50 µs would be most of each.
  ::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  using clock = std::chrono::steady_clock;
  std::vector<entry> active;
  clock::time_point last_change = clock::now();
  const std::chrono::microseconds longest = longest_pause();
  for (;;) {
    std::chrono::microseconds pause{0};
    if (!active.empty()) {
      auto quiet = std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - last_change);
      if (quiet >= eager) pause = std::clamp(quiet / 16, min_pause, std::max(min_pause, longest));
    }
    {
      std::unique_lock lock(mutex_);
      auto ready = [&] { return stop_ || !incoming_.empty(); };
      if (active.empty()) wake_.wait(lock, ready);
      else if (pause.count() > 0) wake_.wait_for(lock, pause, ready);
      if (stop_) return;
      if (!incoming_.empty()) {
        active.insert(active.end(), incoming_.begin(), incoming_.end());
        incoming_.clear();
        last_change = clock::now();
      }
    }
    if (poll(active)) last_change = clock::now();
    else if (pause.count() == 0) std::this_thread::yield();
  }
}

bool completion_poller::poll(std::vector<entry>& active) {
  // Newest first: a command that ended after one it depends on (same
  // in-order queue, or a wait list) is then never seen ended without that
  // one, and the reports below go out oldest first, as they happened.
  std::vector<cl_int>& statuses = statuses_;
  statuses.resize(active.size());
  for (size_t i = active.size(); i-- > 0;) {
    const entry& e = active[i];
    cl_int status = CL_QUEUED;
    cl_int rc = e.api->clGetEventInfo(e.slot->event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                      nullptr);
    // An event that cannot be asked is reported with the error rather than waited on forever.
    statuses[i] = rc == CL_SUCCESS ? status : rc;
  }
  const size_t ended = static_cast<size_t>(
      std::count_if(statuses.begin(), statuses.end(), [](cl_int status) { return status <= CL_COMPLETE; }));
  if (ended == 0) return false;
  {
    // Counted out before the reports: whoever sees a report must not find
    // its event still watched.
    std::lock_guard lock(mutex_);
    count_ -= ended;
  }
  size_t kept = 0;
  for (size_t i = 0; i < active.size(); ++i) {
    if (statuses[i] > CL_COMPLETE) active[kept++] = active[i];
    else callback_pool::deliver(active[i].slot, statuses[i], &quiet_);
  }
  active.resize(kept);
  // Each session's completions go out from here, unless its writer is busy.
  for (const auto& core : quiet_) core->outbox.send_or_wake();
  quiet_.clear();
  return true;
}

}  // namespace ferry::server
