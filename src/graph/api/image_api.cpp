// The image entry points: creation (plain, virtual, uniform, from a handle, an
// ROI, a channel), attributes, valid regions, and host access through maps
// and copies.
//
// Host access always goes to the host copy of the image's memory (its root's,
// for an ROI or a channel): a graph may have left the device copy the newer
// one, so every map and copy first brings the host copy up to date
// (image_memory::to_host, which blocks), and every write through them makes
// the host copy the only current one (host_written), so the next graph sends
// it to the device again.
#include "graph/api/attributes.hpp"
#include "graph/api/data_access.hpp"
#include "graph/api/entry.hpp"
#include "graph/core/graph.hpp"
#include "graph/core/image.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace ferry::graph;

namespace {

vx_reference as_ref(vx_context context) { return reinterpret_cast<vx_reference>(context); }

/// Pixels per element of plane `p` along x and y: a chroma plane of a 4:2:0
/// format holds one element per 2x2 pixels, a packed 4:2:2 plane one per pair.
struct plane_step {
  uint32_t x, y;
};
plane_step step_of(const image_format& format, uint32_t p) {
  const plane_format& plane = format.plane[p];
  return {plane.subsample_x * plane.pixels_per_element, plane.subsample_y};
}

/// Why an image of `format`, `width` x `height` cannot be made (VX_SUCCESS
/// when it can). `entry` names the caller in the log line.
vx_status check_new_image(vx_context context, const char* entry, vx_uint32 width, vx_uint32 height,
                          vx_df_image format, const image_format*& layout) {
  layout = find_image_format(format);
  if (format == VX_DF_IMAGE_VIRT)
    return refuse_logged(as_ref(context), VX_ERROR_INVALID_FORMAT,
                         "%s: VX_DF_IMAGE_VIRT is for virtual images only", entry);
  if (layout == nullptr)
    return refuse_logged(as_ref(context), VX_ERROR_INVALID_FORMAT, "%s: format %s is not supported", entry,
                         format_name(format).text);
  if (width == 0 || height == 0)
    return refuse_logged(as_ref(context), VX_ERROR_INVALID_DIMENSION, "%s: a %ux%u image has no pixels", entry,
                         width, height);
  // "The image in the formats of NV12, NV21, IYUV, UYVY, YUYV must have even
  // width" (and NV12, NV21, IYUV even height).
  if (width % layout->width_multiple != 0 || height % layout->height_multiple != 0)
    return refuse_logged(as_ref(context), VX_ERROR_INVALID_DIMENSION,
                         "%s: a %s image must be a multiple of %u x %u pixels, not %ux%u", entry,
                         format_name(format).text, layout->width_multiple, layout->height_multiple, width, height);
  // Row pitches are vx_int32 (vx_imagepatch_addressing_t::stride_y).
  for (uint32_t p = 0; p < layout->planes; ++p) {
    uint64_t row = uint64_t{plane_width(*layout, p, width)} * layout->plane[p].bytes_per_element;
    if (row > INT32_MAX)
      return refuse_logged(as_ref(context), VX_ERROR_INVALID_DIMENSION, "%s: rows of %u %s pixels are too long",
                           entry, width, format_name(format).text);
  }
  return VX_SUCCESS;
}

/// "0 <= start < end <= number of pixels in the image dimension".
bool rectangle_inside(const vx_rectangle_t& rect, vx_uint32 width, vx_uint32 height) {
  return rect.start_x < rect.end_x && rect.start_y < rect.end_y && rect.end_x <= width && rect.end_y <= height;
}

/// The checks vxMapImagePatch and vxCopyImagePatch share, in the spec's
/// order of their return values: a virtual image is VX_ERROR_OPTIMIZED_AWAY,
/// any other bad parameter VX_ERROR_INVALID_PARAMETERS.
vx_status check_patch(const char* entry, vx_image image, const vx_rectangle_t* rect, vx_uint32 plane,
                      vx_enum memory_type) {
  // VX_ERROR_OPTIMIZED_AWAY: "a reference to a virtual image that cannot be
  // accessed by the application" (a user kernel of its graph can, while the
  // graph runs; an image fusion kept in local memory has no memory at all).
  if (data_hidden(image) || viewed_memory(image) == nullptr)
    return refuse_logged(image, VX_ERROR_OPTIMIZED_AWAY, "%s: a virtual image cannot be accessed", entry);
  const image_format* layout = find_image_format(image->format);
  if (layout == nullptr)
    return refuse_logged(image, VX_ERROR_INVALID_PARAMETERS, "%s: the image has no format", entry);
  if (rect == nullptr) return refuse_logged(image, VX_ERROR_INVALID_PARAMETERS, "%s: no rectangle", entry);
  // "The patch must be within the bounds of the image ... 0 <= start < end".
  if (!rectangle_inside(*rect, image->width, image->height))
    return refuse_logged(image, VX_ERROR_INVALID_PARAMETERS,
                         "%s: rectangle (%u,%u)-(%u,%u) is empty or outside the %ux%u image", entry, rect->start_x,
                         rect->start_y, rect->end_x, rect->end_y, image->width, image->height);
  if (plane >= layout->planes)
    return refuse_logged(image, VX_ERROR_INVALID_PARAMETERS, "%s: plane %u of a %u-plane %s image", entry, plane,
                         layout->planes, format_name(image->format).text);
  // A subsampled plane is addressed by whole elements: a patch that began or
  // ended inside one would alias its neighbours in the addressing formula.
  plane_step step = step_of(*layout, plane);
  if (rect->start_x % step.x != 0 || rect->end_x % step.x != 0 || rect->start_y % step.y != 0 ||
      rect->end_y % step.y != 0)
    return refuse_logged(image, VX_ERROR_INVALID_PARAMETERS,
                         "%s: on plane %u of a %s image a rectangle's corners must be multiples of %u x %u", entry,
                         plane, format_name(image->format).text, step.x, step.y);
  if (memory_type != VX_MEMORY_TYPE_HOST)
    return refuse_logged(image, VX_ERROR_INVALID_PARAMETERS, "%s: memory type 0x%x is not VX_MEMORY_TYPE_HOST", entry,
                         memory_type);
  return VX_SUCCESS;
}

/// Makes the host copy of the image's memory current (a graph may have
/// written the device copy); VX_FAILURE with a log line when it cannot be read.
vx_status bring_to_host(const char* entry, vx_image image) {
  image_memory* memory = viewed_memory(image);
  cl_int status = memory->to_host(memory->last_queue);
  if (status != CL_SUCCESS)
    return refuse_logged(image, VX_FAILURE, "%s: the image could not be read back from the device (OpenCL %d)",
                         entry, status);
  return VX_SUCCESS;
}

/// Whether any image viewing `root`'s memory (itself, its ROIs, its
/// channels) has a live map: vxSwapImageHandle may not pull it away.
bool mapped_anywhere(vx_image root) {
  struct search {
    vx_image root;
    bool found;
  } s{root, false};
  for_each_reference(
      root->context,
      [](vx_reference ref, void* data) {
        auto* s = static_cast<search*>(data);
        if (ref->type != VX_TYPE_IMAGE) return;
        auto* image = reinterpret_cast<vx_image>(ref);
        vx_uint32 ox, oy;
        if (!image->maps.empty() && memory_root(image, ox, oy) == s->root) s->found = true;
      },
      &s);
  return s.found;
}

/// The color spaces VX_IMAGE_SPACE takes (vx_color_space_e).
bool is_color_space(vx_enum space) {
  return space == VX_COLOR_SPACE_NONE || space == VX_COLOR_SPACE_BT601_525 || space == VX_COLOR_SPACE_BT601_625 ||
         space == VX_COLOR_SPACE_BT709;
}

}  // namespace

