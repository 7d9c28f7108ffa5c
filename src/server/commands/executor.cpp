// The executor itself: construction, the bookkeeping every handler shares
// (ids, quotas), session-level messages and the teardown. The handlers live
// by object family in executor_*.cpp; executor_plumbing.cpp holds what every
// enqueue goes through.
#include "server/commands/executor.hpp"
#include "server/commands/executor_inline.hpp"
#include "server/files/file_start.hpp"

#include <string>

#include "common/cl_errors.hpp"
#include "common/log.hpp"

namespace ferry::server {

namespace p = protocol;

executor::executor(std::shared_ptr<session_core> core, const native::device_catalog& catalog)
    : core_(std::move(core)),
      outbox_(core_, &core_->outbox),
      api_(core_->api),
      catalog_(catalog),
      objects_(core_->api),
      queued_(core_->api, core_->quota.limits().queued) {
  wait_list_.reserve(64);
  touched_.reserve(8);
}

executor::~executor() { shutdown(); }

bool executor::violate(std::string why) {
  violation_ = std::move(why);
  return false;
}

bool executor::duplicate(p::object_id id) {
  if (!objects_.contains(id)) return false;
  violation_ = "object id " + std::to_string(id) + " is already in use";
  return true;
}

bool executor::record_failed(p::object_id id, object_kind kind, cl_int error) {
  // A client that ignores its failures could grow the table without end:
  // past twice the object quota a failure is no longer recorded (later uses
  // of the id then fail as for an unknown one).
  if (uint64_t limit = core_->quota.limits().objects; limit != 0 && objects_.size() >= 2 * limit) {
    FERRY_DEBUG("session", "session %s: creating %s %llu failed (%s); not recorded, the table is full",
                core_->label.c_str(), kind_name(kind), static_cast<unsigned long long>(id),
                cl_error_name(error).c_str());
    return true;
  }
  object_entry entry;
  entry.kind = kind;
  entry.error = error;
  objects_.insert(id, entry);
  FERRY_DEBUG("session", "session %s: creating %s %llu failed: %s", core_->label.c_str(), kind_name(kind),
              static_cast<unsigned long long>(id), cl_error_name(error).c_str());
  return true;
}

cl_int executor::admit_objects(size_t count, uint64_t device_bytes) {
  for (size_t i = 0; i < count; ++i) {
    if (cl_int refused = core_->quota.admit_object(objects_.size() + i); refused != CL_SUCCESS) return refused;
  }
  if (device_bytes == 0) return CL_SUCCESS;
  return core_->quota.admit_memory(objects_.memory(), device_bytes);
}

bool executor::map_devices(const std::vector<uint32_t>& indices, std::vector<cl_device_id>& out) {
  out.clear();
  for (uint32_t index : indices) {
    const native::device_entry* device = catalog_.find(index);
    if (device == nullptr) return false;
    out.push_back(device->id);
  }
  return true;
}

// ---------------------------------------------------------------------------
// Session-level messages

bool executor::on(const p::ping& m) { return answer(p::pong{m.request}); }

bool executor::on(const p::get_server_info& m) {
  p::server_info reply = catalog_.server_info();
  reply.request = m.request;
  reply.peer_address = core_->peer_address;
  return answer(reply);
}

bool executor::on(const p::get_object_counts& m) {
  FERRY_DEBUG("session", "session %s: %zu objects (daemon total %lld)", core_->label.c_str(), objects_.size(),
              static_cast<long long>(object_table::daemon_total()));
  return answer(p::object_counts{m.request, objects_.size(), core_->control_in.load(std::memory_order_acquire)});
}

void executor::count_frame() {
  core_->control_in.fetch_add(1, std::memory_order_acq_rel);
}

void executor::ack_if_due() {
  // Acks ride on completions; a client that sends much and waits for
  // nothing still hears every so often, so that it can drop what it keeps.
  constexpr uint64_t unacknowledged_frames = 128;
  const uint64_t now = core_->control_in.load(std::memory_order_acquire);
  if (now - ack_requested_at_ < unacknowledged_frames) return;
  ack_requested_at_ = now;
  core_->outbox.request_ack();
}

bool executor::on(const p::ack& m) {
  if (!core_->acked) return true;  // no replay kept (tests, the fuzz target)
  if (core_->acked(m)) return true;
  return violate("ack of " + std::to_string(m.control) + " control and " + std::to_string(m.bulk) +
                 " bulk frames, more than were sent");
}

bool executor::on(const p::lane_ack& m) {
  if (!core_->lanes_acked) return true;  // no replay kept (tests, the fuzz target)
  if (core_->lanes_acked(m)) return true;
  return violate("lane_ack of " + std::to_string(m.received.size()) +
                 " bulk lanes' frames, more lanes than the session takes or more frames than were sent");
}

bool executor::on(const p::goodbye&) {
  stop_requested_ = true;
  return true;
}

// ---------------------------------------------------------------------------
// Teardown

void executor::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  if (cuda_) cuda_->shutdown();
  // Nothing may wait forever: writes whose bytes never came, user events the
  // client never set. (A negative status ends the commands behind them.)
  core_->transfers.fail_pending(CL_DEVICE_NOT_AVAILABLE);
  for (const auto& weak : deferred_writes_)
    if (auto landing = weak.lock()) landing->failed(CL_DEVICE_NOT_AVAILABLE);
  deferred_writes_.clear();
  bool sweep = false;
  objects_.for_each([&](p::object_id, object_entry& entry) {
    if (entry.kind == object_kind::event && entry.user_event && entry.handle && !entry.status_set) {
      api_.clSetUserEventStatus(entry.as_event(), CL_DEVICE_NOT_AVAILABLE);
      entry.status_set = true;
    }
    if (!entry.callbacks.runs_on_failure) sweep = true;
  });
  // File commands whose wait lists never ended: their gates open (failed).
  for (const auto& weak : file_starts_)
    if (auto start = weak.lock()) start->abandon();
  file_starts_.clear();
  flush_touched();
  objects_.for_each([&](p::object_id, object_entry& entry) {
    if (entry.kind == object_kind::queue && entry.handle) api_.clFinish(entry.as_queue());
  });
  finish_own_queues();
  // Every file job has ended (the queues above waited for their gates); its
  // queues go before the contexts below.
  files_.reset();
  queued_.release_all();
  // Queues the client released may still run commands on SVM memory.
  for (const queue_fence& fence : queue_fences_) api_.clWaitForEvents(1, &fence.marker);
  if (sweep) core_->callbacks.sweep_failures(api_);
  size_t released = objects_.size();
  objects_.release_all();
  release_retired_svm();
  // Nothing is left that could notify the events parked in them.
  for (const made_context& made : contexts_) {
    api_.release_parked_events(made.context);
    release_made_context(made);
  }
  contexts_.clear();
  FERRY_DEBUG("session", "session %s: released %zu objects (daemon total %lld)", core_->label.c_str(), released,
              static_cast<long long>(object_table::daemon_total()));
}

}  // namespace ferry::server
