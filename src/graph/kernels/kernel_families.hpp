// How the standard kernel table is assembled: each family of kernels (one
// file each) adds its definitions, and shares these small helpers for
// signatures and generated code.
#pragma once

#include "graph/kernels/kernel_definition.hpp"
#include "graph/runtime/pixel_program.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace ferry::graph {

void add_arithmetic_kernels(std::vector<kernel_definition>& table);  // point operations
void add_filter_kernels(std::vector<kernel_definition>& table);      // 3x3 and NxN neighbourhoods
void add_gradient_kernels(std::vector<kernel_definition>& table);    // Sobel, Scharr, Magnitude, Phase
void add_color_kernels(std::vector<kernel_definition>& table);       // channel extract/combine, color convert
void add_geometry_kernels(std::vector<kernel_definition>& table);    // scale, affine warp
void add_statistics_kernels(std::vector<kernel_definition>& table);  // integral, histogram, mean, min/max

/// Signature entries.
inline _vx_kernel::parameter_info input(vx_enum type) {
  return {VX_INPUT, type, VX_PARAMETER_STATE_REQUIRED, true};
}
inline _vx_kernel::parameter_info optional_input(vx_enum type) {
  return {VX_INPUT, type, VX_PARAMETER_STATE_OPTIONAL, true};
}
inline _vx_kernel::parameter_info output(vx_enum type) {
  return {VX_OUTPUT, type, VX_PARAMETER_STATE_REQUIRED, true};
}
inline _vx_kernel::parameter_info optional_output(vx_enum type) {
  return {VX_OUTPUT, type, VX_PARAMETER_STATE_OPTIONAL, true};
}

/// The bytes of a kernel argument's value.
template <class T>
std::vector<uint8_t> value_bytes(T value) {
  std::vector<uint8_t> bytes(sizeof value);
  std::memcpy(bytes.data(), &value, sizeof value);
  return bytes;
}

/// A value argument read from scalar parameter `index` when the node runs,
/// converted to an OpenCL int (enums, integers) or float.
std::string scalar_int_argument(pixel_emitter& e, vx_uint32 index);
std::string scalar_float_argument(pixel_emitter& e, vx_uint32 index);

/// The expression `value` saturated to output image `index`'s range.
std::string saturate_to(pixel_emitter& e, vx_uint32 index, const std::string& value);

/// Zero-terminated format lists for node_check::require_format.
extern const vx_df_image u8_only[];
extern const vx_df_image s16_only[];
extern const vx_df_image u8_or_s16[];

}  // namespace ferry::graph
