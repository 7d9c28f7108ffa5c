// The graph's entry points: creation, verification, synchronous and
// asynchronous runs, attributes and graph parameters.
#include "graph/api/attributes.hpp"
#include "graph/api/entry.hpp"
#include "graph/api/graph_ops.hpp"
#include "graph/core/graph.hpp"
#include "graph/core/kernel.hpp"
#include "graph/core/node.hpp"
#include "graph/core/parameter.hpp"
#include "graph/runtime/plan.hpp"

#include <thread>
#include <utility>
#include <vector>

using namespace ferry::graph;

_vx_graph::_vx_graph(vx_context context) : _vx_reference(VX_TYPE_GRAPH, context) {}

_vx_graph::~_vx_graph() {
  // Runs have ended by now (vxReleaseGraph and vxReleaseContext wait for them
  // without the lock the run needs); a thread left is one that has returned.
  if (worker.joinable()) worker.join();
  drop_plan(this);
  for (vx_node node : nodes) {
    node->graph = nullptr;
    release_internal(node);
  }
}

namespace ferry::graph {

void drop_plan(vx_graph graph) {
  if (graph->plan == nullptr) return;
  graph->plan->deinitialize();
  graph->plan.reset();
}

void invalidate(vx_graph graph) {
  graph->needs_verify = true;
  if (graph->state == VX_GRAPH_STATE_VERIFIED || graph->state == VX_GRAPH_STATE_COMPLETED ||
      graph->state == VX_GRAPH_STATE_ABANDONED)
    graph->state = VX_GRAPH_STATE_UNVERIFIED;
}

bool is_running(vx_graph graph) { return graph->scheduled || graph->state == VX_GRAPH_STATE_RUNNING; }

vx_status verify_graph(vx_graph graph) {
  drop_plan(graph);
  return plan::verify(graph);
}

vx_status run_graph(vx_graph graph) {
  if (graph->needs_verify || graph->plan == nullptr) {
    vx_status status = verify_graph(graph);
    if (status != VX_SUCCESS) return status;
  }
  graph->state = VX_GRAPH_STATE_RUNNING;
  vx_status status = graph->plan->run(graph);
  graph->state = status == VX_SUCCESS ? VX_GRAPH_STATE_COMPLETED : VX_GRAPH_STATE_ABANDONED;
  graph->last_status = status;
  return status;
}

std::thread take_worker(vx_graph graph) { return std::move(graph->worker); }

void join_graph_runs(vx_context context) {
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(api_mutex());
    for_each_reference(
        context,
        [](vx_reference ref, void* data) {
          if (ref->type == VX_TYPE_GRAPH)
            static_cast<std::vector<std::thread>*>(data)->push_back(take_worker(reinterpret_cast<vx_graph>(ref)));
        },
        &workers);
  }
  for (std::thread& worker : workers)
    if (worker.joinable()) worker.join();
}

}  // namespace ferry::graph

namespace {

// vxWaitGraph's work, without the lock the run takes: the worker is moved
// out under the lock and joined outside it.
vx_status wait_for_run(vx_graph graph, bool& was_scheduled) {
  std::thread worker;
  {
    std::lock_guard lock(api_mutex());
    if (as<_vx_graph>(graph, VX_TYPE_GRAPH) == nullptr) return VX_ERROR_INVALID_REFERENCE;
    was_scheduled = graph->scheduled;
    worker = take_worker(graph);
  }
  if (worker.joinable()) worker.join();
  std::lock_guard lock(api_mutex());
  if (as<_vx_graph>(graph, VX_TYPE_GRAPH) == nullptr) return VX_ERROR_INVALID_REFERENCE;
  graph->scheduled = false;
  return graph->last_status;
}

}  // namespace

