// Event entry points: waiting, queries, profiling, user events, callbacks.
#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/api/info_table.hpp"
#include "client/core/event_state.hpp"
#include "client/core/servers/server.hpp"
#include "client/core/user_events.hpp"

namespace ferry::client::api {

namespace {

using event_row = info_row<cl_event>;
const event_row event_info[] = {
    event_row::of<cl_command_queue>(CL_EVENT_COMMAND_QUEUE, [](cl_event e) { return e->queue; }),
    event_row::of<cl_context>(CL_EVENT_CONTEXT, [](cl_event e) { return e->context; }),
    event_row::of<cl_command_type>(CL_EVENT_COMMAND_TYPE, [](cl_event e) { return e->command_type; }),
    event_row::of<cl_int>(CL_EVENT_COMMAND_EXECUTION_STATUS, [](cl_event e) { return polled_status(e); }),
    event_row::of<cl_uint>(CL_EVENT_REFERENCE_COUNT, [](cl_event e) { return e->api_refs.load(); }),
};

// The counters the native device recorded: queued, submit, start, end; the
// end stands for CL_PROFILING_COMMAND_COMPLETE too.
using profiling_row = info_row<cl_event>;
const profiling_row profiling_info[] = {
    profiling_row::of<cl_ulong>(CL_PROFILING_COMMAND_QUEUED, [](cl_event e) { return e->profiling[0]; }),
    profiling_row::of<cl_ulong>(CL_PROFILING_COMMAND_SUBMIT, [](cl_event e) { return e->profiling[1]; }),
    profiling_row::of<cl_ulong>(CL_PROFILING_COMMAND_START, [](cl_event e) { return e->profiling[2]; }),
    profiling_row::of<cl_ulong>(CL_PROFILING_COMMAND_END, [](cl_event e) { return e->profiling[3]; }),
    profiling_row::of<cl_ulong>(CL_PROFILING_COMMAND_COMPLETE, [](cl_event e) { return e->profiling[3]; }),
};

}  // namespace

cl_int CL_API_CALL clWaitForEvents(cl_uint count, const cl_event* list) {
  return guarded(__func__, [&]() -> cl_int {
    // CL_INVALID_VALUE if num_events is zero or event_list is NULL.
    if (count == 0 || list == nullptr) return CL_INVALID_VALUE;
    for (cl_uint i = 0; i < count; ++i) {
      // CL_INVALID_EVENT if event objects specified in event_list are not valid event objects.
      if (!is_valid(list[i])) return CL_INVALID_EVENT;
      // CL_INVALID_CONTEXT if events specified in event_list do not belong to the same context.
      if (list[i]->context != list[0]->context) return CL_INVALID_CONTEXT;
    }
    return wait_for_events(list, count);
  });
}

cl_int CL_API_CALL clGetEventInfo(cl_event e, cl_event_info param, size_t size, void* value, size_t* size_ret) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(e);
    info_out out(size, value, size_ret);
    return answer_info(event_info, e, param, out);
  });
}

cl_int CL_API_CALL clGetEventProfilingInfo(cl_event e, cl_profiling_info param, size_t size, void* value,
                                           size_t* size_ret) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(e);
    // CL_PROFILING_INFO_NOT_AVAILABLE if CL_QUEUE_PROFILING_ENABLE is not set
    // for the command-queue, if the execution status of the command is not
    // CL_COMPLETE, or if event is a user event object.
    if (!e->queue || !e->queue->profiling() || e->status.load() != CL_COMPLETE)
      return CL_PROFILING_INFO_NOT_AVAILABLE;
    info_out out(size, value, size_ret);
    return answer_info(profiling_info, e, param, out);
  });
}

cl_int CL_API_CALL clRetainEvent(cl_event e) {
  return change_api_count(__func__, e, "e", count_change::retain);
}

cl_int CL_API_CALL clReleaseEvent(cl_event e) {
  return change_api_count(__func__, e, "e", count_change::release);
}

cl_event CL_API_CALL clCreateUserEvent(cl_context c, cl_int* errcode_ret) {
  return guarded_create<cl_event>(__func__, errcode_ret, [&]() -> result<cl_event> {
    FERRY_CHECK_HANDLE_R(c);
    if (!reachable(c)) return fail(unavailable_status(c));
    // A user event exists on every server of its context.
    return create_user_event_on_servers(c);
  });
}

cl_int CL_API_CALL clSetUserEventStatus(cl_event e, cl_int status) {
  return guarded(__func__, [&]() -> cl_int {
    // CL_INVALID_EVENT if event is not a valid user event object.
    if (!is_valid(e) || e->command_type != CL_COMMAND_USER) return CL_INVALID_EVENT;
    // CL_INVALID_VALUE if the execution_status is not CL_COMPLETE or a negative integer value.
    if (status > CL_COMPLETE) return CL_INVALID_VALUE;
    // CL_INVALID_OPERATION if the execution_status for event has already been changed.
    if (e->status.load() <= CL_COMPLETE) return CL_INVALID_OPERATION;
    set_user_event_status(e, status);
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL clSetEventCallback(cl_event e, cl_int type, void(CL_CALLBACK* notify)(cl_event, cl_int, void*),
                                      void* user_data) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(e);
    // CL_INVALID_VALUE if pfn_event_notify is NULL or if
    // command_exec_callback_type is not CL_SUBMITTED, CL_RUNNING, or CL_COMPLETE.
    if (notify == nullptr || (type != CL_SUBMITTED && type != CL_RUNNING && type != CL_COMPLETE))
      return CL_INVALID_VALUE;
    watch_event(e, type, notify, user_data);
    return CL_SUCCESS;
  });
}

}  // namespace ferry::client::api
