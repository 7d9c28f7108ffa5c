// Contexts on the servers of their devices: one id, each server with its own
// devices (posted: the id is ours, so nothing waits).
#pragma once

#include <vector>

#include "client/core/objects.hpp"

namespace ferry::client {

using context_notify = void(CL_CALLBACK*)(const char*, const void*, size_t, void*);

/// A context of the `count` devices at `devices` (each once, in the order
/// of first appearance) with the parsed `properties`.
cl_context create_context_on_servers(cl_uint count, const cl_device_id* devices,
                                     std::vector<cl_context_properties> properties, context_notify notify,
                                     void* user_data);

}  // namespace ferry::client
