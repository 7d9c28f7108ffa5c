// User kernels (vxAddUserKernel) run on the host, in the graph's order: their
// images' host copies are brought up to date before the call, and what they
// write is the current copy after it.
#pragma once

#include <VX/vx.h>

namespace ferry::graph {

/// At verification: the kernel's initializer, then the node's local data.
vx_status initialize_user_node(vx_node node);
/// When the plan is dropped: the kernel's deinitializer.
void deinitialize_user_node(vx_node node);
/// Runs the node's kernel function once.
vx_status run_user_kernel(vx_node node);

}  // namespace ferry::graph
