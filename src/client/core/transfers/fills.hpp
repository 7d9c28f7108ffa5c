// Fills of buffers, images and SVM memory with a pattern, once the entry
// point's checks have passed; the pattern travels with the command.
#pragma once

#include <cstddef>

#include "client/core/command.hpp"
#include "client/core/memory/svm_registry.hpp"

namespace ferry::client {

/// Fills [offset, offset + size) of `m` with `pattern_size` bytes at `pattern`.
cl_int enqueue_fill_buffer(queue* q, memory* m, const void* pattern, size_t pattern_size, size_t offset, size_t size,
                           cl_uint count, const cl_event* list, cl_event* event_out);

/// Fills `region` of image `m` at `origin` with `fill_color` (four 32-bit
/// components whatever the channel type).
cl_int enqueue_fill_image(queue* q, memory* m, const void* fill_color, const size_t* origin, const size_t* region,
                          cl_uint count, const cl_event* list, cl_event* event_out);

/// Fills `size` bytes at `pointer`, inside `allocation`, with the pattern.
cl_int enqueue_svm_fill(queue* q, const svm_allocation& allocation, const void* pointer, const void* pattern,
                        size_t pattern_size, size_t size, cl_uint count, const cl_event* list, cl_event* event_out);

}  // namespace ferry::client
