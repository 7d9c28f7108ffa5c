// What a kernel's validator sees of a node during vxVerifyGraph: its
// parameters by type, a way to fail with the spec's status and a log line that
// names the node, and a way to settle an output image's format and size (a
// virtual image, or one left at VX_DF_IMAGE_VIRT or size 0, takes what the
// kernel makes; a real one must already match it).
#pragma once

#include <VX/vx.h>

namespace ferry::graph {

class node_check {
 public:
  explicit node_check(vx_node node) : node_(node) {}

  vx_node node() const { return node_; }
  /// Parameter `index` (null when an optional one is unset).
  vx_reference parameter(vx_uint32 index) const;
  vx_image image(vx_uint32 index) const;
  vx_scalar scalar(vx_uint32 index) const;
  vx_threshold threshold(vx_uint32 index) const;
  vx_convolution convolution(vx_uint32 index) const;
  vx_matrix matrix(vx_uint32 index) const;
  vx_lut lut(vx_uint32 index) const;
  vx_distribution distribution(vx_uint32 index) const;
  vx_array array(vx_uint32 index) const;
  vx_remap remap(vx_uint32 index) const;

  /// The value of scalar parameter `index` (its type checked by the caller).
  vx_enum scalar_enum(vx_uint32 index) const;
  vx_float32 scalar_float(vx_uint32 index) const;
  vx_int64 scalar_int(vx_uint32 index) const;
  /// The scalar's type, VX_TYPE_INVALID when the parameter is no scalar.
  vx_enum scalar_type(vx_uint32 index) const;

  /// Logs "node NAME (KERNEL): MESSAGE" against the node and returns `status`.
  vx_status fail(vx_status status, const char* format, ...) __attribute__((format(printf, 3, 4)));

  /// Input image `index` has one of `formats` (a zero-terminated list).
  vx_status require_format(vx_uint32 index, const vx_df_image* formats);
  /// Input images `a` and `b` have the same width and height.
  vx_status require_same_size(vx_uint32 a, vx_uint32 b);
  /// Scalar parameter `index` has type `type`.
  vx_status require_scalar(vx_uint32 index, vx_enum type);

  /// Output image `index` becomes (or must already be) `format`, `width` x `height`.
  vx_status settle_image(vx_uint32 index, vx_df_image format, vx_uint32 width, vx_uint32 height);
  /// Output image `index` takes the size of input image `like`, with `format`.
  vx_status settle_like(vx_uint32 index, vx_uint32 like, vx_df_image format);
  /// The format an output image already has (VX_DF_IMAGE_VIRT: left to the graph).
  vx_df_image output_format(vx_uint32 index) const;

 private:
  vx_node node_;
};

}  // namespace ferry::graph
