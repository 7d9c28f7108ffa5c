#include "client/core/transfers/copies.hpp"

namespace ferry::client {

namespace {

// One copy command: reads `src`, writes `dst` as `write` says, and sends the
// message `make(header)` builds.
template <class Make>
cl_int copy_command(queue* q, cl_command_type type, memory* src, memory* dst, access write, cl_uint count,
                    const cl_event* list, cl_event* event_out, Make&& make) {
  command cmd(q, type, count, list, event_out, blocking::no);
  if (cl_int code = cmd.uses(src, access::read); code != CL_SUCCESS) return cmd.abandon(code);
  if (cl_int code = cmd.uses(dst, write); code != CL_SUCCESS) return cmd.abandon(code);
  return cmd.submit(make(cmd.header));
}

}  // namespace

cl_int enqueue_copy_buffer(queue* q, memory* src, memory* dst, size_t src_offset, size_t dst_offset, size_t size,
                           cl_uint count, const cl_event* list, cl_event* event_out) {
  return copy_command(q, CL_COMMAND_COPY_BUFFER, src, dst, access_for_write(dst, dst_offset, size), count, list,
                      event_out, [&](const protocol::command_header& header) {
                        return protocol::enqueue_copy_buffer{header, src->id, dst->id, src_offset, dst_offset, size};
                      });
}

cl_int enqueue_copy_buffer_rect(queue* q, memory* src, memory* dst, const copy_rects& rects, cl_uint count,
                                const cl_event* list, cl_event* event_out) {
  return copy_command(q, CL_COMMAND_COPY_BUFFER_RECT, src, dst, access::write, count, list, event_out,
                      [&](const protocol::command_header& header) {
                        return protocol::enqueue_copy_buffer_rect{
                            header,
                            src->id,
                            dst->id,
                            to_size3(rects.src.origin),
                            to_size3(rects.dst.origin),
                            to_size3(rects.region),
                            rects.src.row_pitch,
                            rects.src.slice_pitch,
                            rects.dst.row_pitch,
                            rects.dst.slice_pitch};
                      });
}

cl_int enqueue_copy_image(queue* q, memory* src, memory* dst, const size_t* src_origin, const size_t* dst_origin,
                          const size_t* region, cl_uint count, const cl_event* list, cl_event* event_out) {
  return copy_command(q, CL_COMMAND_COPY_IMAGE, src, dst, access::write, count, list, event_out,
                      [&](const protocol::command_header& header) {
                        return protocol::enqueue_copy_image{header, src->id, dst->id, to_size3(src_origin),
                                                            to_size3(dst_origin), to_size3(region)};
                      });
}

cl_int enqueue_copy_image_to_buffer(queue* q, memory* src, memory* dst, const size_t* src_origin,
                                    const size_t* region, size_t dst_offset, cl_uint count, const cl_event* list,
                                    cl_event* event_out) {
  return copy_command(q, CL_COMMAND_COPY_IMAGE_TO_BUFFER, src, dst, access::write, count, list, event_out,
                      [&](const protocol::command_header& header) {
                        return protocol::enqueue_copy_image_to_buffer{header, src->id, dst->id, to_size3(src_origin),
                                                                      to_size3(region), dst_offset};
                      });
}

cl_int enqueue_copy_buffer_to_image(queue* q, memory* src, memory* dst, size_t src_offset, const size_t* dst_origin,
                                    const size_t* region, cl_uint count, const cl_event* list, cl_event* event_out) {
  return copy_command(q, CL_COMMAND_COPY_BUFFER_TO_IMAGE, src, dst, access::write, count, list, event_out,
                      [&](const protocol::command_header& header) {
                        return protocol::enqueue_copy_buffer_to_image{header, src->id, dst->id, src_offset,
                                                                      to_size3(dst_origin), to_size3(region)};
                      });
}

}  // namespace ferry::client
