// Kernels made on the servers where their program is built: one by name,
// all of a program's at once, and exact copies.
#pragma once

#include <string>
#include <vector>

#include "client/core/objects.hpp"
#include "client/core/result.hpp"

namespace ferry::client {

/// The program's devices with an executable, now.
std::vector<cl_device_id> built_devices_of(program* p);

/// Creates kernel `name` of `p` on the servers of `devices`, those with an
/// executable (a round trip each: the reply says how many arguments it
/// has). The native answer when a server refuses (CL_INVALID_KERNEL_DEFINITION
/// among others).
result<cl_kernel> create_kernel_on_servers(cl_program p, const std::string& name,
                                           const std::vector<cl_device_id>& devices);

/// Creates the `count` kernels of `p` (in the order of its kernel names) on
/// the servers of `devices` into `kernels`, which has room for `room`, and
/// says how many in `made` (when not NULL).
cl_int create_program_kernels(cl_program p, const std::vector<cl_device_id>& devices, size_t count, cl_uint room,
                              cl_kernel* kernels, cl_uint* made);

/// An exact copy of `source`: a new kernel on its servers with its exec
/// info, arguments, accepted shapes and cached work-group limits.
result<cl_kernel> copy_kernel(cl_kernel source);

}  // namespace ferry::client
