// The events that make a transfer an ordinary command of its queue.
//
// The transfer runs on the host, so the platform knows nothing of it; these
// events place it in the queue (docs/transfer.md, "How a transfer is a
// command"):
//   before    a marker on the application's queue behind the wait list (on
//             an in-order queue, behind every earlier command): the transfer
//             starts once it has ended;
//   gate      a user event, set to CL_COMPLETE when the transfer has ended,
//             failed or not, and `hold`, a marker behind it on an in-order
//             queue, so that later commands there wait for the transfer. It
//             never fails: a failed transfer affects nothing else in the queue
//             (PoCL fails every later command of a queue behind a failed one);
//   status    a user event set to the transfer's outcome, and `returned`, the
//             event the application gets: a one-byte fill of a scratch buffer
//             on a queue of this transfer's own, behind `status`, so that it is
//             a real command's event with a queue, profiling and callbacks and
//             fails (negatively) with the transfer alone.
// The device copies go on a second queue of the transfer's own, enqueued
// only once `before` has ended, so they never wait for the application's
// commands and nothing on the application's queue waits for them directly.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <memory>

#include "transfer/command_event.hpp"

namespace ferry::transfer {

class transfer_events {
 public:
  /// Creates the events on `queue` (whose context and device are given)
  /// behind `wait_list`; the application's event only when `returned` is
  /// asked for (most calls pass no event). On failure returns the OpenCL
  /// code and leaves nothing enqueued that would wait forever.
  cl_int create(cl_command_queue queue, cl_context context, cl_device_id device, bool in_order,
                cl_uint num_events, const cl_event* wait_list, bool returned);
  ~transfer_events();
  transfer_events() = default;
  transfer_events(const transfer_events&) = delete;
  transfer_events& operator=(const transfer_events&) = delete;

  /// Waits for `before` to end: CL_SUCCESS, or
  /// CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST when the wait list failed.
  cl_int wait_for_start();
  /// Keeps `buffer` alive until these events go: the program may release it
  /// once the call has returned, as it may with any enqueued command, and the
  /// transfer still copies to or from it.
  void keep_buffer(cl_mem buffer);
  /// The transfer's own in-order queue for its device copies.
  cl_command_queue copies() const { return copies_; }
  /// `before`: commands the transfer enqueues may wait for it on the device
  /// instead of the host waiting (null when nothing comes before).
  cl_event start() const { return before_; }
  /// The event to give the application (a new reference), if create made one.
  cl_event returned_reference();
  /// Ends the transfer with `status` (CL_COMPLETE or a negative code): sets
  /// `status`, then opens `gate`. Once only.
  void finish(cl_int status);
  /// The application's event, if any, has ended (a blocking call returns then).
  cl_int wait_returned();

 private:
  cl_event before_ = nullptr;
  cl_event gate_ = nullptr;
  cl_event hold_ = nullptr;
  std::unique_ptr<command_event> returned_;  // when the call asked for an event
  cl_command_queue copies_ = nullptr;
  cl_mem kept_buffer_ = nullptr;
  bool finished_ = false;
  bool created_ = false;  // create() enqueued everything
};

}  // namespace ferry::transfer
