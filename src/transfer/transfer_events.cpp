#include "transfer/transfer_events.hpp"

#include <initializer_list>

#include "transfer/block_pipeline.hpp"

namespace ferry::transfer {

cl_int transfer_events::create(cl_command_queue queue, cl_context context, cl_device_id device, bool in_order,
                               cl_uint num_events, const cl_event* wait_list, bool returned) {
  cl_int rc = CL_SUCCESS;
  copies_ = clCreateCommandQueueWithProperties(context, device, nullptr, &rc);
  if (rc != CL_SUCCESS) return rc;
  gate_ = clCreateUserEvent(context, &rc);
  if (rc != CL_SUCCESS) return rc;
  if (returned) {
    returned_ = std::make_unique<command_event>();
    rc = returned_->create(context, device);
    if (rc != CL_SUCCESS) return rc;
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
  created_ = true;
  return CL_SUCCESS;
}

transfer_events::~transfer_events() {
  // Whatever waits on the user events must not wait forever.
  if (!finished_) finish(CL_DEVICE_NOT_AVAILABLE);
  returned_.reset();
  // The markers have ended (the gate is open) before they go: PoCL 3.1 still
  // works on a marker it failed behind a failed wait list after the call that
  // failed it has returned, and aborted in pocl_lock_events_inorder when its
  // last reference went meanwhile (the unit test of a failed wait list, 37
  // runs in 60). Not when create() stopped halfway: `before` may then wait for
  // an event the application never sets.
  if (created_)
    for (cl_event e : {before_, hold_})
      if (e) clWaitForEvents(1, &e);
  for (cl_event e : {before_, gate_, hold_})
    if (e) clReleaseEvent(e);
  if (kept_buffer_) clReleaseMemObject(kept_buffer_);
  if (copies_) clReleaseCommandQueue(copies_);
}

void transfer_events::keep_buffer(cl_mem buffer) {
  if (kept_buffer_ != nullptr || clRetainMemObject(buffer) != CL_SUCCESS) return;
  kept_buffer_ = buffer;
}

cl_int transfer_events::wait_for_start() { return wait_for_marker(before_); }

cl_event transfer_events::returned_reference() { return returned_ ? returned_->reference() : nullptr; }

void transfer_events::finish(cl_int status) {
  if (finished_) return;
  finished_ = true;
  if (returned_) {
    returned_->finish(status);
    // Later commands of the queue start once the transfer's event has
    // ended, as behind any command of an in-order queue.
    returned_->wait();
  }
  if (gate_) clSetUserEventStatus(gate_, CL_COMPLETE);
}

cl_int transfer_events::wait_returned() { return returned_ ? returned_->wait() : CL_SUCCESS; }

}  // namespace ferry::transfer