VX_API_ENTRY vx_image VX_API_CALL vxCreateImage(vx_context context, vx_uint32 width, vx_uint32 height,
                                                vx_df_image color) {
  return entry_object<vx_image>("vxCreateImage", context, [&](vx_status& status) -> vx_image {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = refuse("vxCreateImage", VX_ERROR_INVALID_REFERENCE, "not a context");
      return nullptr;
    }
    const image_format* layout = nullptr;
    status = check_new_image(c, "vxCreateImage", width, height, color, layout);
    if (status != VX_SUCCESS) return nullptr;
    return make_image(c, width, height, color);
  });
}

VX_API_ENTRY vx_image VX_API_CALL vxCreateVirtualImage(vx_graph graph, vx_uint32 width, vx_uint32 height,
                                                       vx_df_image color) {
  return entry_object<vx_image>("vxCreateVirtualImage", context_of(graph), [&](vx_status& status) -> vx_image {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) {
      status = refuse("vxCreateVirtualImage", VX_ERROR_INVALID_REFERENCE, "not a graph");
      return nullptr;
    }
    // "A value of VX_DF_IMAGE_VIRT informs the interface that the format is
    // unspecified"; a width or height of zero, that the size is.
    const image_format* layout = find_image_format(color);
    if (color != VX_DF_IMAGE_VIRT && layout == nullptr) {
      status = refuse_logged(g, VX_ERROR_INVALID_FORMAT, "vxCreateVirtualImage: format %s is not supported",
                             format_name(color).text);
      return nullptr;
    }
    if (layout != nullptr && (width % layout->width_multiple != 0 || height % layout->height_multiple != 0)) {
      status = refuse_logged(g, VX_ERROR_INVALID_DIMENSION,
                             "vxCreateVirtualImage: a %s image must be a multiple of %u x %u pixels, not %ux%u",
                             format_name(color).text, layout->width_multiple, layout->height_multiple, width,
                             height);
      return nullptr;
    }
    // No memory now: verification gives it (realize_image) unless fusion
    // removes the image altogether.
    auto* image = new _vx_image(g->context);
    image->format = color;
    image->width = width;
    image->height = height;
    image->is_virtual = true;
    image->scope = g;
    if (layout != nullptr && layout->yuv) image->space = VX_COLOR_SPACE_BT709;
    image->valid = {0, 0, width, height};
    register_reference(image);
    return image;
  });
}

