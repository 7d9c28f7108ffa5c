// Typed reads of OpenCL platform and device info.
#pragma once

#include <CL/cl.h>

#include <string>
#include <vector>

#include "cli/outcome.hpp"

namespace ferry::cli {

/// Every platform the loader offers; an empty list when there are none.
outcome<std::vector<cl_platform_id>, cl_int> platform_ids();

/// Every device of the platform; an empty list for CL_DEVICE_NOT_FOUND.
outcome<std::vector<cl_device_id>, cl_int> device_ids(cl_platform_id platform);

outcome<std::string, cl_int> platform_string(cl_platform_id platform, cl_platform_info param);
outcome<std::string, cl_int> device_string(cl_device_id device, cl_device_info param);

/// A fixed-size device info value (cl_uint, cl_ulong, cl_bool, cl_device_type, ...).
template <class T>
outcome<T, cl_int> device_value(cl_device_id device, cl_device_info param) {
  T value{};
  cl_int rc = clGetDeviceInfo(device, param, sizeof value, &value, nullptr);
  if (rc != CL_SUCCESS) return failure(rc);
  return value;
}

}  // namespace ferry::cli
