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

/// A kernel that keeps a device busy: `rounds` dependent multiply-adds per
/// work-item (kernel "spin", arguments: global float* data, int rounds).
inline constexpr const char* spin_kernel_source = R"(
kernel void spin(global float* data, int rounds) {
  float x = data[get_global_id(0)];
  for (int i = 0; i < rounds; ++i) x = x * 0.999f + 0.001f;
  data[get_global_id(0)] = x;
}
)";

/// Throws failure naming `what` unless rc is CL_SUCCESS.
void check(cl_int rc, const char* what);

/// The value after the option at argv[i] (i moves onto it); without one,
/// says so on stderr as `program` and exits with status 2.
const char* option_value(const char* program, int argc, char** argv, int& i);

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
