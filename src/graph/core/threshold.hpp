// vx_threshold: a binary or range threshold with its true and false outputs.
#pragma once

#include "graph/core/reference.hpp"

struct _vx_threshold : _vx_reference {
  explicit _vx_threshold(vx_context context) : _vx_reference(VX_TYPE_THRESHOLD, context) {}
  vx_enum threshold_type = VX_THRESHOLD_TYPE_BINARY;
  /// The formats it was made for (vxCreateThresholdForImage); the 1.0
  /// vxCreateThreshold's data type maps to U8 in and out.
  vx_df_image input_format = VX_DF_IMAGE_U8;
  vx_df_image output_format = VX_DF_IMAGE_U8;
  vx_pixel_value_t value{};
  vx_pixel_value_t lower{};
  vx_pixel_value_t upper{};
  vx_pixel_value_t true_value{};
  vx_pixel_value_t false_value{};
};