VX_API_ENTRY vx_image VX_API_CALL vxCreateUniformImage(vx_context context, vx_uint32 width, vx_uint32 height,
                                                       vx_df_image color, const vx_pixel_value_t* value) {
  return entry_object<vx_image>("vxCreateUniformImage", context, [&](vx_status& status) -> vx_image {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = refuse("vxCreateUniformImage", VX_ERROR_INVALID_REFERENCE, "not a context");
      return nullptr;
    }
    const image_format* layout = nullptr;
    status = check_new_image(c, "vxCreateUniformImage", width, height, color, layout);
    if (status != VX_SUCCESS) return nullptr;
    if (value == nullptr) {
      status = refuse_logged(c, VX_ERROR_INVALID_PARAMETERS, "vxCreateUniformImage: no pixel value");
      return nullptr;
    }
    vx_image image = make_image(c, width, height, color);
    image->uniform = true;
    image->uniform_value = *value;
    fill_image(image, *value);  // fresh memory: the host copy is the current one
    return image;
  });
}

VX_API_ENTRY vx_image VX_API_CALL vxCreateImageFromHandle(vx_context context, vx_df_image color,
                                                          const vx_imagepatch_addressing_t addrs[],
                                                          void* const ptrs[], vx_enum memory_type) {
  static constexpr const char* name = "vxCreateImageFromHandle";
  return entry_object<vx_image>(name, context, [&](vx_status& status) -> vx_image {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = refuse(name, VX_ERROR_INVALID_REFERENCE, "not a context");
      return nullptr;
    }
    const image_format* layout = find_image_format(color);
    if (layout == nullptr) {
      status = refuse_logged(c, VX_ERROR_INVALID_FORMAT, "%s: format %s is not supported", name,
                             format_name(color).text);
      return nullptr;
    }
    // "When giving VX_MEMORY_TYPE_HOST the ptrs array is assumed to be HOST
    // accessible pointers to memory" (the only type this implementation imports).
    if (memory_type != VX_MEMORY_TYPE_HOST) {
      status = refuse_logged(c, VX_ERROR_INVALID_PARAMETERS, "%s: memory type 0x%x is not VX_MEMORY_TYPE_HOST",
                             name, memory_type);
      return nullptr;
    }
    if (addrs == nullptr || ptrs == nullptr) {
      status = refuse_logged(c, VX_ERROR_INVALID_PARAMETERS, "%s: no %s array", name,
                             addrs == nullptr ? "addrs" : "ptrs");
      return nullptr;
    }
    // The image's size is plane 0's (the other planes' dim_x/dim_y may be
    // given in either logical pixels or elements; only their strides are read).
    vx_uint32 width = addrs[0].dim_x, height = addrs[0].dim_y;
    status = check_new_image(c, name, width, height, color, layout);
    if (status != VX_SUCCESS) return nullptr;
    std::vector<image_memory::plane> planes;
    for (uint32_t p = 0; p < layout->planes; ++p) {
      const plane_format& format = layout->plane[p];
      const vx_imagepatch_addressing_t& addr = addrs[p];
      if (ptrs[p] == nullptr) {
        status = refuse_logged(c, VX_ERROR_INVALID_PARAMETERS, "%s: ptrs[%u] is NULL", name, p);
        return nullptr;
      }
      // "stride_x should be equal to the number of bytes represented by the
      // image data format" (per pixel: a 4:2:2 pair's 4 bytes are 2 per pixel).
      auto pixel_bytes = static_cast<vx_int32>(format.bytes_per_element / format.pixels_per_element);
      if (addr.stride_x != pixel_bytes) {
        status = refuse_logged(c, VX_ERROR_INVALID_PARAMETERS, "%s: plane %u of %s has stride_x %d, not %d", name, p,
                               format_name(color).text, addr.stride_x, pixel_bytes);
        return nullptr;
      }
      // "... and stride_y >= stride_x * dim_x" (the plane's row of elements).
      image_memory::plane plane;
      plane.base = static_cast<uint8_t*>(ptrs[p]);
      plane.width = plane_width(*layout, p, width);
      plane.height = plane_height(*layout, p, height);
      plane.element_bytes = format.bytes_per_element;
      plane.stride_x = static_cast<int32_t>(format.bytes_per_element);
      plane.stride_y = addr.stride_y;
      uint64_t row = uint64_t{plane.width} * plane.element_bytes;
      if (addr.stride_y <= 0 || static_cast<uint64_t>(addr.stride_y) < row) {
        status = refuse_logged(c, VX_ERROR_INVALID_PARAMETERS,
                               "%s: plane %u has stride_y %d, shorter than its %llu-byte rows", name, p,
                               addr.stride_y, static_cast<unsigned long long>(row));
        return nullptr;
      }
      planes.push_back(plane);
    }
    // "The implementation will make an internal copy of the provided information."
    auto memory = std::make_shared<image_memory>(*layout, width, height, std::move(planes));
    auto* image = new _vx_image(c);
    image->format = color;
    image->width = width;
    image->height = height;
    if (layout->yuv) image->space = VX_COLOR_SPACE_BT709;
    image->valid = {0, 0, width, height};
    image->memory_type = VX_MEMORY_TYPE_HOST;
    image->handle_layout.assign(addrs, addrs + layout->planes);
    image->memory = std::move(memory);
    register_reference(image);
    return image;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSwapImageHandle(vx_image image, void* const new_ptrs[], void* prev_ptrs[],
                                                     vx_size num_planes) {
  static constexpr const char* name = "vxSwapImageHandle";
  return entry(name, [&]() -> vx_status {
    vx_image img = as<_vx_image>(image, VX_TYPE_IMAGE);
    if (img == nullptr) return refuse(name, VX_ERROR_INVALID_REFERENCE, "not an image");
    // VX_ERROR_INVALID_PARAMETERS: "The image was not created from handle or
    // the content of new_ptrs is not valid."
    if (img->memory_type != VX_MEMORY_TYPE_HOST || img->parent != nullptr || img->memory == nullptr)
      return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "%s: the image was not created from a handle", name);
    const image_format* layout = find_image_format(img->format);
    // "This must be set equal to the number of planes of the input image."
    if (num_planes != layout->planes)
      return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "%s: num_planes is %zu, the %s image has %u", name,
                           static_cast<size_t>(num_planes), format_name(img->format).text, layout->planes);
    // "new_ptrs[i] must be non-NULL for each i ... otherwise, this is an error."
    if (new_ptrs != nullptr)
      for (uint32_t p = 0; p < layout->planes; ++p)
        if (new_ptrs[p] == nullptr)
          return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "%s: new_ptrs[%u] is NULL", name, p);
    // VX_FAILURE: "The image was already being accessed."
    if (mapped_anywhere(img))
      return refuse_logged(img, VX_FAILURE, "%s: the image (or an ROI of it) is mapped", name);
    // "The application gets back the ownership of the memory referenced by
    // the previous handle. This memory contains up-to-date pixel data."
    vx_status status = bring_to_host(name, img);
    if (status != VX_SUCCESS) return status;
    image_memory& memory = *img->memory;
    if (prev_ptrs != nullptr)
      for (uint32_t p = 0; p < layout->planes; ++p)
        // After a swap to NULL the memory is the library's: no handle to return.
        prev_ptrs[p] = memory.owns_host() ? nullptr : memory.host_plane(p).base;
    std::vector<image_memory::plane> planes;
    if (new_ptrs != nullptr) {
      // "The memory referenced by the new handle must have been allocated
      // consistently with the image properties": vxCreateImageFromHandle's layout.
      for (uint32_t p = 0; p < layout->planes; ++p) {
        image_memory::plane plane;
        plane.base = static_cast<uint8_t*>(new_ptrs[p]);
        plane.width = plane_width(*layout, p, img->width);
        plane.height = plane_height(*layout, p, img->height);
        plane.element_bytes = layout->plane[p].bytes_per_element;
        plane.stride_x = static_cast<int32_t>(plane.element_bytes);
        plane.stride_y = img->handle_layout[p].stride_y;
        planes.push_back(plane);
      }
    }
    // The same memory object takes the new planes, so ROIs and channels of
    // the image (which view it) follow; the device copy is re-sent.
    memory.replace_host(std::move(planes));
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_image VX_API_CALL vxCreateImageFromROI(vx_image img, const vx_rectangle_t* rect) {
  static constexpr const char* name = "vxCreateImageFromROI";
  return entry_object<vx_image>(name, context_of(img), [&](vx_status& status) -> vx_image {
    vx_image parent = as<_vx_image>(img, VX_TYPE_IMAGE);
    if (parent == nullptr) {
      status = refuse(name, VX_ERROR_INVALID_REFERENCE, "not an image");
      return nullptr;
    }
    // A virtual image may never exist (fusion removes it): nothing to view.
    if (parent->is_virtual) {
      status = refuse_logged(parent, VX_ERROR_NOT_SUPPORTED, "%s: an ROI of a virtual image is not supported", name);
      return nullptr;
    }
    if (rect == nullptr) {
      status = refuse_logged(parent, VX_ERROR_INVALID_PARAMETERS, "%s: no rectangle", name);
      return nullptr;
    }
    // "The rectangle must be defined within the pixel space of the parent image."
    if (!rectangle_inside(*rect, parent->width, parent->height)) {
      status = refuse_logged(parent, VX_ERROR_INVALID_PARAMETERS,
                             "%s: rectangle (%u,%u)-(%u,%u) is empty or outside the %ux%u parent", name, rect->start_x,
                             rect->start_y, rect->end_x, rect->end_y, parent->width, parent->height);
      return nullptr;
    }
    // The ROI is an image of the parent's format: its corners fall on whole
    // elements of every plane (even columns and rows for 4:2:0, even columns
    // for 4:2:2), as any image of the format must be sized.
    const image_format* layout = find_image_format(parent->format);
    if (rect->start_x % layout->width_multiple != 0 || rect->end_x % layout->width_multiple != 0 ||
        rect->start_y % layout->height_multiple != 0 || rect->end_y % layout->height_multiple != 0) {
      status = refuse_logged(parent, VX_ERROR_INVALID_PARAMETERS,
                             "%s: an ROI of a %s image must have its corners on multiples of %u x %u", name,
                             format_name(parent->format).text, layout->width_multiple, layout->height_multiple);
      return nullptr;
    }
    auto* roi = new _vx_image(parent->context);
    roi->format = parent->format;
    roi->width = rect->end_x - rect->start_x;
    roi->height = rect->end_y - rect->start_y;
    roi->space = parent->space;
    roi->range = parent->range;
    roi->memory = parent->memory;  // the root's memory object: swaps reach the ROI
    roi->parent = parent;
    roi->offset_x = rect->start_x;
    roi->offset_y = rect->start_y;
    roi->uniform = parent->uniform;
    roi->uniform_value = parent->uniform_value;
    // The parent's valid region, seen from the ROI.
    vx_rectangle_t valid{std::max(parent->valid.start_x, rect->start_x), std::max(parent->valid.start_y, rect->start_y),
                         std::min(parent->valid.end_x, rect->end_x), std::min(parent->valid.end_y, rect->end_y)};
    if (valid.start_x < valid.end_x && valid.start_y < valid.end_y)
      roi->valid = {valid.start_x - rect->start_x, valid.start_y - rect->start_y, valid.end_x - rect->start_x,
                    valid.end_y - rect->start_y};
    add_internal(parent);  // released by the ROI's destructor
    register_reference(roi);
    return roi;
  });
}

VX_API_ENTRY vx_image VX_API_CALL vxCreateImageFromChannel(vx_image img, vx_enum channel) {
  static constexpr const char* name = "vxCreateImageFromChannel";
  return entry_object<vx_image>(name, context_of(img), [&](vx_status& status) -> vx_image {
    vx_image parent = as<_vx_image>(img, VX_TYPE_IMAGE);
    if (parent == nullptr) {
      status = refuse(name, VX_ERROR_INVALID_REFERENCE, "not an image");
      return nullptr;
    }
    // "The function supports only channels that occupy an entire plane of a
    // multi-planar image: VX_CHANNEL_Y from YUV4, IYUV, NV12, NV21;
    // VX_CHANNEL_U and VX_CHANNEL_V from YUV4, IYUV. Other cases are not supported."
    vx_df_image f = parent->format;
    bool y_plane = channel == VX_CHANNEL_Y && (f == VX_DF_IMAGE_YUV4 || f == VX_DF_IMAGE_IYUV ||
                                               f == VX_DF_IMAGE_NV12 || f == VX_DF_IMAGE_NV21);
    bool uv_plane = (channel == VX_CHANNEL_U || channel == VX_CHANNEL_V) &&
                    (f == VX_DF_IMAGE_YUV4 || f == VX_DF_IMAGE_IYUV);
    if (!y_plane && !uv_plane) {
      status = refuse_logged(parent, VX_ERROR_INVALID_PARAMETERS,
                             "%s: channel 0x%x is not a whole plane of a %s image", name, channel, format_name(f).text);
      return nullptr;
    }
    // Images here view plane 0 of their root's memory (an ROI's offset is in
    // plane 0's pixels, and graphs bind plane 0); the U and V planes would
    // need a plane index throughout.
    if (uv_plane) {
      status = refuse_logged(parent, VX_ERROR_NOT_SUPPORTED,
                             "%s: the U and V planes cannot be viewed as images yet (use vxChannelExtractNode)", name);
      return nullptr;
    }
    if (parent->is_virtual) {
      status = refuse_logged(parent, VX_ERROR_NOT_SUPPORTED, "%s: a channel of a virtual image is not supported",
                             name);
      return nullptr;
    }
    // The Y plane is plane 0: a U8 view of it with no offset.
    auto* y = new _vx_image(parent->context);
    y->format = VX_DF_IMAGE_U8;
    y->width = parent->width;
    y->height = parent->height;
    y->range = parent->range;
    y->memory = parent->memory;
    y->parent = parent;
    y->uniform = parent->uniform;
    y->uniform_value.U8 = parent->uniform_value.YUV[0];
    y->valid = parent->valid;
    add_internal(parent);
    register_reference(y);
    return y;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryImage(vx_image image, vx_enum attribute, void* ptr, vx_size size) {
  return entry("vxQueryImage", [&]() -> vx_status {
    vx_image img = as<_vx_image>(image, VX_TYPE_IMAGE);
    if (img == nullptr) return refuse("vxQueryImage", VX_ERROR_INVALID_REFERENCE, "not an image");
    const image_format* layout = find_image_format(img->format);
    switch (attribute) {
      case VX_IMAGE_WIDTH: return answer(ptr, size, img->width);
      case VX_IMAGE_HEIGHT: return answer(ptr, size, img->height);
      case VX_IMAGE_FORMAT: return answer(ptr, size, img->format);
      // A virtual image whose format is left to the graph has no planes yet.
      case VX_IMAGE_PLANES: return answer(ptr, size, vx_size{layout == nullptr ? 0u : layout->planes});
      case VX_IMAGE_SPACE: return answer(ptr, size, img->space);
      case VX_IMAGE_RANGE: return answer(ptr, size, img->range);
      case VX_IMAGE_MEMORY_TYPE: return answer(ptr, size, img->memory_type);
      case VX_IMAGE_IS_UNIFORM: return answer(ptr, size, img->uniform ? vx_bool{vx_true_e} : vx_bool{vx_false_e});
      case VX_IMAGE_UNIFORM_VALUE:
        // "Queries the image uniform value if any": an image that has none
        // cannot answer.
        if (!img->uniform)
          return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "vxQueryImage: the image is not uniform");
        return answer(ptr, size, img->uniform_value);
      default:
        return refuse_logged(img, VX_ERROR_NOT_SUPPORTED, "vxQueryImage: no image attribute 0x%x", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSetImageAttribute(vx_image image, vx_enum attribute, const void* ptr,
                                                       vx_size size) {
  return entry("vxSetImageAttribute", [&]() -> vx_status {
    vx_image img = as<_vx_image>(image, VX_TYPE_IMAGE);
    if (img == nullptr) return refuse("vxSetImageAttribute", VX_ERROR_INVALID_REFERENCE, "not an image");
    switch (attribute) {
      // VX_IMAGE_SPACE is the one read-write image attribute.
      case VX_IMAGE_SPACE: {
        vx_enum space = 0;
        vx_status status = take(ptr, size, space);
        if (status != VX_SUCCESS) return status;
        if (!is_color_space(space))
          return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "vxSetImageAttribute: 0x%x is no color space",
                               space);
        img->space = space;
        return VX_SUCCESS;
      }
      case VX_IMAGE_WIDTH:
      case VX_IMAGE_HEIGHT:
      case VX_IMAGE_FORMAT:
      case VX_IMAGE_PLANES:
      case VX_IMAGE_RANGE:
      case VX_IMAGE_MEMORY_TYPE:
      case VX_IMAGE_IS_UNIFORM:
      case VX_IMAGE_UNIFORM_VALUE:
        return refuse_logged(img, VX_ERROR_NOT_SUPPORTED, "vxSetImageAttribute: attribute 0x%x is read-only",
                             attribute);
      default:
        return refuse_logged(img, VX_ERROR_NOT_SUPPORTED, "vxSetImageAttribute: no image attribute 0x%x", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSetImagePixelValues(vx_image image, const vx_pixel_value_t* pixel_value) {
  static constexpr const char* name = "vxSetImagePixelValues";
  return entry(name, [&]() -> vx_status {
    vx_image img = as<_vx_image>(image, VX_TYPE_IMAGE);
    if (img == nullptr) return refuse(name, VX_ERROR_INVALID_REFERENCE, "not an image");
    // VX_ERROR_INVALID_REFERENCE: "If the image is a uniform image, a virtual
    // image, or not a vx_image."
    if (img->uniform) return refuse_logged(img, VX_ERROR_INVALID_REFERENCE, "%s: a uniform image is read-only", name);
    if (img->is_virtual || viewed_memory(img) == nullptr)
      return refuse_logged(img, VX_ERROR_INVALID_REFERENCE, "%s: a virtual image cannot be accessed", name);
    if (pixel_value == nullptr) return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "%s: no pixel value", name);
    // An ROI's parent keeps its pixels outside the ROI: the host copy must
    // hold them before it becomes the only current one.
    vx_status status = bring_to_host(name, img);
    if (status != VX_SUCCESS) return status;
    fill_image(img, *pixel_value);
    viewed_memory(img)->host_written();
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseImage(vx_image* image) {
  vx_status status = release_handle(image, VX_TYPE_IMAGE);
  if (status != VX_SUCCESS) refuse("vxReleaseImage", status, "not an image");
  return status;
}

// vxFormatImagePatchAddress1d/2d are pure arithmetic on the application's own
// pointer and addressing: no object is read, so no lock is taken (they are
// called once per pixel).
//
// Pixel (x, y) of a patch lies at
//   ptr + (y * scale_y / VX_SCALE_UNITY) * stride_y + (x * scale_x / VX_SCALE_UNITY) * stride_x,
// and for bit-packed formats (stride_x 0, stride_x_bits set) in the byte holding
// its bit: ((x * scale_x / VX_SCALE_UNITY) * stride_x_bits) / 8.
VX_API_ENTRY void* VX_API_CALL vxFormatImagePatchAddress2d(void* ptr, vx_uint32 x, vx_uint32 y,
                                                          const vx_imagepatch_addressing_t* addr) {
  if (ptr == nullptr || addr == nullptr || x >= addr->dim_x || y >= addr->dim_y) return nullptr;
  int64_t column = static_cast<int64_t>(uint64_t{x} * addr->scale_x / VX_SCALE_UNITY);
  int64_t row = static_cast<int64_t>(uint64_t{y} * addr->scale_y / VX_SCALE_UNITY);
  int64_t offset = row * addr->stride_y;
  if (addr->stride_x == 0 && addr->stride_x_bits != 0)
    offset += column * addr->stride_x_bits / 8;
  else
    offset += column * addr->stride_x;
  return static_cast<uint8_t*>(ptr) + offset;
}

VX_API_ENTRY void* VX_API_CALL vxFormatImagePatchAddress1d(void* ptr, vx_uint32 index,
                                                          const vx_imagepatch_addressing_t* addr) {
  // "Indexes increase horizontally by 1 then wrap around to the next row."
  if (ptr == nullptr || addr == nullptr || addr->dim_x == 0) return nullptr;
  if (uint64_t{index} >= uint64_t{addr->dim_x} * addr->dim_y) return nullptr;
  return vxFormatImagePatchAddress2d(ptr, index % addr->dim_x, index / addr->dim_x, addr);
}

VX_API_ENTRY vx_status VX_API_CALL vxGetValidRegionImage(vx_image image, vx_rectangle_t* rect) {
  return entry("vxGetValidRegionImage", [&]() -> vx_status {
    vx_image img = as<_vx_image>(image, VX_TYPE_IMAGE);
    if (img == nullptr) return refuse("vxGetValidRegionImage", VX_ERROR_INVALID_REFERENCE, "not an image");
    if (rect == nullptr)
      return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "vxGetValidRegionImage: no rectangle to fill");
    *rect = img->valid;
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSetImageValidRectangle(vx_image image, const vx_rectangle_t* rect) {
  return entry("vxSetImageValidRectangle", [&]() -> vx_status {
    vx_image img = as<_vx_image>(image, VX_TYPE_IMAGE);
    if (img == nullptr) return refuse("vxSetImageValidRectangle", VX_ERROR_INVALID_REFERENCE, "not an image");
    // "A NULL indicates that the valid region is the entire image."
    if (rect == nullptr) {
      img->valid = {0, 0, img->width, img->height};
      return VX_SUCCESS;
    }
    // VX_ERROR_INVALID_PARAMETERS: "The rect does not define a proper valid
    // rectangle" (an empty one is proper: nothing is valid).
    if (rect->start_x > rect->end_x || rect->start_y > rect->end_y || rect->end_x > img->width ||
        rect->end_y > img->height)
      return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS,
                           "vxSetImageValidRectangle: (%u,%u)-(%u,%u) is no rectangle of the %ux%u image",
                           rect->start_x, rect->start_y, rect->end_x, rect->end_y, img->width, img->height);
    img->valid = *rect;
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyImagePatch(vx_image image, const vx_rectangle_t* image_rect,
                                                    vx_uint32 image_plane_index,
                                                    const vx_imagepatch_addressing_t* user_addr, void* user_ptr,
                                                    vx_enum usage, vx_enum user_mem_type) {
  static constexpr const char* name = "vxCopyImagePatch";
  return entry(name, [&]() -> vx_status {
    vx_image img = as<_vx_image>(image, VX_TYPE_IMAGE);
    if (img == nullptr) return refuse(name, VX_ERROR_INVALID_REFERENCE, "not an image");
    vx_status status = check_patch(name, img, image_rect, image_plane_index, user_mem_type);
    if (status != VX_SUCCESS) return status;
    // "For uniform images, only VX_READ_ONLY is supported. For other images,
    // only VX_READ_ONLY and VX_WRITE_ONLY are supported."
    if (usage != VX_READ_ONLY && usage != VX_WRITE_ONLY)
      return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "%s: usage 0x%x is neither VX_READ_ONLY nor VX_WRITE_ONLY",
                           name, usage);
    if (img->uniform && usage != VX_READ_ONLY)
      return refuse_logged(img, VX_ERROR_NOT_SUPPORTED, "%s: a uniform image is read-only", name);
    if (user_addr == nullptr || user_ptr == nullptr)
      return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "%s: no %s", name,
                           user_addr == nullptr ? "user_addr" : "user_ptr");
    const image_format& layout = *find_image_format(img->format);
    const plane_format& format = layout.plane[image_plane_index];
    plane_step step = step_of(layout, image_plane_index);
    uint32_t columns = (image_rect->end_x - image_rect->start_x) / step.x;
    uint32_t rows = (image_rect->end_y - image_rect->start_y) / step.y;
    // "stride_x = pixel size in bytes" (a larger one is honoured: pixels then
    // lie apart), "and stride_y >= stride_x * dim_x" (a row of the plane's
    // elements); dim_x/dim_y must cover the patch, in pixels or in elements.
    auto pixel_bytes = static_cast<vx_int32>(format.bytes_per_element / format.pixels_per_element);
    if (user_addr->stride_x < pixel_bytes)
      return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "%s: user stride_x %d is below the %d-byte pixel", name,
                           user_addr->stride_x, pixel_bytes);
    int64_t element_stride = int64_t{user_addr->stride_x} * format.pixels_per_element;
    if (user_addr->stride_y <= 0 || user_addr->stride_y < element_stride * columns)
      return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS,
                           "%s: user stride_y %d is shorter than a row of %u pixels of stride %d", name,
                           user_addr->stride_y, columns * format.pixels_per_element, user_addr->stride_x);
    if (user_addr->dim_x < columns || user_addr->dim_y < rows)
      return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "%s: user dim %ux%u is smaller than the patch", name,
                           user_addr->dim_x, user_addr->dim_y);
    // Both directions need the host copy current: a write covers only the patch.
    status = bring_to_host(name, img);
    if (status != VX_SUCCESS) return status;
    image_memory& memory = *viewed_memory(img);
    const image_memory::plane& plane = memory.host_plane(image_plane_index);
    uint8_t* first = host_pixel(img, image_plane_index, image_rect->start_x, image_rect->start_y);
    auto* user = static_cast<uint8_t*>(user_ptr);
    const uint32_t bytes = format.bytes_per_element;
    bool packed_rows = plane.stride_x == static_cast<int32_t>(bytes) && element_stride == bytes;
    for (uint32_t r = 0; r < rows; ++r) {
      uint8_t* host_row = first + int64_t{r} * plane.stride_y;
      uint8_t* user_row = user + int64_t{r} * user_addr->stride_y;
      if (packed_rows) {
        if (usage == VX_READ_ONLY)
          std::memcpy(user_row, host_row, size_t{columns} * bytes);
        else
          std::memcpy(host_row, user_row, size_t{columns} * bytes);
        continue;
      }
      for (uint32_t c = 0; c < columns; ++c) {
        uint8_t* at_host = host_row + int64_t{c} * plane.stride_x;
        uint8_t* at_user = user_row + c * element_stride;
        if (usage == VX_READ_ONLY)
          std::memcpy(at_user, at_host, bytes);
        else
          std::memcpy(at_host, at_user, bytes);
      }
    }
    if (usage == VX_WRITE_ONLY) memory.host_written();
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxMapImagePatch(vx_image image, const vx_rectangle_t* rect, vx_uint32 plane_index,
                                                   vx_map_id* map_id, vx_imagepatch_addressing_t* addr, void** ptr,
                                                   vx_enum usage, vx_enum mem_type, vx_uint32 flags) {
  static constexpr const char* name = "vxMapImagePatch";
  return entry(name, [&]() -> vx_status {
    vx_image img = as<_vx_image>(image, VX_TYPE_IMAGE);
    if (img == nullptr) return refuse(name, VX_ERROR_INVALID_REFERENCE, "not an image");
    vx_status status = check_patch(name, img, rect, plane_index, mem_type);
    if (status != VX_SUCCESS) return status;
    if (map_id == nullptr || addr == nullptr || ptr == nullptr)
      return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "%s: no %s", name,
                           map_id == nullptr ? "map_id" : addr == nullptr ? "addr" : "ptr");
    if (usage != VX_READ_ONLY && usage != VX_READ_AND_WRITE && usage != VX_WRITE_ONLY)
      return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "%s: usage 0x%x is no vx_accessor_e", name, usage);
    // "For uniform images, only VX_READ_ONLY is supported."
    if (img->uniform && usage != VX_READ_ONLY)
      return refuse_logged(img, VX_ERROR_NOT_SUPPORTED, "%s: a uniform image is read-only", name);
    // VX_NOGAP_X always holds here: every plane's elements are adjacent (the
    // library's rows are packed; a handle's stride_x is the pixel size).
    if ((flags & ~static_cast<vx_uint32>(VX_NOGAP_X)) != 0)
      return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "%s: unknown map flags 0x%x", name, flags);
    // Even a write-only map needs the host copy current: the pixels around
    // the patch stay as they were once it becomes the only current copy.
    status = bring_to_host(name, img);
    if (status != VX_SUCCESS) return status;
    *addr = patch_addressing(img, plane_index, *rect);
    *ptr = host_pixel(img, plane_index, rect->start_x, rect->start_y);
    vx_map_id id = img->next_map++;
    img->maps.emplace(id, _vx_image::mapping{plane_index, *rect, usage});
    *map_id = id;
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxUnmapImagePatch(vx_image image, vx_map_id map_id) {
  static constexpr const char* name = "vxUnmapImagePatch";
  return entry(name, [&]() -> vx_status {
    vx_image img = as<_vx_image>(image, VX_TYPE_IMAGE);
    if (img == nullptr) return refuse(name, VX_ERROR_INVALID_REFERENCE, "not an image");
    auto found = img->maps.find(map_id);
    if (found == img->maps.end())
      return refuse_logged(img, VX_ERROR_INVALID_PARAMETERS, "%s: map id %llu is not a live map of this image", name,
                           static_cast<unsigned long long>(map_id));
    // The application wrote the host copy in place: the device copy is stale.
    if (found->second.usage != VX_READ_ONLY) viewed_memory(img)->host_written();
    img->maps.erase(found);
    return VX_SUCCESS;
  });
}
