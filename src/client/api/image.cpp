// Image entry points: creation, supported formats, info, read/write, copies,
// fill and map.
//
// Creation is a round trip, so every native refusal (unsupported format,
// sizes beyond the device's limits) reaches the caller with its exact code.
// Host data always crosses the network packed: rows of `region[0]` pixels,
// no padding; the caller's pitches are applied here.
#include <algorithm>
#include <memory>
#include <new>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/api/info_table.hpp"
#include "client/api/memory_common.hpp"
#include "client/core/command.hpp"
#include "client/core/memory/placement.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client::api {

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

// Bytes per pixel of a format; 0 for a format the spec does not define.
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

// The extent of an image in the (x, y, z) coordinates that origin and
// region use: array layers count as y for 1D arrays and as z for 2D arrays.
std::array<size_t, 3> extent_of(const cl_image_desc& d) {
  switch (d.image_type) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY: return {d.image_width, d.image_array_size, 1};
    case CL_MEM_OBJECT_IMAGE2D: return {d.image_width, d.image_height, 1};
    case CL_MEM_OBJECT_IMAGE2D_ARRAY: return {d.image_width, d.image_height, d.image_array_size};
    case CL_MEM_OBJECT_IMAGE3D: return {d.image_width, d.image_height, d.image_depth};
    default: return {d.image_width, 1, 1};
  }
}

// A host layout in the (x, y, z) coordinates: bytes between consecutive y
// and between consecutive z. For a 1D array, y steps from image to image,
// which the spec gives as the slice pitch.
struct host_layout {
  size_t y_pitch;
  size_t z_pitch;
};

host_layout layout_of(cl_mem_object_type type, size_t row_pitch, size_t slice_pitch) {
  if (type == CL_MEM_OBJECT_IMAGE1D_ARRAY) return {slice_pitch, slice_pitch};
  return {row_pitch, slice_pitch};
}

// Applies the spec's pitch defaults for host data covering `region` pixels;
// false when a given pitch is too small (CL_INVALID_VALUE).
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

// Packs (or unpacks into) the caller's layout.
void copy_image_rect(uint8_t* packed, uint8_t* host, const size_t* region, size_t element, host_layout layout,
                     pack_direction direction) {
  const size_t origin[3] = {0, 0, 0};
  const size_t bytes[3] = {region[0] * element, region[1], region[2]};
  copy_rect(packed, host, origin, bytes, layout.y_pitch, layout.z_pitch, direction);
}

