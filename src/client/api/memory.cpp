// Buffer entry points: creation, sub-buffers, transfers, copies, fills, maps.
#include <algorithm>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/api/info_table.hpp"
#include "client/api/memory_common.hpp"
#include "client/core/memory/buffer_creation.hpp"
#include "client/core/memory/svm_registry.hpp"
#include "client/core/servers/server.hpp"
#include "client/core/transfers/buffer_transfers.hpp"
#include "client/core/transfers/copies.hpp"
#include "client/core/transfers/fills.hpp"
#include "client/core/transfers/maps.hpp"

namespace ferry::client::api {

namespace {

result<cl_mem> create_buffer(cl_context c, const cl_mem_properties* properties, cl_mem_flags flags, size_t size,
                             void* host_ptr) {
  // CL_INVALID_CONTEXT if context is not a valid context.
  FERRY_CHECK_HANDLE_R(c);
  // CL_INVALID_PROPERTY if a property name in properties is not a supported property name.
  if (properties && properties[0] != 0) return fail(CL_INVALID_PROPERTY);
  if (!valid_flags(flags)) return fail(CL_INVALID_VALUE);
  // CL_INVALID_BUFFER_SIZE if size is 0, or if size is greater than
  // CL_DEVICE_MAX_MEM_ALLOC_SIZE for all devices in context.
  if (size == 0) return fail(CL_INVALID_BUFFER_SIZE);
  bool fits = false;
  for (auto* d : c->devices) fits |= size <= d->max_mem_alloc_size;
  if (!fits) return fail(CL_INVALID_BUFFER_SIZE);
  // CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or
  // CL_MEM_COPY_HOST_PTR are set in flags or if host_ptr is not NULL but
  // CL_MEM_COPY_HOST_PTR or CL_MEM_USE_HOST_PTR are not set in flags.
  bool with_data = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  if ((host_ptr == nullptr) == with_data) return fail(CL_INVALID_HOST_PTR);
  // If host_ptr is an SVM pointer (with CL_MEM_USE_HOST_PTR), the buffer
  // uses that SVM memory; (Ferry) CL_INVALID_HOST_PTR if the buffer would
  // reach past the end of the allocation.
  svm_ref svm = flags & CL_MEM_USE_HOST_PTR ? find_svm(host_ptr, c) : nullptr;
  if (svm && !svm->contains(host_ptr, size)) return fail(CL_INVALID_HOST_PTR);
  if (!reachable(c)) return fail(unavailable_status(c));
  // The buffer exists on every server of the context; initial contents go
  // to the first, which then holds the only current copy.
  if (!(flags & access_flags)) flags |= CL_MEM_READ_WRITE;
  return create_buffer_on_servers(c, flags, size, host_ptr, std::move(svm),
                                  properties ? property_list::empty : property_list::absent);
}

result<cl_mem> create_sub_buffer(cl_mem parent, cl_mem_flags flags, cl_buffer_create_type type, const void* info) {
  // CL_INVALID_MEM_OBJECT if buffer is not a valid buffer object or is a sub-buffer object.
  if (!is_valid(parent) || parent->parent || parent->is_image()) return fail(CL_INVALID_MEM_OBJECT);
  if (!valid_flags(flags) || (flags & host_ptr_flags)) return fail(CL_INVALID_VALUE);
  cl_mem_flags p = parent->flags;
  // CL_INVALID_VALUE if buffer was created with CL_MEM_WRITE_ONLY and flags
  // specifies CL_MEM_READ_WRITE or CL_MEM_READ_ONLY, or if buffer was created
  // with CL_MEM_READ_ONLY and flags specifies CL_MEM_READ_WRITE or CL_MEM_WRITE_ONLY.
  if ((p & CL_MEM_WRITE_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))) return fail(CL_INVALID_VALUE);
  if ((p & CL_MEM_READ_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))) return fail(CL_INVALID_VALUE);
  // ... or if the host access flags contradict the parent's.
  if ((p & CL_MEM_HOST_WRITE_ONLY) && (flags & CL_MEM_HOST_READ_ONLY)) return fail(CL_INVALID_VALUE);
  if ((p & CL_MEM_HOST_READ_ONLY) && (flags & CL_MEM_HOST_WRITE_ONLY)) return fail(CL_INVALID_VALUE);
  if ((p & CL_MEM_HOST_NO_ACCESS) && (flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY)))
    return fail(CL_INVALID_VALUE);
  // CL_INVALID_VALUE if the value specified in buffer_create_type is not valid,
  // or buffer_create_info is NULL.
  if (type != CL_BUFFER_CREATE_TYPE_REGION || info == nullptr) return fail(CL_INVALID_VALUE);
  auto region = *static_cast<const cl_buffer_region*>(info);
  // CL_INVALID_BUFFER_SIZE if the size field of the cl_buffer_region structure is 0.
  if (region.size == 0) return fail(CL_INVALID_BUFFER_SIZE);
  // CL_INVALID_VALUE if the region specified by the cl_buffer_region structure
  // is out of bounds of buffer.
  if (region.origin > parent->size || region.size > parent->size - region.origin) return fail(CL_INVALID_VALUE);
  // CL_MISALIGNED_SUB_BUFFER_OFFSET if there are no devices in context
  // associated with buffer for which the origin field is aligned to
  // CL_DEVICE_MEM_BASE_ADDR_ALIGN.
  bool aligned = false;
  for (auto* d : parent->context->devices) {
    size_t align = std::max<size_t>(1, d->mem_base_addr_align_bits / 8);
    aligned |= region.origin % align == 0;
  }
  if (!aligned) return fail(CL_MISALIGNED_SUB_BUFFER_OFFSET);

  // Unspecified access and host-pointer flags are inherited from the parent.
  if (!(flags & access_flags)) flags |= p & access_flags;
  if (!(flags & host_access_flags)) flags |= p & host_access_flags;
  flags |= p & host_ptr_flags;
  return create_sub_buffer_on_servers(parent, flags, region);
}

