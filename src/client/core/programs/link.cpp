#include "client/core/programs/link.hpp"

#include <mutex>
#include <optional>

#include "client/core/programs/program_creation.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client {

cl_int link_programs(cl_context c, std::vector<cl_device_id> devices, std::string options,
                     const std::vector<cl_program>& inputs, program_notify notify, void* user_data, cl_program& out) {
  protocol::link_program request;
  request.options = std::move(options);
  request.id = next_object_id();
  request.context = c->id;
  request.inputs.reserve(inputs.size());
  for (cl_program input : inputs) request.inputs.push_back(input->id);

  // CL_INVALID_LINKER_OPTIONS, CL_LINKER_NOT_AVAILABLE,
  // CL_LINK_PROGRAM_FAILURE and the device rules are the native answer. The
  // first server's reply stands for all, unless a later one made no program.
  const std::vector<server*> servers = servers_of(devices);
  std::optional<protocol::build_reply> reply;
  for (server* s : servers) {
    request.devices = device_indices_on(*s, devices);
    auto answer = s->link->call<protocol::build_reply>(request);
    if (!answer || !answer->created) {
      post_each(servers, protocol::release_object{request.id});
      if (!answer) return answer.error();
      return answer->status != CL_SUCCESS ? answer->status : CL_OUT_OF_RESOURCES;
    }
    if (!reply || (reply->status == CL_SUCCESS && answer->status != CL_SUCCESS)) reply = std::move(*answer);
  }
  auto* p = make_program(c, request.id, std::move(devices));
  {
    std::lock_guard lock(p->build_mutex);
    if (reply->status == CL_SUCCESS) {
      p->built_devices = p->devices;
      p->kernel_names = std::move(reply->kernel_names);
    }
  }
  out = p;
  if (notify) notify(p, user_data);
  return reply->status;
}

}  // namespace ferry::client
