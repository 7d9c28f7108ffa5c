#include "client/core/programs/program_creation.hpp"

#include "client/core/context_objects.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client {

program* make_program(cl_context c, protocol::object_id id, std::vector<cl_device_id> devices) {
  auto* p = make_in_context<program>(c, id);
  p->devices = std::move(devices);
  p->servers = servers_of(p->devices);
  return p;
}

cl_program create_from_source(cl_context c, std::string source) {
  auto* p = make_program(c, next_object_id(), c->devices);
  p->source = std::move(source);
  post_each(p->servers, protocol::create_program_with_source{p->id, c->id, p->source});
  return p;
}

result<cl_program> create_from_binaries(cl_context c, const std::vector<cl_device_id>& devices, const size_t* lengths,
                                        const unsigned char** binaries, cl_int* binary_status) {
  // Each server gets the binaries of its own devices; the answers are put
  // back in the caller's order.
  protocol::create_program_with_binary request;
  request.id = next_object_id();
  request.context = c->id;
  cl_int status = CL_SUCCESS;
  std::vector<server*> made;
  for (server* s : servers_of(devices)) {
    std::vector<cl_uint> positions;
    request.devices.clear();
    request.binaries.clear();
    for (cl_uint i = 0; i < devices.size(); ++i) {
      if (devices[i]->host != s) continue;
      positions.push_back(i);
      request.devices.push_back(devices[i]->index);
      request.binaries.emplace_back(binaries[i], binaries[i] + lengths[i]);
    }
    auto reply = s->link->call<protocol::status_reply>(request);
    if (!reply) {
      status = reply.error();
      break;
    }
    if (binary_status) {
      for (size_t j = 0; j < positions.size(); ++j)
        binary_status[positions[j]] = j < reply->details.size() ? reply->details[j] : reply->status;
    }
    // CL_INVALID_BINARY if an invalid program binary was encountered for any
    // device (the server creates no object then).
    if (reply->status != CL_SUCCESS) {
      status = reply->status;
      break;
    }
    made.push_back(s);
  }
  if (status != CL_SUCCESS) {
    post_each(made, protocol::release_object{request.id});
    return fail(status);
  }
  auto* p = make_program(c, request.id, devices);
  p->from_binary = true;
  return static_cast<cl_program>(p);
}

result<cl_program> create_from_il(cl_context c, const void* il, size_t length) {
  protocol::create_program_with_il request;
  request.id = next_object_id();
  request.context = c->id;
  const auto* first = static_cast<const uint8_t*>(il);
  request.il.assign(first, first + length);
  auto reply = call_each<protocol::status_reply>(c->servers, request);
  // CL_INVALID_VALUE if the length-byte memory pointed to by il does not
  // contain well-formed intermediate language input that can be consumed by
  // the OpenCL runtime: the native answer (the server creates no object then).
  if (!reply || reply->status != CL_SUCCESS) {
    post_each(c->servers, protocol::release_object{request.id});
    return fail(reply ? reply->status : reply.error());
  }
  // The devices associated with the program object are the devices
  // associated with context.
  auto* p = make_program(c, request.id, c->devices);
  p->il = std::move(request.il);
  return static_cast<cl_program>(p);
}

}  // namespace ferry::client