size_t packed_size(const size_t* region, size_t element) { return region[0] * region[1] * region[2] * element; }

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
  if (!reachable(c)) return fail(CL_DEVICE_NOT_AVAILABLE);

  protocol::create_image request;
  request.id = next_object_id();
  request.context = c->id;
  request.flags = flags;
  request.channel_order = format->image_channel_order;
  request.channel_data_type = format->image_channel_data_type;
  request.image_type = desc->image_type;
  request.width = desc->image_width;
  request.height = desc->image_height;
  request.depth = desc->image_depth;
  request.array_size = desc->image_array_size;
  if (from_memory) {
    request.row_pitch = row_pitch;
    request.slice_pitch = slice_pitch;
    request.buffer = from->id;
  }
  request.num_mip_levels = desc->num_mip_levels;
  request.num_samples = desc->num_samples;
  if (properties) request.properties.push_back(0);
  // The image exists on every server of the context; initial contents go to
  // the first, which then holds the only current copy.
  protocol::status_reply reply;
  for (size_t i = 0; i < c->servers.size(); ++i) {
    connection* link = c->servers[i]->link.get();
    bool send = with_data && i == 0;
    request.initial_transfer = send ? request.id : 0;
    // The contents go out between the request and its reply; the server
    // waits for them before it creates the image.
    connection::waiting scope(*link);
    auto answer = link->call<protocol::status_reply>(request, [&] {
      if (send) link->send_data(request.initial_transfer, packed.data(), packed.size());
    });
    if (!answer || answer->status != CL_SUCCESS) {
      for (size_t j = 0; j < i; ++j) c->servers[j]->link->post(protocol::release_object{request.id});
      return fail(answer ? answer->status : answer.error());
    }
    if (i == 0) reply = std::move(*answer);
  }

  auto* m = new memory();
  m->id = request.id;
  m->context = c;
  retain_internal(c);
  if (!(flags & access_flags)) flags |= CL_MEM_READ_WRITE;
  m->flags = flags;
  if (properties) m->properties = {0};
  m->type = desc->image_type;
  m->format = *format;
  m->image = *desc;
  if (!reply.details.empty() && reply.details[0] > 0) element = static_cast<size_t>(reply.details[0]);
  m->element_size = element;
  if (!with_data && !from_memory) {
    row_pitch = 0;
    slice_pitch = 0;
    resolve_host_pitches(desc->image_type, extent.data(), element, row_pitch, slice_pitch);
  }
  m->image.image_row_pitch = row_pitch;
  m->image.image_slice_pitch = is_array(m->type) || m->type == CL_MEM_OBJECT_IMAGE3D ? slice_pitch : 0;
  m->size = from_memory ? from->size : slice_pitch * (m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? extent[1] : extent[2]);
  if (from_memory) {
    m->image.mem_object = from;
    retain_internal(from);
  } else {
    m->image.mem_object = nullptr;
    place_new(m, with_data ? c->servers.front() : nullptr);
  }
  if (flags & CL_MEM_USE_HOST_PTR) m->host_ptr = host_ptr;
  return static_cast<cl_mem>(m);
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
  size_t size = packed_size(region, m->element_size);
  host_layout layout = layout_of(m->type, row_pitch, slice_pitch);
  bool packed_already = layout.y_pitch == region[0] * m->element_size &&
                        (region[2] == 1 || layout.z_pitch == layout.y_pitch * region[1]);
  command cmd(q, type, count, list, event_out, blocking_read ? blocking::yes : blocking::no,
              data_parts::status_and_data);
  if (cl_int code = cmd.uses(m, access::read); code != CL_SUCCESS) return cmd.abandon(code);
  if (packed_already) {
    cmd.link().expect_data(cmd.header.command, ptr, size, cmd.tracked());
  } else {
    // The data arrives packed; it is spread into the caller's layout just
    // before the event completes.
    auto packed = std::make_shared<std::vector<uint8_t>>(size);
    std::array<size_t, 3> extent{region[0], region[1], region[2]};
    size_t element = m->element_size;
    cmd.tracked()->before_complete = [packed, ptr, extent, element, layout] {
      copy_image_rect(packed->data(), static_cast<uint8_t*>(ptr), extent.data(), element, layout,
                      pack_direction::unpack);
    };
    cmd.link().expect_data(cmd.header.command, packed->data(), size, cmd.tracked());
  }
  return cmd.submit(protocol::enqueue_read_image{cmd.header, m->id, to_size3(origin), to_size3(region), size});
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
  size_t size = packed_size(region, m->element_size);
  std::vector<uint8_t> packed(size);
  copy_image_rect(packed.data(), static_cast<uint8_t*>(const_cast<void*>(ptr)), region, m->element_size,
                  layout_of(m->type, row_pitch, slice_pitch), pack_direction::pack);
  // As for buffers: the data is on its way once sent, which is all that a
  // blocking write promises, unless a wait list may fail.
  blocking mode = blocking_write && count > 0 ? blocking::yes : blocking::no;
  command cmd(q, type, count, list, event_out, mode);
  if (cl_int code = cmd.uses(m, access::write); code != CL_SUCCESS) return cmd.abandon(code);
  cmd.send(protocol::enqueue_write_image{cmd.header, m->id, to_size3(origin), to_size3(region), size});
  cmd.link().send_data(cmd.header.command, std::move(packed));
  return cmd.complete();
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

