// The only symbols libferry exports (see exports.map): what ICD loaders look
// up by name. Everything else is reached through the dispatch table.
#include "client/api/api.hpp"

extern "C" {

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id* platforms, cl_uint* num_platforms) {
  return ferry::client::api::clIcdGetPlatformIDsKHR(num_entries, platforms, num_platforms);
}

__attribute__((visibility("default"))) CL_API_ENTRY void* CL_API_CALL
clGetExtensionFunctionAddress(const char* name) {
  return ferry::client::api::clGetExtensionFunctionAddress(name);
}

__attribute__((visibility("default"))) CL_API_ENTRY void* CL_API_CALL
clGetExtensionFunctionAddressForPlatform(cl_platform_id platform, const char* name) {
  return ferry::client::api::clGetExtensionFunctionAddressForPlatform(platform, name);
}

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clGetPlatformInfo(cl_platform_id platform, cl_platform_info param, size_t size, void* value, size_t* size_ret) {
  return ferry::client::api::clGetPlatformInfo(platform, param, size, value, size_ret);
}

}  // extern "C"
