// vx_matrix: columns x rows values of VX_TYPE_INT32, FLOAT32 or UINT8, with an
// origin and the pattern it was made from (VX_PATTERN_OTHER for data).
#pragma once

#include "graph/core/reference.hpp"

#include <vector>

struct _vx_matrix : _vx_reference {
  explicit _vx_matrix(vx_context context) : _vx_reference(VX_TYPE_MATRIX, context) {}
  vx_enum data_type = VX_TYPE_INT32;
  vx_size columns = 0, rows = 0;
  vx_coordinates2d_t origin{};
  vx_enum pattern = VX_PATTERN_OTHER;
  /// The values' bytes in the order vxCopyMatrix exchanges them.
  std::vector<uint8_t> data;
};
