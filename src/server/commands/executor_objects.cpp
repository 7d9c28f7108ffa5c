// Contexts, queues and user events: their creation, the commands that need
// only a queue (markers, barriers, flushes), and release_object for every
// kind of object.
#include "server/commands/executor.hpp"
#include "server/commands/executor_inline.hpp"

#include <algorithm>
#include <vector>

#include "common/cl_errors.hpp"
#include "common/log.hpp"
#include "server/native/context_releaser.hpp"

namespace ferry::server {

namespace p = protocol;

// ---------------------------------------------------------------------------
// Contexts

bool executor::on(const p::create_context& m) {
  if (duplicate(m.id)) return false;
  if (cl_int refused = admit_objects(); refused != CL_SUCCESS) return record_failed(m.id, object_kind::context, refused);
  if (m.devices.empty()) return record_failed(m.id, object_kind::context, CL_INVALID_VALUE);
  std::vector<cl_device_id> devices;
  if (!map_devices(m.devices, devices)) return record_failed(m.id, object_kind::context, CL_INVALID_DEVICE);
  const native::device_entry* first = catalog_.find(m.devices.front());
  native::callback_behaviour callbacks;
  for (uint32_t index : m.devices) {
    const native::device_entry* device = catalog_.find(index);
    if (device->platform != first->platform) {
      // One native context cannot span native platforms (yet).
      FERRY_WARN("session", "session %s: context %llu spans native platforms '%s' and '%s'", core_->label.c_str(),
                 static_cast<unsigned long long>(m.id), first->platform_name.c_str(), device->platform_name.c_str());
      return record_failed(m.id, object_kind::context, CL_INVALID_CONTEXT);
    }
    callbacks.runs_on_failure = callbacks.runs_on_failure && device->callbacks.runs_on_failure;
    callbacks.reports_failure = callbacks.reports_failure && device->callbacks.reports_failure;
    callbacks.polled = callbacks.polled || device->callbacks.polled;
  }
  cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(first->platform),
                                        0};
  cl_int error = CL_SUCCESS;
  cl_context context = api_.clCreateContext(properties, static_cast<cl_uint>(devices.size()), devices.data(),
                                            nullptr, nullptr, &error);
  if (context == nullptr) return record_failed(m.id, object_kind::context, error);
  // Held until the client releases it, or until the teardown where events
  // are parked in it (native/event_parking.hpp).
  api_.clRetainContext(context);
  contexts_.push_back({context, first->blocking_context_release});
  object_entry entry;
  entry.kind = object_kind::context;
  entry.handle = context;
  entry.platform = first->platform;
  entry.device = first->id;
  entry.callbacks = callbacks;
  objects_.insert(m.id, entry);
  return true;
}

void executor::let_go_of_context(cl_context context) {
  auto it = std::find_if(contexts_.begin(), contexts_.end(),
                         [context](const made_context& made) { return made.context == context; });
  if (it == contexts_.end() || api_.holds_parked_events(context)) return;
  made_context made = *it;
  contexts_.erase(it);
  release_made_context(made);
}

void executor::release_made_context(const made_context& made) {
  if (made.blocking_release) context_releaser::release(api_, made.context);
  else api_.clReleaseContext(made.context);
}

// ---------------------------------------------------------------------------
// Queues

bool executor::on(const p::create_queue& m) {
  if (duplicate(m.id)) return false;
  object_table::found context = find_for_creation<object_kind::context>(m.context);
  if (!context) return record_failed(m.id, object_kind::queue, context.error());
  const native::device_entry* device = catalog_.find(m.device);
  if (device == nullptr) return record_failed(m.id, object_kind::queue, CL_INVALID_DEVICE);
  cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES, static_cast<cl_queue_properties>(m.properties), 0};
  cl_int error;
  cl_command_queue queue =
      api_.clCreateCommandQueueWithProperties(context->as_context(), device->id, properties, &error);
  if (queue == nullptr) return record_failed(m.id, object_kind::queue, error);
  auto entry = object_entry::native(object_kind::queue, queue, context->as_context());
  entry.device = device->id;
  entry.profiling = (m.properties & CL_QUEUE_PROFILING_ENABLE) != 0;
  entry.out_of_order = (m.properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
  entry.callbacks = context->callbacks;
  objects_.insert(m.id, entry);
  return true;
}

