// vx_remap: for each destination pixel, the source point (float x, y) it takes.
#pragma once

#include "graph/core/reference.hpp"

#include <vector>

struct _vx_remap : _vx_reference {
  explicit _vx_remap(vx_context context) : _vx_reference(VX_TYPE_REMAP, context) {}
  vx_uint32 source_width = 0, source_height = 0;
  vx_uint32 destination_width = 0, destination_height = 0;
  /// destination_width * destination_height points, row-major.
  std::vector<vx_coordinates2df_t> points;
};
