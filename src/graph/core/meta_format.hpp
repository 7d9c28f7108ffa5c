// vx_meta_format: what a user kernel's validator says an output will be
// (vxSetMetaFormatAttribute, vxSetMetaFormatFromReference).
#pragma once

#include "graph/core/reference.hpp"

struct _vx_meta_format : _vx_reference {
  explicit _vx_meta_format(vx_context context) : _vx_reference(VX_TYPE_META_FORMAT, context) {}
  vx_enum object_type = VX_TYPE_INVALID;
  /// Images.
  vx_df_image format = VX_DF_IMAGE_VIRT;
  vx_uint32 width = 0, height = 0;
  /// Scalars.
  vx_enum scalar_type = VX_TYPE_INVALID;
  /// Arrays.
  vx_enum item_type = VX_TYPE_INVALID;
  vx_size capacity = 0;
  /// Everything else is taken from a reference (vxSetMetaFormatFromReference).
  vx_reference like = nullptr;
};
