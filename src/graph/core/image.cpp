#include "graph/core/image.hpp"

#include "graph/core/context.hpp"

#include <cstring>
#include <initializer_list>

_vx_image::~_vx_image() {
  if (parent != nullptr) ferry::graph::release_internal(parent);
}

namespace ferry::graph {

vx_image make_image(vx_context context, vx_uint32 width, vx_uint32 height, vx_df_image format) {
  auto* image = new _vx_image(context);
  image->format = format;
  image->width = width;
  image->height = height;
  const image_format* layout = find_image_format(format);
  if (layout != nullptr && layout->yuv) image->space = VX_COLOR_SPACE_BT709;
  image->valid = {0, 0, width, height};
  register_reference(image);
  if (layout != nullptr && width != 0 && height != 0)
    image->memory = std::make_shared<image_memory>(*layout, width, height);
  return image;
}

vx_status realize_image(vx_image image) {
  if (image->memory != nullptr || image->parent != nullptr) return VX_SUCCESS;
  const image_format* layout = find_image_format(image->format);
  if (layout == nullptr || image->width == 0 || image->height == 0) return VX_ERROR_INVALID_FORMAT;
  image->memory = std::make_shared<image_memory>(*layout, image->width, image->height);
  image->valid = {0, 0, image->width, image->height};
  if (layout->yuv && image->space == VX_COLOR_SPACE_NONE) image->space = VX_COLOR_SPACE_BT709;
  return VX_SUCCESS;
}

vx_image memory_root(vx_image image, vx_uint32& offset_x, vx_uint32& offset_y) {
  offset_x = 0;
  offset_y = 0;
  while (image->parent != nullptr) {
    offset_x += image->offset_x;
    offset_y += image->offset_y;
    image = image->parent;
  }
  return image;
}

image_memory* viewed_memory(vx_image image) {
  vx_uint32 ox = 0, oy = 0;
  return memory_root(image, ox, oy)->memory.get();
}

vx_imagepatch_addressing_t patch_addressing(vx_image image, vx_uint32 p, const vx_rectangle_t& rect) {
  // An ROI's (or a channel's) rows are its root's rows.
  const image_memory& memory = *viewed_memory(image);
  const image_memory::plane& plane = memory.host_plane(p);
  const plane_format& format = memory.format().plane[p];
  vx_imagepatch_addressing_t addr{};
  addr.dim_x = rect.end_x - rect.start_x;
  addr.dim_y = rect.end_y - rect.start_y;
  // stride_x is per pixel: a packed 4:2:2 element of 4 bytes holds 2 pixels.
  addr.stride_x = plane.stride_x / static_cast<vx_int32>(format.pixels_per_element);
  addr.stride_y = plane.stride_y;
  addr.scale_x = VX_SCALE_UNITY / format.subsample_x;
  addr.scale_y = VX_SCALE_UNITY / format.subsample_y;
  addr.step_x = format.subsample_x * format.pixels_per_element;
  addr.step_y = format.subsample_y;
  addr.stride_x_bits = static_cast<vx_uint16>(addr.stride_x * 8);
  return addr;
}

uint8_t* host_pixel(vx_image image, vx_uint32 p, vx_uint32 x, vx_uint32 y) {
  vx_uint32 ox = 0, oy = 0;
  vx_image root = memory_root(image, ox, oy);
  const image_memory::plane& plane = root->memory->host_plane(p);
  const plane_format& format = root->memory->format().plane[p];
  int64_t column = (x + ox) / format.subsample_x / format.pixels_per_element;
  int64_t row = (y + oy) / format.subsample_y;
  return plane.base + row * plane.stride_y + column * plane.stride_x;
}

uint32_t element_of_value(vx_df_image format, uint32_t p, const vx_pixel_value_t& value, uint8_t (&out)[4]) {
  const image_format* layout = find_image_format(format);
  if (layout == nullptr || p >= layout->planes) return 0;
  const uint8_t y = value.YUV[0], u = value.YUV[1], v = value.YUV[2];
  auto put = [&](std::initializer_list<uint8_t> bytes) {
    uint32_t n = 0;
    for (uint8_t b : bytes) out[n++] = b;
    return n;
  };
  switch (format) {
    case VX_DF_IMAGE_U8: return put({value.U8});
    case VX_DF_IMAGE_U16: std::memcpy(out, &value.U16, 2); return 2;
    case VX_DF_IMAGE_S16: std::memcpy(out, &value.S16, 2); return 2;
    case VX_DF_IMAGE_U32: std::memcpy(out, &value.U32, 4); return 4;
    case VX_DF_IMAGE_S32: std::memcpy(out, &value.S32, 4); return 4;
    case VX_DF_IMAGE_RGB: return put({value.RGB[0], value.RGB[1], value.RGB[2]});
    case VX_DF_IMAGE_RGBX: return put({value.RGBX[0], value.RGBX[1], value.RGBX[2], value.RGBX[3]});
    case VX_DF_IMAGE_UYVY: return put({u, y, v, y});
    case VX_DF_IMAGE_YUYV: return put({y, u, y, v});
    case VX_DF_IMAGE_NV12: return p == 0 ? put({y}) : put({u, v});
    case VX_DF_IMAGE_NV21: return p == 0 ? put({y}) : put({v, u});
    case VX_DF_IMAGE_IYUV:
    case VX_DF_IMAGE_YUV4: return put({p == 0 ? y : p == 1 ? u : v});
    default: return 0;
  }
}

void fill_image(vx_image image, const vx_pixel_value_t& value) {
  const image_format* layout = find_image_format(image->format);
  image_memory* memory = viewed_memory(image);
  if (layout == nullptr || memory == nullptr) return;
  for (uint32_t p = 0; p < layout->planes; ++p) {
    uint8_t element[4];
    uint32_t bytes = element_of_value(image->format, p, value, element);
    const image_memory::plane& plane = memory->host_plane(p);
    uint32_t columns = plane_width(*layout, p, image->width);
    uint32_t rows = plane_height(*layout, p, image->height);
    uint8_t* first = host_pixel(image, p, 0, 0);
    for (uint32_t r = 0; r < rows; ++r) {
      uint8_t* at = first + int64_t{r} * plane.stride_y;
      for (uint32_t c = 0; c < columns; ++c, at += plane.stride_x) std::memcpy(at, element, bytes);
    }
  }
}

vx_reference data_object(vx_reference ref) {
  if (ref == nullptr || ref->type != VX_TYPE_IMAGE) return ref;
  vx_uint32 x, y;
  return memory_root(reinterpret_cast<vx_image>(ref), x, y);
}

}  // namespace ferry::graph
