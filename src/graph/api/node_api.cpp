// The node's and the parameter's entry points.
#include "graph/api/attributes.hpp"
#include "graph/api/entry.hpp"
#include "graph/api/graph_ops.hpp"
#include "graph/core/graph.hpp"
#include "graph/core/image.hpp"
#include "graph/core/kernel.hpp"
#include "graph/core/node.hpp"
#include "graph/core/parameter.hpp"
#include "graph/core/scalar.hpp"

#include <algorithm>
#include <cstdlib>

using namespace ferry::graph;

_vx_node::~_vx_node() {
  for (vx_reference ref : parameters)
    if (ref != nullptr) release_internal(ref);
  if (kernel != nullptr) release_internal(kernel);
  if (local_data_owned) std::free(local_data);
}

_vx_parameter::~_vx_parameter() {
  if (node != nullptr) release_internal(node);
  if (kernel != nullptr) release_internal(kernel);
}

namespace {

const char* label(vx_node node) { return node->name.empty() ? node->kernel->name.c_str() : node->name.c_str(); }

// Whether `next` can take `previous`'s place without a new verification: the
// same kind of object with what verification settled (an image's format and
// size, a scalar's type) unchanged.
bool same_shape(vx_reference previous, vx_reference next) {
  if (previous == nullptr || previous->type != next->type || previous->is_virtual || next->is_virtual) return false;
  if (next->type == VX_TYPE_IMAGE) {
    auto* a = reinterpret_cast<vx_image>(previous);
    auto* b = reinterpret_cast<vx_image>(next);
    return a->format == b->format && a->width == b->width && a->height == b->height && a->memory != nullptr &&
           (b->memory != nullptr || b->parent != nullptr) && a->uniform == b->uniform;
  }
  if (next->type == VX_TYPE_SCALAR)
    return reinterpret_cast<vx_scalar>(previous)->data_type == reinterpret_cast<vx_scalar>(next)->data_type;
  return false;
}

}  // namespace

namespace ferry::graph {

vx_status set_node_parameter(vx_node node, vx_uint32 index, vx_reference value) {
  if (node->removed || node->graph == nullptr) {
    add_log(node, VX_ERROR_INVALID_NODE, "node %s: it was removed from its graph", label(node));
    return VX_ERROR_INVALID_NODE;
  }
  if (index >= node->parameters.size()) {
    add_log(node, VX_ERROR_INVALID_PARAMETERS, "node %s (%s): the kernel has %zu parameters, not %u", label(node),
            node->kernel->name.c_str(), node->parameters.size(), index + 1);
    return VX_ERROR_INVALID_PARAMETERS;
  }
  vx_reference ref = find(value, VX_TYPE_REFERENCE);
  if (ref == nullptr) {
    add_log(node, VX_ERROR_INVALID_REFERENCE, "node %s (%s): parameter %u is not a live reference", label(node),
            node->kernel->name.c_str(), index);
    return VX_ERROR_INVALID_REFERENCE;
  }
  const _vx_kernel::parameter_info& info = node->kernel->parameters[index];
  if (info.type != VX_TYPE_REFERENCE && ref->type != info.type) {
    add_log(node, VX_ERROR_INVALID_TYPE, "node %s (%s): parameter %u takes a %s, not a %s", label(node),
            node->kernel->name.c_str(), index, type_name(info.type), type_name(ref->type));
    return VX_ERROR_INVALID_TYPE;
  }
  if (ref->context != node->context) {
    add_log(node, VX_ERROR_INVALID_REFERENCE, "node %s (%s): parameter %u belongs to another context", label(node),
            node->kernel->name.c_str(), index);
    return VX_ERROR_INVALID_REFERENCE;
  }
  if (is_running(node->graph)) {
    add_log(node, VX_ERROR_GRAPH_SCHEDULED, "node %s: its graph is scheduled; wait for it first", label(node));
    return VX_ERROR_GRAPH_SCHEDULED;
  }
  vx_reference previous = node->parameters[index];
  if (previous == ref) return VX_SUCCESS;
  if (!same_shape(previous, ref)) invalidate(node->graph);
  add_internal(ref);
  node->parameters[index] = ref;
  if (previous != nullptr) release_internal(previous);
  return VX_SUCCESS;
}

vx_parameter make_parameter(vx_node node, vx_kernel kernel, vx_uint32 index) {
  auto* parameter = new _vx_parameter(node != nullptr ? node->context : kernel->context);
  parameter->node = node;
  parameter->kernel = kernel;
  parameter->index = index;
  if (node != nullptr) add_internal(node);
  if (kernel != nullptr) add_internal(kernel);
  register_reference(parameter);
  return parameter;
}

}  // namespace ferry::graph

