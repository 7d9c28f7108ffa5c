// A standard kernel as this implementation knows it: its name, enumeration
// and parameter signature (the spec's), how verification checks a node of it,
// and how it runs.
//
// Most vision kernels compute each output pixel from the input pixels at and
// around the same place. Those are *pixel kernels*: they say, as OpenCL C
// statements, how one output pixel is made (`emit`), and the runtime builds
// whole OpenCL kernels from that: one per node, or one per fused group of
// nodes, over any row slab of the image (docs/graph.md, "Fusion"). The
// others (histograms, integral images, warps, ...) are *whole kernels* that
// enqueue their own work.
#pragma once

#include "graph/core/kernel.hpp"

#include <vector>

namespace ferry::graph {

class node_check;
class pixel_emitter;
class whole_run;

enum class kernel_shape {
  /// Output (x, y) from the inputs at (x, y).
  point,
  /// Output (x, y) from the inputs within `radius` of (x, y).
  stencil,
  /// Anything else: the kernel runs itself.
  whole,
};

struct kernel_definition {
  vx_enum enumeration;
  const char* name;
  std::vector<_vx_kernel::parameter_info> parameters;
  kernel_shape shape;
  /// Pixels around (x, y) a stencil reads (1 for a 3x3 neighbourhood); for a
  /// kernel whose radius depends on a parameter (Convolve, NonLinearFilter),
  /// the largest it may take; `node_radius` gives a node's own.
  int radius;
  /// Checks a node's parameters and settles its outputs (vxVerifyGraph).
  vx_status (*validate)(node_check&);
  /// Pixel kernels: the statements that make one output pixel.
  void (*emit)(pixel_emitter&);
  /// Whole kernels: enqueues the node's work.
  vx_status (*run)(whole_run&);
  /// A node's own radius, where it depends on its parameters (null: `radius`).
  int (*node_radius)(vx_node) = nullptr;
};

/// Every standard kernel this implementation has.
const std::vector<kernel_definition>& standard_kernels();

/// The standard kernel registered under `enumeration`, or null.
const kernel_definition* find_standard_kernel(vx_enum enumeration);

/// The radius of a node of a pixel kernel.
int node_radius(vx_node node);

}  // namespace ferry::graph
