#include "cli/reports/cuda_query.hpp"

#include <dlfcn.h>

#include "cli/reports/format.hpp"

namespace ferry::cli {
namespace {

// The few entry points it calls, with the driver API's C types.
using init_fn = int (*)(unsigned);
using count_fn = int (*)(int*);
using get_fn = int (*)(int*, int);
using name_fn = int (*)(char*, int, int);
using attribute_fn = int (*)(int*, int, int);
using total_fn = int (*)(std::size_t*, int);
using error_name_fn = int (*)(int, const char**);

// CUdevice_attribute values.
constexpr int multiprocessor_count = 16, capability_major = 75, capability_minor = 76;
constexpr int no_device = 100;

}  // namespace

cuda_listing query_cuda_devices(const std::filesystem::path& library) {
  cuda_listing out;
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    out.problem = "cannot load " + library.string() + ": " + (why ? why : "unknown error");
    return out;
  }
  auto init = reinterpret_cast<init_fn>(dlsym(handle, "cuInit"));
  auto count = reinterpret_cast<count_fn>(dlsym(handle, "cuDeviceGetCount"));
  auto get = reinterpret_cast<get_fn>(dlsym(handle, "cuDeviceGet"));
  auto name = reinterpret_cast<name_fn>(dlsym(handle, "cuDeviceGetName"));
  auto attribute = reinterpret_cast<attribute_fn>(dlsym(handle, "cuDeviceGetAttribute"));
  auto total = reinterpret_cast<total_fn>(dlsym(handle, "cuDeviceTotalMem_v2"));
  auto error_name = reinterpret_cast<error_name_fn>(dlsym(handle, "cuGetErrorName"));
  if (!init || !count || !get || !name || !attribute || !total) {
    out.problem = library.string() + " lacks the driver API's device calls";
    return out;
  }
  // The library stays loaded: its connections end with the process.
  if (int rc = init(0); rc != 0) {
    const char* text = nullptr;
    if (rc == no_device) {
      out.problem = "no server has a CUDA device";
    } else {
      out.problem = "cuInit failed with " + std::string(error_name && error_name(rc, &text) == 0 && text ? text
                                                                                                      : std::to_string(rc));
    }
    return out;
  }
  int devices = 0;
  if (count(&devices) != 0) {
    out.problem = "cuDeviceGetCount failed";
    return out;
  }
  for (int i = 0; i < devices; ++i) {
    cuda_device_entry e;
    int device = 0;
    char text[256] = {};
    std::size_t bytes = 0;
    if (get(&device, i) != 0 || name(text, sizeof text, device) != 0) continue;
    e.ordinal = i;
    e.name = text;
    attribute(&e.major, capability_major, device);
    attribute(&e.minor, capability_minor, device);
    attribute(&e.multiprocessors, multiprocessor_count, device);
    if (total(&bytes, device) == 0) e.total_memory = bytes;
    out.devices.push_back(std::move(e));
  }
  if (out.devices.empty()) out.problem = "no server has a CUDA device";
  return out;
}

std::string render_cuda_report(const cuda_listing& listing) {
  if (listing.devices.empty()) return "CUDA: none (" + listing.problem + ")\n";
  std::string out = "CUDA devices (ferry run --cuda):\n";
  for (const cuda_device_entry& d : listing.devices) {
    out += "  [cuda " + std::to_string(d.ordinal) + "] " + d.name + ", compute capability " + std::to_string(d.major) +
           "." + std::to_string(d.minor) + ", " + std::to_string(d.multiprocessors) + " multiprocessors, " +
           format_bytes(d.total_memory) + "\n";
  }
  return out;
}

}  // namespace ferry::cli
