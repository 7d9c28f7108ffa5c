#include "transfer/command_event.hpp"

namespace ferry::transfer {

cl_int command_event::create(cl_context context, cl_device_id device) {
  cl_int rc = CL_SUCCESS;
  const cl_queue_properties profiled[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  queue_ = clCreateCommandQueueWithProperties(context, device, profiled, &rc);
  if (rc != CL_SUCCESS) return rc;
  scratch_ = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, nullptr, &rc);
  if (rc != CL_SUCCESS) return rc;
  status_ = clCreateUserEvent(context, &rc);
  if (rc != CL_SUCCESS) return rc;
  const cl_uchar zero = 0;
  rc = clEnqueueFillBuffer(queue_, scratch_, &zero, 1, 0, 1, 1, &status_, &event_);
  if (rc != CL_SUCCESS) return rc;
  clFlush(queue_);
  return CL_SUCCESS;
}

command_event::~command_event() {
  if (!finished_) finish(CL_DEVICE_NOT_AVAILABLE);
  // The fill runs once `status` is set; PoCL 3.1 reaches freed events when
  // its queue and events go while it is still pending (a later context's
  // commands then crash in pocl_lock_events_inorder). The fill is its
  // queue's only command, so waiting for it finishes the queue, and costs
  // nothing once the transfer has waited for it (clFinish would ask Ferry's
  // server, a round trip per transfer).
  if (event_) clWaitForEvents(1, &event_);
  else if (queue_) clFinish(queue_);
  if (event_) clReleaseEvent(event_);
  if (status_) clReleaseEvent(status_);
  if (scratch_) clReleaseMemObject(scratch_);
  if (queue_) clReleaseCommandQueue(queue_);
}

cl_event command_event::reference() {
  if (event_) clRetainEvent(event_);
  return event_;
}

void command_event::finish(cl_int status) {
  if (finished_) return;
  finished_ = true;
  if (status_) clSetUserEventStatus(status_, status < 0 ? status : CL_COMPLETE);
  if (queue_) clFlush(queue_);
}

cl_int command_event::wait() { return event_ ? clWaitForEvents(1, &event_) : CL_SUCCESS; }

}  // namespace ferry::transfer
