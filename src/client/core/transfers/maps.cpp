#include "client/core/transfers/maps.hpp"

#include <algorithm>
#include <mutex>
#include <new>

#include "client/core/markers.hpp"
#include "client/core/memory/image_layout.hpp"
#include "client/core/transfers/buffer_transfers.hpp"
#include "client/core/transfers/image_transfers.hpp"

namespace ferry::client {

namespace {

constexpr std::align_val_t mapping_alignment{64};

// Nothing to fetch for CL_MAP_WRITE_INVALIDATE_REGION: the region's old
// contents are discarded, and the map only orders.
cl_int map_without_contents(queue* q, cl_command_type type, blocking mode, cl_uint count, const cl_event* list,
                            cl_event* event_out) {
  return enqueue_sync(q, sync_kind::marker, type, count, list, event_out, mode, pending_reads::ignored);
}

// Whether a map's command went out (a failed wait list still maps).
bool mapped(cl_int code) { return code == CL_SUCCESS || code == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST; }

// Records a mapping of `m`; the map's result.
result<void*> record(memory* m, const _cl_mem::mapping& mapping, cl_int code) {
  {
    std::lock_guard lock(m->mappings_mutex);
    m->mappings.push_back(mapping);
  }
  m->map_count.fetch_add(1);
  if (code != CL_SUCCESS) return fail(code);
  return mapping.pointer;
}

// Sends the write-mapped region of an image back (the unmap's command).
cl_int write_back_image(queue* q, memory* m, const _cl_mem::mapping& mapping, cl_uint count, const cl_event* list,
                        cl_event* event_out) {
  size_t row_pitch = m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 0 : mapping.row_pitch;
  size_t slice_pitch = mapping.slice_pitch;
  if (!resolve_host_pitches(m->type, mapping.region.data(), m->element_size, row_pitch, slice_pitch))
    return CL_INVALID_VALUE;
  return enqueue_write_image(q, m, blocking::no, {mapping.origin.data(), mapping.region.data(), row_pitch, slice_pitch},
                             mapping.pointer, count, list, event_out, CL_COMMAND_UNMAP_MEM_OBJECT);
}

}  // namespace

result<void*> map_buffer(queue* q, memory* m, blocking mode, cl_map_flags flags, size_t offset, size_t size,
                         cl_uint count, const cl_event* list, cl_event* event_out) {
  // A map: the program follows the specification for this buffer.
  end_coherence(m);
  bool owned = m->host_ptr == nullptr;
  void* pointer = owned ? ::operator new(size, mapping_alignment) : static_cast<char*>(m->host_ptr) + offset;
  cl_int code;
  if (flags & CL_MAP_WRITE_INVALIDATE_REGION) {
    code = map_without_contents(q, CL_COMMAND_MAP_BUFFER, mode, count, list, event_out);
  } else {
    command cmd(q, CL_COMMAND_MAP_BUFFER, count, list, event_out, mode, data_parts::status_and_data);
    if (cl_int failed = cmd.uses(m, access::read); failed != CL_SUCCESS) {
      if (owned) ::operator delete(pointer, mapping_alignment);
      return fail(cmd.abandon(failed));
    }
    cmd.tracked()->holds = m->svm;  // the data lands in its host block
    cmd.link().expect_data(cmd.header.command, pointer, size, cmd.tracked());
    code = cmd.submit(protocol::enqueue_read_buffer{cmd.header, m->id, offset, size});
  }
  if (!mapped(code)) {
    if (owned) ::operator delete(pointer, mapping_alignment);
    return fail(code);
  }
  return record(m, {pointer, offset, size, flags, owned}, code);
}

result<void*> map_image(queue* q, memory* m, blocking mode, cl_map_flags flags, const size_t* origin,
                        const size_t* region, size_t* row_pitch, size_t* slice_pitch, cl_uint count,
                        const cl_event* list, cl_event* event_out) {
  // The mapped pointer: inside the USE_HOST_PTR region with its pitches,
  // or a packed block of Ferry's own.
  _cl_mem::mapping mapping{};
  mapping.flags = flags;
  mapping.origin = {origin[0], origin[1], origin[2]};
  mapping.region = {region[0], region[1], region[2]};
  size_t element = m->element_size;
  if (m->host_ptr) {
    mapping.row_pitch = m->image.image_row_pitch;
    mapping.slice_pitch =
        m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? m->image.image_row_pitch : m->image.image_slice_pitch;
    host_layout layout = layout_of(m->type, mapping.row_pitch, mapping.slice_pitch);
    mapping.pointer = static_cast<uint8_t*>(m->host_ptr) + origin[0] * element + origin[1] * layout.y_pitch +
                      origin[2] * layout.z_pitch;
  } else {
    mapping.owned = true;
    mapping.row_pitch = region[0] * element;
    mapping.slice_pitch = m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? mapping.row_pitch : mapping.row_pitch * region[1];
    mapping.pointer = ::operator new(std::max<size_t>(packed_size(region, element), 1), mapping_alignment);
  }
  cl_int code;
  if (flags & CL_MAP_WRITE_INVALIDATE_REGION) {
    code = map_without_contents(q, CL_COMMAND_MAP_IMAGE, mode, count, list, event_out);
  } else {
    // For a 1D array the caller's row pitch means nothing; the slice pitch
    // steps from image to image.
    size_t read_row_pitch = m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 0 : mapping.row_pitch;
    size_t read_slice_pitch = mapping.slice_pitch;
    if (!resolve_host_pitches(m->type, region, element, read_row_pitch, read_slice_pitch)) code = CL_INVALID_VALUE;
    else
      code = enqueue_read_image(q, m, mode, {origin, region, read_row_pitch, read_slice_pitch}, mapping.pointer,
                                count, list, event_out, CL_COMMAND_MAP_IMAGE);
  }
  if (!mapped(code)) {
    if (mapping.owned) ::operator delete(mapping.pointer, mapping_alignment);
    return fail(code);
  }
  if (row_pitch) *row_pitch = mapping.row_pitch;
  if (slice_pitch) *slice_pitch = is_array(m->type) || m->type == CL_MEM_OBJECT_IMAGE3D ? mapping.slice_pitch : 0;
  return record(m, mapping, code);
}

cl_int unmap(queue* q, memory* m, void* mapped_pointer, cl_uint count, const cl_event* list, cl_event* event_out) {
  _cl_mem::mapping found{};
  {
    std::lock_guard lock(m->mappings_mutex);
    auto it = std::find_if(m->mappings.begin(), m->mappings.end(),
                           [&](const _cl_mem::mapping& x) { return x.pointer == mapped_pointer; });
    if (it == m->mappings.end()) return CL_INVALID_VALUE;
    found = *it;
    m->mappings.erase(it);
  }
  m->map_count.fetch_sub(1);
  cl_int code;
  if (!(found.flags & map_flags_writing)) {
    code = enqueue_sync(q, sync_kind::marker, CL_COMMAND_UNMAP_MEM_OBJECT, count, list, event_out, blocking::no,
                        pending_reads::ignored);
  } else if (m->is_image()) {
    code = write_back_image(q, m, found, count, list, event_out);
  } else {
    // The mapped region goes back to the server.
    code = enqueue_write_back(q, m, found, count, list, event_out);
  }
  if (found.owned) ::operator delete(found.pointer, mapping_alignment);
  return code;
}

cl_int migrate(queue* q, cl_uint num_objects, const cl_mem* objects, cl_mem_migration_flags flags, cl_uint count,
               const cl_event* list, cl_event* event_out) {
  // The contents move to the queue's server (if they are elsewhere) before
  // the command completes; the command itself orders like a marker.
  // CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED moves nothing: the queue's
  // server becomes the holder. CL_MIGRATE_MEM_OBJECT_HOST is a placement
  // hint; the contents stay where they are current, since a read from the
  // host fetches them from there anyway.
  command cmd(q, CL_COMMAND_MIGRATE_MEM_OBJECTS, count, list, event_out, blocking::no);
  if (!(flags & CL_MIGRATE_MEM_OBJECT_HOST)) {
    access how = flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED ? access::replace : access::read;
    for (cl_uint i = 0; i < num_objects; ++i)
      if (cl_int code = cmd.uses(objects[i], how); code != CL_SUCCESS) return cmd.abandon(code);
  }
  return cmd.submit(protocol::enqueue_marker{cmd.header});
}

}  // namespace ferry::client
