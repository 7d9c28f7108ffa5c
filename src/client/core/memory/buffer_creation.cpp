#include "client/core/memory/buffer_creation.hpp"

#include "client/core/context_objects.hpp"
#include "client/core/memory/host_ptr_coherence.hpp"
#include "client/core/memory/placement.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client {

namespace {

// What the server's buffer never gets: Ferry keeps USE_HOST_PTR semantics on
// the client, and sends COPY_HOST_PTR contents on the bulk stream.
constexpr cl_mem_flags client_side_flags = CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR;
constexpr cl_mem_flags host_ptr_flags = CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;

}  // namespace

cl_mem create_buffer_on_servers(cl_context c, cl_mem_flags flags, size_t size, void* host_ptr, svm_ref svm,
                                property_list properties) {
  const bool with_data = flags & client_side_flags;
  server* first = c->servers.front();
  connection* link = first->link.get();
  auto* m = make_in_context<memory>(c, next_object_id());
  m->flags = flags;
  m->size = size;
  if (properties == property_list::empty) m->properties = {0};  // only the terminating 0 is accepted
  if (flags & CL_MEM_USE_HOST_PTR) m->host_ptr = host_ptr;
  if (svm) {
    // The server's buffer stands on the native allocation; the host block is
    // its host memory here, as for any USE_HOST_PTR buffer.
    link->post(protocol::create_buffer{m->id, c->id, flags & ~client_side_flags, size, 0, svm->id,
                                       svm->offset_of(host_ptr)});
    m->svm = std::move(svm);
    place_new(m, first);
    return m;
  }
  // The server's buffer has no host pointer of ours: the initial contents
  // travel on the bulk stream and the client keeps USE_HOST_PTR semantics.
  const protocol::create_buffer created{m->id, c->id, flags & ~client_side_flags, size, with_data ? m->id : 0, 0, 0};
  link->post(created);
  for (size_t i = 1; i < c->servers.size(); ++i) {
    protocol::create_buffer empty = created;
    empty.initial_transfer = 0;
    c->servers[i]->link->post(empty);
  }
  place_new(m, with_data ? first : nullptr);
  // Its shadow is taken from the bytes sent now.
  start_coherence(m);
  if (with_data) {
    link->flush();
    link->send_data(m->id, host_ptr, size);
  }
  return m;
}

cl_mem create_sub_buffer_on_servers(cl_mem parent, cl_mem_flags flags, const cl_buffer_region& region) {
  auto* m = make_in_context<memory>(parent->context, next_object_id());
  m->parent = parent;
  retain_internal(parent);
  m->flags = flags;
  m->size = region.size;
  m->origin = region.origin;
  if (parent->host_ptr) m->host_ptr = static_cast<char*>(parent->host_ptr) + region.origin;
  m->svm = parent->svm;
  post_each(m->context->servers,
            protocol::create_sub_buffer{m->id, parent->id, flags & ~host_ptr_flags, region.origin, region.size});
  return m;
}

}  // namespace ferry::client
