#include "transfer/transfer_command.hpp"

#include <memory>
#include <utility>

#include "common/log.hpp"
#include "transfer/block_pipeline.hpp"
#include "transfer/transfer_events.hpp"
#include "transfer/worker_pool.hpp"

namespace ferry::transfer {
namespace {

// Log lines say which library wrote them (the application may load libferry too).
[[maybe_unused]] const bool named = (set_log_component("ferry-transfer"), true);

/// Runs `work` for one command and ends its events; returns its outcome.
cl_int run(const transfer_call& call, const transfer_setting& given, transfer_events& events,
         const std::function<transfer_outcome(const transfer_setting&)>& work, bool starts_early) {
  transfer_outcome outcome;
  if (cl_int started = starts_early ? CL_SUCCESS : events.wait_for_start(); started != CL_SUCCESS) {
    outcome = {started, "an event of its wait list failed"};
  } else {
    transfer_setting setting = given;
    setting.copies = events.copies();
    setting.start = events.start();
    outcome = work(setting);
    // Work that started early never ends before its wait list, even where
    // it had nothing to move (MPI_PROC_NULL): later commands wait for its
    // event as for the commands before it.
    if (starts_early) {
      if (cl_int started = events.wait_for_start(); started != CL_SUCCESS && outcome.status == CL_SUCCESS)
        outcome = {started, "an event of its wait list failed"};
    }
  }
  if (outcome.status != CL_SUCCESS)
    FERRY_WARN("transfer", "%s failed (%d): %s", call.name, outcome.status, outcome.cause.c_str());
  events.finish(outcome.status == CL_SUCCESS ? CL_COMPLETE : outcome.status);
  return outcome.status;
}

}  // namespace

cl_int wait_for_start(const transfer_setting& setting) { return wait_for_marker(setting.start); }

cl_int check_call(const transfer_call& call, transfer_setting& setting) {
  if (call.queue == nullptr ||
      clGetCommandQueueInfo(call.queue, CL_QUEUE_CONTEXT, sizeof setting.context, &setting.context, nullptr) !=
          CL_SUCCESS ||
      clGetCommandQueueInfo(call.queue, CL_QUEUE_DEVICE, sizeof setting.device, &setting.device, nullptr) !=
          CL_SUCCESS)
    return CL_INVALID_COMMAND_QUEUE;
  cl_command_queue_properties properties = 0;
  clGetCommandQueueInfo(call.queue, CL_QUEUE_PROPERTIES, sizeof properties, &properties, nullptr);
  setting.in_order = (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0;
  cl_context buffer_context = nullptr;
  cl_mem_object_type type = 0;
  size_t buffer_size = 0;
  cl_mem_flags flags = 0;
  if (call.buffer == nullptr ||
      clGetMemObjectInfo(call.buffer, CL_MEM_CONTEXT, sizeof buffer_context, &buffer_context, nullptr) !=
          CL_SUCCESS ||
      clGetMemObjectInfo(call.buffer, CL_MEM_TYPE, sizeof type, &type, nullptr) != CL_SUCCESS ||
      clGetMemObjectInfo(call.buffer, CL_MEM_SIZE, sizeof buffer_size, &buffer_size, nullptr) != CL_SUCCESS ||
      clGetMemObjectInfo(call.buffer, CL_MEM_FLAGS, sizeof flags, &flags, nullptr) != CL_SUCCESS ||
      type != CL_MEM_OBJECT_BUFFER)
    return CL_INVALID_MEM_OBJECT;
  if (buffer_context != setting.context) return CL_INVALID_CONTEXT;
  if ((call.num_events > 0) != (call.wait_list != nullptr)) return CL_INVALID_EVENT_WAIT_LIST;
  for (cl_uint i = 0; i < call.num_events; ++i) {
    cl_context event_context = nullptr;
    if (call.wait_list[i] == nullptr ||
        clGetEventInfo(call.wait_list[i], CL_EVENT_CONTEXT, sizeof event_context, &event_context, nullptr) !=
            CL_SUCCESS)
      return CL_INVALID_EVENT_WAIT_LIST;
    if (event_context != setting.context) return CL_INVALID_CONTEXT;
  }
  for (size_t r = 0; r < call.range_count; ++r) {
    const size_t offset = call.ranges[r][0], size = call.ranges[r][1];
    if (offset > buffer_size || size > buffer_size - offset) return CL_INVALID_VALUE;
  }
  // As clEnqueueReadBuffer / clEnqueueWriteBuffer would refuse them.
  const bool host_reads = call.way != direction::to_device, host_writes = call.way != direction::from_device;
  if (host_reads && (flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS))) return CL_INVALID_OPERATION;
  if (host_writes && (flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS))) return CL_INVALID_OPERATION;
  return CL_SUCCESS;
}

cl_int enqueue_transfer(const transfer_call& call, const transfer_setting& setting,
                        std::function<transfer_outcome(const transfer_setting&)> work, bool starts_early) {
  auto events = std::make_shared<transfer_events>();
  // A program may release the buffer right after a non-blocking call (PoCL
  // aborted in can_run_command when the transfer then copied from it).
  events->keep_buffer(call.buffer);
  if (cl_int rc = events->create(call.queue, setting.context, setting.device, setting.in_order, call.num_events,
                                 call.wait_list, call.event != nullptr);
      rc != CL_SUCCESS)
    return rc;
  if (call.event) *call.event = events->returned_reference();
  if (call.blocking) {
    // The cause's own code, as a blocking clEnqueueReadBuffer returns its failure.
    if (cl_int outcome = run(call, setting, *events, work, starts_early); outcome != CL_SUCCESS) return outcome;
    return events->wait_returned() == CL_SUCCESS ? CL_SUCCESS : CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  }
  // The call's arguments live on in the task (the wait list is not needed any more).
  transfer_call kept = call;
  kept.wait_list = nullptr;
  kept.event = nullptr;
  auto task = [kept, setting, events, starts_early, work = std::move(work)] {
    (void)run(kept, setting, *events, work, starts_early);
  };
  if (setting.in_order) {
    run_after(call.queue, std::move(task));
  } else if (!run_in_background(task)) {
    task();
  }
  return CL_SUCCESS;
}

}  // namespace ferry::transfer
