// Command queues on their device's server: creation, flush and finish.
#pragma once

#include <vector>

#include "client/core/objects.hpp"

namespace ferry::client {

/// A queue of `c` on `d` with the properties `bits` (`array`: as given, for
/// CL_QUEUE_PROPERTIES_ARRAY), posted to the device's server (the id is
/// ours, so nothing waits).
cl_command_queue create_queue_on_server(cl_context c, cl_device_id d, cl_command_queue_properties bits,
                                        std::vector<cl_queue_properties> array);

/// clFlush: the server flushes its native queue, and what is queued for the
/// server is sent. CL_DEVICE_NOT_AVAILABLE once the session ended.
cl_int flush_queue(queue* q);

/// clFinish: waits until every command enqueued so far has completed and
/// the data of every read has arrived.
cl_int finish_queue(queue* q);

}  // namespace ferry::client
