// What the graph, node and parameter entry points share: changing a node's
// parameters, verifying and running a graph, and the rules that keep a
// verified graph's plan in step with its nodes.
#pragma once

#include <VX/vx.h>

#include <thread>

namespace ferry::graph {

/// Drops a graph's plan (user kernels' deinitializers run).
void drop_plan(vx_graph graph);
/// A change that needs a new verification before the next run.
void invalidate(vx_graph graph);
/// Scheduled (vxScheduleGraph until vxWaitGraph) or running.
bool is_running(vx_graph graph);
/// vxVerifyGraph's work (under the lock).
vx_status verify_graph(vx_graph graph);
/// Verifies the graph if it needs it, then runs it once (under the lock).
vx_status run_graph(vx_graph graph);
/// Waits, without the lock, for every scheduled run of the context's graphs.
void join_graph_runs(vx_context context);

/// vxSetParameterByIndex's work: checks `value` against the kernel's
/// signature; a value that changes what verification settled (another type,
/// format or size) makes the graph need verification again.
vx_status set_node_parameter(vx_node node, vx_uint32 index, vx_reference value);
/// A parameter object of a node's (node set) or a kernel's (kernel set) parameter `index`.
vx_parameter make_parameter(vx_node node, vx_kernel kernel, vx_uint32 index);

}  // namespace ferry::graph
