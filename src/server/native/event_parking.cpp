#include "server/native/event_parking.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

namespace ferry::server::native {

namespace {

struct parked_event {
  cl_event event;
  cl_context context;
};

// Parking is rare next to releases of completed events; one lock for the
// whole daemon is enough.
// Never destroyed: events parked past the last teardown stay reachable
// (LeakSanitizer does not call them leaks) and no release races exit.
std::mutex parking_mutex;
std::vector<parked_event>& parked = *new std::vector<parked_event>;
// The next sweep of the parked events runs once this many are parked, so
// that a sweep costs O(1) per parked event on average.
constexpr size_t first_sweep = 64;
size_t sweep_at = first_sweep;

cl_int status_of(cl_event event, cl_int& status) {
  return ::clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
}

/// Releases the parked events that completed since; failed and unfinished
/// ones stay. Called with parking_mutex held.
void sweep_completed() {
  auto kept = std::remove_if(parked.begin(), parked.end(), [](const parked_event& p) {
    cl_int status = CL_QUEUED;
    if (status_of(p.event, status) != CL_SUCCESS || status != CL_COMPLETE) return false;
    ::clReleaseEvent(p.event);
    return true;
  });
  parked.erase(kept, parked.end());
  sweep_at = std::max(first_sweep, 2 * parked.size());
}

}  // namespace

cl_int CL_API_CALL release_event_when_safe(cl_event event) {
  cl_int status = CL_QUEUED;
  // Completed (the common case, one query) or invalid (the real release
  // gives the error): released now.
  if (status_of(event, status) != CL_SUCCESS || status == CL_COMPLETE) return ::clReleaseEvent(event);
  cl_context context = nullptr;
  if (::clGetEventInfo(event, CL_EVENT_CONTEXT, sizeof context, &context, nullptr) != CL_SUCCESS)
    return ::clReleaseEvent(event);
  std::lock_guard lock(parking_mutex);
  parked.push_back({event, context});
  if (parked.size() >= sweep_at) sweep_completed();
  return CL_SUCCESS;
}

void release_parked_events(cl_context context) {
  std::vector<cl_event> released;
  {
    std::lock_guard lock(parking_mutex);
    auto kept = std::remove_if(parked.begin(), parked.end(), [&](const parked_event& p) {
      if (p.context != context) return false;
      released.push_back(p.event);
      return true;
    });
    parked.erase(kept, parked.end());
  }
  // Outside the lock: a release may run PoCL's teardown of the event.
  for (cl_event event : released) ::clReleaseEvent(event);
}

bool holds_parked_events(cl_context context) {
  std::lock_guard lock(parking_mutex);
  return std::any_of(parked.begin(), parked.end(), [&](const parked_event& p) { return p.context == context; });
}

size_t parked_event_count() {
  std::lock_guard lock(parking_mutex);
  return parked.size();
}

}  // namespace ferry::server::native
