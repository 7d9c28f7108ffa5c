// What the daemon tells clients about its CUDA devices: read once from the driver.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/server/driver.hpp"

namespace ferry::cuda {

/// One device as the driver describes it.
struct cuda_device_facts {
  int ordinal = 0;  ///< the driver's ordinal (cuDeviceGet)
  std::string name;
  std::array<std::uint8_t, 16> uuid{};  ///< zeros where the driver has no cuDeviceGetUuid
  std::uint64_t total_memory = 0;
  /// Indexed by CUdevice_attribute value, from 0 (unused) to CU_DEVICE_ATTRIBUTE_MAX - 1;
  /// an attribute the driver rejects (an older driver's unknown one) is 0.
  std::vector<int> attributes;
};

/// Initializes the driver (cuInit(0)) and describes every device. With no device the list
/// is empty and `why` says "no CUDA device"; if the driver fails, the list is empty and
/// `why` names the failing call and its result. A device that cannot be described is left
/// out, and `why` says which and why (the others are still listed).
std::vector<cuda_device_facts> list_cuda_devices(driver& drv, std::string& why);

}  // namespace ferry::cuda
