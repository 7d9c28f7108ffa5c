// Fusion (the paper's "kernel merging", docs/graph.md "Fusion"): adjacent
// pixel nodes joined by virtual images become one OpenCL kernel. Each
// work-group makes a tile of the group's last outputs; every earlier node
// computes its outputs over the tile plus the halo its readers in the group
// need (the halo grows by each later stencil's radius) into local memory,
// where they read them. A virtual image read only inside its group never
// exists in global memory.
//
// A node joins the group before it when it reads an image of the group, every
// image of the group it reads is virtual, its outputs have the group's size,
// and the group's local memory still fits the devices' (a quarter of the
// smallest, so that several work-groups fit a compute unit).
#pragma once

#include "graph/runtime/pixel_program.hpp"

#include <VX/vx.h>

#include <string>
#include <vector>

namespace ferry::graph {

/// A fused kernel's work-group: 64 x 4 work-items (256, within every device
/// limit we target). A row of the work-group spans a whole row of every
/// node's region (the tile and its halo), so no lane idles on a few halo
/// columns; the tile's width is therefore 64 less twice the group's largest
/// halo, its height 16 rows.
constexpr int fused_group_width = 64;
constexpr int fused_group_height = 4;
constexpr int fused_tile_height = 16;
/// The largest halo a fused group may have (a tile 48 pixels wide).
constexpr int fused_max_halo = 8;

struct image_use {
  vx_node node;
  vx_uint32 index;
};

/// One kernel of the plan: a node alone or a fused group.
struct pixel_group {
  std::vector<vx_node> nodes;
  bool fused = false;
  /// Global images in the kernel's argument order.
  std::vector<image_use> inputs, outputs;
  std::vector<value_argument> arguments;
  std::string source;
  /// Images that live only in local memory (never given memory).
  std::vector<vx_image> internal;
  /// Bytes of local memory a work-group uses.
  size_t local_bytes = 0;
  /// Fused groups: the output tile a work-group makes.
  int tile_width = 0, tile_height = 0;
};

struct fusion_limits {
  bool enabled = true;
  /// Local memory a group may use per work-group.
  size_t local_bytes = 0;
  /// The devices' smallest CL_DEVICE_MAX_WORK_GROUP_SIZE.
  size_t work_group_size = 0;
};

/// Splits a run of pixel nodes (in schedule order) into groups and builds
/// each group's kernel source.
std::vector<pixel_group> plan_pixel_groups(const std::vector<vx_node>& nodes, const fusion_limits& limits);

}  // namespace ferry::graph
