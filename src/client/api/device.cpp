// Device entry points, answered from the info cached at connect time.
#include <CL/cl_ext_ferry.h>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/api/info_table.hpp"
#include "client/core/servers/platform.hpp"

namespace ferry::client::api {

namespace {

constexpr cl_device_type all_device_types = CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU |
                                            CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM;

bool matches(const device& d, cl_device_type wanted) {
  if (wanted == CL_DEVICE_TYPE_ALL) return true;
  return (d.type & wanted) != 0;
}

using device_row = info_row<cl_device_id>;
const device_row device_info[] = {
    device_row::of<cl_platform_id>(CL_DEVICE_PLATFORM, [](cl_device_id) { return &the_platform(); }),
    device_row::of<cl_device_id>(CL_DEVICE_PARENT_DEVICE, [](cl_device_id) { return nullptr; }),
    device_row::of<cl_uint>(CL_DEVICE_REFERENCE_COUNT, [](cl_device_id) { return 1; }),
    // While the server is unreachable its devices are not available.
    device_row::of<cl_bool>(CL_DEVICE_AVAILABLE, [](cl_device_id d) { return d->available() ? CL_TRUE : CL_FALSE; }),
    device_row::of<std::string>(CL_DEVICE_FERRY_SERVER_ADDRESS, [](cl_device_id d) { return d->host->address_text; }),
    device_row::of<cl_uint>(CL_DEVICE_FERRY_SERVER_DEVICE_INDEX, [](cl_device_id d) { return d->index; }),
    device_row::of<std::string>(CL_DEVICE_FERRY_PEER_ADDRESS, [](cl_device_id d) { return d->host->peer_address; }),
};

}  // namespace

cl_int CL_API_CALL clGetDeviceIDs(cl_platform_id platform_id, cl_device_type type, cl_uint num_entries,
                                  cl_device_id* devices, cl_uint* num_devices) {
  return guarded(__func__, [&]() -> cl_int {
    // CL_INVALID_PLATFORM if platform is not a valid platform.
    if (platform_id != nullptr) FERRY_CHECK_HANDLE(platform_id);
    platform& p = the_platform();
    // CL_INVALID_DEVICE_TYPE if device_type is not a valid value.
    if (type != CL_DEVICE_TYPE_ALL && (type & ~all_device_types) != 0) return CL_INVALID_DEVICE_TYPE;
    // CL_INVALID_VALUE if num_entries is equal to zero and devices is not
    // NULL or if both num_devices and devices are NULL.
    if ((num_entries == 0 && devices != nullptr) || (num_devices == nullptr && devices == nullptr))
      return CL_INVALID_VALUE;
    std::vector<cl_device_id> found;
    for (device* d : p.devices)
      if (matches(*d, type)) found.push_back(d);
    // The default device is the first one (spec: CL_DEVICE_TYPE_DEFAULT).
    if (type == CL_DEVICE_TYPE_DEFAULT && found.empty() && !p.devices.empty()) found.push_back(p.devices[0]);
    if (type == CL_DEVICE_TYPE_DEFAULT && found.size() > 1) found.resize(1);
    // CL_DEVICE_NOT_FOUND if no OpenCL devices that matched device_type were found.
    if (found.empty()) return CL_DEVICE_NOT_FOUND;
    if (devices)
      for (cl_uint i = 0; i < num_entries && i < found.size(); ++i) devices[i] = found[i];
    if (num_devices) *num_devices = static_cast<cl_uint>(found.size());
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL clGetDeviceInfo(cl_device_id d, cl_device_info param, size_t size, void* value,
                                   size_t* size_ret) {
  return guarded(__func__, [&]() -> cl_int {
    // CL_INVALID_DEVICE if device is not valid.
    FERRY_CHECK_HANDLE(d);
    info_out out(size, value, size_ret);
    return answer_info(device_info, d, param, out, [&]() -> cl_int {
      auto it = d->info.find(param);
      // CL_INVALID_VALUE if param_name is not one of the supported values
      // (the native device did not answer it either).
      if (it == d->info.end()) return CL_INVALID_VALUE;
      return out.bytes(it->second);
    });
  });
}

cl_int CL_API_CALL clRetainDevice(cl_device_id d) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    return CL_SUCCESS;  // root devices are not reference counted
  });
}

cl_int CL_API_CALL clReleaseDevice(cl_device_id d) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL clCreateSubDevices(cl_device_id d, const cl_device_partition_property* properties, cl_uint,
                                      cl_device_id*, cl_uint*) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    // CL_INVALID_VALUE if values specified in properties are not valid or if
    // values specified in properties are valid but not supported by the device.
    // Ferry does not partition remote devices yet.
    return properties == nullptr ? CL_INVALID_VALUE : CL_DEVICE_PARTITION_FAILED;
  });
}

cl_int CL_API_CALL clGetDeviceAndHostTimer(cl_device_id d, cl_ulong*, cl_ulong*) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    // CL_INVALID_OPERATION if the platform associated with device does not
    // support device and host timer synchronization (resolution 0).
    return CL_INVALID_OPERATION;
  });
}

cl_int CL_API_CALL clGetHostTimer(cl_device_id d, cl_ulong*) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(d);
    return CL_INVALID_OPERATION;
  });
}

}  // namespace ferry::client::api
