#include "server/event_imports.hpp"

#include <utility>
#include <vector>

namespace ferry::server {

bool event_imports::add(protocol::object_id id, cl_event event, cl_int& status) {
  {
    std::lock_guard lock(mutex_);
    auto early = early_.find(id);
    if (early == early_.end()) {
      api_.clRetainEvent(event);
      imports_[id].event = event;
      return false;
    }
    status = early->second;
    early_.erase(early);
    imports_[id].event = nullptr;  // set below; later statuses are ignored
  }
  api_.clSetUserEventStatus(event, status);
  return true;
}

event_imports::delivery event_imports::deliver(protocol::object_id id, cl_int status) {
  cl_event event = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto it = imports_.find(id);
    if (it == imports_.end()) {
      if (early_.count(id)) return delivery::ignored;  // the first status stands
      if (early_.size() >= max_early) return delivery::overflow;
      early_.emplace(id, status);
      return delivery::kept;
    }
    event = std::exchange(it->second.event, nullptr);
    if (event == nullptr) return delivery::ignored;
  }
  api_.clSetUserEventStatus(event, status);
  api_.clReleaseEvent(event);
  return delivery::applied;
}

void event_imports::forget(protocol::object_id id) {
  cl_event event = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto it = imports_.find(id);
    if (it == imports_.end()) return;
    event = it->second.event;
    imports_.erase(it);
  }
  if (event) api_.clReleaseEvent(event);
}

void event_imports::clear() {
  std::vector<cl_event> events;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, i] : imports_)
      if (i.event) events.push_back(i.event);
    imports_.clear();
    early_.clear();
  }
  for (cl_event e : events) api_.clReleaseEvent(e);
}

size_t event_imports::early_count() const {
  std::lock_guard lock(mutex_);
  return early_.size();
}

}  // namespace ferry::server
