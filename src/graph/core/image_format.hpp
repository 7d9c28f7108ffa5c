// What each vx_df_image format looks like in memory: its planes, the bytes of
// one pixel (or pixel pair) in each, and each plane's subsampling. One table,
// used by image creation, patch addressing, the kernels' code generator and
// the tests.
#pragma once

#include <VX/vx.h>

#include <cstdint>

namespace ferry::graph {

struct plane_format {
  /// Bytes from one addressable element to the next along x (a packed YUV
  /// format's element is a pixel pair: 4 bytes for 2 pixels).
  uint32_t bytes_per_element = 0;
  /// Pixels per element along x (2 for UYVY/YUYV, 1 otherwise).
  uint32_t pixels_per_element = 1;
  /// Subsampling of the plane against the image (2 for chroma of NV12, IYUV).
  uint32_t subsample_x = 1, subsample_y = 1;
  /// Channels stored per element.
  uint32_t channels = 1;
};

struct image_format {
  vx_df_image code = 0;
  uint32_t planes = 0;
  plane_format plane[3];
  /// Width and height must be multiples of these (2 for subsampled formats).
  uint32_t width_multiple = 1, height_multiple = 1;
  /// The color space a new image of the format gets (YUV formats: BT.709).
  bool yuv = false;
};

/// The layout of `code`, or null for a format this implementation does not support.
const image_format* find_image_format(vx_df_image code);

/// Bytes of plane `p` of a `width` x `height` image, rows packed.
uint64_t plane_bytes(const image_format& format, uint32_t p, uint32_t width, uint32_t height);
/// Width and height of plane `p` in its own elements.
uint32_t plane_width(const image_format& format, uint32_t p, uint32_t width);
uint32_t plane_height(const image_format& format, uint32_t p, uint32_t height);

/// "U008" style text of a format code for log lines.
struct format_text {
  char text[5];
};
format_text format_name(vx_df_image code);

}  // namespace ferry::graph