cl_int write_back_image_mapping(cl_command_queue q, cl_mem m, const _cl_mem::mapping& mapping, cl_uint count,
                                const cl_event* list, cl_event* event_out) {
  return write_image(q, m, CL_FALSE, mapping.origin.data(), mapping.region.data(),
                     m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 0 : mapping.row_pitch, mapping.slice_pitch,
                     mapping.pointer, count, list, event_out, CL_COMMAND_UNMAP_MEM_OBJECT);
}

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
    connection* link = link_of(c);
    if (!link->accepting()) return CL_DEVICE_NOT_AVAILABLE;
    protocol::query request;
    request.kind = protocol::query_kind::supported_image_formats;
    request.object = c->id;
    request.param = type;
    request.input.resize(sizeof flags);
    std::memcpy(request.input.data(), &flags, sizeof flags);
    auto reply = link->call<protocol::query_reply>(request);
    if (!reply) return reply.error();
    if (reply->status != CL_SUCCESS) return reply->status;
    size_t available = reply->value.size() / sizeof(cl_image_format);
    if (formats) std::memcpy(formats, reply->value.data(), std::min<size_t>(available, num_entries) * sizeof *formats);
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
    command cmd(q, CL_COMMAND_COPY_IMAGE, count, list, event_out, blocking::no);
    if (cl_int code = cmd.uses(src, access::read); code != CL_SUCCESS) return cmd.abandon(code);
    if (cl_int code = cmd.uses(dst, access::write); code != CL_SUCCESS) return cmd.abandon(code);
    return cmd.submit(protocol::enqueue_copy_image{cmd.header, src->id, dst->id, to_size3(src_origin),
                                                   to_size3(dst_origin), to_size3(region)});
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
    command cmd(q, CL_COMMAND_FILL_IMAGE, count, list, event_out, blocking::no);
    if (cl_int code = cmd.uses(m, access::write); code != CL_SUCCESS) return cmd.abandon(code);
    protocol::enqueue_fill_image message{cmd.header, m->id, {}, to_size3(origin), to_size3(region)};
    // The colour is four 32-bit components whatever the channel type.
    std::memcpy(message.color.data(), fill_color, message.color.size());
    return cmd.submit(message);
  });
}

cl_int CL_API_CALL clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                                              const size_t* region, size_t dst_offset, cl_uint count,
                                              const cl_event* list, cl_event* event_out) {
  return guarded(__func__, [&]() -> cl_int {
    if (cl_int code = check_queue_and_image(q, src); code != CL_SUCCESS) return code;
    if (cl_int code = check_queue_and_buffer(q, dst); code != CL_SUCCESS) return code;
    // CL_INVALID_VALUE if the region specified by src_origin and region is
    // out of bounds, or if the region specified by dst_offset and dst_offset
    // + dst_cb refers to a region outside dst_buffer.
    if (!region_fits(src, src_origin, region)) return CL_INVALID_VALUE;
    if (!in_bounds(dst, dst_offset, packed_size(region, src->element_size))) return CL_INVALID_VALUE;
    if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
    command cmd(q, CL_COMMAND_COPY_IMAGE_TO_BUFFER, count, list, event_out, blocking::no);
    if (cl_int code = cmd.uses(src, access::read); code != CL_SUCCESS) return cmd.abandon(code);
    if (cl_int code = cmd.uses(dst, access::write); code != CL_SUCCESS) return cmd.abandon(code);
    return cmd.submit(protocol::enqueue_copy_image_to_buffer{cmd.header, src->id, dst->id, to_size3(src_origin),
                                                             to_size3(region), dst_offset});
  });
}

