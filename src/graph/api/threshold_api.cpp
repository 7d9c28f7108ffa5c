// The threshold's entry points: creation for an input and an output image
// format, copies of its value, range and outputs, attributes, release.
#include "graph/api/attributes.hpp"
#include "graph/api/data_access.hpp"
#include "graph/core/threshold.hpp"

#include <cstring>

using namespace ferry::graph;

namespace {

// Bytes of the vx_pixel_value_t member that holds a pixel of `format` (every
// member starts at the union's first byte); 0 for a format no pixel value
// describes.
vx_size pixel_member_size(vx_df_image format) {
  switch (format) {
    case VX_DF_IMAGE_U1: return sizeof(vx_bool);
    case VX_DF_IMAGE_U8: return sizeof(vx_uint8);
    case VX_DF_IMAGE_U16: return sizeof(vx_uint16);
    case VX_DF_IMAGE_S16: return sizeof(vx_int16);
    case VX_DF_IMAGE_U32: return sizeof(vx_uint32);
    case VX_DF_IMAGE_S32: return sizeof(vx_int32);
    case VX_DF_IMAGE_RGB: return 3;
    case VX_DF_IMAGE_RGBX: return 4;
    case VX_DF_IMAGE_NV12:
    case VX_DF_IMAGE_NV21:
    case VX_DF_IMAGE_UYVY:
    case VX_DF_IMAGE_YUYV:
    case VX_DF_IMAGE_IYUV:
    case VX_DF_IMAGE_YUV4: return 3;
    default: return 0;
  }
}

// Inputs are thresholded by value: one channel of integers. (The spec
// requires U8 and S16; the other integer formats cost nothing to hold.)
bool is_input_format(vx_df_image format) {
  return format == VX_DF_IMAGE_U8 || format == VX_DF_IMAGE_S16 || format == VX_DF_IMAGE_U16 ||
         format == VX_DF_IMAGE_S32 || format == VX_DF_IMAGE_U32;
}

// "For standard image formats, default output pixel values are defined as
// following": false is 0 in every channel; true is every channel's maximum
// (-1 for the signed formats, 1 for U1).
vx_pixel_value_t default_true_value(vx_df_image format) {
  vx_pixel_value_t value{};
  switch (format) {
    case VX_DF_IMAGE_U1: value.U1 = vx_true_e; break;
    case VX_DF_IMAGE_U8: value.U8 = 0xFF; break;
    case VX_DF_IMAGE_S16: value.S16 = -1; break;
    case VX_DF_IMAGE_U16: value.U16 = 0xFFFF; break;
    case VX_DF_IMAGE_S32: value.S32 = -1; break;
    case VX_DF_IMAGE_U32: value.U32 = 0xFFFFFFFFu; break;
    default: std::memset(value.reserved, 0xFF, pixel_member_size(format)); break;  // RGB, RGBX, YUV
  }
  return value;
}

// A threshold's pixel value to or from the user: reads give the whole union
// (only the format's member is meaningful); writes take the format's member
// alone, so that the bytes past it stay zero rather than whatever the
// application's union held.
void copy_pixel(vx_pixel_value_t& held, vx_pixel_value_t* user, vx_enum usage, vx_df_image format) {
  if (usage == VX_READ_ONLY) {
    *user = held;
  } else {
    vx_pixel_value_t value{};
    std::memcpy(&value, user, pixel_member_size(format));
    held = value;
  }
}

vx_threshold make_threshold(vx_context context, vx_enum type, vx_df_image input_format, vx_df_image output_format) {
  auto* threshold = new _vx_threshold(context);
  threshold->threshold_type = type;
  threshold->input_format = input_format;
  threshold->output_format = output_format;
  threshold->true_value = default_true_value(output_format);
  threshold->false_value = vx_pixel_value_t{};
  register_reference(threshold);
  return threshold;
}

// vxCreateThresholdForImage's and vxCreateVirtualThresholdForImage's checks;
// `owner` is what the log line is reported against.
vx_status check_threshold(const char* entry, vx_reference owner, vx_enum type, vx_df_image input_format,
                          vx_df_image output_format) {
  if (type != VX_THRESHOLD_TYPE_BINARY && type != VX_THRESHOLD_TYPE_RANGE)
    return refuse_logged(owner, VX_ERROR_INVALID_TYPE,
                         "%s: 0x%x is neither VX_THRESHOLD_TYPE_BINARY nor VX_THRESHOLD_TYPE_RANGE", entry, type);
  if (!is_input_format(input_format))
    return refuse_logged(owner, VX_ERROR_INVALID_FORMAT,
                         "%s: input format 0x%08x is not one a threshold compares (U8, S16, U16, S32, U32)", entry,
                         input_format);
  if (pixel_member_size(output_format) == 0)
    return refuse_logged(owner, VX_ERROR_INVALID_FORMAT, "%s: output format 0x%08x is no image format", entry,
                         output_format);
  return VX_SUCCESS;
}

// vxCopyThreshold*'s checks after the handle's: the threshold's data is
// reachable, both pointers are given, usage and memory type fit a copy.
vx_status check_threshold_copy(const char* entry, vx_threshold t, const void* first, const void* second,
                               vx_enum usage, vx_enum user_mem_type) {
  if (data_hidden(t)) return refuse_hidden(entry, t);
  if (first == nullptr || second == nullptr)
    return refuse_logged(t, VX_ERROR_INVALID_PARAMETERS, "%s: a value pointer is NULL", entry);
  return check_copy_mode(entry, t, usage, user_mem_type);
}

}  // namespace

