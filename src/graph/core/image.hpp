// vx_image: format, size, color space, valid region, and a view (the whole of
// it, or a rectangle for an ROI image) of an image_memory.
#pragma once

#include "graph/core/image_memory.hpp"
#include "graph/core/reference.hpp"

#include <map>
#include <memory>
#include <vector>

struct _vx_image : _vx_reference {
  explicit _vx_image(vx_context context) : _vx_reference(VX_TYPE_IMAGE, context) {}
  ~_vx_image() override;

  vx_df_image format = VX_DF_IMAGE_VIRT;
  vx_uint32 width = 0, height = 0;
  vx_enum space = VX_COLOR_SPACE_NONE;
  vx_enum range = VX_CHANNEL_RANGE_FULL;
  /// VX_MEMORY_TYPE_HOST for an image from a handle, else NONE.
  vx_enum memory_type = VX_MEMORY_TYPE_NONE;
  /// Pixels (null for a virtual image until its graph is verified, and for a
  /// virtual image fusion removed: it never exists). An ROI or a channel
  /// holds its root's memory object itself, so a handle swap reaches it.
  std::shared_ptr<ferry::graph::image_memory> memory;
  /// An ROI's place in its parent's memory (whole pixels of plane 0); a Y
  /// channel (vxCreateImageFromChannel) is plane 0 of its parent at offset 0.
  vx_image parent = nullptr;
  vx_uint32 offset_x = 0, offset_y = 0;
  /// vxCreateUniformImage: read-only, every pixel the given value.
  bool uniform = false;
  /// VX_IMAGE_UNIFORM_VALUE (meaningful when `uniform`).
  vx_pixel_value_t uniform_value{};
  /// vxCreateImageFromHandle's addressing, one per plane: the layout that
  /// vxSwapImageHandle's new pointers follow, kept here because a swap to
  /// null leaves the memory the library's own (packed) until the next one.
  std::vector<vx_imagepatch_addressing_t> handle_layout;
  /// VX_IMAGE_VALID_RECTANGLE (in the image's own coordinates).
  vx_rectangle_t valid{};

  /// Live maps (vxMapImagePatch until vxUnmapImagePatch).
  struct mapping {
    vx_uint32 plane;
    vx_rectangle_t rect;
    vx_enum usage;
  };
  std::map<vx_map_id, mapping> maps;
  vx_map_id next_map = 1;
};

namespace ferry::graph {

/// A new image with host memory of its own (width, height checked by the caller).
vx_image make_image(vx_context context, vx_uint32 width, vx_uint32 height, vx_df_image format);
/// Gives a virtual image (or one whose format or size was left to the graph)
/// its memory once verification settled its format and size.
vx_status realize_image(vx_image image);

/// The addressing of plane `p` of `image` over `rect` on the host (an ROI's
/// or a channel's strides are its root's).
vx_imagepatch_addressing_t patch_addressing(vx_image image, vx_uint32 p, const vx_rectangle_t& rect);
/// The host address of pixel (x, y) (image coordinates) of plane `p`.
uint8_t* host_pixel(vx_image image, vx_uint32 p, vx_uint32 x, vx_uint32 y);

/// The image whose memory an image views (itself unless an ROI), and the
/// offset of its origin in that image's pixels.
vx_image memory_root(vx_image image, vx_uint32& offset_x, vx_uint32& offset_y);

/// The object whose contents a parameter reads or writes: an ROI's root
/// image (so that a write to an ROI and a read of its parent are ordered),
/// else the object itself.
vx_reference data_object(vx_reference ref);
/// The memory an image views (its root's; null while a virtual root has none).
image_memory* viewed_memory(vx_image image);

/// The bytes one element of plane `p` of a `format` image holds when every
/// pixel is `value` (a 4:2:2 pair repeats Y; NV21 stores V before U); returns
/// the element's size, 0 for a format this implementation does not support.
uint32_t element_of_value(vx_df_image format, uint32_t p, const vx_pixel_value_t& value, uint8_t (&out)[4]);
/// Writes `value` to every pixel of `image` (an ROI: its rectangle of the
/// root) on the host. The caller brings the host copy up to date first and
/// marks it written after.
void fill_image(vx_image image, const vx_pixel_value_t& value);

}  // namespace ferry::graph
