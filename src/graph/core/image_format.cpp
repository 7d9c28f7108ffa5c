#include "graph/core/image_format.hpp"

namespace ferry::graph {
namespace {

constexpr plane_format one(uint32_t bytes, uint32_t channels = 1) { return {bytes, 1, 1, 1, channels}; }
constexpr plane_format chroma(uint32_t bytes, uint32_t channels) { return {bytes, 1, 2, 2, channels}; }

// The spec's "Image Formats" table (vx_df_image_e). U1 (bit images) is left
// out: its patches address bits, which no kernel here reads yet.
const image_format formats[] = {
    {VX_DF_IMAGE_U8, 1, {one(1)}, 1, 1, false},
    {VX_DF_IMAGE_U16, 1, {one(2)}, 1, 1, false},
    {VX_DF_IMAGE_S16, 1, {one(2)}, 1, 1, false},
    {VX_DF_IMAGE_U32, 1, {one(4)}, 1, 1, false},
    {VX_DF_IMAGE_S32, 1, {one(4)}, 1, 1, false},
    {VX_DF_IMAGE_RGB, 1, {one(3, 3)}, 1, 1, false},
    {VX_DF_IMAGE_RGBX, 1, {one(4, 4)}, 1, 1, false},
    // Packed 4:2:2: one element is two pixels (U Y0 V Y1 or Y0 U Y1 V).
    {VX_DF_IMAGE_UYVY, 1, {{4, 2, 1, 1, 4}}, 2, 1, true},
    {VX_DF_IMAGE_YUYV, 1, {{4, 2, 1, 1, 4}}, 2, 1, true},
    {VX_DF_IMAGE_NV12, 2, {one(1), chroma(2, 2)}, 2, 2, true},
    {VX_DF_IMAGE_NV21, 2, {one(1), chroma(2, 2)}, 2, 2, true},
    {VX_DF_IMAGE_IYUV, 3, {one(1), chroma(1, 1), chroma(1, 1)}, 2, 2, true},
    {VX_DF_IMAGE_YUV4, 3, {one(1), one(1), one(1)}, 1, 1, true},
};

}  // namespace

const image_format* find_image_format(vx_df_image code) {
  for (const image_format& f : formats)
    if (f.code == code) return &f;
  return nullptr;
}

uint32_t plane_width(const image_format& format, uint32_t p, uint32_t width) {
  const plane_format& plane = format.plane[p];
  return width / plane.subsample_x / plane.pixels_per_element;
}

uint32_t plane_height(const image_format& format, uint32_t p, uint32_t height) {
  return height / format.plane[p].subsample_y;
}

uint64_t plane_bytes(const image_format& format, uint32_t p, uint32_t width, uint32_t height) {
  return uint64_t{plane_width(format, p, width)} * format.plane[p].bytes_per_element * plane_height(format, p, height);
}

format_text format_name(vx_df_image code) {
  format_text out{};
  for (int i = 0; i < 4; ++i) {
    char c = static_cast<char>((code >> (8 * i)) & 0xff);
    out.text[i] = (c >= 32 && c < 127) ? c : '?';
  }
  out.text[4] = '\0';
  return out;
}

}  // namespace ferry::graph
