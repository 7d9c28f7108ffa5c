#include "client/core/servers/availability.hpp"

#include <mutex>
#include <utility>
#include <vector>

#include "client/core/event_state.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client {

namespace {

struct listener {
  cl_ferry_availability_notify notify;
  void* user_data;
};

std::mutex listeners_mutex;
std::vector<listener>& listeners() {
  static auto* list = new std::vector<listener>;  // outlives the callback thread at exit
  return *list;
}

}  // namespace

void add_availability_callback(cl_ferry_availability_notify notify, void* user_data) {
  std::lock_guard lock(listeners_mutex);
  listeners().push_back({notify, user_data});
}

void announce_availability(const server& s, bool available) {
  std::vector<listener> now;
  {
    std::lock_guard lock(listeners_mutex);
    now = listeners();
  }
  if (now.empty()) return;
  // The callback thread runs them: a listener may call OpenCL, even on
  // this server, which needs the connection's reader free.
  std::vector<cl_device_id> devices(s.devices.begin(), s.devices.end());
  run_on_callback_thread([now = std::move(now), devices = std::move(devices), available] {
    for (cl_device_id d : devices)
      for (const listener& l : now) l.notify(d, available ? CL_TRUE : CL_FALSE, l.user_data);
  });
}

}  // namespace ferry::client
