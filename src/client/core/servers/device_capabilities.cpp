#include "client/core/servers/device_capabilities.hpp"

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "client/core/servers/platform.hpp"

namespace ferry::client {

namespace {

// Extensions whose host API Ferry does not forward (prefixes match families
// such as cl_khr_command_buffer_mutable_dispatch). Kernel-language
// extensions are not listed: the server's compiler implements them.
constexpr std::string_view unserved_extensions[] = {
    "cl_khr_command_buffer",          // clCreateCommandBufferKHR and family
    "cl_khr_external_memory",         // import of external memory
    "cl_khr_external_semaphore",      //
    "cl_khr_semaphore",               //
    "cl_khr_gl_",                     // OpenGL sharing: the GL context is on another machine
    "cl_khr_egl_",                    //
    "cl_khr_d3d",                     // Direct3D sharing
    "cl_khr_dx9_",                    //
    "cl_khr_il_program",              // clCreateProgramWithILKHR (core clCreateProgramWithIL is served)
    "cl_khr_terminate_context",       // clTerminateContextKHR
    "cl_khr_suggested_local_work_size",
    "cl_khr_create_command_queue",    // clCreateCommandQueueWithPropertiesKHR
    "cl_khr_priority_hints",          // queue properties Ferry does not carry
    "cl_khr_throttle_hints",          //
    "cl_ext_device_fission",          // sub-devices are not served
    "cl_ext_migrate_memobject",       // clEnqueueMigrateMemObjectEXT
    "cl_intel_unified_shared_memory", // USM allocations live in the host's address space
    "cl_intel_accelerator",           //
    "cl_intel_motion_estimation",     //
    "cl_intel_va_api_media_sharing",  //
    "cl_intel_dx9_media_sharing",     //
    "cl_intel_command_queue_families",
    "cl_intel_create_buffer_with_properties",
    "cl_nv_create_buffer",            // clCreateBufferNV
};

template <class T>
void set_value(device& d, cl_uint param, const T& value) {
  auto it = d.info.find(param);
  if (it == d.info.end()) return;  // the native device does not answer it either
  it->second.resize(sizeof(T));
  std::memcpy(it->second.data(), &value, sizeof(T));
}

void set_string(device& d, cl_uint param, std::string_view text) {
  auto it = d.info.find(param);
  if (it == d.info.end()) return;
  it->second.assign(text.begin(), text.end());
  it->second.push_back(0);
}

void set_empty(device& d, cl_uint param) {
  auto it = d.info.find(param);
  if (it != d.info.end()) it->second.clear();
}

std::string_view as_text(const std::vector<uint8_t>& bytes) {
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  while (!text.empty() && text.back() == '\0') text.remove_suffix(1);
  return text;
}

void filter_extension_string(device& d) {
  auto it = d.info.find(CL_DEVICE_EXTENSIONS);
  if (it == d.info.end()) return;
  // Drops each unserved name with the spaces after it, and keeps the rest of
  // the native text as it was (some platforms pad with extra spaces).
  std::string_view all = as_text(it->second);
  std::string kept;
  size_t at = 0;
  while (at < all.size()) {
    size_t end = all.find(' ', at);
    if (end == std::string_view::npos) end = all.size();
    size_t next = all.find_first_not_of(' ', end);
    if (next == std::string_view::npos) next = all.size();
    std::string_view name = all.substr(at, end - at);
    if (name.empty() || extension_served(name)) kept.append(all.substr(at, next - at));
    at = next == at ? at + 1 : next;
  }
  set_string(d, CL_DEVICE_EXTENSIONS, kept);
}

void filter_extension_versions(device& d) {
  auto it = d.info.find(CL_DEVICE_EXTENSIONS_WITH_VERSION);
  if (it == d.info.end()) return;
  std::vector<cl_name_version> entries(it->second.size() / sizeof(cl_name_version));
  std::memcpy(entries.data(), it->second.data(), entries.size() * sizeof(cl_name_version));
  std::vector<cl_name_version> kept;
  for (const cl_name_version& entry : entries) {
    std::string_view name(entry.name, strnlen(entry.name, sizeof entry.name));
    if (extension_served(name)) kept.push_back(entry);
  }
  it->second.resize(kept.size() * sizeof(cl_name_version));
  if (!kept.empty()) std::memcpy(it->second.data(), kept.data(), it->second.size());
}

}  // namespace

bool extension_served(std::string_view name) {
  for (std::string_view prefix : unserved_extensions)
    if (name.starts_with(prefix)) return false;
  return true;
}

void restrict_to_served_capabilities(device& d) {
  // Fine-grained SVM needs memory that host and device share coherently
  // without maps, which a network cannot give: only coarse-grained buffers.
  if (d.info.count(CL_DEVICE_SVM_CAPABILITIES)) {
    auto svm = device_info_as<cl_device_svm_capabilities>(d, CL_DEVICE_SVM_CAPABILITIES);
    set_value(d, CL_DEVICE_SVM_CAPABILITIES, static_cast<cl_device_svm_capabilities>(svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER));
  }
  // A host function cannot run on a server: no native kernels
  // (clEnqueueNativeKernel answers CL_INVALID_OPERATION).
  if (d.info.count(CL_DEVICE_EXECUTION_CAPABILITIES)) {
    auto exec = device_info_as<cl_device_exec_capabilities>(d, CL_DEVICE_EXECUTION_CAPABILITIES);
    set_value(d, CL_DEVICE_EXECUTION_CAPABILITIES, static_cast<cl_device_exec_capabilities>(exec & ~CL_EXEC_NATIVE_KERNEL));
  }
  // The device's memory is on another machine.
  set_value(d, CL_DEVICE_HOST_UNIFIED_MEMORY, cl_bool{CL_FALSE});
  // No built-in kernels, sub-devices, pipes or device-side queues are served.
  set_string(d, CL_DEVICE_BUILT_IN_KERNELS, "");
  set_empty(d, CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION);
  set_value(d, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, cl_uint{0});
  set_value(d, CL_DEVICE_PARTITION_PROPERTIES, cl_device_partition_property{0});
  set_value(d, CL_DEVICE_PARTITION_AFFINITY_DOMAIN, cl_device_affinity_domain{0});
  set_value(d, CL_DEVICE_PIPE_SUPPORT, cl_bool{CL_FALSE});
  set_value(d, CL_DEVICE_MAX_PIPE_ARGS, cl_uint{0});
  set_value(d, CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS, cl_uint{0});
  set_value(d, CL_DEVICE_PIPE_MAX_PACKET_SIZE, cl_uint{0});
  set_value(d, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, cl_device_device_enqueue_capabilities{0});
  set_value(d, CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES, cl_command_queue_properties{0});
  set_value(d, CL_DEVICE_MAX_ON_DEVICE_QUEUES, cl_uint{0});
  set_value(d, CL_DEVICE_MAX_ON_DEVICE_EVENTS, cl_uint{0});
  set_value(d, CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE, cl_uint{0});
  set_value(d, CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE, cl_uint{0});
  filter_extension_string(d);
  filter_extension_versions(d);
}

}  // namespace ferry::client