VX_API_ENTRY vx_graph VX_API_CALL vxCreateGraph(vx_context context) {
  return entry_object<vx_graph>("vxCreateGraph", context, [&](vx_status& status) -> vx_graph {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = VX_ERROR_INVALID_REFERENCE;
      return nullptr;
    }
    auto* graph = new _vx_graph(c);
    register_reference(graph);
    return graph;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseGraph(vx_graph* graph) {
  if (graph == nullptr) return VX_ERROR_INVALID_REFERENCE;
  {
    // The last release waits for a scheduled run first (outside the lock).
    std::lock_guard lock(api_mutex());
    vx_graph g = as<_vx_graph>(*graph, VX_TYPE_GRAPH);
    if (g == nullptr) return VX_ERROR_INVALID_REFERENCE;
  }
  bool scheduled = false;
  if ((*graph)->external.load() == 1) wait_for_run(*graph, scheduled);
  return release_handle(graph, VX_TYPE_GRAPH);
}

VX_API_ENTRY vx_status VX_API_CALL vxVerifyGraph(vx_graph graph) {
  return entry("vxVerifyGraph", [&]() -> vx_status {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (is_running(g)) {
      add_log(g, VX_ERROR_GRAPH_SCHEDULED, "vxVerifyGraph: the graph is scheduled; wait for it first");
      return VX_ERROR_GRAPH_SCHEDULED;
    }
    return verify_graph(g);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxProcessGraph(vx_graph graph) {
  return entry("vxProcessGraph", [&]() -> vx_status {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (is_running(g)) {
      add_log(g, VX_ERROR_GRAPH_SCHEDULED, "vxProcessGraph: the graph is scheduled; wait for it first");
      return VX_ERROR_GRAPH_SCHEDULED;
    }
    return run_graph(g);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxScheduleGraph(vx_graph graph) {
  return entry("vxScheduleGraph", [&]() -> vx_status {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (is_running(g)) {
      add_log(g, VX_ERROR_GRAPH_SCHEDULED, "vxScheduleGraph: the graph is already scheduled");
      return VX_ERROR_GRAPH_SCHEDULED;
    }
    // Verification happens now, so that a graph that cannot run says so here.
    if (g->needs_verify || g->plan == nullptr) {
      vx_status status = verify_graph(g);
      if (status != VX_SUCCESS) return status;
    }
    if (g->worker.joinable()) g->worker.join();  // a finished earlier run nobody waited for
    g->scheduled = true;
    g->state = VX_GRAPH_STATE_RUNNING;
    g->worker = std::thread([g] {
      std::lock_guard lock(api_mutex());
      run_graph(g);
    });
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxWaitGraph(vx_graph graph) {
  bool scheduled = false;
  vx_status status = wait_for_run(graph, scheduled);
  if (status == VX_ERROR_INVALID_REFERENCE) return status;
  // Waiting for a graph that was never scheduled is an error (the spec's VX_FAILURE).
  return scheduled ? status : VX_FAILURE;
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryGraph(vx_graph graph, vx_enum attribute, void* ptr, vx_size size) {
  return entry("vxQueryGraph", [&]() -> vx_status {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) return VX_ERROR_INVALID_REFERENCE;
    switch (attribute) {
      case VX_GRAPH_NUMNODES: return answer(ptr, size, static_cast<vx_uint32>(g->nodes.size()));
      case VX_GRAPH_PERFORMANCE: return answer(ptr, size, g->perf);
      case VX_GRAPH_NUMPARAMETERS: return answer(ptr, size, static_cast<vx_uint32>(g->parameters.size()));
      case VX_GRAPH_STATE: return answer(ptr, size, g->state);
      default: return refuse("vxQueryGraph", VX_ERROR_NOT_SUPPORTED, "no graph attribute 0x%x", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSetGraphAttribute(vx_graph graph, vx_enum attribute, const void* ptr,
                                                       vx_size size) {
  return entry("vxSetGraphAttribute", [&]() -> vx_status {
    if (as<_vx_graph>(graph, VX_TYPE_GRAPH) == nullptr) return VX_ERROR_INVALID_REFERENCE;
    return refuse("vxSetGraphAttribute", VX_ERROR_NOT_SUPPORTED, "graph attribute 0x%x cannot be set", attribute);
  });
}

VX_API_ENTRY vx_bool VX_API_CALL vxIsGraphVerified(vx_graph graph) {
  return entry_value<vx_bool>("vxIsGraphVerified", vx_false_e, [&]() -> vx_bool {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    return g != nullptr && !g->needs_verify && g->plan != nullptr ? vx_true_e : vx_false_e;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxAddParameterToGraph(vx_graph graph, vx_parameter parameter) {
  return entry("vxAddParameterToGraph", [&]() -> vx_status {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) return VX_ERROR_INVALID_REFERENCE;
    // A null parameter adds an empty slot (the spec allows it, to keep indices).
    if (parameter == nullptr) {
      g->parameters.push_back({nullptr, 0});
      return VX_SUCCESS;
    }
    vx_parameter p = as<_vx_parameter>(parameter, VX_TYPE_PARAMETER);
    if (p == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (p->node == nullptr || p->node->graph != g) {
      add_log(g, VX_ERROR_INVALID_PARAMETERS, "vxAddParameterToGraph: the parameter is not of a node of this graph");
      return VX_ERROR_INVALID_PARAMETERS;
    }
    g->parameters.push_back({p->node, p->index});
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSetGraphParameterByIndex(vx_graph graph, vx_uint32 index, vx_reference value) {
  return entry("vxSetGraphParameterByIndex", [&]() -> vx_status {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (index >= g->parameters.size() || g->parameters[index].node == nullptr) {
      add_log(g, VX_ERROR_INVALID_VALUE, "vxSetGraphParameterByIndex: the graph has no parameter %u", index);
      return VX_ERROR_INVALID_VALUE;
    }
    const _vx_graph::parameter& p = g->parameters[index];
    return set_node_parameter(p.node, p.index, value);
  });
}

VX_API_ENTRY vx_parameter VX_API_CALL vxGetGraphParameterByIndex(vx_graph graph, vx_uint32 index) {
  vx_context context = context_for_failure(graph);
  return entry_object<vx_parameter>("vxGetGraphParameterByIndex", context,
                                    [&](vx_status& status) -> vx_parameter {
                                      vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
                                      if (g == nullptr) {
                                        status = VX_ERROR_INVALID_REFERENCE;
                                        return nullptr;
                                      }
                                      if (index >= g->parameters.size() || g->parameters[index].node == nullptr) {
                                        status = VX_ERROR_INVALID_REFERENCE;
                                        return nullptr;
                                      }
                                      return make_parameter(g->parameters[index].node, nullptr,
                                                            g->parameters[index].index);
                                    });
}
