// Maps and unmaps of buffers and images, and migrations, once the entry
// point's checks have passed. A mapped region is host memory: the
// USE_HOST_PTR region itself, or a block of Ferry's own; mapping for reading
// fetches its contents, unmapping after writing sends them back.
#pragma once

#include <cstddef>

#include "client/core/command.hpp"
#include "client/core/result.hpp"

namespace ferry::client {

/// The map flags that let the host write the mapped region: unmapping it sends it back.
inline constexpr cl_map_flags map_flags_writing = CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;

/// Maps [offset, offset + size) of buffer `m`; the pointer is returned with
/// CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST too (the region is mapped
/// then, though its contents are not).
result<void*> map_buffer(queue* q, memory* m, blocking mode, cl_map_flags flags, size_t offset, size_t size,
                         cl_uint count, const cl_event* list, cl_event* event_out);

/// Maps `region` of image `m` at `origin`; `row_pitch` and `slice_pitch`
/// (when not NULL) get the layout of the mapped pointer, also with
/// CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST.
result<void*> map_image(queue* q, memory* m, blocking mode, cl_map_flags flags, const size_t* origin,
                        const size_t* region, size_t* row_pitch, size_t* slice_pitch, cl_uint count,
                        const cl_event* list, cl_event* event_out);

/// Unmaps `mapped`, a pointer a map of `m` returned; what the host may have
/// written goes back to the server. CL_INVALID_VALUE if mapped_ptr is not a
/// valid pointer returned by clEnqueueMapBuffer or clEnqueueMapImage for
/// memobj.
cl_int unmap(queue* q, memory* m, void* mapped, cl_uint count, const cl_event* list, cl_event* event_out);

/// Moves the contents of `objects` to the queue's server (unless `flags`
/// say otherwise); the command itself orders like a marker.
cl_int migrate(queue* q, cl_uint num_objects, const cl_mem* objects, cl_mem_migration_flags flags, cl_uint count,
               const cl_event* list, cl_event* event_out);

}  // namespace ferry::client