cl_int read_buffer(cl_command_queue q, cl_mem m, cl_bool blocking_read, size_t offset, size_t size, void* ptr,
                   cl_uint count, const cl_event* list, cl_event* event_out, cl_command_type type) {
  if (cl_int code = check_queue_and_buffer(q, m); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if the region being read specified by (offset, size) is
  // out of bounds or if ptr is a NULL value.
  if (!in_bounds(m, offset, size) || size == 0 || ptr == nullptr) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  // CL_INVALID_OPERATION if clEnqueueReadBuffer is called on buffer which has
  // been created with CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS.
  if (!host_may(m, host_access::read)) return CL_INVALID_OPERATION;
  return enqueue_read_buffer(q, m, blocking_read ? blocking::yes : blocking::no, offset, size, ptr, count, list,
                             event_out, type);
}

cl_int write_buffer(cl_command_queue q, cl_mem m, cl_bool blocking_write, size_t offset, size_t size,
                    const void* ptr, cl_uint count, const cl_event* list, cl_event* event_out, cl_command_type type) {
  if (cl_int code = check_queue_and_buffer(q, m); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if the region being written specified by (offset, size)
  // is out of bounds or if ptr is a NULL value.
  if (!in_bounds(m, offset, size) || size == 0 || ptr == nullptr) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  // CL_INVALID_OPERATION if clEnqueueWriteBuffer is called on buffer which has
  // been created with CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS.
  if (!host_may(m, host_access::write)) return CL_INVALID_OPERATION;
  return enqueue_write_buffer(q, m, blocking_write ? blocking::yes : blocking::no, offset, size, ptr, count, list,
                              event_out, type);
}

// Applies the spec's pitch defaults and checks; false means CL_INVALID_VALUE.
bool resolve_pitches(const size_t* region, size_t& row_pitch, size_t& slice_pitch) {
  if (row_pitch == 0) row_pitch = region[0];
  else if (row_pitch < region[0]) return false;
  if (slice_pitch == 0) slice_pitch = region[1] * row_pitch;
  else if (slice_pitch < region[1] * row_pitch || slice_pitch % row_pitch != 0) return false;
  return true;
}

size_t rect_extent(const size_t* origin, const size_t* region, size_t row_pitch, size_t slice_pitch) {
  return (origin[2] + region[2] - 1) * slice_pitch + (origin[1] + region[1] - 1) * row_pitch + origin[0] + region[0];
}

// Checks the arguments of the rect read/write calls (shared clauses) and
// resolves the pitches of `rect`.
cl_int check_rect_transfer(cl_command_queue q, cl_mem m, buffer_rect& rect, const void* ptr, cl_uint count,
                           const cl_event* list, host_access how) {
  if (cl_int code = check_queue_and_buffer(q, m); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if buffer_origin, host_origin, or region is NULL, if
  // any region array element is 0, if the pitches are invalid, if the region
  // is out of bounds or if ptr is NULL.
  const size_t* region = rect.region;
  if (!rect.buffer.origin || !rect.host.origin || !region || !ptr) return CL_INVALID_VALUE;
  if (region[0] == 0 || region[1] == 0 || region[2] == 0) return CL_INVALID_VALUE;
  if (!resolve_pitches(region, rect.buffer.row_pitch, rect.buffer.slice_pitch)) return CL_INVALID_VALUE;
  if (!resolve_pitches(region, rect.host.row_pitch, rect.host.slice_pitch)) return CL_INVALID_VALUE;
  if (rect_extent(rect.buffer.origin, region, rect.buffer.row_pitch, rect.buffer.slice_pitch) > m->size)
    return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  // CL_INVALID_OPERATION if the host may not read (write) the buffer.
  if (!host_may(m, how)) return CL_INVALID_OPERATION;
  return CL_SUCCESS;
}

cl_int copy_buffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset, size_t dst_offset, size_t size,
                   cl_uint count, const cl_event* list, cl_event* event_out) {
  FERRY_CHECK_HANDLE(q);
  FERRY_CHECK_HANDLE(src);
  FERRY_CHECK_HANDLE(dst);
  if (src->is_image() || dst->is_image()) return CL_INVALID_MEM_OBJECT;
  // CL_INVALID_CONTEXT if the context associated with command_queue,
  // src_buffer and dst_buffer are not the same.
  if (q->context != src->context || q->context != dst->context) return CL_INVALID_CONTEXT;
  // CL_INVALID_VALUE if src_offset, dst_offset, size, src_offset + size or
  // dst_offset + size require accessing elements outside the buffers.
  if (size == 0 || !in_bounds(src, src_offset, size) || !in_bounds(dst, dst_offset, size)) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  // CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same buffer or
  // sub-buffer object and the source and destination regions overlap, or if
  // they are different sub-buffers of the same parent that overlap.
  const memory* src_root = src->parent ? src->parent : src;
  const memory* dst_root = dst->parent ? dst->parent : dst;
  if (src_root == dst_root) {
    size_t a = src->origin + src_offset, b = dst->origin + dst_offset;
    if (a < b + size && b < a + size) return CL_MEM_COPY_OVERLAP;
  }
  return enqueue_copy_buffer(q, src, dst, src_offset, dst_offset, size, count, list, event_out);
}

using mem_row = info_row<cl_mem>;
const mem_row mem_info[] = {
    mem_row::of<cl_mem_object_type>(CL_MEM_TYPE, [](cl_mem m) { return m->type; }),
    mem_row::of<cl_mem_flags>(CL_MEM_FLAGS, [](cl_mem m) { return m->flags; }),
    mem_row::of<size_t>(CL_MEM_SIZE, [](cl_mem m) { return m->size; }),
    mem_row::of<void*>(CL_MEM_HOST_PTR, [](cl_mem m) { return m->host_ptr; }),
    mem_row::of<cl_uint>(CL_MEM_MAP_COUNT, [](cl_mem m) { return m->map_count.load(); }),
    mem_row::of<cl_uint>(CL_MEM_REFERENCE_COUNT, [](cl_mem m) { return m->api_refs.load(); }),
    mem_row::of<cl_context>(CL_MEM_CONTEXT, [](cl_mem m) { return m->context; }),
    mem_row::of<cl_mem>(CL_MEM_ASSOCIATED_MEMOBJECT,
                        [](cl_mem m) { return m->parent ? m->parent : m->image.mem_object; }),
    mem_row::of<size_t>(CL_MEM_OFFSET, [](cl_mem m) { return m->origin; }),
    mem_row::of<cl_bool>(CL_MEM_USES_SVM_POINTER, [](cl_mem m) { return m->svm ? CL_TRUE : CL_FALSE; }),
    mem_row::of<std::vector<cl_mem_properties>>(CL_MEM_PROPERTIES, [](cl_mem m) { return m->properties; }),
};

}  // namespace

cl_mem CL_API_CALL clCreateBuffer(cl_context c, cl_mem_flags flags, size_t size, void* host_ptr,
                                  cl_int* errcode_ret) {
  return guarded_create<cl_mem>(__func__, errcode_ret, [&] {
    return create_buffer(c, nullptr, flags, size, host_ptr);
  });
}

cl_mem CL_API_CALL clCreateBufferWithProperties(cl_context c, const cl_mem_properties* properties,
                                                cl_mem_flags flags, size_t size, void* host_ptr,
                                                cl_int* errcode_ret) {
  return guarded_create<cl_mem>(__func__, errcode_ret, [&] {
    return create_buffer(c, properties, flags, size, host_ptr);
  });
}

cl_mem CL_API_CALL clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type type,
                                     const void* info, cl_int* errcode_ret) {
  return guarded_create<cl_mem>(__func__, errcode_ret, [&] { return create_sub_buffer(buffer, flags, type, info); });
}

