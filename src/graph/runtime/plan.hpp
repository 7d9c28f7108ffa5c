// What vxVerifyGraph makes of a graph and vxProcessGraph runs: the nodes in
// an order that respects every data dependency, each as a step (a generated
// pixel kernel, a whole kernel, or a user kernel on the host).
#pragma once

#include "graph/runtime/fusion.hpp"
#include "graph/runtime/pixel_program.hpp"

#include <CL/cl.h>
#include <VX/vx.h>

#include <memory>
#include <string>
#include <vector>

namespace ferry::graph {

class device_set;

class plan {
 public:
  /// Verifies `graph` (the spec's vxVerifyGraph checks, each failure logged
  /// naming the node) and compiles its plan.
  static vx_status verify(vx_graph graph);
  ~plan();

  /// Runs the user kernels' deinitializers (the plan is being dropped).
  void deinitialize();

  /// Runs the plan once (vxProcessGraph); waits for the devices.
  vx_status run(vx_graph graph);

  /// The nodes in the order they run.
  const std::vector<vx_node>& order() const { return order_; }
  /// How many kernels the pixel nodes became (fewer than the nodes when fused).
  size_t pixel_kernels() const;

 private:
  struct step {
    enum class kind { pixel, whole, user } what = kind::pixel;
    /// The node, or a fused group's nodes in order (pixel steps).
    std::vector<vx_node> nodes;
    /// Pixel steps: the kernel and its images and values (fusion.hpp).
    cl_kernel kernel = nullptr;
    bool fused = false;
    size_t tile_width = 0, tile_height = 0;  // fused: the output tile of a work-group
    /// Rows around its own that a band of the step reads of its inputs.
    int reach = 0;
    std::vector<image_use> inputs, outputs;
    std::vector<value_argument> arguments;
    /// User steps: the kernel's initializer has run (its deinitializer is due).
    bool initialized = false;
  };

  vx_status compile(vx_graph graph, device_set* devices);
  vx_status run_pixel(step& s, device_set& devices);
  /// The same over every device, each a band of rows (docs/graph.md, "Tiling").
  vx_status run_pixel_slabs(step& s, device_set& devices);
  static bool can_slice(const step& s);

  std::vector<vx_node> order_;
  std::vector<step> steps_;
  /// Images fusion keeps in local memory: they get no memory of their own.
  std::vector<vx_image> internal_;
};

/// The topological order of `graph`'s nodes, or VX_ERROR_INVALID_GRAPH (a
/// cycle, logged with the nodes on it).
vx_status schedule_nodes(vx_graph graph, std::vector<vx_node>& order);

}  // namespace ferry::graph
