#include "cli/reports/cl_query.hpp"

namespace ferry::cli {

namespace {

// clGet*Info strings: ask for the size, then the text; drop the terminating NUL.
template <class Handle, class Param, class Getter>
outcome<std::string, cl_int> info_string(Getter getter, Handle handle, Param param) {
  std::size_t size = 0;
  cl_int rc = getter(handle, param, 0, nullptr, &size);
  if (rc != CL_SUCCESS) return failure(rc);
  std::string text(size, '\0');
  rc = getter(handle, param, size, text.data(), nullptr);
  if (rc != CL_SUCCESS) return failure(rc);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

}  // namespace

outcome<std::vector<cl_platform_id>, cl_int> platform_ids() {
  cl_uint count = 0;
  cl_int rc = clGetPlatformIDs(0, nullptr, &count);
  if (rc == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: the loader found no ICD */ || count == 0) {
    return std::vector<cl_platform_id>{};
  }
  if (rc != CL_SUCCESS) return failure(rc);
  std::vector<cl_platform_id> ids(count);
  rc = clGetPlatformIDs(count, ids.data(), &count);
  if (rc != CL_SUCCESS) return failure(rc);
  ids.resize(count);
  return ids;
}

outcome<std::vector<cl_device_id>, cl_int> device_ids(cl_platform_id platform) {
  cl_uint count = 0;
  cl_int rc = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
  if (rc == CL_DEVICE_NOT_FOUND || (rc == CL_SUCCESS && count == 0)) {
    return std::vector<cl_device_id>{};
  }
  if (rc != CL_SUCCESS) return failure(rc);
  std::vector<cl_device_id> ids(count);
  rc = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), &count);
  if (rc != CL_SUCCESS) return failure(rc);
  ids.resize(count);
  return ids;
}

outcome<std::string, cl_int> platform_string(cl_platform_id platform, cl_platform_info param) {
  return info_string(clGetPlatformInfo, platform, param);
}

outcome<std::string, cl_int> device_string(cl_device_id device, cl_device_info param) {
  return info_string(clGetDeviceInfo, device, param);
}

}  // namespace ferry::cli