cl_int CL_API_CALL clRetainMemObject(cl_mem m) {
  return change_api_count(__func__, m, "m", count_change::retain);
}

cl_int CL_API_CALL clReleaseMemObject(cl_mem m) {
  return change_api_count(__func__, m, "m", count_change::release);
}

cl_int CL_API_CALL clSetMemObjectDestructorCallback(cl_mem m, void(CL_CALLBACK* notify)(cl_mem, void*),
                                                    void* user_data) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(m);
    // CL_INVALID_VALUE if pfn_notify is NULL.
    if (notify == nullptr) return CL_INVALID_VALUE;
    std::lock_guard lock(m->destructors_mutex);
    m->destructors.emplace_back(notify, user_data);
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL clGetMemObjectInfo(cl_mem m, cl_mem_info param, size_t size, void* value, size_t* size_ret) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(m);
    info_out out(size, value, size_ret);
    return answer_info(mem_info, m, param, out);
  });
}

cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool blocking_read, size_t offset,
                                       size_t size, void* ptr, cl_uint count, const cl_event* list,
                                       cl_event* event_out) {
  return guarded(__func__, [&] {
    return read_buffer(q, m, blocking_read, offset, size, ptr, count, list, event_out, CL_COMMAND_READ_BUFFER);
  });
}

cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool blocking_write, size_t offset,
                                        size_t size, const void* ptr, cl_uint count, const cl_event* list,
                                        cl_event* event_out) {
  return guarded(__func__, [&] {
    return write_buffer(q, m, blocking_write, offset, size, ptr, count, list, event_out, CL_COMMAND_WRITE_BUFFER);
  });
}

cl_int CL_API_CALL clEnqueueReadBufferRect(cl_command_queue q, cl_mem m, cl_bool blocking_read,
                                           const size_t* buffer_origin, const size_t* host_origin,
                                           const size_t* region, size_t buffer_row_pitch, size_t buffer_slice_pitch,
                                           size_t host_row_pitch, size_t host_slice_pitch, void* ptr, cl_uint count,
                                           const cl_event* list, cl_event* event_out) {
  return guarded(__func__, [&]() -> cl_int {
    buffer_rect rect{{buffer_origin, buffer_row_pitch, buffer_slice_pitch},
                     {host_origin, host_row_pitch, host_slice_pitch},
                     region};
    if (cl_int code = check_rect_transfer(q, m, rect, ptr, count, list, host_access::read); code != CL_SUCCESS)
      return code;
    return enqueue_read_buffer_rect(q, m, blocking_read ? blocking::yes : blocking::no, rect, ptr, count, list,
                                    event_out);
  });
}

