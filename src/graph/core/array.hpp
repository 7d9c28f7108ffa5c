// vx_array: up to `capacity` items of one type (a scalar type, a struct type
// such as VX_TYPE_KEYPOINT or a user struct).
#pragma once

#include "graph/core/reference.hpp"

#include <vector>

struct _vx_array : _vx_reference {
  explicit _vx_array(vx_context context) : _vx_reference(VX_TYPE_ARRAY, context) {}
  vx_enum item_type = VX_TYPE_INVALID;
  vx_size item_size = 0;
  vx_size capacity = 0;
  vx_size count = 0;
  std::vector<uint8_t> items;  // capacity * item_size bytes
  bool mapped = false;
};
