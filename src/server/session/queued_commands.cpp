#include "server/session/queued_commands.hpp"

#include <algorithm>

namespace ferry::server {
namespace {

// Checkpoints every 1/64 of the limit (at most every 1024 commands): the
// count is then off by at most that much per queue, and a small limit (in
// tests) is exact.
uint64_t interval_for(uint64_t limit) { return std::clamp<uint64_t>(limit / 64, 1, 1024); }

}  // namespace

queued_commands::queued_commands(const native::api& api, uint64_t limit)
    : api_(api), limit_(limit), interval_(interval_for(limit)) {}

uint64_t queued_commands::count() {
  if (limit_ != 0 && count_ >= limit_) poll();
  return count_;
}

bool queued_commands::wants_event(protocol::object_id queue) const {
  if (limit_ == 0) return false;
  auto it = since_checkpoint_.find(queue);
  uint64_t since = it == since_checkpoint_.end() ? 0 : it->second;
  return since + 1 >= interval_;
}

void queued_commands::enqueued(protocol::object_id queue, cl_command_queue handle, bool out_of_order,
                               cl_event event) {
  if (limit_ == 0) return;
  ++count_;
  uint64_t& since = since_checkpoint_[queue];
  if (++since < interval_) return;
  if (!out_of_order && event != nullptr) {
    // In order: this command completes after every earlier one.
    api_.clRetainEvent(event);
    checkpoints_.push_back({event, since});
    since = 0;
    return;
  }
  add_checkpoint(queue, handle);
}

void queued_commands::add_checkpoint(protocol::object_id queue, cl_command_queue handle) {
  uint64_t& since = since_checkpoint_[queue];
  if (since == 0) return;
  // A marker without a wait list waits for every command enqueued before it.
  cl_event marker = nullptr;
  if (api_.clEnqueueMarkerWithWaitList(handle, 0, nullptr, &marker) != CL_SUCCESS || marker == nullptr) return;
  checkpoints_.push_back({marker, since});
  since = 0;
}

void queued_commands::queue_released(protocol::object_id queue, cl_command_queue handle) {
  if (limit_ == 0) return;
  add_checkpoint(queue, handle);
  // Without a marker (the enqueue failed) they count until the session ends:
  // erring towards refusing.
  since_checkpoint_.erase(queue);
}

void queued_commands::poll() {
  auto done = std::remove_if(checkpoints_.begin(), checkpoints_.end(), [&](const checkpoint& c) {
    cl_int status = CL_QUEUED;
    if (api_.clGetEventInfo(c.event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) !=
            CL_SUCCESS ||
        status > CL_COMPLETE)
      return false;
    // Complete, or failed: either way nothing it covers is queued any more.
    count_ -= std::min(count_, c.covers);
    api_.clReleaseEvent(c.event);
    return true;
  });
  checkpoints_.erase(done, checkpoints_.end());
}

void queued_commands::release_all() {
  for (const checkpoint& c : checkpoints_) api_.clReleaseEvent(c.event);
  checkpoints_.clear();
  since_checkpoint_.clear();
  count_ = 0;
}

}  // namespace ferry::server
