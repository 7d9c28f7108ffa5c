#include "server/peers/event_imports.hpp"

#include <utility>
#include <vector>

namespace ferry::server {

bool event_imports::add(protocol::object_id id, cl_event event, cl_context context, cl_int& status) {
  {
    std::lock_guard lock(mutex_);
    auto early = early_.find(id);
    if (early == early_.end()) {
      api_.clRetainEvent(event);
      api_.clRetainContext(context);
      imports_[id] = import{event, context, false, {}};
      return false;
    }
    status = early->second;
    early_.erase(early);
    imports_[id] = import{};  // set below; later statuses are ignored
  }
  api_.clSetUserEventStatus(event, status);
  return true;
}

void event_imports::settle(import& i, cl_int status) {
  api_.clSetUserEventStatus(i.event, status);
  api_.clReleaseEvent(i.event);
  for (cl_event e : i.dependents) api_.clReleaseEvent(e);
  api_.clReleaseContext(i.context);
}

event_imports::delivery event_imports::deliver(protocol::object_id id, cl_int status) {
  import taken;
  {
    std::lock_guard lock(mutex_);
    auto it = imports_.find(id);
    if (it == imports_.end()) {
      if (early_.count(id)) return delivery::ignored;  // the first status stands
      if (early_.size() >= max_early) return delivery::overflow;
      early_.emplace(id, status);
      return delivery::kept;
    }
    if (it->second.event == nullptr) return delivery::ignored;
    taken = std::move(it->second);
    it->second = import{};
    if (taken.released) imports_.erase(it);
  }
  settle(taken, status);
  return delivery::applied;
}

bool event_imports::waiting(protocol::object_id id) const {
  std::lock_guard lock(mutex_);
  auto it = imports_.find(id);
  return it != imports_.end() && it->second.event != nullptr;
}

void event_imports::hold(protocol::object_id id, cl_event dependent) {
  std::lock_guard lock(mutex_);
  auto it = imports_.find(id);
  if (it == imports_.end() || it->second.event == nullptr) return;
  api_.clRetainEvent(dependent);
  it->second.dependents.push_back(dependent);
}

void event_imports::forget(protocol::object_id id) {
  std::lock_guard lock(mutex_);
  auto it = imports_.find(id);
  if (it == imports_.end()) return;
  // Commands enqueued before the release still wait for the native event:
  // until its status comes, the import stays (with its reference), and the
  // status completes it as usual.
  if (it->second.event) {
    it->second.released = true;
    return;
  }
  imports_.erase(it);
}

std::vector<event_imports::import> event_imports::take_pending() {
  std::vector<import> pending;
  std::lock_guard lock(mutex_);
  for (auto& [id, i] : imports_)
    if (i.event) pending.push_back(std::move(i));
  imports_.clear();
  early_.clear();
  return pending;
}

void event_imports::clear() {
  for (const import& i : take_pending()) {
    api_.clReleaseEvent(i.event);
    for (cl_event e : i.dependents) api_.clReleaseEvent(e);
    api_.clReleaseContext(i.context);
  }
}

void event_imports::fail_pending(cl_int status) {
  for (import& i : take_pending()) settle(i, status);
}

size_t event_imports::early_count() const {
  std::lock_guard lock(mutex_);
  return early_.size();
}

}  // namespace ferry::server
