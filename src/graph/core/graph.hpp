// vx_graph: nodes, graph parameters, the state of verification and of the
// last run, and the plan verification compiled (graph/runtime).
#pragma once

#include "graph/core/reference.hpp"

#include <condition_variable>
#include <memory>
#include <thread>
#include <vector>

namespace ferry::graph {
class plan;
}

struct _vx_graph : _vx_reference {
  explicit _vx_graph(vx_context context);
  ~_vx_graph() override;

  /// The graph's nodes in creation order (each an internal reference).
  std::vector<vx_node> nodes;
  /// vxAddParameterToGraph: each graph parameter is a node's parameter.
  struct parameter {
    vx_node node;
    vx_uint32 index;
  };
  std::vector<parameter> parameters;

  /// VX_GRAPH_STATE.
  vx_enum state = VX_GRAPH_STATE_UNVERIFIED;
  /// A change since the last verification (vxIsGraphVerified is false).
  bool needs_verify = true;
  vx_perf_t perf{};
  /// What vxVerifyGraph compiled: the schedule, fused groups, buffers.
  std::unique_ptr<ferry::graph::plan> plan;

  /// vxScheduleGraph's run, which vxWaitGraph joins.
  std::thread worker;
  bool scheduled = false;
  vx_status last_status = VX_SUCCESS;
};
