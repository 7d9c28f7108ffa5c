#include "cuda/server/device_catalog.hpp"

#include <cstring>

#include "common/log.hpp"
#include "cuda/abi/result_names.hpp"

namespace ferry::cuda {
namespace {

std::string failed(const char* call, int ordinal, CUresult rc) {
  std::string text = call;
  if (ordinal >= 0) text += " (device " + std::to_string(ordinal) + ")";
  return text + " failed: " + describe_result(rc);
}

}  // namespace

std::vector<cuda_device_facts> list_cuda_devices(driver& drv, std::string& why) {
  std::vector<cuda_device_facts> devices;
  why.clear();
  CUresult rc = drv.cuInit(0);
  if (rc == CUDA_ERROR_NO_DEVICE) {
    why = "no CUDA device";
    return devices;
  }
  if (rc != CUDA_SUCCESS) {
    why = failed("cuInit", -1, rc);
    return devices;
  }
  int count = 0;
  rc = drv.cuDeviceGetCount(&count);
  if (rc != CUDA_SUCCESS) {
    why = failed("cuDeviceGetCount", -1, rc);
    return devices;
  }
  if (count <= 0) {
    why = "no CUDA device";
    return devices;
  }

  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    cuda_device_facts facts;
    facts.ordinal = ordinal;
    rc = drv.cuDeviceGet(&device, ordinal);
    if (rc != CUDA_SUCCESS) {
      why = failed("cuDeviceGet", ordinal, rc);
      FERRY_WARN("cuda", "%s: device left out", why.c_str());
      continue;
    }
    char name[256] = {};
    rc = drv.cuDeviceGetName(name, static_cast<int>(sizeof name), device);
    if (rc != CUDA_SUCCESS) {
      why = failed("cuDeviceGetName", ordinal, rc);
      FERRY_WARN("cuda", "%s: device left out", why.c_str());
      continue;
    }
    name[sizeof name - 1] = '\0';
    facts.name = name;

    std::size_t total = 0;
    rc = drv.cuDeviceTotalMem(&total, device);
    if (rc != CUDA_SUCCESS) {
      why = failed("cuDeviceTotalMem", ordinal, rc);
      FERRY_WARN("cuda", "%s: device left out", why.c_str());
      continue;
    }
    facts.total_memory = total;

    if (drv.cuDeviceGetUuid != nullptr) {
      CUuuid uuid{};
      rc = drv.cuDeviceGetUuid(&uuid, device);
      if (rc == CUDA_SUCCESS)
        std::memcpy(facts.uuid.data(), uuid.bytes, facts.uuid.size());
      else
        FERRY_DEBUG("cuda", "%s: the device's UUID is left zero", failed("cuDeviceGetUuid", ordinal, rc).c_str());
    }

    facts.attributes.assign(CU_DEVICE_ATTRIBUTE_MAX, 0);
    for (int attribute = 1; attribute < CU_DEVICE_ATTRIBUTE_MAX; ++attribute) {
      int value = 0;
      // An older driver rejects attributes newer than itself: those read as 0.
      if (drv.cuDeviceGetAttribute(&value, attribute, device) == CUDA_SUCCESS) facts.attributes[attribute] = value;
    }
    devices.push_back(std::move(facts));
  }
  return devices;
}

}  // namespace ferry::cuda
