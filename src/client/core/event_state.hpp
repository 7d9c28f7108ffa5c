// Event completion, waiting and callbacks: the parts of event semantics that
// the connection's reader threads and the API both use.
#pragma once

#include <array>
#include <functional>

#include "client/core/objects.hpp"

namespace ferry::client {

/// Records one arrived part of a command's outcome (see _cl_event::parts). A
/// negative status completes the event at once with that error.
void event_part_done(event* e, cl_int status, const std::array<cl_ulong, 4>* profiling);

/// Sets the final status (CL_COMPLETE or negative), wakes waiters and queues
/// the callbacks. Idempotent: the first final status wins.
void complete_event(event* e, cl_int status);

/// The event's status now (CL_EVENT_COMMAND_EXECUTION_STATUS). Polling an
/// event must make progress possible: while it is not complete, what is
/// queued for its context's servers is sent first.
cl_int polled_status(event* e);

/// Blocks until every event is complete or failed. Returns
/// CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST when any failed.
cl_int wait_for(const cl_event* events, cl_uint count);

/// clWaitForEvents past its checks (the events share a context): what they
/// depend on is sent first, on every server of the context, since they may
/// wait for each other; then a point where the program may look at the
/// host memory of coherent CL_MEM_USE_HOST_PTR buffers.
cl_int wait_for_events(const cl_event* events, cl_uint count);

/// clSetEventCallback past its checks: registers the callback and sends
/// what is queued, since a callback is a promise of progress.
void watch_event(event* e, cl_int trigger, void(CL_CALLBACK* function)(cl_event, cl_int, void*), void* user_data);

/// Registers a callback; runs it (on the callback thread) at once when the
/// event is already past `trigger`.
void add_event_callback(event* e, cl_int trigger, void(CL_CALLBACK* function)(cl_event, cl_int, void*),
                        void* data);

/// Runs `work` on the dedicated callback thread, never under Ferry's locks.
void run_on_callback_thread(std::function<void()> work);

/// Waits until every callback queued so far has run.
void wait_for_callbacks();

}  // namespace ferry::client
