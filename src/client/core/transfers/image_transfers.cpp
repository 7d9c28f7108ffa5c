#include "client/core/transfers/image_transfers.hpp"

#include <array>
#include <memory>
#include <vector>

#include "client/core/memory/image_layout.hpp"

namespace ferry::client {

cl_int enqueue_read_image(queue* q, memory* m, blocking mode, const image_rect& rect, void* ptr, cl_uint count,
                          const cl_event* list, cl_event* event_out, cl_command_type type) {
  const size_t* region = rect.region;
  size_t size = packed_size(region, m->element_size);
  host_layout layout = layout_of(m->type, rect.row_pitch, rect.slice_pitch);
  bool packed_already = layout.y_pitch == region[0] * m->element_size &&
                        (region[2] == 1 || layout.z_pitch == layout.y_pitch * region[1]);
  command cmd(q, type, count, list, event_out, mode, data_parts::status_and_data);
  if (cl_int code = cmd.uses(m, access::read); code != CL_SUCCESS) return cmd.abandon(code);
  if (packed_already) {
    cmd.link().expect_data(cmd.header.command, ptr, size, cmd.tracked());
  } else {
    // The data arrives packed; it is spread into the caller's layout just
    // before the event completes.
    auto packed = std::make_shared<std::vector<uint8_t>>(size);
    std::array<size_t, 3> extent{region[0], region[1], region[2]};
    size_t element = m->element_size;
    cmd.tracked()->before_complete = [packed, ptr, extent, element, layout] {
      copy_image_rect(packed->data(), static_cast<uint8_t*>(ptr), extent.data(), element, layout,
                      pack_direction::unpack);
    };
    cmd.link().expect_data(cmd.header.command, packed->data(), size, cmd.tracked());
  }
  return cmd.submit(protocol::enqueue_read_image{cmd.header, m->id, to_size3(rect.origin), to_size3(region), size});
}

cl_int enqueue_write_image(queue* q, memory* m, blocking mode, const image_rect& rect, const void* ptr,
                           cl_uint count, const cl_event* list, cl_event* event_out, cl_command_type type) {
  const size_t* region = rect.region;
  size_t size = packed_size(region, m->element_size);
  std::vector<uint8_t> packed(size);
  copy_image_rect(packed.data(), static_cast<uint8_t*>(const_cast<void*>(ptr)), region, m->element_size,
                  layout_of(m->type, rect.row_pitch, rect.slice_pitch), pack_direction::pack);
  // As for buffers: the data is on its way once sent, which is all that a
  // blocking write promises, unless a wait list may fail.
  command cmd(q, type, count, list, event_out, write_blocking(mode, count));
  if (cl_int code = cmd.uses(m, access::write); code != CL_SUCCESS) return cmd.abandon(code);
  cmd.send(protocol::enqueue_write_image{cmd.header, m->id, to_size3(rect.origin), to_size3(region), size});
  cmd.link().send_data(cmd.header.command, std::move(packed));
  return cmd.complete();
}

}  // namespace ferry::client
