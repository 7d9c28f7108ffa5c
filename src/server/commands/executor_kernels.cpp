// Kernels: creation, arguments and launches.
//
// Memory and sampler arguments take only objects of their own kind named by
// id, never raw bytes that the driver would dereference: each kernel keeps
// the class of every argument (object_entry::pointer_args), which the daemon
// asks the platform for at creation.
#include "server/commands/executor.hpp"
#include "server/commands/executor_inline.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "server/daemon/printf_capture.hpp"

namespace ferry::server {

namespace p = protocol;

namespace {

/// Whether argument `index` of a kernel is of class `c` (false when the
/// platform keeps no argument info).
bool arg_is(const object_entry& kernel, uint32_t index, uint8_t c) {
  return index < kernel.pointer_args.size() && kernel.pointer_args[index] == c;
}

}  // namespace

// ---------------------------------------------------------------------------
// Creation

void executor::insert_kernel(p::object_id id, cl_kernel kernel, const object_entry& program, cl_uint args) {
  auto entry = object_entry::native(object_kind::kernel, kernel, program.context);
  entry.printf_capable = program.printf_capable;
  entry.arg_info_hidden = program.arg_info_hidden;
  entry.pointer_args = pointer_arguments(kernel, args);
  objects_.insert(id, entry);
}

std::vector<uint8_t> executor::pointer_arguments(cl_kernel kernel, cl_uint count) {
  std::vector<uint8_t> pointers(count);
  for (cl_uint i = 0; i < count; ++i) {
    cl_kernel_arg_address_qualifier qualifier = 0;
    if (api_.clGetKernelArgInfo(kernel, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof qualifier, &qualifier,
                                nullptr) != CL_SUCCESS)
      return {};  // the platform keeps no argument info for this program
    pointers[i] = qualifier == CL_KERNEL_ARG_ADDRESS_GLOBAL || qualifier == CL_KERNEL_ARG_ADDRESS_CONSTANT
                      ? argument_class::memory
                      : argument_class::other;
    if (pointers[i] == argument_class::other) {
      // A sampler is a handle too (images are __global already).
      char type[16] = {};
      if (api_.clGetKernelArgInfo(kernel, i, CL_KERNEL_ARG_TYPE_NAME, sizeof type, type, nullptr) == CL_SUCCESS)
        pointers[i] = std::strcmp(type, "sampler_t") == 0 ? argument_class::sampler : argument_class::other;
    }
  }
  return pointers;
}

bool executor::on(const p::create_kernel& m) {
  if (duplicate(m.id)) return false;
  // Over the session's object quota, the quota's error.
  object_table::found program = find_for_creation<object_kind::program>(m.program);
  if (!program) return answer(p::kernel_reply{m.request, program.error(), {}});
  cl_int error;
  cl_kernel kernel = api_.clCreateKernel(program->as_program(), m.name.c_str(), &error);
  p::kernel_reply reply{m.request, error, {}};
  if (kernel != nullptr) {
    cl_uint args = 0;
    api_.clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr);
    insert_kernel(m.id, kernel, *program, args);
    reply.kernels.push_back({m.id, m.name, args});
  }
  return answer(reply);
}

bool executor::on(const p::create_kernels_in_program& m) {
  for (size_t i = 0; i < m.ids.size(); ++i) {
    if (duplicate(m.ids[i])) return false;
    if (std::find(m.ids.begin(), m.ids.begin() + i, m.ids[i]) != m.ids.begin() + i)
      return violate("create_kernels_in_program names id " + std::to_string(m.ids[i]) + " twice");
  }
  auto refuse = [&](cl_int error) { return answer(p::kernel_reply{m.request, error, {}}); };
  object_table::found program = objects_.find<object_kind::program>(m.program);
  if (!program) return refuse(program.error());
  std::vector<std::string> names;
  if (cl_int rc = kernel_names(program->as_program(), names); rc != CL_SUCCESS) return refuse(rc);
  // CL_INVALID_VALUE if kernels is not NULL and num_kernels is less than the number of kernels in program
  if (!m.ids.empty() && m.ids.size() < names.size()) return refuse(CL_INVALID_VALUE);
  // Over the session's object quota, the quota's error.
  if (cl_int refused = admit_objects(m.ids.empty() ? 0 : names.size()); refused != CL_SUCCESS) return refuse(refused);
  p::kernel_reply reply{m.request, CL_SUCCESS, {}};
  std::vector<cl_kernel> made;
  for (const std::string& name : names) {
    cl_int error;
    cl_kernel kernel = api_.clCreateKernel(program->as_program(), name.c_str(), &error);
    if (kernel == nullptr) {
      reply.status = error;
      break;
    }
    made.push_back(kernel);
  }
  for (size_t i = 0; i < made.size(); ++i) {
    cl_uint args = 0;
    api_.clGetKernelInfo(made[i], CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr);
    if (reply.status != CL_SUCCESS || m.ids.empty()) {
      // Counting only (no ids), or undoing a partial failure.
      if (reply.status == CL_SUCCESS) reply.kernels.push_back({0, names[i], args});
      api_.clReleaseKernel(made[i]);
      continue;
    }
    insert_kernel(m.ids[i], made[i], *program, args);
    reply.kernels.push_back({m.ids[i], names[i], args});
  }
  return answer(reply);
}

// ---------------------------------------------------------------------------
// Arguments

