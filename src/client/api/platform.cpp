// Platform entry points: the loader's bootstrap and the platform queries.
#include <CL/cl_ext.h>
#include <CL/cl_ext_ferry.h>

#include <cstring>
#include <string>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/api/info_table.hpp"
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

std::vector<cl_name_version> extensions_with_version() {
  std::vector<cl_name_version> list(3);
  std::strcpy(list[0].name, "cl_khr_icd");
  list[0].version = CL_MAKE_VERSION(1, 0, 0);
  std::strcpy(list[1].name, CL_FERRY_REMOTE_EXTENSION_NAME);
  list[1].version = CL_MAKE_VERSION(1, 0, 0);
  std::strcpy(list[2].name, CL_POCL_CONTENT_SIZE_EXTENSION_NAME);
  list[2].version = CL_MAKE_VERSION(1, 0, 0);
  return list;
}

using platform_row = info_row<cl_platform_id>;
const platform_row platform_info[] = {
    platform_row::of<std::string>(CL_PLATFORM_PROFILE, [](cl_platform_id) { return "FULL_PROFILE"; }),
    platform_row::of<std::string>(CL_PLATFORM_VERSION,
                                  [](cl_platform_id) { return "OpenCL 3.0 Ferry " FERRY_VERSION_STRING; }),
    platform_row::of<std::string>(CL_PLATFORM_NAME, [](cl_platform_id) { return CL_FERRY_PLATFORM_NAME; }),
    platform_row::of<std::string>(CL_PLATFORM_VENDOR, [](cl_platform_id) { return "The Ferry project"; }),
    platform_row::of<std::string>(CL_PLATFORM_EXTENSIONS, [](cl_platform_id) { return platform_extensions; }),
    platform_row::of<std::string>(CL_PLATFORM_ICD_SUFFIX_KHR, [](cl_platform_id) { return "FERRY"; }),
    platform_row::of<cl_ulong>(CL_PLATFORM_HOST_TIMER_RESOLUTION, [](cl_platform_id) { return 0; }),
    platform_row::of<cl_version>(CL_PLATFORM_NUMERIC_VERSION, [](cl_platform_id) { return CL_MAKE_VERSION(3, 0, 0); }),
    platform_row::of<std::vector<cl_name_version>>(CL_PLATFORM_EXTENSIONS_WITH_VERSION,
                                                   [](cl_platform_id) { return extensions_with_version(); }),
};

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
    return answer_info(platform_info, platform_id, param, out);
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
