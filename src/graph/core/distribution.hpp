// vx_distribution: a histogram of `bins` int32 counts over [offset, offset + range).
#pragma once

#include "graph/core/reference.hpp"

#include <vector>

struct _vx_distribution : _vx_reference {
  explicit _vx_distribution(vx_context context) : _vx_reference(VX_TYPE_DISTRIBUTION, context) {}
  vx_size bins = 0;
  vx_int32 offset = 0;
  vx_uint32 range = 0;
  std::vector<vx_int32> counts;
  bool mapped = false;
};