bool executor::on(const p::enqueue_marker& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  return enqueue_native(m.header, *queue, [&](cl_event* event) {
    return api_.clEnqueueMarkerWithWaitList(queue->as_queue(), wait_count(), wait_events(), event);
  });
}

bool executor::on(const p::enqueue_barrier& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  return enqueue_native(m.header, *queue, [&](cl_event* event) {
    return api_.clEnqueueBarrierWithWaitList(queue->as_queue(), wait_count(), wait_events(), event);
  });
}

bool executor::on(const p::flush_queue& m) {
  object_table::found queue = objects_.find<object_kind::queue>(m.queue);
  if (!queue) {
    FERRY_DEBUG("session", "session %s: flush_queue names %llu, which is no live queue; ignored", core_->label.c_str(),
                static_cast<unsigned long long>(m.queue));
    return true;
  }
  api_.clFlush(queue->as_queue());
  untouch(queue->as_queue());
  return true;
}

// ---------------------------------------------------------------------------
// User events

object_entry executor::new_user_event(const object_entry& context, cl_int& error) {
  cl_event event = api_.clCreateUserEvent(context.as_context(), &error);
  auto entry = object_entry::native(object_kind::event, event, context.as_context());
  entry.callbacks = context.callbacks;
  entry.user_event = true;
  return entry;
}

bool executor::on(const p::create_user_event& m) {
  if (duplicate(m.id)) return false;
  object_table::found context = find_for_creation<object_kind::context>(m.context);
  if (!context) return record_failed(m.id, object_kind::event, context.error());
  cl_int error;
  object_entry entry = new_user_event(*context, error);
  if (entry.handle == nullptr) return record_failed(m.id, object_kind::event, error);
  objects_.insert(m.id, entry);
  return true;
}

bool executor::on(const p::set_user_event_status& m) {
  object_entry* entry = objects_.find_mutable(m.id);
  if (entry == nullptr || entry->kind != object_kind::event || !entry->user_event || entry->handle == nullptr) {
    FERRY_WARN("session", "session %s: set_user_event_status names %llu, which is no live user event; ignored",
               core_->label.c_str(), static_cast<unsigned long long>(m.id));
    return true;
  }
  cl_int rc = api_.clSetUserEventStatus(entry->as_event(), m.status);
  if (rc != CL_SUCCESS) {
    FERRY_WARN("session", "session %s: setting user event %llu to %d failed: %s", core_->label.c_str(),
               static_cast<unsigned long long>(m.id), m.status, cl_error_name(rc).c_str());
    return true;
  }
  entry->status_set = true;
  if (m.status < 0 && !entry->callbacks.runs_on_failure) {
    // The platform will not call back for the commands this failure ends.
    flush_touched();
    size_t found = core_->callbacks.sweep_failures(api_);
    FERRY_DEBUG("session", "session %s: user event %llu failed; %zu dependent commands reported",
                core_->label.c_str(), static_cast<unsigned long long>(m.id), found);
  }
  return true;
}

// ---------------------------------------------------------------------------
// Releases

bool executor::on(const p::release_object& m) {
  object_entry* entry = objects_.find_mutable(m.id);
  if (entry && entry->kind == object_kind::svm && entry->handle) {
    object_entry taken;
    objects_.take(m.id, taken);
    retire_svm(taken);
    return true;
  }
  if (entry && entry->kind == object_kind::context && entry->handle) {
    release_own_queue(entry->as_context());
    let_go_of_context(entry->as_context());
  }
  if (entry && entry->kind == object_kind::event && entry->user_event) core_->imports.forget(m.id);
  if (entry && entry->kind == object_kind::mem) content_sizes_.erase(m.id);
  if (entry && entry->kind == object_kind::queue && entry->handle) {
    queued_.queue_released(m.id, entry->as_queue());
    fence_released_queue(*entry);
    // A queue about to go must not stay in the flush list (its release flushes it).
    untouch(entry->as_queue());
  }
  if (!objects_.erase(m.id)) {
    FERRY_WARN("session", "session %s: release_object names unknown id %llu; ignored", core_->label.c_str(),
               static_cast<unsigned long long>(m.id));
  }
  return true;
}

}  // namespace ferry::server
