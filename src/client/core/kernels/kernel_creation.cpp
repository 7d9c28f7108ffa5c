#include "client/core/kernels/kernel_creation.hpp"

#include <mutex>

#include "client/core/kernels/kernel_arguments.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client {

namespace {

// More arguments than any device accepts; a larger count from the wire is refused.
constexpr uint32_t max_kernel_args = 1u << 16;

// The kernel object for one kernel the servers of `devices` created (API
// count 1). It holds the program (internal reference + attached count;
// objects.cpp destroy() undoes both).
kernel* make_kernel(cl_program p, const std::vector<cl_device_id>& devices, const protocol::kernel_desc& desc) {
  auto* k = new kernel();
  k->program = p;
  retain_internal(p);
  p->attached_kernels.fetch_add(1);
  k->devices = devices;
  k->servers = servers_of(devices);
  k->id = desc.id;
  k->name = desc.name;
  k->num_args = desc.num_args;
  try {
    k->args.resize(desc.num_args);
    k->validated.assign(desc.num_args, 0);
  } catch (...) {
    release_api(k);  // tells the server too
    throw;
  }
  return k;
}

// Releases kernels the client will not use on `servers` (ids a server never
// made are ignored there).
void release_kernels(const std::vector<server*>& servers, const std::vector<protocol::object_id>& ids) {
  for (protocol::object_id id : ids) post_each(servers, protocol::release_object{id});
}

}  // namespace

std::vector<cl_device_id> built_devices_of(program* p) {
  std::lock_guard lock(p->build_mutex);
  return p->built_devices;
}

result<cl_kernel> create_kernel_on_servers(cl_program p, const std::string& name,
                                           const std::vector<cl_device_id>& devices) {
  protocol::create_kernel request;
  request.id = next_object_id();
  request.program = p->id;
  request.name = name;
  const std::vector<server*> servers = servers_of(devices);
  auto reply = call_each<protocol::kernel_reply>(servers, request);
  // CL_INVALID_KERNEL_DEFINITION if the function definition for __kernel
  // function given by kernel_name such as the number of arguments, the
  // argument types are not the same for all devices for which the program
  // executable has been built: the native answer, like any other failure.
  if (!reply || reply->status != CL_SUCCESS || reply->kernels.size() != 1 ||
      reply->kernels[0].num_args > max_kernel_args) {
    release_kernels(servers, {request.id});
    if (!reply) return fail(reply.error());
    return fail(reply->status != CL_SUCCESS ? reply->status : CL_OUT_OF_RESOURCES);
  }
  return static_cast<cl_kernel>(make_kernel(p, devices, reply->kernels[0]));
}

cl_int create_program_kernels(cl_program p, const std::vector<cl_device_id>& devices, size_t count, cl_uint room,
                              cl_kernel* kernels, cl_uint* made) {
  // One id per kernel, in the order of the program's kernel names.
  protocol::create_kernels_in_program request;
  request.program = p->id;
  request.ids.resize(count);
  for (auto& id : request.ids) id = next_object_id();
  const std::vector<server*> servers = servers_of(devices);
  auto reply = call_each<protocol::kernel_reply>(servers, request);
  if (!reply || reply->status != CL_SUCCESS) {
    release_kernels(servers, request.ids);
    return reply ? reply->status : reply.error();
  }
  bool all_usable = reply->kernels.size() <= room;
  for (const auto& desc : reply->kernels) all_usable &= desc.num_args <= max_kernel_args;
  if (!all_usable) {
    release_kernels(servers, request.ids);
    return CL_OUT_OF_RESOURCES;
  }
  for (size_t i = 0; i < reply->kernels.size(); ++i) kernels[i] = make_kernel(p, devices, reply->kernels[i]);
  if (made) *made = static_cast<cl_uint>(reply->kernels.size());
  return CL_SUCCESS;
}

result<cl_kernel> copy_kernel(cl_kernel source) {
  auto made = create_kernel_on_servers(source->program, source->name, source->devices);
  if (!made) return made;
  kernel* k = *made;
  // The exec info too, which lives on the server's kernel.
  if (source->has_svm_pointers) {
    if (cl_int code = send_svm_pointers(k, source->svm_pointers); code != CL_SUCCESS) {
      release_api(k);
      return fail(code);
    }
  }
  // An exact copy: the arguments (sent whole with every launch, so the
  // server's fresh kernel needs none of them now), the shapes the server
  // already accepted and the cached work-group limits.
  k->args = source->args;
  k->validated = source->validated;
  std::lock_guard lock(source->limits_mutex);
  k->limits = source->limits;
  return made;
}

}  // namespace ferry::client
