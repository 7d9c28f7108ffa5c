// vx_scalar: one value of a scalar type, or of a user struct's size.
#pragma once

#include "graph/core/reference.hpp"

#include <vector>

struct _vx_scalar : _vx_reference {
  explicit _vx_scalar(vx_context context) : _vx_reference(VX_TYPE_SCALAR, context) {}
  /// VX_SCALAR_TYPE (VX_TYPE_INVALID for a virtual scalar its graph types).
  vx_enum data_type = VX_TYPE_INVALID;
  /// The value's bytes (sizeof the type, or vxCreateScalarWithSize's size).
  std::vector<uint8_t> value;
};

namespace ferry::graph {

/// Bytes of a scalar of `type` (0 for a type that is not a scalar type).
vx_size scalar_size(vx_enum type);

/// The value as a double / a 64-bit integer (for kernels taking numbers).
double scalar_number(vx_scalar scalar);
int64_t scalar_integer(vx_scalar scalar);

}  // namespace ferry::graph