cl_int CL_API_CALL clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                                              const size_t* dst_origin, const size_t* region, cl_uint count,
                                              const cl_event* list, cl_event* event_out) {
  return guarded(__func__, [&]() -> cl_int {
    if (cl_int code = check_queue_and_buffer(q, src); code != CL_SUCCESS) return code;
    if (cl_int code = check_queue_and_image(q, dst); code != CL_SUCCESS) return code;
    // CL_INVALID_VALUE if the 1D, 2D or 3D rectangular region specified by
    // dst_origin and dst_origin + region refer to a region outside
    // dst_image, or if the region specified by src_offset and src_offset +
    // src_cb refer to a region outside src_buffer.
    if (!region_fits(dst, dst_origin, region)) return CL_INVALID_VALUE;
    if (!in_bounds(src, src_offset, packed_size(region, dst->element_size))) return CL_INVALID_VALUE;
    if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
    command cmd(q, CL_COMMAND_COPY_BUFFER_TO_IMAGE, count, list, event_out, blocking::no);
    if (cl_int code = cmd.uses(src, access::read); code != CL_SUCCESS) return cmd.abandon(code);
    if (cl_int code = cmd.uses(dst, access::write); code != CL_SUCCESS) return cmd.abandon(code);
    return cmd.submit(protocol::enqueue_copy_buffer_to_image{cmd.header, src->id, dst->id, src_offset,
                                                             to_size3(dst_origin), to_size3(region)});
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
    constexpr cl_map_flags known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
    if ((map_flags & ~known) ||
        ((map_flags & CL_MAP_WRITE_INVALIDATE_REGION) && (map_flags & (CL_MAP_READ | CL_MAP_WRITE))))
      return fail(CL_INVALID_VALUE);
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

    // The mapped pointer: inside the USE_HOST_PTR region with its pitches,
    // or a packed block of Ferry's own.
    _cl_mem::mapping mapping{};
    mapping.flags = map_flags;
    mapping.origin = {origin[0], origin[1], origin[2]};
    mapping.region = {region[0], region[1], region[2]};
    size_t element = m->element_size;
    if (m->host_ptr) {
      mapping.row_pitch = m->image.image_row_pitch;
      mapping.slice_pitch = m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? m->image.image_row_pitch
                                                                   : m->image.image_slice_pitch;
      host_layout layout = layout_of(m->type, mapping.row_pitch, mapping.slice_pitch);
      mapping.pointer = static_cast<uint8_t*>(m->host_ptr) + origin[0] * element + origin[1] * layout.y_pitch +
                        origin[2] * layout.z_pitch;
    } else {
      mapping.owned = true;
      mapping.row_pitch = region[0] * element;
      mapping.slice_pitch = m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? mapping.row_pitch : mapping.row_pitch * region[1];
      mapping.pointer = ::operator new(std::max<size_t>(packed_size(region, element), 1), std::align_val_t{64});
    }
    // For a 1D array the caller's row pitch means nothing; the slice pitch
    // steps from image to image.
    size_t read_row_pitch = m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 0 : mapping.row_pitch;
    cl_int code;
    if (map_flags & CL_MAP_WRITE_INVALIDATE_REGION) {
      // Nothing to fetch: the region's old contents are discarded.
      command cmd(q, CL_COMMAND_MAP_IMAGE, count, list, event_out, blocking_map ? blocking::yes : blocking::no);
      code = cmd.submit(protocol::enqueue_marker{cmd.header});
    } else {
      code = read_image(q, m, blocking_map, origin, region, read_row_pitch, mapping.slice_pitch, mapping.pointer,
                        count, list, event_out, CL_COMMAND_MAP_IMAGE);
    }
    if (code != CL_SUCCESS && code != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
      if (mapping.owned) ::operator delete(mapping.pointer, std::align_val_t{64});
      return fail(code);
    }
    *image_row_pitch = mapping.row_pitch;
    if (image_slice_pitch)
      *image_slice_pitch = is_array(m->type) || m->type == CL_MEM_OBJECT_IMAGE3D ? mapping.slice_pitch : 0;
    void* pointer = mapping.pointer;
    {
      std::lock_guard lock(m->mappings_mutex);
      m->mappings.push_back(mapping);
    }
    m->map_count.fetch_add(1);
    if (code != CL_SUCCESS) return fail(code);
    return pointer;
  });
}

}  // namespace ferry::client::api
