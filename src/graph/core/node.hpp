// vx_node: a kernel instance in a graph, with its parameters and attributes.
#pragma once

#include "graph/core/kernel.hpp"
#include "graph/core/reference.hpp"

#include <vector>

struct _vx_node : _vx_reference {
  explicit _vx_node(vx_context context) : _vx_reference(VX_TYPE_NODE, context) {}
  ~_vx_node() override;

  vx_graph graph = nullptr;  // not counted: the graph holds the node
  vx_kernel kernel = nullptr;  // an internal reference
  /// Parameter references (internal references; null where unset).
  std::vector<vx_reference> parameters;

  /// VX_NODE_STATUS: the last run's outcome.
  vx_status status = VX_SUCCESS;
  vx_perf_t perf{};
  /// VX_NODE_BORDER (default: undefined).
  vx_border_t border{VX_BORDER_UNDEFINED, {}};
  /// vxAssignNodeCallback.
  vx_nodecomplete_f callback = nullptr;
  /// VX_NODE_LOCAL_DATA_SIZE / _PTR (user kernels).
  vx_size local_data_size = 0;
  void* local_data = nullptr;
  bool local_data_owned = false;
  /// vxReplicateNode: which parameters are replicated over object arrays.
  std::vector<vx_bool> replicated;
  bool is_replicated = false;
  /// vxRemoveNode: out of its graph, kept alive only by handles.
  bool removed = false;
  /// VX_NODE_VALID_RECT_RESET.
  vx_bool valid_rect_reset = vx_false_e;
};

namespace ferry::graph {

/// Whether parameter `index` of `node` is one the node writes.
inline bool is_output(vx_node node, vx_uint32 index) {
  return node->kernel->parameters[index].direction == VX_OUTPUT;
}

}  // namespace ferry::graph
