// Reads and writes between host memory and images, once the entry point's
// checks have passed. Image data crosses the network packed; the caller's
// pitches are applied here.
#pragma once

#include <cstddef>

#include "client/core/command.hpp"

namespace ferry::client {

/// Where in an image a transfer goes, and the host layout of its data (the
/// pitches resolved with resolve_host_pitches).
struct image_rect {
  const size_t* origin;
  const size_t* region;
  size_t row_pitch;
  size_t slice_pitch;
};

/// Reads `rect` of image `m` into `ptr` (CL_COMMAND_READ_IMAGE, or the read
/// of a map).
cl_int enqueue_read_image(queue* q, memory* m, blocking mode, const image_rect& rect, void* ptr, cl_uint count,
                          const cl_event* list, cl_event* event_out, cl_command_type type);

/// Writes `rect` of image `m` from `ptr` (CL_COMMAND_WRITE_IMAGE, or the
/// write-back of an unmap); waits as a buffer write does.
cl_int enqueue_write_image(queue* q, memory* m, blocking mode, const image_rect& rect, const void* ptr,
                           cl_uint count, const cl_event* list, cl_event* event_out, cl_command_type type);

}  // namespace ferry::client
