// Command queue entry points, markers, barriers, flush and finish.
#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/api/info_table.hpp"
#include "client/core/markers.hpp"
#include "client/core/queues.hpp"

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
  if (!d->accepts_work() || !reachable(c)) return fail(unavailable_status(c));
  return create_queue_on_server(c, d, bits, std::move(array));
}

// A marker or barrier enqueued by the application.
cl_int enqueue_sync_point(cl_command_queue q, sync_kind kind, cl_uint count, const cl_event* list,
                          cl_event* event_out) {
  FERRY_CHECK_HANDLE(q);
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  cl_command_type type = kind == sync_kind::marker ? CL_COMMAND_MARKER : CL_COMMAND_BARRIER;
  return enqueue_sync(q, kind, type, count, list, event_out, blocking::no, pending_reads::implied);
}

using queue_row = info_row<cl_command_queue>;
const queue_row queue_info[] = {
    queue_row::of<cl_context>(CL_QUEUE_CONTEXT, [](cl_command_queue q) { return q->context; }),
    queue_row::of<cl_device_id>(CL_QUEUE_DEVICE, [](cl_command_queue q) { return q->device; }),
    queue_row::of<cl_uint>(CL_QUEUE_REFERENCE_COUNT, [](cl_command_queue q) { return q->api_refs.load(); }),
    queue_row::of<cl_command_queue_properties>(CL_QUEUE_PROPERTIES, [](cl_command_queue q) { return q->properties; }),
    queue_row::of<std::vector<cl_queue_properties>>(CL_QUEUE_PROPERTIES_ARRAY,
                                                    [](cl_command_queue q) { return q->properties_array; }),
    // Host queues have no size.
    queue_row::of<cl_uint>(CL_QUEUE_SIZE,
                           [](cl_command_queue) -> result<cl_uint> { return fail(CL_INVALID_COMMAND_QUEUE); }),
    queue_row::of<cl_command_queue>(CL_QUEUE_DEVICE_DEFAULT, [](cl_command_queue) { return nullptr; }),
};

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
  return change_api_count(__func__, q, "q", count_change::retain);
}

cl_int CL_API_CALL clReleaseCommandQueue(cl_command_queue q) {
  return change_api_count(__func__, q, "q", count_change::release);
}

cl_int CL_API_CALL clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info param, size_t size,
                                         void* value, size_t* size_ret) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(q);
    info_out out(size, value, size_ret);
    return answer_info(queue_info, q, param, out);
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
    return flush_queue(q);
  });
}

cl_int CL_API_CALL clFinish(cl_command_queue q) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(q);
    return finish_queue(q);
  });
}

cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint count, const cl_event* list,
                                               cl_event* event_out) {
  return guarded(__func__, [&] {
    return enqueue_sync_point(q, sync_kind::marker, count, list, event_out);
  });
}

cl_int CL_API_CALL clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint count, const cl_event* list,
                                                cl_event* event_out) {
  return guarded(__func__, [&] {
    return enqueue_sync_point(q, sync_kind::barrier, count, list, event_out);
  });
}

cl_int CL_API_CALL clEnqueueMarker(cl_command_queue q, cl_event* event_out) {
  return guarded(__func__, [&]() -> cl_int {
    // CL_INVALID_VALUE if event is NULL.
    if (is_valid(q) && event_out == nullptr) return CL_INVALID_VALUE;
    return enqueue_sync_point(q, sync_kind::marker, 0, nullptr, event_out);
  });
}

cl_int CL_API_CALL clEnqueueBarrier(cl_command_queue q) {
  return guarded(__func__, [&] {
    return enqueue_sync_point(q, sync_kind::barrier, 0, nullptr, nullptr);
  });
}

cl_int CL_API_CALL clEnqueueWaitForEvents(cl_command_queue q, cl_uint count, const cl_event* list) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(q);
    // CL_INVALID_VALUE if num_events is 0 or event_list is NULL.
    if (count == 0 || list == nullptr) return CL_INVALID_VALUE;
    for (cl_uint i = 0; i < count; ++i)
      if (!is_valid(list[i])) return CL_INVALID_EVENT;
    return enqueue_sync_point(q, sync_kind::barrier, count, list, nullptr);
  });
}

}  // namespace ferry::client::api
