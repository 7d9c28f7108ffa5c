#include "client/core/memory/image_layout.hpp"

namespace ferry::client {

namespace {

// Channels of an order; 0 for an order the spec does not define.
size_t channel_count(cl_channel_order order) {
  switch (order) {
    case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE: case CL_DEPTH: case CL_Rx: return 1;
    case CL_RG: case CL_RA: case CL_RGx: return 2;
    case CL_RGB: case CL_RGBx: case CL_sRGB: case CL_sRGBx: return 3;
    case CL_RGBA: case CL_BGRA: case CL_ARGB: case CL_ABGR: case CL_sRGBA: case CL_sBGRA: return 4;
    default: return 0;
  }
}

}  // namespace

size_t element_size_of(const cl_image_format& format) {
  size_t channels = channel_count(format.image_channel_order);
  if (channels == 0) return 0;
  switch (format.image_channel_data_type) {
    case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8: case CL_UNSIGNED_INT8: return channels;
    case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16: case CL_UNSIGNED_INT16: case CL_HALF_FLOAT:
      return 2 * channels;
    case CL_SIGNED_INT32: case CL_UNSIGNED_INT32: case CL_FLOAT: return 4 * channels;
    // Packed formats: the whole pixel, whatever the order says.
    case CL_UNORM_SHORT_565: case CL_UNORM_SHORT_555: return 2;
    case CL_UNORM_INT_101010: case CL_UNORM_INT_101010_2: case CL_UNORM_INT24: return 4;
    default: return 0;
  }
}

bool is_image_type(cl_mem_object_type type) {
  switch (type) {
    case CL_MEM_OBJECT_IMAGE1D: case CL_MEM_OBJECT_IMAGE1D_BUFFER: case CL_MEM_OBJECT_IMAGE1D_ARRAY:
    case CL_MEM_OBJECT_IMAGE2D: case CL_MEM_OBJECT_IMAGE2D_ARRAY: case CL_MEM_OBJECT_IMAGE3D: return true;
    default: return false;
  }
}

bool is_array(cl_mem_object_type type) {
  return type == CL_MEM_OBJECT_IMAGE1D_ARRAY || type == CL_MEM_OBJECT_IMAGE2D_ARRAY;
}

std::array<size_t, 3> extent_of(const cl_image_desc& d) {
  switch (d.image_type) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY: return {d.image_width, d.image_array_size, 1};
    case CL_MEM_OBJECT_IMAGE2D: return {d.image_width, d.image_height, 1};
    case CL_MEM_OBJECT_IMAGE2D_ARRAY: return {d.image_width, d.image_height, d.image_array_size};
    case CL_MEM_OBJECT_IMAGE3D: return {d.image_width, d.image_height, d.image_depth};
    default: return {d.image_width, 1, 1};
  }
}

host_layout layout_of(cl_mem_object_type type, size_t row_pitch, size_t slice_pitch) {
  if (type == CL_MEM_OBJECT_IMAGE1D_ARRAY) return {slice_pitch, slice_pitch};
  return {row_pitch, slice_pitch};
}

bool resolve_host_pitches(cl_mem_object_type type, const size_t* region, size_t element, size_t& row_pitch,
                          size_t& slice_pitch) {
  size_t row = region[0] * element;
  if (row_pitch == 0) row_pitch = row;
  else if (row_pitch < row) return false;
  size_t slice = type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? row_pitch : row_pitch * region[1];
  if (slice_pitch == 0) slice_pitch = slice;
  else if (slice_pitch < slice) return false;
  return true;
}

void copy_image_rect(uint8_t* packed, uint8_t* host, const size_t* region, size_t element, host_layout layout,
                     pack_direction direction) {
  const size_t origin[3] = {0, 0, 0};
  const size_t bytes[3] = {region[0] * element, region[1], region[2]};
  copy_rect(packed, host, origin, bytes, layout.y_pitch, layout.z_pitch, direction);
}

}  // namespace ferry::client
