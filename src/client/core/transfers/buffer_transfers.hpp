// Reads and writes between host memory and buffers, whole ranges and
// rectangles, once the entry point's checks have passed. Read data lands
// straight in the application's memory (or a packed block spread into the
// caller's layout just before the event completes); written data follows
// its command on the bulk stream.
#pragma once

#include <cstddef>

#include "client/core/command.hpp"

namespace ferry::client {

/// Reads `size` bytes at `offset` of `m` into `ptr`.
cl_int enqueue_read_buffer(queue* q, memory* m, blocking mode, size_t offset, size_t size, void* ptr, cl_uint count,
                           const cl_event* list, cl_event* event_out, cl_command_type type);

/// Writes `size` bytes from `ptr` at `offset` of `m`. The data is on its way
/// once sent, which is all a blocking write promises ("ptr can be reused");
/// only a wait list whose failure the call must report makes it wait.
cl_int enqueue_write_buffer(queue* q, memory* m, blocking mode, size_t offset, size_t size, const void* ptr,
                            cl_uint count, const cl_event* list, cl_event* event_out, cl_command_type type);

/// Where one side of a rectangle transfer starts, and the pitches of its
/// layout.
struct pitched_origin {
  const size_t* origin;
  size_t row_pitch;
  size_t slice_pitch;
};

/// A rectangle of a buffer and its place in host memory, with resolved
/// pitches.
struct buffer_rect {
  pitched_origin buffer;
  pitched_origin host;
  const size_t* region;
};

/// clEnqueueReadBufferRect: the rectangle arrives packed.
cl_int enqueue_read_buffer_rect(queue* q, memory* m, blocking mode, const buffer_rect& rect, void* ptr,
                                cl_uint count, const cl_event* list, cl_event* event_out);

/// clEnqueueWriteBufferRect: the rectangle travels packed.
cl_int enqueue_write_buffer_rect(queue* q, memory* m, blocking mode, const buffer_rect& rect, const void* ptr,
                                 cl_uint count, const cl_event* list, cl_event* event_out);

/// Sends the write-mapped region of an unmapped buffer back to its server
/// (CL_COMMAND_UNMAP_MEM_OBJECT).
cl_int enqueue_write_back(queue* q, memory* m, const _cl_mem::mapping& mapping, cl_uint count, const cl_event* list,
                          cl_event* event_out);

}  // namespace ferry::client
