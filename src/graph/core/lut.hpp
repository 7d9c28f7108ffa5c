// vx_lut: a lookup table of VX_TYPE_UINT8 (256 entries) or VX_TYPE_INT16
// (up to 65536, indexed from an offset).
#pragma once

#include "graph/core/reference.hpp"

#include <vector>

struct _vx_lut : _vx_reference {
  explicit _vx_lut(vx_context context) : _vx_reference(VX_TYPE_LUT, context) {}
  vx_enum data_type = VX_TYPE_UINT8;
  vx_size count = 0;
  vx_uint32 offset = 0;
  std::vector<uint8_t> data;
  bool mapped = false;
};
