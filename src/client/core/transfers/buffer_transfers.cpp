#include "client/core/transfers/buffer_transfers.hpp"

#include <array>
#include <memory>
#include <vector>

#include "client/core/memory/host_rect.hpp"

namespace ferry::client {

cl_int enqueue_read_buffer(queue* q, memory* m, blocking mode, size_t offset, size_t size, void* ptr, cl_uint count,
                           const cl_event* list, cl_event* event_out, cl_command_type type) {
  // An explicit transfer: the program follows the specification for this buffer.
  end_coherence(m);
  command cmd(q, type, count, list, event_out, mode, data_parts::status_and_data);
  if (cl_int code = cmd.uses(m, access::read); code != CL_SUCCESS) return cmd.abandon(code);
  cmd.link().expect_data(cmd.header.command, ptr, size, cmd.tracked());
  return cmd.submit(protocol::enqueue_read_buffer{cmd.header, m->id, offset, size});
}

cl_int enqueue_write_buffer(queue* q, memory* m, blocking mode, size_t offset, size_t size, const void* ptr,
                            cl_uint count, const cl_event* list, cl_event* event_out, cl_command_type type) {
  // An explicit transfer: the program follows the specification for this buffer.
  end_coherence(m);
  command cmd(q, type, count, list, event_out, write_blocking(mode, count));
  if (cl_int code = cmd.uses(m, access_for_write(m, offset, size)); code != CL_SUCCESS) return cmd.abandon(code);
  cmd.send(protocol::enqueue_write_buffer{cmd.header, m->id, offset, size});
  // A non-blocking write's memory stays the application's to leave alone
  // until the command completes, so its bytes are only pointed to and
  // nothing waits.
  cmd.link().send_data(cmd.header.command, ptr, size,
                       mode == blocking::yes ? connection::bytes_lifetime::until_return
                                             : connection::bytes_lifetime::until_completion,
                       q->id);
  return cmd.complete();
}

cl_int enqueue_read_buffer_rect(queue* q, memory* m, blocking mode, const buffer_rect& rect, void* ptr,
                                cl_uint count, const cl_event* list, cl_event* event_out) {
  const size_t* region = rect.region;
  size_t packed_size = region[0] * region[1] * region[2];
  auto packed = std::make_shared<std::vector<uint8_t>>(packed_size);
  // An explicit transfer: the program follows the specification for this buffer.
  end_coherence(m);
  command cmd(q, CL_COMMAND_READ_BUFFER_RECT, count, list, event_out, mode, data_parts::status_and_data);
  if (cl_int code = cmd.uses(m, access::read); code != CL_SUCCESS) return cmd.abandon(code);
  // The data arrives packed; it is spread into the caller's layout just
  // before the event completes.
  std::array<size_t, 3> origin{rect.host.origin[0], rect.host.origin[1], rect.host.origin[2]};
  std::array<size_t, 3> extent{region[0], region[1], region[2]};
  size_t row_pitch = rect.host.row_pitch, slice_pitch = rect.host.slice_pitch;
  cmd.tracked()->before_complete = [packed, ptr, origin, extent, row_pitch, slice_pitch] {
    copy_rect(packed->data(), static_cast<uint8_t*>(ptr), origin.data(), extent.data(), row_pitch, slice_pitch,
              pack_direction::unpack);
  };
  cmd.link().expect_data(cmd.header.command, packed->data(), packed_size, cmd.tracked());
  return cmd.submit(protocol::enqueue_read_buffer_rect{cmd.header, m->id, to_size3(rect.buffer.origin),
                                                       to_size3(region), rect.buffer.row_pitch,
                                                       rect.buffer.slice_pitch});
}

cl_int enqueue_write_buffer_rect(queue* q, memory* m, blocking mode, const buffer_rect& rect, const void* ptr,
                                 cl_uint count, const cl_event* list, cl_event* event_out) {
  const size_t* region = rect.region;
  std::vector<uint8_t> packed(region[0] * region[1] * region[2]);
  copy_rect(packed.data(), static_cast<uint8_t*>(const_cast<void*>(ptr)), rect.host.origin, region,
            rect.host.row_pitch, rect.host.slice_pitch, pack_direction::pack);
  // An explicit transfer: the program follows the specification for this buffer.
  end_coherence(m);
  command cmd(q, CL_COMMAND_WRITE_BUFFER_RECT, count, list, event_out, write_blocking(mode, count));
  if (cl_int code = cmd.uses(m, access::write); code != CL_SUCCESS) return cmd.abandon(code);
  cmd.send(protocol::enqueue_write_buffer_rect{cmd.header, m->id, to_size3(rect.buffer.origin), to_size3(region),
                                               rect.buffer.row_pitch, rect.buffer.slice_pitch});
  cmd.link().send_data(cmd.header.command, std::move(packed));
  return cmd.complete();
}

cl_int enqueue_write_back(queue* q, memory* m, const _cl_mem::mapping& mapping, cl_uint count, const cl_event* list,
                          cl_event* event_out) {
  command cmd(q, CL_COMMAND_UNMAP_MEM_OBJECT, count, list, event_out, blocking::no);
  if (cl_int code = cmd.uses(m, access_for_write(m, mapping.offset, mapping.size)); code != CL_SUCCESS)
    return cmd.abandon(code);
  cmd.send(protocol::enqueue_write_buffer{cmd.header, m->id, mapping.offset, mapping.size});
  cmd.link().send_data(cmd.header.command, mapping.pointer, mapping.size);
  return cmd.complete();
}

}  // namespace ferry::client
