#include "transfer/transfer_events.hpp"

#include <initializer_list>

namespace ferry::transfer {
namespace {

cl_command_queue_properties queue_properties(cl_command_queue queue) {
  cl_command_queue_properties properties = 0;
  clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof properties, &properties, nullptr);
  return properties;
}

}  // namespace

cl_int transfer_events::create(cl_command_queue queue, cl_context context, cl_device_id device, cl_uint num_events,
                               const cl_event* wait_list, bool returned) {
  cl_int rc = CL_SUCCESS;
  const bool in_order = (queue_properties(queue) & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0;
  in_order_ = in_order;
  copies_ = clCreateCommandQueueWithProperties(context, device, nullptr, &rc);
  if (rc != CL_SUCCESS) return rc;
  gate_ = clCreateUserEvent(context, &rc);
  if (rc != CL_SUCCESS) return rc;
  if (returned) {
    const cl_queue_properties profiled[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    events_queue_ = clCreateCommandQueueWithProperties(context, device, profiled, &rc);
    if (rc != CL_SUCCESS) return rc;
    scratch_ = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, nullptr, &rc);
    if (rc != CL_SUCCESS) return rc;
    status_ = clCreateUserEvent(context, &rc);
    if (rc != CL_SUCCESS) return rc;
    const cl_uchar zero = 0;
    rc = clEnqueueFillBuffer(events_queue_, scratch_, &zero, 1, 0, 1, 1, &status_, &returned_);
    if (rc != CL_SUCCESS) return rc;
    clFlush(events_queue_);
  }
  // An out-of-order queue orders nothing by itself: with no wait list the
  // transfer may start at once, and later commands name its event.
  if (in_order || num_events > 0) {
    rc = clEnqueueMarkerWithWaitList(queue, num_events, wait_list, &before_);
    if (rc != CL_SUCCESS) return rc;
  }
  if (in_order) {
    rc = clEnqueueMarkerWithWaitList(queue, 1, &gate_, &hold_);
    if (rc != CL_SUCCESS) return rc;
  }
  clFlush(queue);
  return CL_SUCCESS;
}

transfer_events::~transfer_events() {
  // Whatever waits on the user events must not wait forever.
  if (!finished_) finish(CL_DEVICE_NOT_AVAILABLE);
  // The fill behind `status` runs once it is set; PoCL 3.1 reaches freed
  // events when its queue and events go while it is still pending (a later
  // context's commands then crash in pocl_lock_events_inorder).
  if (events_queue_) clFinish(events_queue_);
  for (cl_event e : {before_, gate_, hold_, status_, returned_})
    if (e) clReleaseEvent(e);
  if (scratch_) clReleaseMemObject(scratch_);
  if (kept_buffer_) clReleaseMemObject(kept_buffer_);
  if (copies_) clReleaseCommandQueue(copies_);
  if (events_queue_) clReleaseCommandQueue(events_queue_);
}

void transfer_events::keep_buffer(cl_mem buffer) {
  if (kept_buffer_ != nullptr || clRetainMemObject(buffer) != CL_SUCCESS) return;
  kept_buffer_ = buffer;
}

cl_int transfer_events::wait_for_start() {
  if (before_ == nullptr) return CL_SUCCESS;
  if (clWaitForEvents(1, &before_) != CL_SUCCESS) return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  cl_int status = CL_COMPLETE;
  clGetEventInfo(before_, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  return status < 0 ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS;
}

cl_event transfer_events::returned_reference() {
  if (returned_) clRetainEvent(returned_);
  return returned_;
}

void transfer_events::finish(cl_int status) {
  if (finished_) return;
  finished_ = true;
  if (status_) clSetUserEventStatus(status_, status < 0 ? status : CL_COMPLETE);
  if (gate_) clSetUserEventStatus(gate_, CL_COMPLETE);
  if (events_queue_) clFlush(events_queue_);
}

cl_int transfer_events::wait_returned() {
  if (returned_ == nullptr) return CL_SUCCESS;
  return clWaitForEvents(1, &returned_);
}

}  // namespace ferry::transfer
