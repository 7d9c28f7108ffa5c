// What a server can tell about this process's session, for Ferry's
// extension functions (include/CL/cl_ext_ferry.h): a round trip's time, the
// objects alive on both sides, the control messages sent and run, the
// daemon's link counters and its worker processes.
#pragma once

#include <CL/cl_ext_ferry.h>

#include <vector>

#include "client/core/objects.hpp"
#include "client/core/result.hpp"
#include "protocol/messages.hpp"

namespace ferry::client {

/// The time of one round trip to the server of `d`, in nanoseconds.
result<cl_ulong> ping_server(const device* d);

/// The objects alive in this process and, on the server of `d`, in its
/// session, counted after every command sent before the call.
result<cl_ferry_object_counts> object_counts(const device* d);

struct message_counts {
  cl_ulong sent = 0;
  cl_ulong run = 0;
};

/// The control messages this process sent in its session with the server of
/// `d` (this query's included), and those the server has run.
result<message_counts> control_message_counts(const device* d);

/// The link counters of the server of `d`.
result<std::vector<cl_ferry_link_counters>> link_counters(const device* d);

/// `from` as the extension API gives it: its strings cut to fit their fields,
/// always NUL-terminated.
cl_ferry_worker c_worker(const protocol::worker_entry& from);

/// The worker processes of the server of `d`. CL_INVALID_OPERATION for a
/// server whose protocol version predates them (protocol::workers_version):
/// it would take the request for a violation and end the session.
result<std::vector<cl_ferry_worker>> server_workers(const device* d);

}  // namespace ferry::client
