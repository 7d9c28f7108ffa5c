#include "graph/kernels/node_check.hpp"

#include "graph/core/context.hpp"
#include "graph/core/image.hpp"
#include "graph/core/image_format.hpp"
#include "graph/core/kernel.hpp"
#include "graph/core/node.hpp"
#include "graph/core/scalar.hpp"

#include <cstdarg>
#include <cstdio>
#include <string>

namespace ferry::graph {
namespace {

template <class T>
T* typed(vx_reference ref, vx_enum type) {
  return ref != nullptr && ref->type == type ? reinterpret_cast<T*>(ref) : nullptr;
}

std::string format_list(const vx_df_image* formats) {
  std::string list;
  for (; *formats != 0; ++formats) list += std::string(list.empty() ? "" : ", ") + format_name(*formats).text;
  return list;
}

}  // namespace

vx_reference node_check::parameter(vx_uint32 index) const {
  return index < node_->parameters.size() ? node_->parameters[index] : nullptr;
}
vx_image node_check::image(vx_uint32 index) const { return typed<_vx_image>(parameter(index), VX_TYPE_IMAGE); }
vx_scalar node_check::scalar(vx_uint32 index) const { return typed<_vx_scalar>(parameter(index), VX_TYPE_SCALAR); }
vx_threshold node_check::threshold(vx_uint32 index) const {
  return typed<_vx_threshold>(parameter(index), VX_TYPE_THRESHOLD);
}
vx_convolution node_check::convolution(vx_uint32 index) const {
  return typed<_vx_convolution>(parameter(index), VX_TYPE_CONVOLUTION);
}
vx_matrix node_check::matrix(vx_uint32 index) const { return typed<_vx_matrix>(parameter(index), VX_TYPE_MATRIX); }
vx_lut node_check::lut(vx_uint32 index) const { return typed<_vx_lut>(parameter(index), VX_TYPE_LUT); }
vx_distribution node_check::distribution(vx_uint32 index) const {
  return typed<_vx_distribution>(parameter(index), VX_TYPE_DISTRIBUTION);
}
vx_array node_check::array(vx_uint32 index) const { return typed<_vx_array>(parameter(index), VX_TYPE_ARRAY); }
vx_remap node_check::remap(vx_uint32 index) const { return typed<_vx_remap>(parameter(index), VX_TYPE_REMAP); }

vx_enum node_check::scalar_type(vx_uint32 index) const {
  vx_scalar s = scalar(index);
  return s == nullptr ? VX_TYPE_INVALID : s->data_type;
}
vx_enum node_check::scalar_enum(vx_uint32 index) const { return static_cast<vx_enum>(scalar_integer(scalar(index))); }
vx_float32 node_check::scalar_float(vx_uint32 index) const {
  return static_cast<vx_float32>(scalar_number(scalar(index)));
}
vx_int64 node_check::scalar_int(vx_uint32 index) const { return scalar_integer(scalar(index)); }

vx_status node_check::fail(vx_status status, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  const char* label = node_->name.empty() ? node_->kernel->name.c_str() : node_->name.c_str();
  add_log(node_, status, "node %s (%s): %s", label, node_->kernel->name.c_str(), message);
  return status;
}

vx_status node_check::require_format(vx_uint32 index, const vx_df_image* formats) {
  vx_image in = image(index);
  if (in == nullptr) return fail(VX_ERROR_INVALID_TYPE, "parameter %u is not an image", index);
  for (const vx_df_image* f = formats; *f != 0; ++f)
    if (in->format == *f) return VX_SUCCESS;
  return fail(VX_ERROR_INVALID_FORMAT, "image parameter %u is %s; the kernel takes %s", index,
              format_name(in->format).text, format_list(formats).c_str());
}

vx_status node_check::require_same_size(vx_uint32 a, vx_uint32 b) {
  vx_image first = image(a), second = image(b);
  if (first == nullptr || second == nullptr) return fail(VX_ERROR_INVALID_TYPE, "parameters %u and %u must be images", a, b);
  if (first->width != second->width || first->height != second->height)
    return fail(VX_ERROR_INVALID_DIMENSION, "image parameters %u (%ux%u) and %u (%ux%u) differ in size", a,
                first->width, first->height, b, second->width, second->height);
  return VX_SUCCESS;
}

vx_status node_check::require_scalar(vx_uint32 index, vx_enum type) {
  vx_scalar s = scalar(index);
  if (s == nullptr) return fail(VX_ERROR_INVALID_TYPE, "parameter %u is not a scalar", index);
  if (s->data_type != type)
    return fail(VX_ERROR_INVALID_TYPE, "scalar parameter %u has type 0x%x; the kernel takes 0x%x", index,
                s->data_type, type);
  return VX_SUCCESS;
}

vx_status node_check::settle_image(vx_uint32 index, vx_df_image format, vx_uint32 width, vx_uint32 height) {
  vx_image out = image(index);
  if (out == nullptr) return VX_SUCCESS;  // an optional output left unset
  // A virtual image, or one created with its format or size left open, takes
  // what the kernel makes; anything already fixed must match it.
  if (out->format == VX_DF_IMAGE_VIRT) {
    if (out->memory != nullptr || out->parent != nullptr)
      return fail(VX_ERROR_INVALID_FORMAT, "output %u has no format", index);
    out->format = format;
  } else if (out->format != format) {
    return fail(VX_ERROR_INVALID_FORMAT, "output %u is %s; the kernel makes %s", index, format_name(out->format).text,
                format_name(format).text);
  }
  if (out->width == 0 && out->height == 0) {
    out->width = width;
    out->height = height;
  } else if (out->width != width || out->height != height) {
    return fail(VX_ERROR_INVALID_DIMENSION, "output %u is %ux%u; the kernel makes %ux%u", index, out->width,
                out->height, width, height);
  }
  return VX_SUCCESS;
}

vx_status node_check::settle_like(vx_uint32 index, vx_uint32 like, vx_df_image format) {
  vx_image in = image(like);
  if (in == nullptr) return fail(VX_ERROR_INVALID_TYPE, "parameter %u is not an image", like);
  return settle_image(index, format, in->width, in->height);
}

vx_df_image node_check::output_format(vx_uint32 index) const {
  vx_image out = image(index);
  return out == nullptr ? static_cast<vx_df_image>(VX_DF_IMAGE_VIRT) : out->format;
}

}  // namespace ferry::graph
