// What every transfer command does around its own work: checks the arguments
// it shares with clEnqueueReadBuffer / clEnqueueWriteBuffer, makes the events
// that place it in its queue (transfer_events), runs the work once the wait
// list has ended (on the calling thread when blocking, else on the pool), and
// ends the events with the work's outcome.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <functional>
#include <string>

namespace ferry::transfer {

/// What the work has to hand: the queue's context and device, and the
/// transfer's own in-order queue for its device copies.
struct transfer_setting {
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  cl_command_queue copies = nullptr;
  /// The application's queue runs its commands in order.
  bool in_order = true;
  /// For work that starts before its wait list has ended (enqueue_transfer's
  /// `starts_early`): the marker behind the wait list, for the commands it
  /// enqueues to wait for (null when nothing comes before). The work waits
  /// with wait_for_start before it touches the buffer itself.
  cl_event start = nullptr;
};

/// Waits for `setting.start`: CL_SUCCESS, or
/// CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST when the wait list failed.
cl_int wait_for_start(const transfer_setting& setting);

/// The outcome of the work: CL_SUCCESS, or a negative OpenCL code and the
/// cause in words for the log.
struct transfer_outcome {
  cl_int status = CL_SUCCESS;
  std::string cause;
};

/// Which way the bytes go, for the buffer's host-access flags.
enum class direction { from_device, to_device, both };

/// One transfer command's call, from its arguments to its event.
struct transfer_call {
  const char* name;  // the API function, for the log
  cl_command_queue queue;
  cl_mem buffer;
  direction way;
  /// The ranges of `buffer` it touches (offset, size); two for a sendrecv.
  size_t ranges[2][2];
  size_t range_count;
  cl_bool blocking;
  cl_uint num_events;
  const cl_event* wait_list;
  cl_event* event;
};

/// Checks the common arguments and returns the OpenCL code for the first
/// that is wrong (CL_SUCCESS when all are right); fills `setting`.
cl_int check_call(const transfer_call& call, transfer_setting& setting);

/// Enqueues the command: `work` runs once the wait list has ended, or at
/// once when it `starts_early` (it then orders itself after
/// `setting.start`). Returns the code for the call (CL_SUCCESS, an
/// enqueue's failure, or for a blocking call the work's outcome).
cl_int enqueue_transfer(const transfer_call& call, const transfer_setting& setting,
                        std::function<transfer_outcome(const transfer_setting&)> work, bool starts_early = false);

}  // namespace ferry::transfer
