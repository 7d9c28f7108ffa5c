// vx_parameter: one parameter of a node or of a kernel (vxGetParameterByIndex,
// vxGetKernelParameterByIndex), a handle of its own.
#pragma once

#include "graph/core/reference.hpp"

struct _vx_parameter : _vx_reference {
  explicit _vx_parameter(vx_context context) : _vx_reference(VX_TYPE_PARAMETER, context) {}
  ~_vx_parameter() override;
  /// One of the two is set (an internal reference).
  vx_node node = nullptr;
  vx_kernel kernel = nullptr;
  vx_uint32 index = 0;
};
