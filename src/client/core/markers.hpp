// Commands that carry no work of their own: markers and barriers, and the
// commands Ferry answers with one (a map that fetches nothing, an unmap that
// sends nothing back, a migration within one server, a launch of no
// work-items), some with work to run when they complete.
#pragma once

#include <functional>

#include "client/core/command.hpp"

namespace ferry::client {

enum class sync_kind { marker, barrier };

/// Whether the command's event also waits for reads whose data is still on
/// its way: the server completes a marker before their data has crossed the
/// bulk stream (see _cl_event::implied).
enum class pending_reads { ignored, implied };

/// A marker or barrier of type `type` after the wait list.
cl_int enqueue_sync(queue* q, sync_kind kind, cl_command_type type, cl_uint count, const cl_event* list,
                    cl_event* event_out, blocking mode, pending_reads reads);

/// Where the work of enqueue_marker_then runs: on the thread that receives
/// the completion (Ferry's own work), or on the callback thread
/// (application code).
enum class run_on { reader_thread, callback_thread };

/// A marker that runs `work` once it has succeeded, before its event
/// completes; it implies the queue's pending reads.
cl_int enqueue_marker_then(queue* q, cl_command_type type, cl_uint count, const cl_event* list, cl_event* event_out,
                           std::function<void()> work, run_on where);

}  // namespace ferry::client