cl_int CL_API_CALL clEnqueueWriteBufferRect(cl_command_queue q, cl_mem m, cl_bool blocking_write,
                                            const size_t* buffer_origin, const size_t* host_origin,
                                            const size_t* region, size_t buffer_row_pitch,
                                            size_t buffer_slice_pitch, size_t host_row_pitch,
                                            size_t host_slice_pitch, const void* ptr, cl_uint count,
                                            const cl_event* list, cl_event* event_out) {
  return guarded(__func__, [&]() -> cl_int {
    buffer_rect rect{{buffer_origin, buffer_row_pitch, buffer_slice_pitch},
                     {host_origin, host_row_pitch, host_slice_pitch},
                     region};
    if (cl_int code = check_rect_transfer(q, m, rect, ptr, count, list, host_access::write); code != CL_SUCCESS)
      return code;
    return enqueue_write_buffer_rect(q, m, blocking_write ? blocking::yes : blocking::no, rect, ptr, count, list,
                                     event_out);
  });
}

cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                                       size_t dst_offset, size_t size, cl_uint count, const cl_event* list,
                                       cl_event* event_out) {
  return guarded(__func__, [&] {
    return copy_buffer(q, src, dst, src_offset, dst_offset, size, count, list, event_out);
  });
}

cl_int CL_API_CALL clEnqueueCopyBufferRect(cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                                           const size_t* dst_origin, const size_t* region, size_t src_row_pitch,
                                           size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
                                           cl_uint count, const cl_event* list, cl_event* event_out) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(q);
    FERRY_CHECK_HANDLE(src);
    FERRY_CHECK_HANDLE(dst);
    if (src->is_image() || dst->is_image()) return CL_INVALID_MEM_OBJECT;
    if (q->context != src->context || q->context != dst->context) return CL_INVALID_CONTEXT;
    // CL_INVALID_VALUE if src_origin, dst_origin, or region is NULL, if any
    // region element is 0, if the pitches are invalid, or if the regions are
    // out of bounds.
    if (!src_origin || !dst_origin || !region) return CL_INVALID_VALUE;
    if (region[0] == 0 || region[1] == 0 || region[2] == 0) return CL_INVALID_VALUE;
    if (!resolve_pitches(region, src_row_pitch, src_slice_pitch)) return CL_INVALID_VALUE;
    if (!resolve_pitches(region, dst_row_pitch, dst_slice_pitch)) return CL_INVALID_VALUE;
    size_t src_end = rect_extent(src_origin, region, src_row_pitch, src_slice_pitch);
    size_t dst_end = rect_extent(dst_origin, region, dst_row_pitch, dst_slice_pitch);
    if (src_end > src->size || dst_end > dst->size) return CL_INVALID_VALUE;
    // CL_INVALID_VALUE if src_buffer and dst_buffer are the same buffer object
    // and src_slice_pitch is not equal to dst_slice_pitch and src_row_pitch is
    // not equal to dst_row_pitch.
    if (src == dst && src_slice_pitch != dst_slice_pitch && src_row_pitch != dst_row_pitch) return CL_INVALID_VALUE;
    if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
    // CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same buffer
    // object and the source and destination regions overlap.
    if (src == dst) {
      size_t src_begin = src_origin[2] * src_slice_pitch + src_origin[1] * src_row_pitch + src_origin[0];
      size_t dst_begin = dst_origin[2] * dst_slice_pitch + dst_origin[1] * dst_row_pitch + dst_origin[0];
      if (src_begin < dst_end && dst_begin < src_end) {
        // The byte ranges touch; check the rows themselves.
        bool overlap = false;
        for (size_t z = 0; z < region[2] && !overlap; ++z)
          for (size_t y = 0; y < region[1] && !overlap; ++y) {
            size_t a = src_begin + z * src_slice_pitch + y * src_row_pitch;
            for (size_t z2 = 0; z2 < region[2] && !overlap; ++z2)
              for (size_t y2 = 0; y2 < region[1] && !overlap; ++y2) {
                size_t b = dst_begin + z2 * dst_slice_pitch + y2 * dst_row_pitch;
                overlap = a < b + region[0] && b < a + region[0];
              }
          }
        if (overlap) return CL_MEM_COPY_OVERLAP;
      }
    }
    return enqueue_copy_buffer_rect(q, src, dst,
                                    {{src_origin, src_row_pitch, src_slice_pitch},
                                     {dst_origin, dst_row_pitch, dst_slice_pitch},
                                     region},
                                    count, list, event_out);
  });
}

cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue q, cl_mem m, const void* pattern, size_t pattern_size,
                                       size_t offset, size_t size, cl_uint count, const cl_event* list,
                                       cl_event* event_out) {
  return guarded(__func__, [&]() -> cl_int {
    if (cl_int code = check_queue_and_buffer(q, m); code != CL_SUCCESS) return code;
    // CL_INVALID_VALUE if offset or offset + size require accessing elements
    // outside the buffer; if pattern is NULL or pattern_size is 0 or not one
    // of { 1, 2, 4, 8, 16, 32, 64, 128 }; if offset and size are not a
    // multiple of pattern_size.
    if (!in_bounds(m, offset, size)) return CL_INVALID_VALUE;
    if (pattern == nullptr || pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)))
      return CL_INVALID_VALUE;
    if (offset % pattern_size != 0 || size % pattern_size != 0) return CL_INVALID_VALUE;
    if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
    return enqueue_fill_buffer(q, m, pattern, pattern_size, offset, size, count, list, event_out);
  });
}

void* CL_API_CALL clEnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool blocking_map, cl_map_flags map_flags,
                                     size_t offset, size_t size, cl_uint count, const cl_event* list,
                                     cl_event* event_out, cl_int* errcode_ret) {
  return guarded_create<void*>(__func__, errcode_ret, [&]() -> result<void*> {
    if (cl_int code = check_queue_and_buffer(q, m); code != CL_SUCCESS) return fail(code);
    // CL_INVALID_VALUE if region being mapped given by (offset, size) is out
    // of bounds or if size is 0 or if values specified in map_flags are not valid.
    if (!in_bounds(m, offset, size) || size == 0) return fail(CL_INVALID_VALUE);
    if (!valid_map_flags(map_flags)) return fail(CL_INVALID_VALUE);
    if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return fail(code);
    // CL_INVALID_OPERATION if buffer has been created with
    // CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS and CL_MAP_READ is set,
    // or with CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS and CL_MAP_WRITE
    // or CL_MAP_WRITE_INVALIDATE_REGION is set.
    if ((map_flags & CL_MAP_READ) && !host_may(m, host_access::read)) return fail(CL_INVALID_OPERATION);
    if ((map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) && !host_may(m, host_access::write))
      return fail(CL_INVALID_OPERATION);
    return map_buffer(q, m, blocking_map ? blocking::yes : blocking::no, map_flags, offset, size, count, list,
                      event_out);
  });
}

cl_int CL_API_CALL clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void* mapped, cl_uint count,
                                           const cl_event* list, cl_event* event_out) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(q);
    FERRY_CHECK_HANDLE(m);
    if (q->context != m->context) return CL_INVALID_CONTEXT;
    if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
    // CL_INVALID_VALUE if mapped_ptr is not a valid pointer returned by
    // clEnqueueMapBuffer or clEnqueueMapImage for memobj.
    return unmap(q, m, mapped, count, list, event_out);
  });
}

cl_int CL_API_CALL clEnqueueMigrateMemObjects(cl_command_queue q, cl_uint num_mem_objects, const cl_mem* mem_objects,
                                              cl_mem_migration_flags flags, cl_uint count, const cl_event* list,
                                              cl_event* event_out) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(q);
    // CL_INVALID_VALUE if num_mem_objects is zero or if mem_objects is NULL,
    // or if flags is not 0 or any of the values described in the table.
    if (num_mem_objects == 0 || mem_objects == nullptr) return CL_INVALID_VALUE;
    if (flags & ~(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)) return CL_INVALID_VALUE;
    for (cl_uint i = 0; i < num_mem_objects; ++i) {
      // CL_INVALID_MEM_OBJECT if any of the memory objects in mem_objects is not a valid memory object.
      if (!is_valid(mem_objects[i])) return CL_INVALID_MEM_OBJECT;
      // CL_INVALID_CONTEXT if the context associated with command_queue and
      // memory objects in mem_objects are not the same.
      if (mem_objects[i]->context != q->context) return CL_INVALID_CONTEXT;
    }
    if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
    return migrate(q, num_mem_objects, mem_objects, flags, count, list, event_out);
  });
}

}  // namespace ferry::client::api
