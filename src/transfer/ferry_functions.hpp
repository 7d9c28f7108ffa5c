// The Ferry driver's own commands, found through the queue: a transfer
// command whose buffer lives on a Ferry server can become one of them (a
// file on that server, a migration to another program's server), so that its
// bytes never pass through this host.
#pragma once

#include <CL/cl.h>

namespace ferry::transfer {

/// The Ferry driver's function `name` when `queue` is Ferry's; null
/// otherwise (the buffer is on this host's platform, which does not have it).
template <class Function>
Function ferry_function(cl_command_queue queue, const char* name) {
  cl_device_id device = nullptr;
  cl_platform_id platform = nullptr;
  if (clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr) != CL_SUCCESS ||
      clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr) != CL_SUCCESS)
    return nullptr;
  return reinterpret_cast<Function>(clGetExtensionFunctionAddressForPlatform(platform, name));
}

}  // namespace ferry::transfer