VX_API_ENTRY vx_threshold VX_API_CALL vxCreateThresholdForImage(vx_context context, vx_enum thresh_type,
                                                                vx_df_image input_format, vx_df_image output_format) {
  return entry_object<vx_threshold>("vxCreateThresholdForImage", context, [&](vx_status& status) -> vx_threshold {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = refuse("vxCreateThresholdForImage", VX_ERROR_INVALID_REFERENCE, "not a context");
      return nullptr;
    }
    status = check_threshold("vxCreateThresholdForImage", c, thresh_type, input_format, output_format);
    if (status != VX_SUCCESS) return nullptr;
    return make_threshold(c, thresh_type, input_format, output_format);
  });
}

VX_API_ENTRY vx_threshold VX_API_CALL vxCreateVirtualThresholdForImage(vx_graph graph, vx_enum thresh_type,
                                                                       vx_df_image input_format,
                                                                       vx_df_image output_format) {
  return entry_object<vx_threshold>("vxCreateVirtualThresholdForImage", context_for_failure(graph),
                                    [&](vx_status& status) -> vx_threshold {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) {
      status = refuse("vxCreateVirtualThresholdForImage", VX_ERROR_INVALID_REFERENCE, "not a graph");
      return nullptr;
    }
    status = check_threshold("vxCreateVirtualThresholdForImage", g, thresh_type, input_format, output_format);
    if (status != VX_SUCCESS) return nullptr;
    vx_threshold threshold = make_threshold(g->context, thresh_type, input_format, output_format);
    threshold->is_virtual = true;
    threshold->scope = g;
    return threshold;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyThresholdValue(vx_threshold thresh, vx_pixel_value_t* value_ptr,
                                                        vx_enum usage, vx_enum user_mem_type) {
  return entry("vxCopyThresholdValue", [&]() -> vx_status {
    vx_threshold t = as<_vx_threshold>(thresh, VX_TYPE_THRESHOLD);
    if (t == nullptr) return refuse("vxCopyThresholdValue", VX_ERROR_INVALID_REFERENCE, "not a threshold");
    // VX_ERROR_NOT_COMPATIBLE: "The threshold object doesn't have type VX_THRESHOLD_TYPE_BINARY"
    if (t->threshold_type != VX_THRESHOLD_TYPE_BINARY)
      return refuse_logged(t, VX_ERROR_NOT_COMPATIBLE,
                           "vxCopyThresholdValue: the threshold is a range; use vxCopyThresholdRange");
    vx_status status = check_threshold_copy("vxCopyThresholdValue", t, value_ptr, value_ptr, usage, user_mem_type);
    if (status != VX_SUCCESS) return status;
    copy_pixel(t->value, value_ptr, usage, t->input_format);
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyThresholdRange(vx_threshold thresh, vx_pixel_value_t* lower_value_ptr,
                                                        vx_pixel_value_t* upper_value_ptr, vx_enum usage,
                                                        vx_enum user_mem_type) {
  return entry("vxCopyThresholdRange", [&]() -> vx_status {
    vx_threshold t = as<_vx_threshold>(thresh, VX_TYPE_THRESHOLD);
    if (t == nullptr) return refuse("vxCopyThresholdRange", VX_ERROR_INVALID_REFERENCE, "not a threshold");
    // VX_ERROR_NOT_COMPATIBLE: "The threshold object doesn't have type VX_THRESHOLD_TYPE_RANGE"
    if (t->threshold_type != VX_THRESHOLD_TYPE_RANGE)
      return refuse_logged(t, VX_ERROR_NOT_COMPATIBLE,
                           "vxCopyThresholdRange: the threshold is binary; use vxCopyThresholdValue");
    vx_status status =
        check_threshold_copy("vxCopyThresholdRange", t, lower_value_ptr, upper_value_ptr, usage, user_mem_type);
    if (status != VX_SUCCESS) return status;
    copy_pixel(t->lower, lower_value_ptr, usage, t->input_format);
    copy_pixel(t->upper, upper_value_ptr, usage, t->input_format);
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyThresholdOutput(vx_threshold thresh, vx_pixel_value_t* true_value_ptr,
                                                         vx_pixel_value_t* false_value_ptr, vx_enum usage,
                                                         vx_enum user_mem_type) {
  return entry("vxCopyThresholdOutput", [&]() -> vx_status {
    vx_threshold t = as<_vx_threshold>(thresh, VX_TYPE_THRESHOLD);
    if (t == nullptr) return refuse("vxCopyThresholdOutput", VX_ERROR_INVALID_REFERENCE, "not a threshold");
    vx_status status =
        check_threshold_copy("vxCopyThresholdOutput", t, true_value_ptr, false_value_ptr, usage, user_mem_type);
    if (status != VX_SUCCESS) return status;
    // The outputs are pixels of the output format.
    copy_pixel(t->true_value, true_value_ptr, usage, t->output_format);
    copy_pixel(t->false_value, false_value_ptr, usage, t->output_format);
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseThreshold(vx_threshold* thresh) {
  return release_handle(thresh, VX_TYPE_THRESHOLD);
}

VX_API_ENTRY vx_status VX_API_CALL vxSetThresholdAttribute(vx_threshold thresh, vx_enum attribute, const void* ptr,
                                                           vx_size size) {
  return entry("vxSetThresholdAttribute", [&]() -> vx_status {
    vx_threshold t = as<_vx_threshold>(thresh, VX_TYPE_THRESHOLD);
    if (t == nullptr) return refuse("vxSetThresholdAttribute", VX_ERROR_INVALID_REFERENCE, "not a threshold");
    // OpenVX 1.3's threshold attributes are all read-only; values go through
    // vxCopyThresholdValue, vxCopyThresholdRange and vxCopyThresholdOutput.
    switch (attribute) {
      case VX_THRESHOLD_TYPE:
      case VX_THRESHOLD_INPUT_FORMAT:
      case VX_THRESHOLD_OUTPUT_FORMAT:
        return refuse_logged(t, VX_ERROR_NOT_SUPPORTED, "vxSetThresholdAttribute: attribute 0x%x is read-only",
                             attribute);
      default:
        return refuse_logged(t, VX_ERROR_NOT_SUPPORTED, "vxSetThresholdAttribute: no threshold attribute 0x%x",
                             attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryThreshold(vx_threshold thresh, vx_enum attribute, void* ptr,
                                                    vx_size size) {
  return entry("vxQueryThreshold", [&]() -> vx_status {
    vx_threshold t = as<_vx_threshold>(thresh, VX_TYPE_THRESHOLD);
    if (t == nullptr) return refuse("vxQueryThreshold", VX_ERROR_INVALID_REFERENCE, "not a threshold");
    switch (attribute) {
      case VX_THRESHOLD_TYPE: return answer(ptr, size, t->threshold_type);
      // "Use a vx_enum parameter. Will contain a vx_df_image_e" (both 4 bytes).
      case VX_THRESHOLD_INPUT_FORMAT: return answer(ptr, size, t->input_format);
      case VX_THRESHOLD_OUTPUT_FORMAT: return answer(ptr, size, t->output_format);
      default:
        return refuse_logged(t, VX_ERROR_NOT_SUPPORTED, "vxQueryThreshold: no threshold attribute 0x%x", attribute);
    }
  });
}
