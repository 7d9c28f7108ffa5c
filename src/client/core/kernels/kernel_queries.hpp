// What the servers know of a kernel: its native info, work-group and
// sub-group info and argument info, and the work-group limits a launch is
// checked against (asked once per device, then cached in the kernel).
#pragma once

#include <cstddef>

#include "client/core/objects.hpp"
#include "client/core/result.hpp"

namespace ferry::client {

/// clGetKernelInfo's native answer (CL_KERNEL_ATTRIBUTES, extensions).
result<protocol::bytes> kernel_info_from_server(const kernel* k, cl_uint param);
/// clGetKernelWorkGroupInfo's native answer for `d`.
result<protocol::bytes> kernel_work_group_info_from_server(const kernel* k, const device* d, cl_uint param);
/// clGetKernelSubGroupInfo's native answer for `d`, given `input_size` bytes
/// at `input` (NULL with a size: zeros, which the native call judges).
result<protocol::bytes> kernel_sub_group_info_from_server(const kernel* k, const device* d, cl_uint param,
                                                          const void* input, size_t input_size);
/// clGetKernelArgInfo's native answer for argument `index`.
result<protocol::bytes> kernel_arg_info_from_server(const kernel* k, cl_uint index, cl_uint param);

/// CL_KERNEL_WORK_GROUP_SIZE and CL_KERNEL_COMPILE_WORK_GROUP_SIZE of `k` on `d`.
result<_cl_kernel::work_group_limits> work_group_limits_for(kernel* k, cl_device_id d);

}  // namespace ferry::client
