// Copies between memory objects on the queue's server, once the entry
// point's checks have passed: buffer to buffer (ranges and rectangles),
// image to image, and between images and buffers. The source is read and
// the destination written there, so both are migrated first when another
// server holds their contents.
#pragma once

#include <cstddef>

#include "client/core/command.hpp"
#include "client/core/transfers/buffer_transfers.hpp"

namespace ferry::client {

cl_int enqueue_copy_buffer(queue* q, memory* src, memory* dst, size_t src_offset, size_t dst_offset, size_t size,
                           cl_uint count, const cl_event* list, cl_event* event_out);

/// Two rectangles of the same region in buffers, with resolved pitches.
struct copy_rects {
  pitched_origin src;
  pitched_origin dst;
  const size_t* region;
};

cl_int enqueue_copy_buffer_rect(queue* q, memory* src, memory* dst, const copy_rects& rects, cl_uint count,
                                const cl_event* list, cl_event* event_out);

cl_int enqueue_copy_image(queue* q, memory* src, memory* dst, const size_t* src_origin, const size_t* dst_origin,
                          const size_t* region, cl_uint count, const cl_event* list, cl_event* event_out);

cl_int enqueue_copy_image_to_buffer(queue* q, memory* src, memory* dst, const size_t* src_origin,
                                    const size_t* region, size_t dst_offset, cl_uint count, const cl_event* list,
                                    cl_event* event_out);

cl_int enqueue_copy_buffer_to_image(queue* q, memory* src, memory* dst, size_t src_offset, const size_t* dst_origin,
                                    const size_t* region, cl_uint count, const cl_event* list, cl_event* event_out);

}  // namespace ferry::client
