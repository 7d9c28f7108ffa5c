#include "client/core/transfers/fills.hpp"

#include <cstring>

namespace ferry::client {

namespace {

protocol::bytes pattern_bytes(const void* pattern, size_t pattern_size) {
  auto* bytes = static_cast<const uint8_t*>(pattern);
  return protocol::bytes(bytes, bytes + pattern_size);
}

}  // namespace

cl_int enqueue_fill_buffer(queue* q, memory* m, const void* pattern, size_t pattern_size, size_t offset, size_t size,
                           cl_uint count, const cl_event* list, cl_event* event_out) {
  command cmd(q, CL_COMMAND_FILL_BUFFER, count, list, event_out, blocking::no);
  if (cl_int code = cmd.uses(m, access_for_write(m, offset, size)); code != CL_SUCCESS) return cmd.abandon(code);
  return cmd.submit(
      protocol::enqueue_fill_buffer{cmd.header, m->id, pattern_bytes(pattern, pattern_size), offset, size});
}

cl_int enqueue_fill_image(queue* q, memory* m, const void* fill_color, const size_t* origin, const size_t* region,
                          cl_uint count, const cl_event* list, cl_event* event_out) {
  command cmd(q, CL_COMMAND_FILL_IMAGE, count, list, event_out, blocking::no);
  if (cl_int code = cmd.uses(m, access::write); code != CL_SUCCESS) return cmd.abandon(code);
  protocol::enqueue_fill_image message{cmd.header, m->id, {}, to_size3(origin), to_size3(region)};
  std::memcpy(message.color.data(), fill_color, message.color.size());
  return cmd.submit(message);
}

cl_int enqueue_svm_fill(queue* q, const svm_allocation& allocation, const void* pointer, const void* pattern,
                        size_t pattern_size, size_t size, cl_uint count, const cl_event* list, cl_event* event_out) {
  command cmd(q, CL_COMMAND_SVM_MEMFILL, count, list, event_out, blocking::no);
  return cmd.submit(protocol::enqueue_svm_fill{cmd.header, allocation.id, pattern_bytes(pattern, pattern_size),
                                               allocation.offset_of(pointer), size});
}

}  // namespace ferry::client
