// Image entry points: creation, supported formats, info, read/write, copies,
// fill and map.
//
// The checks are here; core/memory/image_creation and core/transfers/ make
// the images and move their data (packed: rows of `region[0]` pixels, no
// padding, the caller's pitches applied on this side).
#include <algorithm>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/api/info_table.hpp"
#include "client/api/memory_common.hpp"
#include "client/core/memory/image_creation.hpp"
#include "client/core/memory/image_layout.hpp"
#include "client/core/servers/server.hpp"
#include "client/core/transfers/copies.hpp"
#include "client/core/transfers/fills.hpp"
#include "client/core/transfers/image_transfers.hpp"
#include "client/core/transfers/maps.hpp"

namespace ferry::client::api {

namespace {

cl_int check_queue_and_image(cl_command_queue q, cl_mem m) {
  // CL_INVALID_COMMAND_QUEUE if command_queue is not a valid host command-queue.
  FERRY_CHECK_HANDLE(q);
  // CL_INVALID_MEM_OBJECT if image is not a valid image object.
  FERRY_CHECK_HANDLE(m);
  if (!m->is_image()) return CL_INVALID_MEM_OBJECT;
  // CL_INVALID_CONTEXT if the context associated with command_queue and
  // image are not the same.
  if (q->context != m->context) return CL_INVALID_CONTEXT;
  return CL_SUCCESS;
}

// CL_INVALID_VALUE if the region being read or written specified by origin
// and region is out of bounds, or if origin or region is NULL; also when a
// region element is 0 or the unused coordinates of a lower-dimension image
// are not 0 (origin) and 1 (region), which the extent covers.
bool region_fits(const memory* m, const size_t* origin, const size_t* region) {
  if (origin == nullptr || region == nullptr) return false;
  auto extent = extent_of(m->image);
  for (int i = 0; i < 3; ++i)
    if (region[i] == 0 || origin[i] > extent[i] || region[i] > extent[i] - origin[i]) return false;
  return true;
}

enum class copy_direction { image_to_buffer, buffer_to_image };

// Checks of the copies between an image and a buffer; the source's handle
// clauses come first.
cl_int check_image_buffer_copy(cl_command_queue q, cl_mem image, const size_t* origin, const size_t* region,
                               cl_mem buffer, size_t offset, cl_uint count, const cl_event* list,
                               copy_direction direction) {
  if (direction == copy_direction::image_to_buffer) {
    if (cl_int code = check_queue_and_image(q, image); code != CL_SUCCESS) return code;
    if (cl_int code = check_queue_and_buffer(q, buffer); code != CL_SUCCESS) return code;
  } else {
    if (cl_int code = check_queue_and_buffer(q, buffer); code != CL_SUCCESS) return code;
    if (cl_int code = check_queue_and_image(q, image); code != CL_SUCCESS) return code;
  }
  // CL_INVALID_VALUE if the 1D, 2D or 3D rectangular region specified by the
  // image's origin and origin + region refers to a region outside the image,
  // or if the region specified by the buffer's offset and offset + cb
  // refers to a region outside the buffer.
  if (!region_fits(image, origin, region)) return CL_INVALID_VALUE;
  if (!in_bounds(buffer, offset, packed_size(region, image->element_size))) return CL_INVALID_VALUE;
  return check_wait_list(q, count, list);
}

result<cl_mem> create_image(cl_context c, const cl_mem_properties* properties, cl_mem_flags flags,
                            const cl_image_format* format, const cl_image_desc* desc, void* host_ptr) {
  // CL_INVALID_CONTEXT if context is not a valid context.
  FERRY_CHECK_HANDLE_R(c);
  // CL_INVALID_PROPERTY if a property name in properties is not a supported property name.
  if (properties && properties[0] != 0) return fail(CL_INVALID_PROPERTY);
  // CL_INVALID_VALUE if values specified in flags are not valid.
  if (!valid_flags(flags)) return fail(CL_INVALID_VALUE);
  // CL_INVALID_IMAGE_FORMAT_DESCRIPTOR if values specified in image_format
  // are not valid or if image_format is NULL.
  if (format == nullptr) return fail(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  // CL_INVALID_IMAGE_DESCRIPTOR if values specified in image_desc are not
  // valid or if image_desc is NULL.
  if (desc == nullptr || !is_image_type(desc->image_type)) return fail(CL_INVALID_IMAGE_DESCRIPTOR);
  // CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or
  // CL_MEM_COPY_HOST_PTR are set in flags or if host_ptr is not NULL but
  // CL_MEM_COPY_HOST_PTR or CL_MEM_USE_HOST_PTR are not set in flags.
  bool with_data = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  if ((host_ptr == nullptr) == with_data) return fail(CL_INVALID_HOST_PTR);
  cl_mem from = desc->mem_object;
  bool from_memory = desc->image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
                     (desc->image_type == CL_MEM_OBJECT_IMAGE2D && from != nullptr);
  if (from_memory) {
    // CL_INVALID_IMAGE_DESCRIPTOR if the buffer (or image) it is made from is
    // not a valid memory object of this context.
    if (!is_valid(from) || from->context != c) return fail(CL_INVALID_IMAGE_DESCRIPTOR);
    // CL_INVALID_VALUE if an image is being created from another memory
    // object and host-pointer flags are given.
    if (flags & host_ptr_flags) return fail(CL_INVALID_VALUE);
  } else if (from != nullptr) {
    return fail(CL_INVALID_IMAGE_DESCRIPTOR);
  }
  size_t element = element_size_of(*format);
  std::array<size_t, 3> extent = extent_of(*desc);
  size_t row_pitch = desc->image_row_pitch, slice_pitch = desc->image_slice_pitch;
  std::vector<uint8_t> packed;
  if (with_data) {
    // The host layout must be known to send it packed; a format the spec
    // does not define cannot be valid.
    if (element == 0) return fail(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    for (size_t e : extent)
      if (e == 0) return fail(CL_INVALID_IMAGE_DESCRIPTOR);
    // CL_INVALID_IMAGE_DESCRIPTOR if image_row_pitch is not 0 and is less
    // than image_width x size of element, or image_slice_pitch likewise.
    if (!resolve_host_pitches(desc->image_type, extent.data(), element, row_pitch, slice_pitch))
      return fail(CL_INVALID_IMAGE_DESCRIPTOR);
    packed.resize(packed_size(extent.data(), element));
    copy_image_rect(packed.data(), static_cast<uint8_t*>(host_ptr), extent.data(), element,
                    layout_of(desc->image_type, row_pitch, slice_pitch), pack_direction::pack);
  } else if (!from_memory && (row_pitch != 0 || slice_pitch != 0)) {
    // CL_INVALID_IMAGE_DESCRIPTOR: image_row_pitch and image_slice_pitch
    // must be 0 if host_ptr is NULL (and no buffer is given).
    return fail(CL_INVALID_IMAGE_DESCRIPTOR);
  }
  if (!reachable(c)) return fail(unavailable_status(c));
  return create_image_on_servers(c, {flags, format, desc, host_ptr, from_memory ? from : nullptr, std::move(packed),
                                     element, row_pitch, slice_pitch,
                                     properties ? property_list::empty : property_list::absent});
}


// The legacy 2D/3D creators as a descriptor.
cl_image_desc legacy_desc(cl_mem_object_type type, size_t width, size_t height, size_t depth, size_t row_pitch,
                          size_t slice_pitch) {
  cl_image_desc desc{};
  desc.image_type = type;
  desc.image_width = width;
  desc.image_height = height;
  desc.image_depth = depth;
  desc.image_row_pitch = row_pitch;
  desc.image_slice_pitch = slice_pitch;
  return desc;
}

// Reads `region` of image `m` into `ptr` laid out with the given pitches.
cl_int read_image(cl_command_queue q, cl_mem m, cl_bool blocking_read, const size_t* origin, const size_t* region,
                  size_t row_pitch, size_t slice_pitch, void* ptr, cl_uint count, const cl_event* list,
                  cl_event* event_out, cl_command_type type) {
  if (cl_int code = check_queue_and_image(q, m); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if the region being read is out of bounds, if ptr is
  // NULL, or if the pitches are invalid.
  if (!region_fits(m, origin, region) || ptr == nullptr) return CL_INVALID_VALUE;
  if (!resolve_host_pitches(m->type, region, m->element_size, row_pitch, slice_pitch)) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  // CL_INVALID_OPERATION if clEnqueueReadImage is called on image which has
  // been created with CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS.
  if (type == CL_COMMAND_READ_IMAGE && !host_may(m, host_access::read)) return CL_INVALID_OPERATION;
  return enqueue_read_image(q, m, blocking_read ? blocking::yes : blocking::no,
                            {origin, region, row_pitch, slice_pitch}, ptr, count, list, event_out, type);
}

cl_int write_image(cl_command_queue q, cl_mem m, cl_bool blocking_write, const size_t* origin, const size_t* region,
                   size_t row_pitch, size_t slice_pitch, const void* ptr, cl_uint count, const cl_event* list,
                   cl_event* event_out, cl_command_type type) {
  if (cl_int code = check_queue_and_image(q, m); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if the region being written is out of bounds, if ptr
  // is NULL, or if the pitches are invalid.
  if (!region_fits(m, origin, region) || ptr == nullptr) return CL_INVALID_VALUE;
  if (!resolve_host_pitches(m->type, region, m->element_size, row_pitch, slice_pitch)) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  // CL_INVALID_OPERATION if clEnqueueWriteImage is called on image which has
  // been created with CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS.
  if (type == CL_COMMAND_WRITE_IMAGE && !host_may(m, host_access::write)) return CL_INVALID_OPERATION;
  return enqueue_write_image(q, m, blocking_write ? blocking::yes : blocking::no,
                             {origin, region, row_pitch, slice_pitch}, ptr, count, list, event_out, type);
}

bool layered(cl_mem m) { return m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY || m->type == CL_MEM_OBJECT_IMAGE2D_ARRAY; }
bool has_height(cl_mem m) {
  return m->type == CL_MEM_OBJECT_IMAGE2D || m->type == CL_MEM_OBJECT_IMAGE2D_ARRAY || m->type == CL_MEM_OBJECT_IMAGE3D;
}

using image_row = info_row<cl_mem>;
const image_row image_info[] = {
    image_row::of<cl_image_format>(CL_IMAGE_FORMAT, [](cl_mem m) { return m->format; }),
    image_row::of<size_t>(CL_IMAGE_ELEMENT_SIZE, [](cl_mem m) { return m->element_size; }),
    image_row::of<size_t>(CL_IMAGE_ROW_PITCH, [](cl_mem m) { return m->image.image_row_pitch; }),
    image_row::of<size_t>(CL_IMAGE_SLICE_PITCH, [](cl_mem m) { return m->image.image_slice_pitch; }),
    image_row::of<size_t>(CL_IMAGE_WIDTH, [](cl_mem m) { return m->image.image_width; }),
    image_row::of<size_t>(CL_IMAGE_HEIGHT, [](cl_mem m) { return has_height(m) ? m->image.image_height : 0; }),
    image_row::of<size_t>(CL_IMAGE_DEPTH,
                          [](cl_mem m) { return m->type == CL_MEM_OBJECT_IMAGE3D ? m->image.image_depth : 0; }),
    image_row::of<size_t>(CL_IMAGE_ARRAY_SIZE, [](cl_mem m) { return layered(m) ? m->image.image_array_size : 0; }),
    image_row::of<cl_mem>(CL_IMAGE_BUFFER, [](cl_mem m) {
      return m->type == CL_MEM_OBJECT_IMAGE1D_BUFFER ? m->image.mem_object : cl_mem{};
    }),
    image_row::of<cl_uint>(CL_IMAGE_NUM_MIP_LEVELS, [](cl_mem m) { return m->image.num_mip_levels; }),
    image_row::of<cl_uint>(CL_IMAGE_NUM_SAMPLES, [](cl_mem m) { return m->image.num_samples; }),
};

}  // namespace

cl_mem CL_API_CALL clCreateImage(cl_context c, cl_mem_flags flags, const cl_image_format* format,
                                 const cl_image_desc* desc, void* host_ptr, cl_int* errcode_ret) {
  return guarded_create<cl_mem>(__func__, errcode_ret, [&] {
    return create_image(c, nullptr, flags, format, desc, host_ptr);
  });
}

cl_mem CL_API_CALL clCreateImageWithProperties(cl_context c, const cl_mem_properties* properties, cl_mem_flags flags,
                                               const cl_image_format* format, const cl_image_desc* desc,
                                               void* host_ptr, cl_int* errcode_ret) {
  return guarded_create<cl_mem>(__func__, errcode_ret,
                                [&] { return create_image(c, properties, flags, format, desc, host_ptr); });
}

cl_mem CL_API_CALL clCreateImage2D(cl_context c, cl_mem_flags flags, const cl_image_format* format, size_t width,
                                   size_t height, size_t row_pitch, void* host_ptr, cl_int* errcode_ret) {
  cl_image_desc desc = legacy_desc(CL_MEM_OBJECT_IMAGE2D, width, height, 0, row_pitch, 0);
  return guarded_create<cl_mem>(__func__, errcode_ret, [&] {
    return create_image(c, nullptr, flags, format, &desc, host_ptr);
  });
}

cl_mem CL_API_CALL clCreateImage3D(cl_context c, cl_mem_flags flags, const cl_image_format* format, size_t width,
                                   size_t height, size_t depth, size_t row_pitch, size_t slice_pitch, void* host_ptr,
                                   cl_int* errcode_ret) {
  cl_image_desc desc = legacy_desc(CL_MEM_OBJECT_IMAGE3D, width, height, depth, row_pitch, slice_pitch);
  return guarded_create<cl_mem>(__func__, errcode_ret, [&] {
    return create_image(c, nullptr, flags, format, &desc, host_ptr);
  });
}

cl_int CL_API_CALL clGetSupportedImageFormats(cl_context c, cl_mem_flags flags, cl_mem_object_type type,
                                              cl_uint num_entries, cl_image_format* formats, cl_uint* num_formats) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(c);
    // CL_INVALID_VALUE if flags or image_type are not valid, or if
    // num_entries is 0 and image_formats is not NULL.
    if (!valid_flags(flags) || !is_image_type(type)) return CL_INVALID_VALUE;
    if (num_entries == 0 && formats != nullptr) return CL_INVALID_VALUE;
    // The formats of the first server stand for the context's.
    auto supported = supported_image_formats(c, flags, type);
    if (!supported) return supported.error();
    size_t available = supported->size();
    if (formats) std::copy_n(supported->begin(), std::min<size_t>(available, num_entries), formats);
    if (num_formats) *num_formats = static_cast<cl_uint>(available);
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL clGetImageInfo(cl_mem m, cl_image_info param, size_t size, void* value, size_t* size_ret) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(m);
    // CL_INVALID_MEM_OBJECT if image is a not a valid image object.
    if (!m->is_image()) return CL_INVALID_MEM_OBJECT;
    info_out out(size, value, size_ret);
    return answer_info(image_info, m, param, out);
  });
}

cl_int CL_API_CALL clEnqueueReadImage(cl_command_queue q, cl_mem m, cl_bool blocking_read, const size_t* origin,
                                      const size_t* region, size_t row_pitch, size_t slice_pitch, void* ptr,
                                      cl_uint count, const cl_event* list, cl_event* event_out) {
  return guarded(__func__, [&] {
    return read_image(q, m, blocking_read, origin, region, row_pitch, slice_pitch, ptr, count, list, event_out,
                      CL_COMMAND_READ_IMAGE);
  });
}

cl_int CL_API_CALL clEnqueueWriteImage(cl_command_queue q, cl_mem m, cl_bool blocking_write, const size_t* origin,
                                       const size_t* region, size_t row_pitch, size_t slice_pitch, const void* ptr,
                                       cl_uint count, const cl_event* list, cl_event* event_out) {
  return guarded(__func__, [&] {
    return write_image(q, m, blocking_write, origin, region, row_pitch, slice_pitch, ptr, count, list, event_out,
                       CL_COMMAND_WRITE_IMAGE);
  });
}

cl_int CL_API_CALL clEnqueueCopyImage(cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                                      const size_t* dst_origin, const size_t* region, cl_uint count,
                                      const cl_event* list, cl_event* event_out) {
  return guarded(__func__, [&]() -> cl_int {
    if (cl_int code = check_queue_and_image(q, src); code != CL_SUCCESS) return code;
    if (cl_int code = check_queue_and_image(q, dst); code != CL_SUCCESS) return code;
    // CL_IMAGE_FORMAT_MISMATCH if src_image and dst_image do not use the same image format.
    if (src->format.image_channel_order != dst->format.image_channel_order ||
        src->format.image_channel_data_type != dst->format.image_channel_data_type)
      return CL_IMAGE_FORMAT_MISMATCH;
    // CL_INVALID_VALUE if the 2D or 3D rectangular region specified by
    // src_origin and src_origin + region refers to a region outside
    // src_image, or likewise for the destination, or if a pointer is NULL.
    if (!region_fits(src, src_origin, region) || !region_fits(dst, dst_origin, region)) return CL_INVALID_VALUE;
    if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
    // CL_MEM_COPY_OVERLAP if src_image and dst_image are the same image
    // object and the source and destination regions overlap.
    if (src == dst) {
      bool overlap = true;
      for (int i = 0; i < 3; ++i)
        overlap &= src_origin[i] < dst_origin[i] + region[i] && dst_origin[i] < src_origin[i] + region[i];
      if (overlap) return CL_MEM_COPY_OVERLAP;
    }
    return enqueue_copy_image(q, src, dst, src_origin, dst_origin, region, count, list, event_out);
  });
}

cl_int CL_API_CALL clEnqueueFillImage(cl_command_queue q, cl_mem m, const void* fill_color, const size_t* origin,
                                      const size_t* region, cl_uint count, const cl_event* list,
                                      cl_event* event_out) {
  return guarded(__func__, [&]() -> cl_int {
    if (cl_int code = check_queue_and_image(q, m); code != CL_SUCCESS) return code;
    // CL_INVALID_VALUE if fill_color is NULL, or if the region being filled
    // is out of bounds or origin or region is NULL.
    if (fill_color == nullptr || !region_fits(m, origin, region)) return CL_INVALID_VALUE;
    if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
    return enqueue_fill_image(q, m, fill_color, origin, region, count, list, event_out);
  });
}

cl_int CL_API_CALL clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                                              const size_t* region, size_t dst_offset, cl_uint count,
                                              const cl_event* list, cl_event* event_out) {
  return guarded(__func__, [&]() -> cl_int {
    if (cl_int code = check_image_buffer_copy(q, src, src_origin, region, dst, dst_offset, count, list,
                                              copy_direction::image_to_buffer);
        code != CL_SUCCESS)
      return code;
    return enqueue_copy_image_to_buffer(q, src, dst, src_origin, region, dst_offset, count, list, event_out);
  });
}

cl_int CL_API_CALL clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                                              const size_t* dst_origin, const size_t* region, cl_uint count,
                                              const cl_event* list, cl_event* event_out) {
  return guarded(__func__, [&]() -> cl_int {
    if (cl_int code = check_image_buffer_copy(q, dst, dst_origin, region, src, src_offset, count, list,
                                              copy_direction::buffer_to_image);
        code != CL_SUCCESS)
      return code;
    return enqueue_copy_buffer_to_image(q, src, dst, src_offset, dst_origin, region, count, list, event_out);
  });
}

