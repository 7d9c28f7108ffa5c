// Kernel entry points: creation, arguments, queries, and the launch.
//
// Arguments live on the client and travel whole with every launch. The
// client cannot see argument types, so the first time a kernel sees an
// argument shape (index, kind, size) the server replays the call on the
// native kernel and answers its exact clSetKernelArg code; accepted shapes
// are cached in the kernel, so steady-state clSetKernelArg and every launch
// after the first on a device are free of round trips.

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/core/command.hpp"
#include "client/core/servers/platform.hpp"
#include "client/core/servers/server.hpp"
#include "client/core/memory/svm_registry.hpp"
#include "common/log.hpp"

namespace ferry::client::api {

namespace {

using arg_kind = protocol::kernel_arg_kind;

// More arguments than any device accepts; a larger count from the wire is refused.
constexpr uint32_t max_kernel_args = 1u << 16;
// Room left in a frame for the fields around an argument's bytes.
constexpr size_t frame_overhead = 4096;

bool contains(const std::vector<cl_device_id>& devices, cl_device_id d) {
  // Compares handles only: a stale or foreign handle is never dereferenced.
  return std::find(devices.begin(), devices.end(), d) != devices.end();
}

// One clGet*Info question the client cannot answer itself.
// Device-specific questions go to the device's server.
result<protocol::bytes> remote_query(const kernel* k, protocol::query_kind kind, const device* d, cl_uint param,
                                     uint32_t index = 0, protocol::bytes input = {}) {
  connection* link = d ? d->host->link.get() : link_of(k);
  if (link == nullptr) return fail(CL_DEVICE_NOT_AVAILABLE);
  protocol::query request;
  request.kind = kind;
  request.object = k->id;
  request.device = d ? d->index : 0;
  request.param = param;
  request.index = index;
  request.input = std::move(input);
  auto reply = link->call<protocol::query_reply>(request);
  if (!reply) return fail(reply.error());
  if (reply->status != CL_SUCCESS) return fail(reply->status);
  return std::move(reply->value);
}

// ---------------------------------------------------------------------------
// Creation

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

// The program's devices with an executable, now.
std::vector<cl_device_id> built_devices_of(program* p) {
  std::lock_guard lock(p->build_mutex);
  return p->built_devices;
}

// Creates kernel `name` of `p` on the servers of `devices`, those with an
// executable (a round trip each: the reply says how many arguments it has).
// A server where the program was not built has no kernel to make.
result<cl_kernel> create_remote_kernel(cl_program p, const std::string& name,
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

result<cl_kernel> create_kernel(cl_program p, const char* name) {
  // CL_INVALID_PROGRAM if program is not a valid program object.
  FERRY_CHECK_HANDLE_R(p);
  {
    std::lock_guard lock(p->build_mutex);
    // CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built
    // executable for program.
    if (!p->built()) return fail(explain(CL_INVALID_PROGRAM_EXECUTABLE, "program %" PRIu64 " is not built", p->id));
    // CL_INVALID_VALUE if kernel_name is NULL.
    if (name == nullptr) return fail(CL_INVALID_VALUE);
    // CL_INVALID_KERNEL_NAME if kernel_name is not found in program.
    if (std::find(p->kernel_names.begin(), p->kernel_names.end(), name) == p->kernel_names.end())
      return fail(explain(CL_INVALID_KERNEL_NAME, "no kernel \"%s\" in program %" PRIu64, name, p->id));
  }
  return create_remote_kernel(p, name, built_devices_of(p));
}

cl_int create_kernels_in_program(cl_program p, cl_uint num_kernels, cl_kernel* kernels, cl_uint* num_kernels_ret) {
  // CL_INVALID_PROGRAM if program is not a valid program object.
  FERRY_CHECK_HANDLE(p);
  size_t count = 0;
  std::vector<cl_device_id> devices;
  {
    std::lock_guard lock(p->build_mutex);
    // CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built
    // executable for any device in program.
    if (!p->built()) return explain(CL_INVALID_PROGRAM_EXECUTABLE, "program %" PRIu64 " has no built executable", p->id);
    count = p->kernel_names.size();
    devices = p->built_devices;
  }
  // CL_INVALID_VALUE if kernels is not NULL and num_kernels is less than the
  // number of kernels in program.
  if (kernels != nullptr && num_kernels < count) return CL_INVALID_VALUE;
  if (kernels == nullptr || count == 0) {
    if (num_kernels_ret) *num_kernels_ret = static_cast<cl_uint>(count);
    return CL_SUCCESS;
  }

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
  bool all_usable = reply->kernels.size() <= num_kernels;
  for (const auto& desc : reply->kernels) all_usable &= desc.num_args <= max_kernel_args;
  if (!all_usable) {
    release_kernels(servers, request.ids);
    return CL_OUT_OF_RESOURCES;
  }
  for (size_t i = 0; i < reply->kernels.size(); ++i) kernels[i] = make_kernel(p, devices, reply->kernels[i]);
  if (num_kernels_ret) *num_kernels_ret = static_cast<cl_uint>(reply->kernels.size());
  return CL_SUCCESS;
}

// CL_KERNEL_EXEC_INFO_SVM_PTRS on the server's kernel `k`: its native call's answer.
cl_int send_svm_pointers(kernel* k, std::vector<protocol::svm_pointer> pointers) {
  protocol::set_kernel_exec_info request;
  request.kernel = k->id;
  request.pointers = std::move(pointers);
  auto reply = call_each<protocol::status_reply>(k->servers, request);
  if (!reply) return reply.error();
  if (reply->status != CL_SUCCESS) return reply->status;
  k->svm_pointers = std::move(request.pointers);
  k->has_svm_pointers = true;
  return CL_SUCCESS;
}

result<cl_kernel> clone_kernel(cl_kernel source) {
  // CL_INVALID_KERNEL if kernel is not a valid kernel object.
  FERRY_CHECK_HANDLE_R(source);
  auto made = create_remote_kernel(source->program, source->name, source->devices);
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

// ---------------------------------------------------------------------------
// Arguments

constexpr uint64_t shape_size_mask = (uint64_t{1} << 56) - 1;

// Argument shapes as cached in kernel->validated: (kind << 56 | size), with
// one kind the wire does not have (below). Zero (value kind, size 0) is a
// shape no device accepts, so it also means "nothing validated yet", and a
// value of size 0 is never taken for a known shape.
uint64_t shape_of(uint8_t kind, size_t size) {
  return (static_cast<uint64_t>(kind) << 56) | (static_cast<uint64_t>(size) & shape_size_mask);
}
uint64_t shape_of(arg_kind kind, size_t size) { return shape_of(static_cast<uint8_t>(kind), size); }

// The cache kind of a NULL handle (8 zero bytes sent as a value): every
// buffer argument and every 8-byte scalar accepts it, so unlike a value
// shape it says nothing about the argument's type.
constexpr uint8_t zero_handle_kind = 0x7f;

enum class handle_kind { foreign, memory, sampler, other_object };

// What 8 argument bytes name. They may be any scalar (a long, a double), so
// they count as an object only if the registry of live objects knows them.
handle_kind classify_handle(cl_mem h) {
  if (is_live_memory(h)) return handle_kind::memory;
  if (is_live_sampler(h)) return handle_kind::sampler;
  if (is_live_object(h)) return handle_kind::other_object;
  return handle_kind::foreign;
}

cl_int set_kernel_arg(cl_kernel k, cl_uint index, size_t size, const void* value) {
  // CL_INVALID_KERNEL if kernel is not a valid kernel object.
  FERRY_CHECK_HANDLE(k);
  // CL_INVALID_ARG_INDEX if arg_index is not a valid argument index.
  if (index >= k->num_args) return CL_INVALID_ARG_INDEX;
  const uint64_t known = k->validated[index];
  const uint64_t known_value = shape_of(arg_kind::value, sizeof(cl_mem));
  const uint64_t known_mem = shape_of(arg_kind::mem, sizeof(cl_mem));
  const uint64_t known_sampler = shape_of(arg_kind::sampler, sizeof(cl_sampler));

  // Each kind is one native call on the server, chosen so that the native
  // code is exact whatever the argument's declared type:
  //   local, null_mem: (size, NULL): a local size, or a NULL buffer
  //   mem:             (sizeof(cl_mem), the server's own handle)
  //   value:           (size, the bytes)
  // A NULL handle travels as value bytes (zeros), not as null_mem: natively
  // those bytes are a NULL buffer for a buffer argument and a zero for a
  // scalar one, while (8, NULL) would be refused for the scalar.
  arg_kind kind = arg_kind::value;
  uint64_t shape = 0;
  bool accepted = false;  // certain to be accepted without asking
  cl_mem m = nullptr;
  cl_sampler smp = nullptr;
  if (value == nullptr) {
    kind = size == sizeof(cl_mem) ? arg_kind::null_mem : arg_kind::local;
    shape = shape_of(kind, size);
  } else if (size == sizeof(cl_mem)) {
    cl_mem h;
    std::memcpy(&h, value, sizeof h);  // arg_value need not be aligned
    if (h == nullptr) {
      shape = shape_of(zero_handle_kind, size);
      // An argument that took a buffer or 8 data bytes takes 8 zero bytes.
      accepted = known == known_mem || known == known_value;
    } else if (known == known_value) {
      shape = known;  // a by-value argument: its bytes are data, never a handle
    } else if (known == known_mem) {
      // A memory-object argument: past a cheap plausibility check the handle
      // is read as any implementation reads it (no system call here: this is
      // the steady state of buffer arguments).
      // CL_INVALID_MEM_OBJECT for an argument declared to be a memory object
      // when the specified arg_value is not a valid memory object.
      if (!is_live_memory(h)) return CL_INVALID_MEM_OBJECT;
      kind = arg_kind::mem;
      m = h;
      shape = known;
    } else if (known == known_sampler) {
      // CL_INVALID_SAMPLER for an argument declared to be of type sampler_t
      // when the specified arg_value is not a valid sampler object.
      if (!is_live_sampler(h)) return CL_INVALID_SAMPLER;
      kind = arg_kind::sampler;
      smp = reinterpret_cast<cl_sampler>(h);
      shape = known;
    } else {
      switch (classify_handle(h)) {
        case handle_kind::memory:
          kind = arg_kind::mem;
          m = h;
          break;
        case handle_kind::sampler:
          kind = arg_kind::sampler;
          smp = reinterpret_cast<cl_sampler>(h);
          break;
        // CL_INVALID_MEM_OBJECT for an argument declared to be a memory
        // object when the specified arg_value is not a valid memory object
        // (a queue or program handle is never meant as data).
        case handle_kind::other_object: return CL_INVALID_MEM_OBJECT;
        case handle_kind::foreign: break;
      }
      shape = shape_of(kind, size);
    }
  } else {
    // CL_INVALID_ARG_SIZE if arg_size does not match the size of the data
    // type for an argument that is not a memory object: no device takes a
    // by-value argument this large (CL_DEVICE_MAX_PARAMETER_SIZE).
    if (size > (1u << 20) - frame_overhead) return CL_INVALID_ARG_SIZE;
    shape = shape_of(kind, size);
  }

  auto& arg = k->args[index];
  if ((shape != known || shape == 0) && !accepted) {
    // CL_INVALID_ARG_VALUE, CL_INVALID_MEM_OBJECT, CL_INVALID_SAMPLER,
    // CL_INVALID_ARG_SIZE, ...: the native kernel's answer for this shape.
    protocol::check_kernel_arg request;
    request.kernel = k->id;
    request.arg.index = index;
    request.arg.kind = kind;
    request.arg.size = size;
    // The shape is checked with zeros: the bytes are read only once the
    // argument proved to take them (for a __local argument arg_value is
    // merely tested for NULL, and may point at fewer than `size` bytes).
    if (kind == arg_kind::value) request.arg.value.assign(size, 0);
    if (m) request.arg.object = m->id;
    if (smp) request.arg.object = smp->id;
    auto reply = link_of(k)->call<protocol::status_reply>(request);
    if (!reply) return reply.error();
    if (reply->status != CL_SUCCESS) return reply->status;
    k->validated[index] = shape;
    arg.wire = std::move(request.arg);
    if (kind == arg_kind::value) {
      auto* bytes = static_cast<const uint8_t*>(value);
      arg.wire.value.assign(bytes, bytes + size);
    }
  } else {
    // Steady state: rewrite the cached argument in place (no allocation once
    // its bytes have reached their size).
    arg.wire.index = index;
    arg.wire.kind = kind;
    arg.wire.size = size;
    if (kind == arg_kind::value) {
      auto* bytes = static_cast<const uint8_t*>(value);
      arg.wire.value.assign(bytes, bytes + size);
    } else {
      arg.wire.value.clear();
    }
    arg.wire.object = m ? m->id : smp ? smp->id : 0;
  }
  arg.mem = m;
  arg.set = true;
  return CL_SUCCESS;
}

cl_int set_kernel_arg_svm_pointer(cl_kernel k, cl_uint index, const void* value) {
  // CL_INVALID_KERNEL if kernel is not a valid kernel object.
  FERRY_CHECK_HANDLE(k);
  context* c = k->program->context;
  // CL_INVALID_OPERATION if no devices in the context associated with kernel support SVM.
  if (!supports_svm(c)) return explain(CL_INVALID_OPERATION, "no device of the context offers SVM");
  // CL_INVALID_ARG_INDEX if arg_index is not a valid argument index.
  if (index >= k->num_args) return CL_INVALID_ARG_INDEX;
  // The pointer travels as (allocation, offset); the server passes the
  // address it stands for in the native allocation. NULL stays NULL.
  protocol::kernel_arg wire;
  wire.index = index;
  wire.kind = arg_kind::svm;
  if (value != nullptr) {
    // CL_INVALID_ARG_VALUE if arg_value specified is not a valid value:
    // (Ferry) only a pointer into an SVM allocation of the context can be
    // translated.
    svm_ref allocation = find_svm(value, c);
    if (!allocation) return CL_INVALID_ARG_VALUE;
    wire.object = allocation->id;
    wire.size = allocation->offset_of(value);
  }
  // Every SVM pointer has the same shape; the first one set on an argument
  // asks the native kernel whether it takes one (CL_INVALID_ARG_VALUE for
  // an argument that is no __global or __constant pointer).
  const uint64_t shape = shape_of(arg_kind::svm, 0);
  if (k->validated[index] != shape) {
    protocol::check_kernel_arg request;
    request.kernel = k->id;
    request.arg = wire;
    auto reply = link_of(k)->call<protocol::status_reply>(request);
    if (!reply) return reply.error();
    if (reply->status != CL_SUCCESS) return reply->status;
    k->validated[index] = shape;
  }
  auto& arg = k->args[index];
  arg.wire = std::move(wire);
  arg.mem = nullptr;
  arg.set = true;
  return CL_SUCCESS;
}

cl_int set_kernel_exec_info(cl_kernel k, cl_kernel_exec_info param, size_t size, const void* value) {
  // CL_INVALID_KERNEL if kernel is a not a valid kernel object.
  FERRY_CHECK_HANDLE(k);
  context* c = k->program->context;
  switch (param) {
    case CL_KERNEL_EXEC_INFO_SVM_PTRS: {
      // CL_INVALID_VALUE if param_value is NULL or if the size specified by
      // param_value_size is not valid.
      if (value == nullptr || size % sizeof(void*) != 0) return CL_INVALID_VALUE;
      // CL_INVALID_OPERATION if no devices in the context associated with kernel support SVM.
      if (!supports_svm(c)) return explain(CL_INVALID_OPERATION, "no device of the context offers SVM");
      // Far more pointers than one message carries: no kernel uses as many.
      const size_t count = size / sizeof(void*);
      if (count > ((1u << 20) - frame_overhead) / sizeof(protocol::svm_pointer)) return CL_OUT_OF_RESOURCES;
      std::vector<protocol::svm_pointer> pointers(count);
      for (size_t i = 0; i < count; ++i) {
        const void* pointer;
        std::memcpy(&pointer, static_cast<const uint8_t*>(value) + i * sizeof(void*), sizeof pointer);
        // (Ferry) CL_INVALID_VALUE for a pointer in no SVM allocation of the
        // context: it has no counterpart on the server.
        svm_ref allocation = find_svm(pointer, c);
        if (!allocation) return CL_INVALID_VALUE;
        // (Ferry) CL_INVALID_OPERATION when the kernel would follow a pointer
        // into an allocation whose host block is not at the server's address:
        // such a pointer, stored in SVM memory by the host, holds an address
        // of this process, which means nothing (or another session's memory)
        // on the server. Refused here rather than letting the kernel fault.
        if (allocation->placement != svm_placement::server_address) {
          FERRY_WARN("svm",
                     "clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_SVM_PTRS): SVM allocation %llu has a different "
                     "address on the client and on its server, so a kernel cannot follow pointers into it "
                     "(docs/extensions.md, SVM)",
                     static_cast<unsigned long long>(allocation->id));
          return explain(CL_INVALID_OPERATION, "SVM allocation %" PRIu64 " is at another address on its server",
                         allocation->id);
        }
        pointers[i] = {allocation->id, allocation->offset_of(pointer)};
      }
      return send_svm_pointers(k, std::move(pointers));
    }
    case CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM: {
      // CL_INVALID_VALUE if param_value is NULL or if the size specified by
      // param_value_size is not valid.
      if (value == nullptr || size != sizeof(cl_bool)) return CL_INVALID_VALUE;
      cl_bool enable;
      std::memcpy(&enable, value, sizeof enable);
      // CL_INVALID_OPERATION if param_name is
      // CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM and param_value is CL_TRUE
      // but no devices in context associated with kernel support fine-grain
      // system SVM allocations (no Ferry device does).
      if (enable) return explain(CL_INVALID_OPERATION, "no Ferry device offers fine-grain system SVM");
      // CL_INVALID_OPERATION if no devices in the context associated with kernel support SVM.
      if (!supports_svm(c)) return explain(CL_INVALID_OPERATION, "no device of the context offers SVM");
      return CL_SUCCESS;  // the native default already
    }
    // CL_INVALID_VALUE if param_name is not valid.
    default: return CL_INVALID_VALUE;
  }
}

// ---------------------------------------------------------------------------
// Queries

// CL_KERNEL_WORK_GROUP_SIZE and CL_KERNEL_COMPILE_WORK_GROUP_SIZE of `k` on
// `d`: asked once per device, then cached in the kernel.
result<_cl_kernel::work_group_limits> work_group_limits_for(kernel* k, cl_device_id d) {
  {
    std::lock_guard lock(k->limits_mutex);
    if (auto it = k->limits.find(d); it != k->limits.end()) return it->second;
  }
  // Asked outside the lock: two threads may both ask once, harmlessly.
  _cl_kernel::work_group_limits limits;
  auto size = remote_query(k, protocol::query_kind::kernel_work_group_info, d, CL_KERNEL_WORK_GROUP_SIZE);
  if (!size) return fail(size.error());
  auto compile =
      remote_query(k, protocol::query_kind::kernel_work_group_info, d, CL_KERNEL_COMPILE_WORK_GROUP_SIZE);
  if (!compile) return fail(compile.error());
  if (size->size() != sizeof(size_t) || compile->size() != sizeof(size_t) * 3) return fail(CL_OUT_OF_RESOURCES);
  std::memcpy(&limits.work_group_size, size->data(), sizeof(size_t));
  std::memcpy(limits.compile_size.data(), compile->data(), sizeof(size_t) * 3);
  std::lock_guard lock(k->limits_mutex);
  k->limits.emplace(d, limits);
  return limits;
}

cl_int get_kernel_info(cl_kernel k, cl_kernel_info param, size_t size, void* value, size_t* size_ret) {
  // CL_INVALID_KERNEL if kernel is a not a valid kernel object.
  FERRY_CHECK_HANDLE(k);
  info_out out(size, value, size_ret);
  switch (param) {
    case CL_KERNEL_FUNCTION_NAME: return out.string(k->name);
    case CL_KERNEL_NUM_ARGS: return out.value(k->num_args);
    case CL_KERNEL_REFERENCE_COUNT: return out.value(cl_uint{k->api_refs.load()});
    case CL_KERNEL_CONTEXT: return out.value(k->program->context);
    case CL_KERNEL_PROGRAM: return out.value(k->program);
    default: {
      // CL_KERNEL_ATTRIBUTES and extension queries: the native answer
      // (CL_INVALID_VALUE if param_name is not valid comes from there too).
      auto answer = remote_query(k, protocol::query_kind::kernel_info, nullptr, param);
      if (!answer) return answer.error();
      return out.bytes(*answer);
    }
  }
}

cl_int get_kernel_work_group_info(cl_kernel k, cl_device_id d, cl_kernel_work_group_info param, size_t size,
                                  void* value, size_t* size_ret) {
  // CL_INVALID_KERNEL if kernel is a not a valid kernel object.
  FERRY_CHECK_HANDLE(k);
  // The devices associated with the kernel are those its program was built
  // for when the kernel was made; on another device it has no code to ask
  // about.
  const auto& devices = k->devices;
  // CL_INVALID_DEVICE if device is not in the list of devices associated with
  // kernel or if device is NULL but there is more than one device associated
  // with kernel.
  if (d == nullptr) {
    if (devices.size() != 1)
      return explain(CL_INVALID_DEVICE, "device is NULL and kernel \"%s\" has %zu devices", k->name.c_str(),
                     devices.size());
    d = devices[0];
  } else if (!contains(devices, d)) {
    return explain(CL_INVALID_DEVICE, "kernel \"%s\" has no code for that device (its program was not built for it)",
                   k->name.c_str());
  }
  info_out out(size, value, size_ret);
  switch (param) {
    case CL_KERNEL_WORK_GROUP_SIZE:
    case CL_KERNEL_COMPILE_WORK_GROUP_SIZE: {
      auto limits = work_group_limits_for(k, d);
      if (!limits) return limits.error();
      if (param == CL_KERNEL_WORK_GROUP_SIZE) return out.value(limits->work_group_size);
      return out.put(limits->compile_size.data(), sizeof(size_t) * 3);
    }
    case CL_KERNEL_GLOBAL_WORK_SIZE:
      // CL_INVALID_VALUE if param_name is CL_KERNEL_GLOBAL_WORK_SIZE and
      // device is not a custom device and kernel is not a built-in kernel.
      if (!(d->type & CL_DEVICE_TYPE_CUSTOM)) return CL_INVALID_VALUE;
      [[fallthrough]];
    default: {
      // CL_INVALID_VALUE if param_name is not valid: the native answer.
      auto answer = remote_query(k, protocol::query_kind::kernel_work_group_info, d, param);
      if (!answer) return answer.error();
      return out.bytes(*answer);
    }
  }
}

cl_int get_kernel_sub_group_info(cl_kernel k, cl_device_id d, cl_kernel_sub_group_info param, size_t input_size,
                                 const void* input, size_t size, void* value, size_t* size_ret) {
  // CL_INVALID_KERNEL if kernel is a not a valid kernel object.
  FERRY_CHECK_HANDLE(k);
  // The devices associated with the kernel are those its program was built
  // for when the kernel was made; on another device it has no code to ask
  // about.
  const auto& devices = k->devices;
  // CL_INVALID_DEVICE if device is not in the list of devices associated with
  // kernel or if device is NULL but there is more than one device associated
  // with kernel.
  if (d == nullptr) {
    if (devices.size() != 1)
      return explain(CL_INVALID_DEVICE, "device is NULL and kernel \"%s\" has %zu devices", k->name.c_str(),
                     devices.size());
    d = devices[0];
  } else if (!contains(devices, d)) {
    return explain(CL_INVALID_DEVICE, "kernel \"%s\" has no code for that device (its program was not built for it)",
                   k->name.c_str());
  }
  // A too large input cannot be a valid one (at most three sizes, or a count).
  if (input_size > 64) return CL_INVALID_VALUE;
  protocol::bytes in;
  if (input && input_size) {
    auto* bytes = static_cast<const uint8_t*>(input);
    in.assign(bytes, bytes + input_size);
  } else if (input_size) {
    in.resize(input_size);  // NULL with a size: the native call judges it (CL_INVALID_VALUE)
  }
  // CL_INVALID_OPERATION if the device does not support sub-groups, and
  // CL_INVALID_VALUE for a bad param or input: the native answers.
  auto answer = remote_query(k, protocol::query_kind::kernel_sub_group_info, d, param, 0, std::move(in));
  if (!answer) return answer.error();
  info_out out(size, value, size_ret);
  return out.bytes(*answer);
}

cl_int get_kernel_arg_info(cl_kernel k, cl_uint index, cl_kernel_arg_info param, size_t size, void* value,
                           size_t* size_ret) {
  // CL_INVALID_KERNEL if kernel is a not a valid kernel object.
  FERRY_CHECK_HANDLE(k);
  // CL_INVALID_ARG_INDEX if arg_indx is not a valid argument index.
  if (index >= k->num_args) return CL_INVALID_ARG_INDEX;
  // CL_INVALID_VALUE if param_name is not valid, and
  // CL_KERNEL_ARG_INFO_NOT_AVAILABLE if the argument information is not
  // available for kernel: the native answer.
  auto answer = remote_query(k, protocol::query_kind::kernel_arg_info, nullptr, param, index);
  if (!answer) return answer.error();
  info_out out(size, value, size_ret);
  return out.bytes(*answer);
}

// ---------------------------------------------------------------------------
// Launch

// The device's OpenCL version, from CL_DEVICE_VERSION ("OpenCL 3.0 ...").
bool device_version_at_least(const device& d, int major, int minor) {
  auto it = d.info.find(CL_DEVICE_VERSION);
  if (it == d.info.end()) return true;
  std::string text(it->second.begin(), it->second.end());
  int have_major = 0, have_minor = 0;
  if (std::sscanf(text.c_str(), "OpenCL %d.%d", &have_major, &have_minor) != 2) return true;
  return have_major > major || (have_major == major && have_minor >= minor);
}

// Work-groups must be uniform unless the device supports non-uniform ones
// (and then only programs built for OpenCL C 2.0 or later may use them,
// which only the native implementation can judge). PoCL's CPU devices
// report OpenCL C 1.2 and no non-uniform support.
bool uniform_work_groups_required(const device& d) {
  return !device_info_as<cl_bool>(d, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT);
}

// The launch message, reused by each thread so that steady-state launches
// do not allocate (argument bytes keep their capacity).
protocol::enqueue_ndrange& launch_message() {
  thread_local protocol::enqueue_ndrange message;
  return message;
}

cl_int enqueue_ndrange(cl_command_queue q, cl_kernel k, cl_uint work_dim, const size_t* offset,
                       const size_t* global, const size_t* local, cl_uint count, const cl_event* list,
                       cl_event* event_out, cl_command_type type) {
  // CL_INVALID_COMMAND_QUEUE if command_queue is not a valid host command-queue.
  FERRY_CHECK_HANDLE(q);
  // CL_INVALID_KERNEL if kernel is not a valid kernel object.
  FERRY_CHECK_HANDLE(k);
  const program* p = k->program;
  device* d = q->device;

  // CL_INVALID_CONTEXT if context associated with command_queue and kernel
  // are not the same or if the context associated with command_queue and
  // events in event_wait_list are not the same.
  if (p->context != q->context) return CL_INVALID_CONTEXT;
  if (list) {
    for (cl_uint i = 0; i < count; ++i) {
      cl_event e = list[i];
      if (is_valid(e) && e->context != q->context) return CL_INVALID_CONTEXT;
    }
  }
  // ... and (Ferry) a memory object set as an argument belongs to another
  // context. The same pass notes the later argument clauses.
  bool unset = false;
  bool misaligned = false;
  const size_t align = std::max<size_t>(1, d->mem_base_addr_align_bits / 8);
  for (const auto& arg : k->args) {
    if (!arg.set) {
      unset = true;
    } else if (arg.mem) {
      if (arg.mem->context != q->context) return CL_INVALID_CONTEXT;
      if (arg.mem->parent && arg.mem->origin % align != 0) misaligned = true;
    }
  }
  // CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built program
  // executable available for device associated with command_queue. A
  // program with kernels cannot be rebuilt, so the kernel's devices are
  // still those with an executable.
  if (!contains(k->devices, d))
    return explain(CL_INVALID_PROGRAM_EXECUTABLE, "program %" PRIu64 " of kernel \"%s\" is not built for the queue's device",
                   p->id, k->name.c_str());
  // CL_INVALID_KERNEL_ARGS if the kernel argument values have not been specified.
  if (unset) return CL_INVALID_KERNEL_ARGS;
  // CL_INVALID_WORK_DIMENSION if work_dim is not a valid value (i.e. a value
  // between 1 and CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS). The protocol carries 3.
  if (work_dim < 1 || work_dim > std::min<cl_uint>(d->max_work_item_dimensions, 3)) return CL_INVALID_WORK_DIMENSION;

  // CL_INVALID_GLOBAL_WORK_SIZE if global_work_size is NULL or if any of the
  // values specified in global_work_size[0], ... global_work_size[work_dim - 1]
  // are 0. Returning this error code under these circumstances is deprecated
  // by version 2.1: from then on the command trivially succeeds after its
  // wait list, like a marker.
  bool empty = global == nullptr;
  for (cl_uint i = 0; !empty && i < work_dim; ++i) empty = global[i] == 0;
  if (empty && !device_version_at_least(*d, 2, 1)) return CL_INVALID_GLOBAL_WORK_SIZE;
  if (global) {
    uint64_t any = 0;
    for (cl_uint i = 0; i < work_dim; ++i) any |= global[i] | (offset ? offset[i] : 0);
    if (any >> 31) {  // only large values can pass a device's size_t
      cl_uint bits = device_info_as<cl_uint>(*d, CL_DEVICE_ADDRESS_BITS);
      uint64_t max = bits == 0 || bits >= 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
      // CL_INVALID_GLOBAL_WORK_SIZE if any of the values specified in
      // global_work_size[0], ... global_work_size[work_dim - 1] exceed the
      // maximum value representable by size_t on the device on which the
      // kernel-instance will be enqueued.
      for (cl_uint i = 0; i < work_dim; ++i)
        if (global[i] > max) return CL_INVALID_GLOBAL_WORK_SIZE;
      // CL_INVALID_GLOBAL_OFFSET if the value specified in global_work_size +
      // the corresponding values in global_work_offset for any dimensions is
      // greater than the maximum value representable by size t on the device
      // on which the kernel-instance will be enqueued.
      for (cl_uint i = 0; i < work_dim; ++i) {
        uint64_t o = offset ? offset[i] : 0;
        if (o > max || global[i] > max - o) return CL_INVALID_GLOBAL_OFFSET;
      }
    }
  }

  auto limits = work_group_limits_for(k, d);
  if (!limits) return limits.error();
  const auto& required = limits->compile_size;
  const bool has_required = required[0] != 0;
  protocol::size3 group{1, 1, 1};
  bool has_local = false;
  if (local) {
    // CL_INVALID_WORK_GROUP_SIZE if local_work_size is specified and does not
    // match the required work-group size for kernel in the program source.
    if (has_required) {
      for (cl_uint i = 0; i < 3; ++i)
        if ((i < work_dim ? local[i] : 1) != required[i]) return CL_INVALID_WORK_GROUP_SIZE;
    }
    // CL_INVALID_WORK_GROUP_SIZE if local_work_size is specified and the total
    // number of work-items in the work-group computed as local_work_size[0] x
    // ... local_work_size[work_dim - 1] is greater than the value specified by
    // CL_KERNEL_WORK_GROUP_SIZE (a zero size is no work-group at all).
    uint64_t items = 1;
    for (cl_uint i = 0; i < work_dim; ++i) {
      if (local[i] == 0 || local[i] > limits->work_group_size) return CL_INVALID_WORK_GROUP_SIZE;
      items *= local[i];  // each factor is at most the limit, so this cannot wrap before the check
      if (items > limits->work_group_size || items > d->max_work_group_size) return CL_INVALID_WORK_GROUP_SIZE;
    }
    // CL_INVALID_WORK_GROUP_SIZE if the work-group size must be uniform and
    // the local_work_size is not NULL, is not equal to the required
    // work-group size specified in the kernel source, or the global_work_size
    // is not evenly divisible by the local_work_size.
    if (global) {
      for (cl_uint i = 0; i < work_dim; ++i)
        if (global[i] % local[i] != 0 && uniform_work_groups_required(*d)) return CL_INVALID_WORK_GROUP_SIZE;
    }
    // CL_INVALID_WORK_ITEM_SIZE if the number of work-items specified in any
    // of local_work_size[0], ... local_work_size[work_dim - 1] is greater than
    // the corresponding values specified by CL_DEVICE_MAX_WORK_ITEM_SIZES[0],
    // ..., CL_DEVICE_MAX_WORK_ITEM_SIZES[work_dim - 1].
    for (cl_uint i = 0; i < work_dim; ++i)
      if (local[i] > d->max_work_item_sizes[i]) return CL_INVALID_WORK_ITEM_SIZE;
    for (cl_uint i = 0; i < work_dim; ++i) group[i] = local[i];
    has_local = true;
  } else if (has_required) {
    // With no local size the runtime chooses one, and a kernel with
    // reqd_work_group_size admits only that one: Ferry passes it, so native
    // implementations that refuse a NULL local size here (PoCL) still run it.
    // The only failure left is a global size it cannot divide uniformly.
    for (cl_uint i = work_dim; i < 3; ++i)
      if (required[i] != 1) return CL_INVALID_WORK_GROUP_SIZE;
    if (global) {
      for (cl_uint i = 0; i < work_dim; ++i)
        if (global[i] % required[i] != 0 && uniform_work_groups_required(*d)) return CL_INVALID_WORK_GROUP_SIZE;
    }
    for (cl_uint i = 0; i < work_dim; ++i) group[i] = required[i];
    has_local = true;
  }
  // CL_MISALIGNED_SUB_BUFFER_OFFSET if a sub-buffer object is specified as the
  // value for an argument that is a buffer object and the offset specified
  // when the sub-buffer object is created is not aligned to
  // CL_DEVICE_MEM_BASE_ADDR_ALIGN value for device associated with queue.
  if (misaligned) return CL_MISALIGNED_SUB_BUFFER_OFFSET;
  // CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and
  // num_events_in_wait_list > 0, or event_wait_list is not NULL and
  // num_events_in_wait_list is 0, or if event objects in event_wait_list are
  // not valid events.
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;

  if (empty) {
    // Nothing to run: the command completes after its wait list, as a marker
    // would, and its event still reports the kernel's command type.
    command cmd(q, type, count, list, event_out, blocking::no);
    protocol::enqueue_marker marker;
    marker.header = cmd.header;
    return cmd.submit(marker);
  }

  auto& message = launch_message();
  message.args.resize(k->args.size());
  for (size_t i = 0; i < k->args.size(); ++i) message.args[i] = k->args[i].wire;
  message.kernel = k->id;
  message.work_dim = work_dim;
  for (cl_uint i = 0; i < 3; ++i) {
    bool used = i < work_dim;
    message.offset[i] = used && offset ? offset[i] : 0;
    message.global[i] = used ? global[i] : 1;
    message.local[i] = group[i];
  }
  message.has_local = has_local ? 1 : 0;
  command cmd(q, type, count, list, event_out, blocking::no);
  // A kernel may write any buffer it is given unless the buffer is read-only.
  for (const auto& arg : k->args) {
    if (!arg.mem) continue;
    access how = arg.mem->flags & CL_MEM_READ_ONLY ? access::read : access::write;
    if (cl_int code = cmd.uses(arg.mem, how); code != CL_SUCCESS) return cmd.abandon(code);
  }
  message.header = cmd.header;
  return cmd.submit(message);
}

}  // namespace

// ---------------------------------------------------------------------------
// Entry points

cl_kernel CL_API_CALL clCreateKernel(cl_program program, const char* kernel_name, cl_int* errcode_ret) {
  return guarded_create<cl_kernel>(__func__, errcode_ret, [&] { return create_kernel(program, kernel_name); });
}

cl_int CL_API_CALL clCreateKernelsInProgram(cl_program program, cl_uint num_kernels, cl_kernel* kernels,
                                            cl_uint* num_kernels_ret) {
  return guarded(__func__, [&] { return create_kernels_in_program(program, num_kernels, kernels, num_kernels_ret); });
}

cl_int CL_API_CALL clRetainKernel(cl_kernel kernel) {
  return guarded(__func__, [&]() -> cl_int {
    // CL_INVALID_KERNEL if kernel is not a valid kernel object.
    FERRY_CHECK_HANDLE(kernel);
    retain_api(kernel);
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL clReleaseKernel(cl_kernel kernel) {
  return guarded(__func__, [&]() -> cl_int {
    // CL_INVALID_KERNEL if kernel is not a valid kernel object.
    FERRY_CHECK_HANDLE(kernel);
    release_api(kernel);
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void* arg_value) {
  return guarded(__func__, [&] { return set_kernel_arg(kernel, arg_index, arg_size, arg_value); });
}

cl_int CL_API_CALL clGetKernelInfo(cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size,
                                   void* param_value, size_t* param_value_size_ret) {
  return guarded(__func__, [&] {
    return get_kernel_info(kernel, param_name, param_value_size, param_value, param_value_size_ret);
  });
}

cl_int CL_API_CALL clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
                                            cl_kernel_work_group_info param_name, size_t param_value_size,
                                            void* param_value, size_t* param_value_size_ret) {
  return guarded(__func__, [&] {
    return get_kernel_work_group_info(kernel, device, param_name, param_value_size, param_value,
                                      param_value_size_ret);
  });
}

cl_int CL_API_CALL clGetKernelArgInfo(cl_kernel kernel, cl_uint arg_indx, cl_kernel_arg_info param_name,
                                      size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  return guarded(__func__, [&] {
    return get_kernel_arg_info(kernel, arg_indx, param_name, param_value_size, param_value, param_value_size_ret);
  });
}

cl_int CL_API_CALL clGetKernelSubGroupInfo(cl_kernel kernel, cl_device_id device, cl_kernel_sub_group_info param_name,
                                           size_t input_value_size, const void* input_value, size_t param_value_size,
                                           void* param_value, size_t* param_value_size_ret) {
  return guarded(__func__, [&] {
    return get_kernel_sub_group_info(kernel, device, param_name, input_value_size, input_value, param_value_size,
                                     param_value, param_value_size_ret);
  });
}

cl_kernel CL_API_CALL clCloneKernel(cl_kernel source_kernel, cl_int* errcode_ret) {
  return guarded_create<cl_kernel>(__func__, errcode_ret, [&] { return clone_kernel(source_kernel); });
}

cl_int CL_API_CALL clSetKernelExecInfo(cl_kernel kernel, cl_kernel_exec_info param_name, size_t param_value_size,
                                       const void* param_value) {
  return guarded(__func__, [&] { return set_kernel_exec_info(kernel, param_name, param_value_size, param_value); });
}

cl_int CL_API_CALL clSetKernelArgSVMPointer(cl_kernel kernel, cl_uint arg_index, const void* arg_value) {
  return guarded(__func__, [&] { return set_kernel_arg_svm_pointer(kernel, arg_index, arg_value); });
}

cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
                                          const size_t* global_work_offset, const size_t* global_work_size,
                                          const size_t* local_work_size, cl_uint num_events_in_wait_list,
                                          const cl_event* event_wait_list, cl_event* event) {
  return guarded(__func__, [&] {
    return enqueue_ndrange(command_queue, kernel, work_dim, global_work_offset, global_work_size, local_work_size,
                           num_events_in_wait_list, event_wait_list, event, CL_COMMAND_NDRANGE_KERNEL);
  });
}

cl_int CL_API_CALL clEnqueueTask(cl_command_queue command_queue, cl_kernel kernel, cl_uint num_events_in_wait_list,
                                 const cl_event* event_wait_list, cl_event* event) {
  // Equivalent to clEnqueueNDRangeKernel with work_dim 1, no offset and
  // global and local sizes of 1; its event reports CL_COMMAND_TASK.
  static const size_t one[3] = {1, 1, 1};
  return guarded(__func__, [&] {
    return enqueue_ndrange(command_queue, kernel, 1, nullptr, one, one, num_events_in_wait_list, event_wait_list,
                           event, CL_COMMAND_TASK);
  });
}

}  // namespace ferry::client::api
