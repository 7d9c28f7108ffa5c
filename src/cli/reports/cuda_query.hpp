// What `ferry devices` lists of CUDA devices: it asks Ferry's own libcuda.so.1
// (loaded by path from the install tree, so it never takes NVIDIA's driver),
// which reaches the same servers as the OpenCL platform.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ferry::cli {

struct cuda_device_entry {
  int ordinal = 0;  ///< the program's device number (servers in order)
  std::string name;
  int major = 0, minor = 0;  ///< compute capability
  int multiprocessors = 0;
  std::uint64_t total_memory = 0;
};

struct cuda_listing {
  std::vector<cuda_device_entry> devices;
  /// Why there are none (empty when the driver answered with devices).
  std::string problem;
};

/// Loads `library` (Ferry's libcuda.so.1) and lists its devices.
cuda_listing query_cuda_devices(const std::filesystem::path& library);

/// The lines `ferry devices` prints for them.
std::string render_cuda_report(const cuda_listing& listing);

}  // namespace ferry::cli