VX_API_ENTRY vx_node VX_API_CALL vxCreateGenericNode(vx_graph graph, vx_kernel kernel) {
  vx_context context = context_for_failure(graph);
  return entry_object<vx_node>("vxCreateGenericNode", context, [&](vx_status& status) -> vx_node {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    vx_kernel k = as<_vx_kernel>(kernel, VX_TYPE_KERNEL);
    if (g == nullptr || k == nullptr) {
      status = VX_ERROR_INVALID_REFERENCE;
      return nullptr;
    }
    if (k->context != g->context) {
      add_log(g, VX_ERROR_INVALID_REFERENCE, "vxCreateGenericNode: the kernel %s is of another context",
              k->name.c_str());
      status = VX_ERROR_INVALID_REFERENCE;
      return nullptr;
    }
    if (!k->finalized || !k->enabled) {
      add_log(g, VX_ERROR_INVALID_PARAMETERS, "vxCreateGenericNode: the kernel %s is not finalized",
              k->name.c_str());
      status = VX_ERROR_INVALID_PARAMETERS;
      return nullptr;
    }
    if (is_running(g)) {
      add_log(g, VX_ERROR_GRAPH_SCHEDULED, "vxCreateGenericNode: the graph is scheduled; wait for it first");
      status = VX_ERROR_GRAPH_SCHEDULED;
      return nullptr;
    }
    auto* node = new _vx_node(g->context);
    node->graph = g;
    node->kernel = k;
    add_internal(k);
    node->parameters.assign(k->parameters.size(), nullptr);
    node->replicated.assign(k->parameters.size(), vx_false_e);
    node->local_data_size = k->local_data_size;
    node->border.mode = VX_BORDER_UNDEFINED;
    register_reference(node);
    add_internal(node);  // the graph's
    g->nodes.push_back(node);
    invalidate(g);
    return node;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryNode(vx_node node, vx_enum attribute, void* ptr, vx_size size) {
  return entry("vxQueryNode", [&]() -> vx_status {
    vx_node n = as<_vx_node>(node, VX_TYPE_NODE);
    if (n == nullptr) return VX_ERROR_INVALID_REFERENCE;
    switch (attribute) {
      case VX_NODE_STATUS: return answer(ptr, size, n->status);
      case VX_NODE_PERFORMANCE: return answer(ptr, size, n->perf);
      case VX_NODE_BORDER: return answer(ptr, size, n->border);
      case VX_NODE_LOCAL_DATA_SIZE: return answer(ptr, size, n->local_data_size);
      case VX_NODE_LOCAL_DATA_PTR: return answer(ptr, size, n->local_data);
      case VX_NODE_PARAMETERS: return answer(ptr, size, static_cast<vx_uint32>(n->parameters.size()));
      case VX_NODE_IS_REPLICATED: return answer(ptr, size, n->is_replicated ? vx_true_e : vx_false_e);
      case VX_NODE_REPLICATE_FLAGS: {
        if (ptr == nullptr || size != n->replicated.size() * sizeof(vx_bool)) return VX_ERROR_INVALID_PARAMETERS;
        std::copy(n->replicated.begin(), n->replicated.end(), static_cast<vx_bool*>(ptr));
        return VX_SUCCESS;
      }
      case VX_NODE_VALID_RECT_RESET: return answer(ptr, size, n->valid_rect_reset);
      default: return refuse("vxQueryNode", VX_ERROR_NOT_SUPPORTED, "no node attribute 0x%x", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSetNodeAttribute(vx_node node, vx_enum attribute, const void* ptr,
                                                      vx_size size) {
  return entry("vxSetNodeAttribute", [&]() -> vx_status {
    vx_node n = as<_vx_node>(node, VX_TYPE_NODE);
    if (n == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (n->graph != nullptr && is_running(n->graph)) return VX_ERROR_GRAPH_SCHEDULED;
    switch (attribute) {
      case VX_NODE_BORDER: {
        vx_border_t border{};
        vx_status status = take(ptr, size, border);
        if (status != VX_SUCCESS) return status;
        if (border.mode != VX_BORDER_UNDEFINED && border.mode != VX_BORDER_CONSTANT &&
            border.mode != VX_BORDER_REPLICATE) {
          add_log(n, VX_ERROR_INVALID_VALUE, "node %s: 0x%x is no border mode", label(n), border.mode);
          return VX_ERROR_INVALID_VALUE;
        }
        n->border = border;
        // The border is compiled into the node's kernel.
        if (n->graph != nullptr) invalidate(n->graph);
        return VX_SUCCESS;
      }
      case VX_NODE_LOCAL_DATA_SIZE: {
        if (n->kernel->definition != nullptr) return VX_ERROR_NOT_SUPPORTED;
        if (n->graph != nullptr && !n->graph->needs_verify) return VX_ERROR_NOT_SUPPORTED;
        return take(ptr, size, n->local_data_size);
      }
      case VX_NODE_LOCAL_DATA_PTR: {
        if (n->kernel->definition != nullptr) return VX_ERROR_NOT_SUPPORTED;
        void* data = nullptr;
        vx_status status = take(ptr, size, data);
        if (status != VX_SUCCESS) return status;
        if (n->local_data_owned) std::free(n->local_data);
        n->local_data = data;
        n->local_data_owned = false;
        return VX_SUCCESS;
      }
      case VX_NODE_VALID_RECT_RESET: return take(ptr, size, n->valid_rect_reset);
      default:
        return refuse("vxSetNodeAttribute", VX_ERROR_NOT_SUPPORTED, "node attribute 0x%x cannot be set", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseNode(vx_node* node) { return release_handle(node, VX_TYPE_NODE); }

VX_API_ENTRY vx_status VX_API_CALL vxRemoveNode(vx_node* node) {
  if (node == nullptr) return VX_ERROR_INVALID_REFERENCE;
  return entry("vxRemoveNode", [&]() -> vx_status {
    vx_node n = as<_vx_node>(*node, VX_TYPE_NODE);
    if (n == nullptr) return VX_ERROR_INVALID_REFERENCE;
    vx_graph g = n->graph;
    if (g != nullptr) {
      if (is_running(g)) return VX_ERROR_GRAPH_SCHEDULED;
      g->nodes.erase(std::remove(g->nodes.begin(), g->nodes.end(), n), g->nodes.end());
      // Graph parameters of the node go with it (their slots stay, empty).
      for (auto& p : g->parameters)
        if (p.node == n) p.node = nullptr;
      invalidate(g);
      n->graph = nullptr;
      n->removed = true;
      release_internal(n);
    }
    vx_status status = release_external(n);
    if (status == VX_SUCCESS) *node = nullptr;
    return status;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxAssignNodeCallback(vx_node node, vx_nodecomplete_f callback) {
  return entry("vxAssignNodeCallback", [&]() -> vx_status {
    vx_node n = as<_vx_node>(node, VX_TYPE_NODE);
    if (n == nullptr) return VX_ERROR_INVALID_REFERENCE;
    // A callback is replaced only by first clearing it (the spec).
    if (callback != nullptr && n->callback != nullptr) {
      add_log(n, VX_ERROR_NOT_SUPPORTED, "node %s: it has a callback already; assign NULL first", label(n));
      return VX_ERROR_NOT_SUPPORTED;
    }
    n->callback = callback;
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_nodecomplete_f VX_API_CALL vxRetrieveNodeCallback(vx_node node) {
  return entry_value<vx_nodecomplete_f>("vxRetrieveNodeCallback", nullptr, [&]() -> vx_nodecomplete_f {
    vx_node n = as<_vx_node>(node, VX_TYPE_NODE);
    return n == nullptr ? nullptr : n->callback;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSetNodeTarget(vx_node node, vx_enum target_enum, const char* target_string) {
  return entry("vxSetNodeTarget", [&]() -> vx_status {
    if (as<_vx_node>(node, VX_TYPE_NODE) == nullptr) return VX_ERROR_INVALID_REFERENCE;
    // One target: the context's devices, over which every node is tiled.
    if (target_enum == VX_TARGET_ANY) return VX_SUCCESS;
    if (target_enum == VX_TARGET_STRING && target_string != nullptr && std::string(target_string) == "any")
      return VX_SUCCESS;
    return VX_ERROR_NOT_SUPPORTED;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReplicateNode(vx_graph graph, vx_node first_node, vx_bool replicate[],
                                                   vx_uint32 number_of_parameters) {
  return entry("vxReplicateNode", [&]() -> vx_status {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    vx_node n = as<_vx_node>(first_node, VX_TYPE_NODE);
    if (g == nullptr || n == nullptr) return VX_ERROR_INVALID_REFERENCE;
    // Replication runs a node over object arrays and pyramids, which this
    // implementation does not have.
    add_log(n, VX_ERROR_NOT_SUPPORTED, "node %s: vxReplicateNode needs object arrays, which Ferry does not have",
            label(n));
    return VX_ERROR_NOT_SUPPORTED;
  });
}

VX_API_ENTRY vx_parameter VX_API_CALL vxGetParameterByIndex(vx_node node, vx_uint32 index) {
  vx_context context = context_for_failure(node);
  return entry_object<vx_parameter>("vxGetParameterByIndex", context, [&](vx_status& status) -> vx_parameter {
    vx_node n = as<_vx_node>(node, VX_TYPE_NODE);
    if (n == nullptr) {
      status = VX_ERROR_INVALID_REFERENCE;
      return nullptr;
    }
    if (index >= n->parameters.size()) {
      add_log(n, VX_ERROR_INVALID_PARAMETERS, "node %s: no parameter %u", label(n), index);
      status = VX_ERROR_INVALID_PARAMETERS;
      return nullptr;
    }
    return make_parameter(n, nullptr, index);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseParameter(vx_parameter* param) {
  return release_handle(param, VX_TYPE_PARAMETER);
}

VX_API_ENTRY vx_status VX_API_CALL vxSetParameterByIndex(vx_node node, vx_uint32 index, vx_reference value) {
  return entry("vxSetParameterByIndex", [&]() -> vx_status {
    vx_node n = as<_vx_node>(node, VX_TYPE_NODE);
    if (n == nullptr) return VX_ERROR_INVALID_REFERENCE;
    return set_node_parameter(n, index, value);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSetParameterByReference(vx_parameter parameter, vx_reference value) {
  return entry("vxSetParameterByReference", [&]() -> vx_status {
    vx_parameter p = as<_vx_parameter>(parameter, VX_TYPE_PARAMETER);
    if (p == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (p->node == nullptr) return VX_ERROR_INVALID_PARAMETERS;  // a kernel's parameter takes no value
    return set_node_parameter(p->node, p->index, value);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryParameter(vx_parameter parameter, vx_enum attribute, void* ptr,
                                                    vx_size size) {
  return entry("vxQueryParameter", [&]() -> vx_status {
    vx_parameter p = as<_vx_parameter>(parameter, VX_TYPE_PARAMETER);
    if (p == nullptr) return VX_ERROR_INVALID_REFERENCE;
    vx_kernel kernel = p->node != nullptr ? p->node->kernel : p->kernel;
    const _vx_kernel::parameter_info& info = kernel->parameters[p->index];
    switch (attribute) {
      case VX_PARAMETER_INDEX: return answer(ptr, size, p->index);
      case VX_PARAMETER_DIRECTION: return answer(ptr, size, info.direction);
      case VX_PARAMETER_TYPE: return answer(ptr, size, info.type);
      case VX_PARAMETER_STATE: return answer(ptr, size, info.state);
      case VX_PARAMETER_REF: {
        // The application gets a reference of its own to release (the spec).
        vx_reference ref = p->node != nullptr ? p->node->parameters[p->index] : nullptr;
        vx_status status = answer(ptr, size, ref);
        if (status == VX_SUCCESS && ref != nullptr) ref->external.fetch_add(1);
        return status;
      }
      default: return refuse("vxQueryParameter", VX_ERROR_NOT_SUPPORTED, "no parameter attribute 0x%x", attribute);
    }
  });
}
