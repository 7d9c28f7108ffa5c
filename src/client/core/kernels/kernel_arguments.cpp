#include "client/core/kernels/kernel_arguments.hpp"

#include <cstring>

#include "client/core/servers/server.hpp"

namespace ferry::client {

namespace {

using arg_kind = protocol::kernel_arg_kind;

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

// Asks the native kernel whether it takes `arg` (the server replays
// clSetKernelArg): its exact answer.
cl_int check_on_server(const kernel* k, const protocol::kernel_arg& arg) {
  protocol::check_kernel_arg request;
  request.kernel = k->id;
  request.arg = arg;
  auto reply = link_of(k)->call<protocol::status_reply>(request);
  if (!reply) return reply.error();
  return reply->status;
}

}  // namespace

cl_int set_arg(kernel* k, cl_uint index, size_t size, const void* value) {
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
    shape = shape_of(kind, size);
  }

  auto& arg = k->args[index];
  if ((shape != known || shape == 0) && !accepted) {
    // CL_INVALID_ARG_VALUE, CL_INVALID_MEM_OBJECT, CL_INVALID_SAMPLER,
    // CL_INVALID_ARG_SIZE, ...: the native kernel's answer for this shape.
    protocol::kernel_arg wire;
    wire.index = index;
    wire.kind = kind;
    wire.size = size;
    // The shape is checked with zeros: the bytes are read only once the
    // argument proved to take them (for a __local argument arg_value is
    // merely tested for NULL, and may point at fewer than `size` bytes).
    if (kind == arg_kind::value) wire.value.assign(size, 0);
    if (m) wire.object = m->id;
    if (smp) wire.object = smp->id;
    if (cl_int code = check_on_server(k, wire); code != CL_SUCCESS) return code;
    k->validated[index] = shape;
    arg.wire = std::move(wire);
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

cl_int set_svm_arg(kernel* k, cl_uint index, const svm_allocation* allocation, const void* value) {
  // The pointer travels as (allocation, offset); the server passes the
  // address it stands for in the native allocation. NULL stays NULL.
  protocol::kernel_arg wire;
  wire.index = index;
  wire.kind = arg_kind::svm;
  if (allocation != nullptr) {
    wire.object = allocation->id;
    wire.size = allocation->offset_of(value);
  }
  // Every SVM pointer has the same shape; the first one set on an argument
  // asks the native kernel whether it takes one (CL_INVALID_ARG_VALUE for
  // an argument that is no __global or __constant pointer).
  const uint64_t shape = shape_of(arg_kind::svm, 0);
  if (k->validated[index] != shape) {
    if (cl_int code = check_on_server(k, wire); code != CL_SUCCESS) return code;
    k->validated[index] = shape;
  }
  auto& arg = k->args[index];
  arg.wire = std::move(wire);
  arg.mem = nullptr;
  arg.set = true;
  return CL_SUCCESS;
}

cl_int set_svm_pointers(kernel* k, const std::vector<svm_pointer_use>& uses) {
  std::vector<protocol::svm_pointer> pointers;
  pointers.reserve(uses.size());
  for (const auto& use : uses) pointers.push_back({use.allocation->id, use.allocation->offset_of(use.pointer)});
  return send_svm_pointers(k, std::move(pointers));
}

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

}  // namespace ferry::client
