// Platform entry points: the loader's bootstrap and the platform queries.
#include <CL/cl_ext.h>
#include <CL/cl_ext_ferry.h>

#include <cstring>
#include <string>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/core/servers/platform.hpp"

namespace ferry::client::api {

namespace {

constexpr const char* platform_extensions =
    "cl_khr_icd " CL_FERRY_REMOTE_EXTENSION_NAME " " CL_POCL_CONTENT_SIZE_EXTENSION_NAME;

cl_int get_platform_ids(cl_uint num_entries, cl_platform_id* platforms, cl_uint* num_platforms) {
  // CL_INVALID_VALUE if num_entries is equal to zero and platforms is not
  // NULL or if both num_platforms and platforms are NULL.
  if ((num_entries == 0 && platforms != nullptr) || (num_platforms == nullptr && platforms == nullptr))
    return CL_INVALID_VALUE;
  platform& p = the_platform();
  if (platforms) platforms[0] = &p;
  if (num_platforms) *num_platforms = 1;
  return CL_SUCCESS;
}

}  // namespace

cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id* platforms,
                                         cl_uint* num_platforms) {
  return guarded(__func__, [&] { return get_platform_ids(num_entries, platforms, num_platforms); });
}

cl_int CL_API_CALL clGetPlatformIDs(cl_uint num_entries, cl_platform_id* platforms, cl_uint* num_platforms) {
  return guarded(__func__, [&] { return get_platform_ids(num_entries, platforms, num_platforms); });
}

cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id platform_id, cl_platform_info param, size_t size, void* value,
                                    size_t* size_ret) {
  return guarded(__func__, [&]() -> cl_int {
    // CL_INVALID_PLATFORM if platform is not a valid platform.
    if (platform_id != nullptr) FERRY_CHECK_HANDLE(platform_id);
    info_out out(size, value, size_ret);
    switch (param) {
      case CL_PLATFORM_PROFILE: return out.string("FULL_PROFILE");
      case CL_PLATFORM_VERSION: return out.string("OpenCL 3.0 Ferry " FERRY_VERSION_STRING);
      case CL_PLATFORM_NAME: return out.string(CL_FERRY_PLATFORM_NAME);
      case CL_PLATFORM_VENDOR: return out.string("The Ferry project");
      case CL_PLATFORM_EXTENSIONS: return out.string(platform_extensions);
      case CL_PLATFORM_ICD_SUFFIX_KHR: return out.string("FERRY");
      case CL_PLATFORM_HOST_TIMER_RESOLUTION: return out.value(cl_ulong{0});
      case CL_PLATFORM_NUMERIC_VERSION: return out.value(cl_version{CL_MAKE_VERSION(3, 0, 0)});
      case CL_PLATFORM_EXTENSIONS_WITH_VERSION: {
        std::vector<cl_name_version> list(3);
        std::strcpy(list[0].name, "cl_khr_icd");
        list[0].version = CL_MAKE_VERSION(1, 0, 0);
        std::strcpy(list[1].name, CL_FERRY_REMOTE_EXTENSION_NAME);
        list[1].version = CL_MAKE_VERSION(1, 0, 0);
        std::strcpy(list[2].name, CL_POCL_CONTENT_SIZE_EXTENSION_NAME);
        list[2].version = CL_MAKE_VERSION(1, 0, 0);
        return out.array(list);
      }
      // CL_INVALID_VALUE if param_name is not one of the supported values.
      default: return CL_INVALID_VALUE;
    }
  });
}

cl_int CL_API_CALL clUnloadPlatformCompiler(cl_platform_id platform_id) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(platform_id);
    return CL_SUCCESS;
  });
}

void* CL_API_CALL clGetExtensionFunctionAddressForPlatform(cl_platform_id platform_id, const char* name) {
  try {
    if (!is_valid(platform_id) || name == nullptr) return nullptr;
    return extension_function(name);
  } catch (...) {
    return nullptr;
  }
}

void* CL_API_CALL clGetExtensionFunctionAddress(const char* name) {
  try {
    if (name == nullptr) return nullptr;
    // The loader asks every driver for this one by name.
    if (std::strcmp(name, "clIcdGetPlatformIDsKHR") == 0) return reinterpret_cast<void*>(&clIcdGetPlatformIDsKHR);
    return extension_function(name);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace ferry::client::api
