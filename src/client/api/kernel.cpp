// Kernel entry points: creation, arguments, queries, and the launch, each
// checked here in the spec's order and carried out by core/kernels/ (where
// the arguments are kept and the launch is sent).

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/api/info_table.hpp"
#include "client/core/command.hpp"
#include "client/core/device_list.hpp"
#include "client/core/kernels/kernel_arguments.hpp"
#include "client/core/kernels/kernel_creation.hpp"
#include "client/core/kernels/kernel_queries.hpp"
#include "client/core/kernels/launch.hpp"
#include "client/core/markers.hpp"
#include "client/core/memory/svm_registry.hpp"
#include "client/core/servers/platform.hpp"
#include "common/log.hpp"

namespace ferry::client::api {

namespace {

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
  return create_kernel_on_servers(p, name, built_devices_of(p));
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

  return create_program_kernels(p, devices, count, num_kernels, kernels, num_kernels_ret);
}

result<cl_kernel> clone_kernel(cl_kernel source) {
  // CL_INVALID_KERNEL if kernel is not a valid kernel object.
  FERRY_CHECK_HANDLE_R(source);
  return copy_kernel(source);
}

// ---------------------------------------------------------------------------
// Arguments

cl_int set_kernel_arg(cl_kernel k, cl_uint index, size_t size, const void* value) {
  // CL_INVALID_KERNEL if kernel is not a valid kernel object.
  FERRY_CHECK_HANDLE(k);
  // CL_INVALID_ARG_INDEX if arg_index is not a valid argument index.
  if (index >= k->num_args) return CL_INVALID_ARG_INDEX;
  // CL_INVALID_ARG_SIZE if arg_size does not match the size of the data
  // type for an argument that is not a memory object: no device takes a
  // by-value argument this large (CL_DEVICE_MAX_PARAMETER_SIZE).
  if (value != nullptr && size != sizeof(cl_mem) && size > max_kernel_arg_size) return CL_INVALID_ARG_SIZE;
  return set_arg(k, index, size, value);
}

cl_int set_kernel_arg_svm_pointer(cl_kernel k, cl_uint index, const void* value) {
  // CL_INVALID_KERNEL if kernel is not a valid kernel object.
  FERRY_CHECK_HANDLE(k);
  context* c = k->program->context;
  // CL_INVALID_OPERATION if no devices in the context associated with kernel support SVM.
  if (!supports_svm(c)) return explain(CL_INVALID_OPERATION, "no device of the context offers SVM");
  // CL_INVALID_ARG_INDEX if arg_index is not a valid argument index.
  if (index >= k->num_args) return CL_INVALID_ARG_INDEX;
  svm_ref allocation;
  if (value != nullptr) {
    // CL_INVALID_ARG_VALUE if arg_value specified is not a valid value:
    // (Ferry) only a pointer into an SVM allocation of the context can be
    // translated.
    allocation = find_svm(value, c);
    if (!allocation) return CL_INVALID_ARG_VALUE;
  }
  return set_svm_arg(k, index, allocation.get(), value);
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
      if (count > max_kernel_svm_pointers) return CL_OUT_OF_RESOURCES;
      std::vector<svm_pointer_use> uses(count);
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
        uses[i] = {std::move(allocation), pointer};
      }
      return set_svm_pointers(k, uses);
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

using kernel_row = info_row<cl_kernel>;
const kernel_row kernel_info[] = {
    kernel_row::of<std::string>(CL_KERNEL_FUNCTION_NAME, [](cl_kernel k) { return k->name; }),
    kernel_row::of<cl_uint>(CL_KERNEL_NUM_ARGS, [](cl_kernel k) { return k->num_args; }),
    kernel_row::of<cl_uint>(CL_KERNEL_REFERENCE_COUNT, [](cl_kernel k) { return k->api_refs.load(); }),
    kernel_row::of<cl_context>(CL_KERNEL_CONTEXT, [](cl_kernel k) { return k->program->context; }),
    kernel_row::of<cl_program>(CL_KERNEL_PROGRAM, [](cl_kernel k) { return k->program; }),
};

cl_int get_kernel_info(cl_kernel k, cl_kernel_info param, size_t size, void* value, size_t* size_ret) {
  // CL_INVALID_KERNEL if kernel is a not a valid kernel object.
  FERRY_CHECK_HANDLE(k);
  info_out out(size, value, size_ret);
  // CL_KERNEL_ATTRIBUTES and extension queries: the native answer
  // (CL_INVALID_VALUE if param_name is not valid comes from there too).
  return answer_info(kernel_info, k, param, out, [&] { return put_native(out, kernel_info_from_server(k, param)); });
}

// The device a work-group or sub-group query of `k` is about: `d`, or the
// kernel's only device when `d` is NULL.
result<cl_device_id> device_of_query(const kernel* k, cl_device_id d) {
  // The devices associated with the kernel are those its program was built
  // for when the kernel was made; on another device it has no code to ask
  // about.
  const auto& devices = k->devices;
  // CL_INVALID_DEVICE if device is not in the list of devices associated with
  // kernel or if device is NULL but there is more than one device associated
  // with kernel.
  if (d == nullptr) {
    if (devices.size() != 1)
      return fail(explain(CL_INVALID_DEVICE, "device is NULL and kernel \"%s\" has %zu devices",
                          k->name.c_str(), devices.size()));
    d = devices[0];
  } else if (!contains(devices, d)) {
    return fail(explain(CL_INVALID_DEVICE,
                        "kernel \"%s\" has no code for that device (its program was not built for it)",
                        k->name.c_str()));
  }
  return d;
}

// The object of a work-group query: a kernel on one of its devices.
struct kernel_on_device {
  kernel* k;
  cl_device_id d;
};

using work_group_row = info_row<kernel_on_device>;
const work_group_row work_group_info[] = {
    work_group_row::of<size_t>(CL_KERNEL_WORK_GROUP_SIZE,
                               [](kernel_on_device on) -> result<size_t> {
                                 auto limits = work_group_limits_for(on.k, on.d);
                                 if (!limits) return fail(limits.error());
                                 return limits->work_group_size;
                               }),
    work_group_row::of<std::array<size_t, 3>>(CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                              [](kernel_on_device on) -> result<std::array<size_t, 3>> {
                                                auto limits = work_group_limits_for(on.k, on.d);
                                                if (!limits) return fail(limits.error());
                                                return limits->compile_size;
                                              }),
};

cl_int get_kernel_work_group_info(cl_kernel k, cl_device_id d, cl_kernel_work_group_info param, size_t size,
                                  void* value, size_t* size_ret) {
  // CL_INVALID_KERNEL if kernel is a not a valid kernel object.
  FERRY_CHECK_HANDLE(k);
  auto queried = device_of_query(k, d);
  if (!queried) return queried.error();
  d = *queried;
  info_out out(size, value, size_ret);
  return answer_info(work_group_info, kernel_on_device{k, d}, param, out, [&]() -> cl_int {
    // CL_INVALID_VALUE if param_name is CL_KERNEL_GLOBAL_WORK_SIZE and
    // device is not a custom device and kernel is not a built-in kernel.
    if (param == CL_KERNEL_GLOBAL_WORK_SIZE && !(d->type & CL_DEVICE_TYPE_CUSTOM)) return CL_INVALID_VALUE;
    // CL_INVALID_VALUE if param_name is not valid: the native answer.
    return put_native(out, kernel_work_group_info_from_server(k, d, param));
  });
}

cl_int get_kernel_sub_group_info(cl_kernel k, cl_device_id d, cl_kernel_sub_group_info param, size_t input_size,
                                 const void* input, size_t size, void* value, size_t* size_ret) {
  // CL_INVALID_KERNEL if kernel is a not a valid kernel object.
  FERRY_CHECK_HANDLE(k);
  auto queried = device_of_query(k, d);
  if (!queried) return queried.error();
  d = *queried;
  // A too large input cannot be a valid one (at most three sizes, or a count).
  if (input_size > 64) return CL_INVALID_VALUE;
  // CL_INVALID_OPERATION if the device does not support sub-groups, and
  // CL_INVALID_VALUE for a bad param or input: the native answers.
  info_out out(size, value, size_ret);
  return put_native(out, kernel_sub_group_info_from_server(k, d, param, input, input_size));
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
  info_out out(size, value, size_ret);
  return put_native(out, kernel_arg_info_from_server(k, index, param));
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
  ndrange range;
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
    for (cl_uint i = 0; i < work_dim; ++i) range.local[i] = local[i];
    range.group = group_size::given;
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
    for (cl_uint i = 0; i < work_dim; ++i) range.local[i] = required[i];
    range.group = group_size::given;
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

  // Nothing to run: the command completes after its wait list, as a marker
  // would, and its event still reports the kernel's command type.
  if (empty)
    return enqueue_sync(q, sync_kind::marker, type, count, list, event_out, blocking::no, pending_reads::ignored);
  range.work_dim = work_dim;
  for (cl_uint i = 0; i < work_dim; ++i) {
    range.offset[i] = offset ? offset[i] : 0;
    range.global[i] = global[i];
  }
  return launch(q, k, range, count, list, event_out, type);
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
  return change_api_count(__func__, kernel, "kernel", count_change::retain);
}

cl_int CL_API_CALL clReleaseKernel(cl_kernel kernel) {
  return change_api_count(__func__, kernel, "kernel", count_change::release);
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
