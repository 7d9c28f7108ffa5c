// Kernel arguments as the client keeps them.
//
// Arguments live on the client and travel whole with every launch. The
// client cannot see argument types, so the first time a kernel sees an
// argument shape (index, kind, size) the server replays the call on the
// native kernel and answers its exact clSetKernelArg code; accepted shapes
// are cached in the kernel, so steady-state clSetKernelArg and every launch
// after the first on a device are free of round trips.
#pragma once

#include <cstddef>
#include <vector>

#include "client/core/memory/svm_registry.hpp"
#include "client/core/objects.hpp"

namespace ferry::client {

/// Room left in a frame for the fields around an argument's bytes.
inline constexpr size_t kernel_frame_overhead = 4096;
/// The largest by-value argument a launch can carry.
inline constexpr size_t max_kernel_arg_size = (size_t{1} << 20) - kernel_frame_overhead;
/// The most CL_KERNEL_EXEC_INFO_SVM_PTRS one message carries.
inline constexpr size_t max_kernel_svm_pointers = max_kernel_arg_size / sizeof(protocol::svm_pointer);

/// clSetKernelArg past the handle and index checks: the argument becomes
/// what the launch sends, once its shape is known to be accepted.
/// CL_INVALID_MEM_OBJECT or CL_INVALID_SAMPLER for a handle the argument
/// cannot take, else the native answer for a new shape.
cl_int set_arg(kernel* k, cl_uint index, size_t size, const void* value);

/// clSetKernelArgSVMPointer past the checks: `value` inside `allocation`
/// (both NULL for a NULL pointer).
cl_int set_svm_arg(kernel* k, cl_uint index, const svm_allocation* allocation, const void* value);

/// A pointer a kernel may follow, inside an SVM allocation of its context.
struct svm_pointer_use {
  svm_ref allocation;
  const void* pointer;
};

/// CL_KERNEL_EXEC_INFO_SVM_PTRS on the servers' kernel: their native answer.
cl_int set_svm_pointers(kernel* k, const std::vector<svm_pointer_use>& uses);
/// The same with the pointers already translated (a clone's copy).
cl_int send_svm_pointers(kernel* k, std::vector<protocol::svm_pointer> pointers);

}  // namespace ferry::client
