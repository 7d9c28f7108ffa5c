// Command queue entry points, markers, barriers, flush and finish.
#include <algorithm>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/core/command.hpp"
#include "client/core/event_state.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client::api {

namespace {

constexpr cl_command_queue_properties known_queue_properties =
    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_ON_DEVICE |
    CL_QUEUE_ON_DEVICE_DEFAULT;

result<cl_command_queue> create_queue(cl_context c, cl_device_id d, const cl_queue_properties* properties) {
  // CL_INVALID_CONTEXT if context is not a valid context.
  FERRY_CHECK_HANDLE_R(c);
  // CL_INVALID_DEVICE if device is not a valid device or is not associated with context.
  if (!is_valid(d) || !c->has_device(d)) return fail(CL_INVALID_DEVICE);
  cl_command_queue_properties bits = 0;
  std::vector<cl_queue_properties> array;
  bool seen_properties = false, seen_size = false;
  if (properties) {
    for (const cl_queue_properties* p = properties; *p != 0; p += 2) {
      switch (p[0]) {
        case CL_QUEUE_PROPERTIES:
          // CL_INVALID_VALUE if values specified in properties are not valid.
          if (seen_properties || (p[1] & ~known_queue_properties)) return fail(CL_INVALID_VALUE);
          seen_properties = true;
          bits = p[1];
          break;
        case CL_QUEUE_SIZE:
          if (seen_size) return fail(CL_INVALID_VALUE);
          seen_size = true;
          break;
        default: return fail(CL_INVALID_VALUE);
      }
      array.push_back(p[0]);
      array.push_back(p[1]);
    }
    array.push_back(0);
  }
  // CL_INVALID_VALUE if CL_QUEUE_ON_DEVICE_DEFAULT without CL_QUEUE_ON_DEVICE,
  // or CL_QUEUE_SIZE without CL_QUEUE_ON_DEVICE.
  if ((bits & CL_QUEUE_ON_DEVICE_DEFAULT) && !(bits & CL_QUEUE_ON_DEVICE)) return fail(CL_INVALID_VALUE);
  if (seen_size && !(bits & CL_QUEUE_ON_DEVICE)) return fail(CL_INVALID_VALUE);
  // CL_INVALID_QUEUE_PROPERTIES if values specified in properties are valid
  // but are not supported by the device (device-side queues are not served).
  if ((bits & CL_QUEUE_ON_DEVICE) || (bits & ~d->queue_properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
    return fail(CL_INVALID_QUEUE_PROPERTIES);
  if (!d->accepts_work() || !reachable(c)) return fail(CL_DEVICE_NOT_AVAILABLE);
  auto* q = new queue();
  q->id = next_object_id();
  q->context = c;
  retain_internal(c);
  q->device = d;
  q->properties = bits;
  q->properties_array = std::move(array);
  d->host->link->post(protocol::create_queue{q->id, c->id, d->index, bits});
  return static_cast<cl_command_queue>(q);
}

// Sends a marker or barrier; clFinish uses an internal blocking marker.
template <class Message>
cl_int enqueue_sync_point(cl_command_queue q, cl_command_type type, cl_uint count, const cl_event* list,
                          cl_event* event_out, blocking mode) {
  FERRY_CHECK_HANDLE(q);
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  command cmd(q, type, count, list, event_out, mode);
  if (event* e = cmd.tracked()) {
    std::lock_guard lock(q->reads_mutex);
    for (event* read : q->pending_reads)
      if (read->status.load() > CL_COMPLETE) {
        retain_internal(read);
        e->implied.push_back(read);
      }
  }
  Message message;
  message.header = cmd.header;
  return cmd.submit(message);
}

}  // namespace

cl_command_queue CL_API_CALL clCreateCommandQueueWithProperties(cl_context c, cl_device_id d,
                                                                const cl_queue_properties* properties,
                                                                cl_int* errcode_ret) {
  return guarded_create<cl_command_queue>(__func__, errcode_ret, [&] { return create_queue(c, d, properties); });
}

cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context c, cl_device_id d, cl_command_queue_properties bits,
                                                  cl_int* errcode_ret) {
  return guarded_create<cl_command_queue>(__func__, errcode_ret, [&]() -> result<cl_command_queue> {
    // CL_INVALID_VALUE if values specified in properties are not valid.
    if (bits & ~(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE)) {
      FERRY_CHECK_HANDLE_R(c);
      if (!is_valid(d) || !c->has_device(d)) return fail(CL_INVALID_DEVICE);
      return fail(CL_INVALID_VALUE);
    }
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, bits, 0};
    auto r = create_queue(c, d, bits ? props : nullptr);
    if (r && bits) {
      // The legacy call reports no properties array.
      (*r)->properties_array.clear();
    }
    return r;
  });
}

