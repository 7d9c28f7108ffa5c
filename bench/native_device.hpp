// One device of a native OpenCL platform (never Ferry's), for the benchmarks
// that measure the platform itself and start no daemon (native_completions,
// native_overlap).
#pragma once

#include <CL/cl.h>

#include <string>
#include <vector>

namespace ferry::bench::native {

/// An OpenCL call failed, or no platform matched.
struct failure {
  std::string what;
};

/// Throws failure naming `what` unless rc is CL_SUCCESS.
void check(cl_int rc, const char* what);

/// The first device of the first platform other than Ferry whose name
/// contains `platform_name` (any, when empty), with a context over it.
struct device {
  explicit device(const std::string& platform_name);
  ~device();
  device(const device&) = delete;
  device& operator=(const device&) = delete;

  /// Builds `source` and returns its kernel `name`, released with this device.
  cl_kernel kernel(const char* source, const char* name);

  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  cl_context context = nullptr;
  std::string platform_name, device_name;

 private:
  std::vector<cl_program> programs_;
  std::vector<cl_kernel> kernels_;
};

}  // namespace ferry::bench::native
