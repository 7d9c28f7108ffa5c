#include "client/net/event_tracker.hpp"

#include <array>
#include <chrono>
#include <vector>

namespace ferry::client {

void event_tracker::track(event* e) {
  completion_sink& sink = link_.sink();
  sink.hold(e);
  {
    std::lock_guard lock(tracked_mutex_);
    if (!link_.ended) {
      tracked_.emplace(sink.facts(e).command, e);
      return;
    }
  }
  // Nothing will ever arrive for it.
  sink.complete(e, link_.failure());
  sink.release(e);
}

void event_tracker::on_failure(protocol::object_id command, std::function<void(cl_int)> hook) {
  {
    std::lock_guard lock(tracked_mutex_);
    if (!link_.ended) {
      failure_hooks_.emplace(command, std::move(hook));
      ++hooks_alive_;
      return;
    }
  }
  // Nothing will ever arrive for it.
  hook(link_.failure());
}

void event_tracker::forget_failure(protocol::object_id command) {
  std::function<void(cl_int)> dropped;
  {
    std::lock_guard lock(tracked_mutex_);
    auto it = failure_hooks_.find(command);
    if (it == failure_hooks_.end()) return;
    dropped = std::move(it->second);
    failure_hooks_.erase(it);
  }
  dropped = nullptr;  // outside the lock: what it holds may be freed now
  retire_hooks(1);
}

void event_tracker::retire_hooks(size_t count) {
  {
    std::lock_guard lock(tracked_mutex_);
    hooks_alive_ -= count;
  }
  hooks_cv_.notify_all();
}

void event_tracker::settle() {
  completion_sink& sink = link_.sink();
  std::unique_lock lock(tracked_mutex_);
  // Every hook ends with its command's report or the connection's loss, and
  // so does the tracking of an event the client already completed itself (a
  // failed migration fails its command before that command's server says
  // so); the bound only keeps a broken server from hanging a leak check.
  hooks_cv_.wait_for(lock, std::chrono::seconds(30), [&] {
    if (hooks_alive_ != 0) return false;
    for (const auto& [id, e] : tracked_)
      if (sink.finished(e)) return false;
    return true;
  });
}

void event_tracker::on_completions(const protocol::completions& batch) {
  completion_sink& sink = link_.sink();
  for (const auto& c : batch.entries) {
    event* e = nullptr;
    std::function<void(cl_int)> hook;
    {
      std::lock_guard lock(tracked_mutex_);
      if (auto h = failure_hooks_.find(c.command); h != failure_hooks_.end()) {
        hook = std::move(h->second);
        failure_hooks_.erase(h);
      }
      if (auto it = tracked_.find(c.command); it != tracked_.end()) {
        e = it->second;
        tracked_.erase(it);
      }
    }
    // No data follows a failure.
    event* abandoned_transfer = e && c.status < 0 ? receiver_.abandon(c.command) : nullptr;
    const completion_sink::event_facts facts = e ? sink.facts(e) : completion_sink::event_facts{c.command, 0, 0};
    // Before anybody can hear of this completion: no replayed frame may read
    // the memory of a write it lets the application reuse.
    sender_.settle_borrowed(facts.queue, c.command, c.status);
    const bool hooked = static_cast<bool>(hook);
    if (hooked) {
      if (c.status < 0) hook(c.status);  // outside the lock: it posts to other servers
      hook = nullptr;                    // and lets go of what it held
      retire_hooks(1);
    }
    // A failure the server reports: the log names it once per kind. (A
    // hooked one is passed on: the commands that wait for it fail, and
    // their own reports name them.)
    if (c.status < 0 && !hooked) {
      const std::string session = protocol::session_label(link_.session());
      sink.failed_command({link_.name(), session}, c.status, facts.type, c.command, facts.queue);
    }
    if (e == nullptr) continue;  // a command nobody observes: only the log tells
    std::array<cl_ulong, 4> profiling{c.profiling[0], c.profiling[1], c.profiling[2], c.profiling[3]};
    sink.part_done(e, c.status, &profiling);
    sink.release(e);  // the reference track() took
    if (abandoned_transfer) sink.release(abandoned_transfer);
  }
  hooks_cv_.notify_all();  // settle() may wait for these reports
}

void event_tracker::fail_outstanding() {
  completion_sink& sink = link_.sink();
  const cl_int failure = link_.failure();
  std::vector<event*> orphans;
  std::unordered_map<protocol::object_id, std::function<void(cl_int)>> hooks;
  {
    std::lock_guard lock(tracked_mutex_);
    for (auto& [id, e] : tracked_) orphans.push_back(e);
    tracked_.clear();
    hooks.swap(failure_hooks_);
  }
  for (event* e : receiver_.abandon_all()) orphans.push_back(e);
  for (auto& [id, hook] : hooks) hook(failure);
  const size_t ran = hooks.size();
  hooks.clear();
  if (ran) retire_hooks(ran);
  for (event* e : orphans) {
    sink.complete(e, failure);
    sink.release(e);
  }
}

}  // namespace ferry::client
