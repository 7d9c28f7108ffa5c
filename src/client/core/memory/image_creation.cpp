#include "client/core/memory/image_creation.hpp"

#include <cstring>

#include "client/core/context_objects.hpp"
#include "client/core/memory/image_layout.hpp"
#include "client/core/memory/placement.hpp"
#include "client/core/remote_query.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client {

namespace {

constexpr cl_mem_flags access_flags = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;

protocol::create_image request_of(cl_context c, const image_request& image) {
  const cl_image_desc* desc = image.desc;
  protocol::create_image request;
  request.id = next_object_id();
  request.context = c->id;
  request.flags = image.flags;
  request.channel_order = image.format->image_channel_order;
  request.channel_data_type = image.format->image_channel_data_type;
  request.image_type = desc->image_type;
  request.width = desc->image_width;
  request.height = desc->image_height;
  request.depth = desc->image_depth;
  request.array_size = desc->image_array_size;
  if (image.from) {
    request.row_pitch = image.row_pitch;
    request.slice_pitch = image.slice_pitch;
    request.buffer = image.from->id;
  }
  request.num_mip_levels = desc->num_mip_levels;
  request.num_samples = desc->num_samples;
  if (image.properties == property_list::empty) request.properties.push_back(0);
  return request;
}

}  // namespace

result<cl_mem> create_image_on_servers(cl_context c, image_request image) {
  const cl_image_desc* desc = image.desc;
  const bool with_data = image.flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  protocol::create_image request = request_of(c, image);
  // The image exists on every server of the context; initial contents go to
  // the first, which then holds the only current copy.
  protocol::status_reply reply;
  for (size_t i = 0; i < c->servers.size(); ++i) {
    connection* link = c->servers[i]->link.get();
    bool send = with_data && i == 0;
    request.initial_transfer = send ? request.id : 0;
    // The contents go out between the request and its reply; the server
    // waits for them before it creates the image.
    connection::waiting scope(*link);
    auto answer = link->call<protocol::status_reply>(request, [&] {
      if (send) link->send_data(request.initial_transfer, image.packed.data(), image.packed.size());
    });
    if (!answer || answer->status != CL_SUCCESS) {
      for (size_t j = 0; j < i; ++j) c->servers[j]->link->post(protocol::release_object{request.id});
      return fail(answer ? answer->status : answer.error());
    }
    if (i == 0) reply = std::move(*answer);
  }

  cl_mem_flags flags = image.flags;
  auto* m = make_in_context<memory>(c, request.id);
  if (!(flags & access_flags)) flags |= CL_MEM_READ_WRITE;
  m->flags = flags;
  if (image.properties == property_list::empty) m->properties = {0};
  m->type = desc->image_type;
  m->format = *image.format;
  m->image = *desc;
  size_t element = image.element;
  if (!reply.details.empty() && reply.details[0] > 0) element = static_cast<size_t>(reply.details[0]);
  m->element_size = element;
  std::array<size_t, 3> extent = extent_of(*desc);
  size_t row_pitch = image.row_pitch, slice_pitch = image.slice_pitch;
  if (!with_data && !image.from) {
    row_pitch = 0;
    slice_pitch = 0;
    resolve_host_pitches(desc->image_type, extent.data(), element, row_pitch, slice_pitch);
  }
  m->image.image_row_pitch = row_pitch;
  m->image.image_slice_pitch = is_array(m->type) || m->type == CL_MEM_OBJECT_IMAGE3D ? slice_pitch : 0;
  m->size = image.from ? image.from->size
                       : slice_pitch * (m->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? extent[1] : extent[2]);
  if (image.from) {
    m->image.mem_object = image.from;
    retain_internal(image.from);
  } else {
    m->image.mem_object = nullptr;
    place_new(m, with_data ? c->servers.front() : nullptr);
  }
  if (flags & CL_MEM_USE_HOST_PTR) m->host_ptr = image.host_ptr;
  return static_cast<cl_mem>(m);
}

result<std::vector<cl_image_format>> supported_image_formats(cl_context c, cl_mem_flags flags,
                                                             cl_mem_object_type type) {
  connection* link = link_of(c);
  if (!link->accepting()) return fail(CL_DEVICE_NOT_AVAILABLE);
  protocol::bytes input(sizeof flags);
  std::memcpy(input.data(), &flags, sizeof flags);
  auto answer =
      ask_server(link, {protocol::query_kind::supported_image_formats, c, nullptr, type, 0, std::move(input)});
  if (!answer) return fail(answer.error());
  std::vector<cl_image_format> formats(answer->size() / sizeof(cl_image_format));
  if (!formats.empty()) std::memcpy(formats.data(), answer->data(), formats.size() * sizeof(cl_image_format));
  return formats;
}

}  // namespace ferry::client