cl_int CL_API_CALL clRetainCommandQueue(cl_command_queue q) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(q);
    retain_api(q);
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL clReleaseCommandQueue(cl_command_queue q) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(q);
    release_api(q);
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info param, size_t size,
                                         void* value, size_t* size_ret) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(q);
    info_out out(size, value, size_ret);
    switch (param) {
      case CL_QUEUE_CONTEXT: return out.value(q->context);
      case CL_QUEUE_DEVICE: return out.value(q->device);
      case CL_QUEUE_REFERENCE_COUNT: return out.value(cl_uint{q->api_refs.load()});
      case CL_QUEUE_PROPERTIES: return out.value(q->properties);
      case CL_QUEUE_PROPERTIES_ARRAY: return out.array(q->properties_array);
      case CL_QUEUE_SIZE: return CL_INVALID_COMMAND_QUEUE;  // host queues have no size
      case CL_QUEUE_DEVICE_DEFAULT: return out.value(static_cast<cl_command_queue>(nullptr));
      default: return CL_INVALID_VALUE;
    }
  });
}

cl_int CL_API_CALL clSetCommandQueueProperty(cl_command_queue q, cl_command_queue_properties, cl_bool,
                                             cl_command_queue_properties*) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(q);
    return CL_INVALID_OPERATION;  // deprecated in OpenCL 1.1; properties are fixed at creation
  });
}

cl_int CL_API_CALL clFlush(cl_command_queue q) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(q);
    connection* link = q->device->host->link.get();
    // Offline, the flush waits in the replay log with the commands it covers.
    if (link->ended() || !in_current_sessions(q->context)) return CL_DEVICE_NOT_AVAILABLE;
    link->post(protocol::flush_queue{q->id});
    link->flush();
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL clFinish(cl_command_queue q) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(q);
    // Nothing enqueued since the last point known complete, and no read
    // data in transit: nothing to wait for (the common case of a program
    // that calls clFinish after a blocking read).
    if (q->submitted.load(std::memory_order_acquire) == q->complete_through.load(std::memory_order_acquire)) {
      std::lock_guard lock(q->reads_mutex);
      bool reads_done = std::all_of(q->pending_reads.begin(), q->pending_reads.end(),
                                    [](event* e) { return e->status.load() <= CL_COMPLETE; });
      if (reads_done) return CL_SUCCESS;
    }
    // Commands already accepted wait for the server to come back, and so
    // does the marker that waits for them.
    if (!q->device->host->link->wait_online()) return CL_DEVICE_NOT_AVAILABLE;
    // Coherent CL_MEM_USE_HOST_PTR buffers written on this queue come back
    // with the finish.
    pull_before_finish(q);
    // A marker whose completion means every earlier command of the queue is done.
    cl_int code = enqueue_sync_point<protocol::enqueue_marker>(q, CL_COMMAND_MARKER, 0, nullptr, nullptr,
                                                               blocking::yes);
    if (code != CL_SUCCESS && code != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) return code;
    // Reads report completion after their data, which may trail the marker.
    std::vector<cl_event> reads;
    {
      std::lock_guard lock(q->reads_mutex);
      reads.swap(q->pending_reads);
    }
    if (!reads.empty()) {
      connection::waiting scope(*q->device->host->link);
      wait_for(reads.data(), static_cast<cl_uint>(reads.size()));
      for (cl_event e : reads) release_internal(e);
    }
    settle_coherent_buffers(q->context);
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint count, const cl_event* list,
                                               cl_event* event_out) {
  return guarded(__func__, [&] {
    return enqueue_sync_point<protocol::enqueue_marker>(q, CL_COMMAND_MARKER, count, list, event_out, blocking::no);
  });
}

cl_int CL_API_CALL clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint count, const cl_event* list,
                                                cl_event* event_out) {
  return guarded(__func__, [&] {
    return enqueue_sync_point<protocol::enqueue_barrier>(q, CL_COMMAND_BARRIER, count, list, event_out,
                                                         blocking::no);
  });
}

cl_int CL_API_CALL clEnqueueMarker(cl_command_queue q, cl_event* event_out) {
  return guarded(__func__, [&]() -> cl_int {
    // CL_INVALID_VALUE if event is NULL.
    if (is_valid(q) && event_out == nullptr) return CL_INVALID_VALUE;
    return enqueue_sync_point<protocol::enqueue_marker>(q, CL_COMMAND_MARKER, 0, nullptr, event_out, blocking::no);
  });
}

cl_int CL_API_CALL clEnqueueBarrier(cl_command_queue q) {
  return guarded(__func__, [&] {
    return enqueue_sync_point<protocol::enqueue_barrier>(q, CL_COMMAND_BARRIER, 0, nullptr, nullptr, blocking::no);
  });
}

cl_int CL_API_CALL clEnqueueWaitForEvents(cl_command_queue q, cl_uint count, const cl_event* list) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(q);
    // CL_INVALID_VALUE if num_events is 0 or event_list is NULL.
    if (count == 0 || list == nullptr) return CL_INVALID_VALUE;
    for (cl_uint i = 0; i < count; ++i)
      if (!is_valid(list[i])) return CL_INVALID_EVENT;
    return enqueue_sync_point<protocol::enqueue_barrier>(q, CL_COMMAND_BARRIER, count, list, nullptr, blocking::no);
  });
}

}  // namespace ferry::client::api
