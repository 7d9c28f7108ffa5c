#include "native_device.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ferry::bench::native {

void check(cl_int rc, const char* what) {
  if (rc != CL_SUCCESS) throw failure{std::string(what) + " failed: " + std::to_string(rc)};
}

const char* option_value(const char* program, int argc, char** argv, int& i) {
  if (i + 1 >= argc) {
    std::fprintf(stderr, "%s: %s needs a value\n", program, argv[i]);
    std::exit(2);
  }
  return argv[++i];
}

device::device(const std::string& platform_name) {
  cl_uint count = 0;
  check(clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  for (cl_platform_id p : platforms) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
    if (std::string(name) == "Ferry") continue;
    if (platform_name.empty() || std::strstr(name, platform_name.c_str())) {
      platform = p;
      this->platform_name = name;
      break;
    }
  }
  if (platform == nullptr) throw failure{"no OpenCL platform named like '" + platform_name + "'"};
  check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &id, nullptr), "clGetDeviceIDs");
  char name[256] = {};
  clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
  device_name = name;
  cl_int error = CL_SUCCESS;
  context = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &error);
  check(error, "clCreateContext");
}

device::~device() {
  for (cl_kernel k : kernels_) clReleaseKernel(k);
  for (cl_program p : programs_) clReleaseProgram(p);
  clReleaseContext(context);
}

cl_kernel device::kernel(const char* source, const char* name) {
  cl_int error = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &error);
  check(error, "clCreateProgramWithSource");
  programs_.push_back(program);
  check(clBuildProgram(program, 1, &id, "", nullptr, nullptr), "clBuildProgram");
  cl_kernel k = clCreateKernel(program, name, &error);
  check(error, "clCreateKernel");
  kernels_.push_back(k);
  return k;
}

}  // namespace ferry::bench::native
