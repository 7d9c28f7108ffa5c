// Collects clGetPlatformInfo / clGetDeviceInfo answers as raw bytes for the
// server_info reply (the client caches them and answers the application's
// info queries locally).
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "protocol/messages.hpp"

namespace ferry::server::native {

struct info_param {
  uint32_t param;
  const char* name;
};

/// Platform params sent to the client (OpenCL 1.0-3.0).
std::span<const info_param> platform_params();
/// Device params sent to the client: every CL_DEVICE_* of OpenCL 1.0-3.0 and
/// common extension params, without the handle-valued ones (CL_DEVICE_PLATFORM,
/// CL_DEVICE_PARENT_DEVICE), whose values mean nothing on the client.
std::span<const info_param> device_params();

/// Every platform param the platform answers without error, raw.
std::vector<protocol::info_entry> collect_platform_info(cl_platform_id platform);
/// Every device param the device answers without error, raw.
std::vector<protocol::info_entry> collect_device_info(cl_device_id device);

/// A string-valued platform or device param ("" when the query fails).
std::string platform_string(cl_platform_id platform, cl_platform_info param);
std::string device_string(cl_device_id device, cl_device_info param);

}  // namespace ferry::server::native
