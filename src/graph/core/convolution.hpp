// vx_convolution: a columns x rows matrix of int16 coefficients and a scale
// (a power of two) by which the weighted sum is divided.
#pragma once

#include "graph/core/reference.hpp"

#include <vector>

namespace ferry::graph {
/// VX_CONTEXT_CONVOLUTION_MAX_DIMENSION and _NONLINEAR_MAX_DIMENSION: the
/// largest convolution and non-linear mask this implementation runs (the
/// spec's minimum, 9).
inline constexpr vx_size max_convolution_dimension = 9;
}  // namespace ferry::graph

struct _vx_convolution : _vx_reference {
  explicit _vx_convolution(vx_context context) : _vx_reference(VX_TYPE_CONVOLUTION, context) {}
  vx_size columns = 0, rows = 0;
  vx_uint32 scale = 1;
  /// Row-major, as vxCopyConvolutionCoefficients exchanges them.
  std::vector<vx_int16> coefficients;
};