std::optional<cl_int> executor::set_arg(const object_entry& kernel_entry, const p::kernel_arg& arg) {
  cl_kernel kernel = kernel_entry.as_kernel();
  switch (arg.kind) {
    case p::kernel_arg_kind::value: {
      if (arg.size != arg.value.size()) return CL_INVALID_ARG_SIZE;
      // Bytes for a buffer or sampler argument would be taken as a native
      // handle and dereferenced by the driver: only zeros (NULL) may pass.
      if (arg.index < kernel_entry.pointer_args.size() && kernel_entry.pointer_args[arg.index] &&
          std::any_of(arg.value.begin(), arg.value.end(), [](uint8_t b) { return b != 0; }))
        return kernel_entry.pointer_args[arg.index] == argument_class::sampler ? CL_INVALID_SAMPLER
                                                                               : CL_INVALID_MEM_OBJECT;
      // The application's arg_value was not NULL (that travels as a local or
      // null_mem argument), so no bytes still come with a pointer: the native
      // answer is then the one for a size 0 (CL_INVALID_ARG_SIZE), not for a
      // NULL value (CL_INVALID_ARG_VALUE).
      static const uint8_t no_bytes = 0;
      return api_.clSetKernelArg(kernel, arg.index, arg.value.size(), arg.value.empty() ? &no_bytes : arg.value.data());
    }
    case p::kernel_arg_kind::mem: {
      // Whatever the id names (even a failed creation), the argument is no memory object.
      object_table::found mem = objects_.find<object_kind::mem>(arg.object);
      if (!mem) return CL_INVALID_MEM_OBJECT;
      // Drivers take any handle for a sampler_t; only a sampler may pass.
      if (arg_is(kernel_entry, arg.index, argument_class::sampler)) return CL_INVALID_SAMPLER;
      cl_mem handle = mem->as_mem();
      return api_.clSetKernelArg(kernel, arg.index, sizeof(cl_mem), &handle);
    }
    case p::kernel_arg_kind::local:
      return api_.clSetKernelArg(kernel, arg.index, static_cast<size_t>(arg.size), nullptr);
    case p::kernel_arg_kind::null_mem:
      return api_.clSetKernelArg(kernel, arg.index, sizeof(cl_mem), nullptr);
    case p::kernel_arg_kind::sampler: {
      object_table::found sampler = objects_.find<object_kind::sampler>(arg.object);
      if (!sampler) return CL_INVALID_SAMPLER;
      // Likewise a sampler is no memory object (nor data).
      if (!arg_is(kernel_entry, arg.index, argument_class::sampler)) {
        return arg_is(kernel_entry, arg.index, argument_class::memory) ? CL_INVALID_MEM_OBJECT : CL_INVALID_ARG_VALUE;
      }
      cl_sampler handle = sampler->as_sampler();
      return api_.clSetKernelArg(kernel, arg.index, sizeof(cl_sampler), &handle);
    }
    case p::kernel_arg_kind::svm: {
      // Only a __global or __constant pointer takes an SVM pointer; PoCL
      // checks too, but no driver may see one for another argument.
      if (arg.index < kernel_entry.pointer_args.size() && !arg_is(kernel_entry, arg.index, argument_class::memory))
        return CL_INVALID_ARG_VALUE;
      if (arg.object == 0) {
        if (arg.size != 0) return CL_INVALID_ARG_VALUE;
        return api_.clSetKernelArgSVMPointer(kernel, arg.index, nullptr);
      }
      // The pointer lies inside the allocation: offset < size.
      cl_int error;
      const svm_block* block = svm_range(arg.object, arg.size, 1, error);
      if (block == nullptr) return CL_INVALID_ARG_VALUE;
      return api_.clSetKernelArgSVMPointer(kernel, arg.index, static_cast<uint8_t*>(block->pointer) + arg.size);
    }
  }
  violate("unknown kernel argument kind " + std::to_string(static_cast<int>(arg.kind)));
  return std::nullopt;
}

bool executor::on(const p::check_kernel_arg& m) {
  object_table::found kernel = objects_.find<object_kind::kernel>(m.kernel);
  if (!kernel) return answer(p::status_reply{m.request, kernel.error(), {}});
  std::optional<cl_int> rc = set_arg(*kernel, m.arg);
  if (!rc) return false;
  return answer(p::status_reply{m.request, *rc, {}});
}

// ---------------------------------------------------------------------------
// Launches

bool executor::on(const p::enqueue_ndrange& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  object_table::found kernel = objects_.find<object_kind::kernel>(m.kernel);
  if (!kernel) return fail(m.header, kernel.error());
  for (const p::kernel_arg& arg : m.args) {
    std::optional<cl_int> rc = set_arg(*kernel, arg);
    if (!rc) return false;
    if (*rc != CL_SUCCESS) return fail(m.header, *rc);
  }
  const native_size3 offset(m.offset), global(m.global), local(m.local);
  bool printf = kernel->printf_capable && core_->printf != nullptr;
  if (printf) {
    core_->printf->attribute_to(outbox_, core_->key);
    may_print_ = true;
  }
  cl_event event = nullptr;
  cl_int rc = api_.clEnqueueNDRangeKernel(queue->as_queue(), kernel->as_kernel(), m.work_dim, offset, global,
                                          m.has_local ? static_cast<const size_t*>(local) : nullptr, wait_count(),
                                          wait_events(), wants_event(m.header, *queue) ? &event : nullptr);
  return finish({.header = m.header, .queue = *queue, .rc = rc, .event = event, .printf = printf});
}

}  // namespace ferry::server