void* CL_API_CALL clEnqueueMapImage(cl_command_queue q, cl_mem m, cl_bool blocking_map, cl_map_flags map_flags,
                                    const size_t* origin, const size_t* region, size_t* image_row_pitch,
                                    size_t* image_slice_pitch, cl_uint count, const cl_event* list,
                                    cl_event* event_out, cl_int* errcode_ret) {
  return guarded_create<void*>(__func__, errcode_ret, [&]() -> result<void*> {
    if (cl_int code = check_queue_and_image(q, m); code != CL_SUCCESS) return fail(code);
    // CL_INVALID_VALUE if region being mapped given by (origin,
    // origin+region) is out of bounds or if values specified in map_flags
    // are not valid; if image_row_pitch is NULL; if image is a 3D image, 1D
    // or 2D image array object and image_slice_pitch is NULL.
    if (!region_fits(m, origin, region)) return fail(CL_INVALID_VALUE);
    if (!valid_map_flags(map_flags)) return fail(CL_INVALID_VALUE);
    if (image_row_pitch == nullptr) return fail(CL_INVALID_VALUE);
    if ((is_array(m->type) || m->type == CL_MEM_OBJECT_IMAGE3D) && image_slice_pitch == nullptr)
      return fail(CL_INVALID_VALUE);
    if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return fail(code);
    // CL_INVALID_OPERATION if image has been created with
    // CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS and CL_MAP_READ is set,
    // or with CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS and CL_MAP_WRITE
    // or CL_MAP_WRITE_INVALIDATE_REGION is set.
    if ((map_flags & CL_MAP_READ) && !host_may(m, host_access::read)) return fail(CL_INVALID_OPERATION);
    if ((map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) && !host_may(m, host_access::write))
      return fail(CL_INVALID_OPERATION);
    return map_image(q, m, blocking_map ? blocking::yes : blocking::no, map_flags, origin, region, image_row_pitch,
                     image_slice_pitch, count, list, event_out);
  });
}

}  // namespace ferry::client::api
