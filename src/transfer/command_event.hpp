// The event a transfer command gives the application: a one-byte fill of a
// scratch buffer on a profiling queue of the transfer's own, behind a user
// event set to the transfer's outcome. So it is a real command's event
// (status, callbacks, profiling) that fails with the transfer alone: a
// marker would fail every later marker of its queue on PoCL, even an
// out-of-order one (docs/transfer.md, "How a transfer is a command").
#pragma once

#include <CL/cl.h>

namespace ferry::transfer {

class command_event {
 public:
  command_event() = default;
  /// Ends it with CL_DEVICE_NOT_AVAILABLE if it was never finished, so that
  /// nothing waits for it forever.
  ~command_event();
  command_event(const command_event&) = delete;
  command_event& operator=(const command_event&) = delete;

  /// Makes the event on a new queue of `context` and `device`.
  cl_int create(cl_context context, cl_device_id device);
  /// A new reference to it, for the application.
  cl_event reference();
  /// Sets the outcome: CL_COMPLETE, or a negative code (the event then fails). Once only.
  void finish(cl_int status);
  /// Waits until the event has ended.
  cl_int wait();

 private:
  cl_event status_ = nullptr;
  cl_event event_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_mem scratch_ = nullptr;
  bool finished_ = false;
};

}  // namespace ferry::transfer
