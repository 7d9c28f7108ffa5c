#include "server/native/info.hpp"

#include <CL/cl_ext.h>

namespace ferry::server::native {
namespace {

#define P(name) info_param{name, #name}

constexpr info_param platform_table[] = {
    P(CL_PLATFORM_PROFILE),
    P(CL_PLATFORM_VERSION),
    P(CL_PLATFORM_NAME),
    P(CL_PLATFORM_VENDOR),
    P(CL_PLATFORM_EXTENSIONS),
    P(CL_PLATFORM_HOST_TIMER_RESOLUTION),
    P(CL_PLATFORM_NUMERIC_VERSION),
    P(CL_PLATFORM_EXTENSIONS_WITH_VERSION),
};

constexpr info_param device_table[] = {
    // OpenCL 1.0
    P(CL_DEVICE_TYPE), P(CL_DEVICE_VENDOR_ID), P(CL_DEVICE_MAX_COMPUTE_UNITS),
    P(CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS), P(CL_DEVICE_MAX_WORK_GROUP_SIZE),
    P(CL_DEVICE_MAX_WORK_ITEM_SIZES), P(CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR),
    P(CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT), P(CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT),
    P(CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG), P(CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT),
    P(CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE), P(CL_DEVICE_MAX_CLOCK_FREQUENCY), P(CL_DEVICE_ADDRESS_BITS),
    P(CL_DEVICE_MAX_READ_IMAGE_ARGS), P(CL_DEVICE_MAX_WRITE_IMAGE_ARGS), P(CL_DEVICE_MAX_MEM_ALLOC_SIZE),
    P(CL_DEVICE_IMAGE2D_MAX_WIDTH), P(CL_DEVICE_IMAGE2D_MAX_HEIGHT), P(CL_DEVICE_IMAGE3D_MAX_WIDTH),
    P(CL_DEVICE_IMAGE3D_MAX_HEIGHT), P(CL_DEVICE_IMAGE3D_MAX_DEPTH), P(CL_DEVICE_IMAGE_SUPPORT),
    P(CL_DEVICE_MAX_PARAMETER_SIZE), P(CL_DEVICE_MAX_SAMPLERS), P(CL_DEVICE_MEM_BASE_ADDR_ALIGN),
    P(CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE), P(CL_DEVICE_SINGLE_FP_CONFIG), P(CL_DEVICE_GLOBAL_MEM_CACHE_TYPE),
    P(CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE), P(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE), P(CL_DEVICE_GLOBAL_MEM_SIZE),
    P(CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE), P(CL_DEVICE_MAX_CONSTANT_ARGS), P(CL_DEVICE_LOCAL_MEM_TYPE),
    P(CL_DEVICE_LOCAL_MEM_SIZE), P(CL_DEVICE_ERROR_CORRECTION_SUPPORT), P(CL_DEVICE_PROFILING_TIMER_RESOLUTION),
    P(CL_DEVICE_ENDIAN_LITTLE), P(CL_DEVICE_AVAILABLE), P(CL_DEVICE_COMPILER_AVAILABLE),
    P(CL_DEVICE_EXECUTION_CAPABILITIES), P(CL_DEVICE_QUEUE_PROPERTIES),  // = CL_DEVICE_QUEUE_ON_HOST_PROPERTIES
    P(CL_DEVICE_NAME), P(CL_DEVICE_VENDOR), P(CL_DRIVER_VERSION), P(CL_DEVICE_PROFILE), P(CL_DEVICE_VERSION),
    P(CL_DEVICE_EXTENSIONS),
    // OpenCL 1.1
    P(CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF), P(CL_DEVICE_HOST_UNIFIED_MEMORY),
    P(CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR), P(CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT),
    P(CL_DEVICE_NATIVE_VECTOR_WIDTH_INT), P(CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG),
    P(CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT), P(CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE),
    P(CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF), P(CL_DEVICE_OPENCL_C_VERSION),
    // OpenCL 1.2
    P(CL_DEVICE_DOUBLE_FP_CONFIG), P(CL_DEVICE_LINKER_AVAILABLE), P(CL_DEVICE_BUILT_IN_KERNELS),
    P(CL_DEVICE_IMAGE_MAX_BUFFER_SIZE), P(CL_DEVICE_IMAGE_MAX_ARRAY_SIZE), P(CL_DEVICE_PARTITION_MAX_SUB_DEVICES),
    P(CL_DEVICE_PARTITION_PROPERTIES), P(CL_DEVICE_PARTITION_AFFINITY_DOMAIN), P(CL_DEVICE_PARTITION_TYPE),
    P(CL_DEVICE_REFERENCE_COUNT), P(CL_DEVICE_PREFERRED_INTEROP_USER_SYNC), P(CL_DEVICE_PRINTF_BUFFER_SIZE),
    // OpenCL 2.0
    P(CL_DEVICE_IMAGE_PITCH_ALIGNMENT), P(CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT),
    P(CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS), P(CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE),
    P(CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES), P(CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE),
    P(CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE), P(CL_DEVICE_MAX_ON_DEVICE_QUEUES), P(CL_DEVICE_MAX_ON_DEVICE_EVENTS),
    P(CL_DEVICE_SVM_CAPABILITIES), P(CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE), P(CL_DEVICE_MAX_PIPE_ARGS),
    P(CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS), P(CL_DEVICE_PIPE_MAX_PACKET_SIZE),
    P(CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT), P(CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT),
    P(CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT),
    // OpenCL 2.1
    P(CL_DEVICE_IL_VERSION), P(CL_DEVICE_MAX_NUM_SUB_GROUPS), P(CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS),
    // OpenCL 3.0
    P(CL_DEVICE_NUMERIC_VERSION), P(CL_DEVICE_EXTENSIONS_WITH_VERSION), P(CL_DEVICE_ILS_WITH_VERSION),
    P(CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION), P(CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES),
    P(CL_DEVICE_ATOMIC_FENCE_CAPABILITIES), P(CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT),
    P(CL_DEVICE_OPENCL_C_ALL_VERSIONS), P(CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE),
    P(CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT), P(CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT),
    P(CL_DEVICE_OPENCL_C_FEATURES), P(CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES), P(CL_DEVICE_PIPE_SUPPORT),
    P(CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED),
    // Common extensions
    P(CL_DEVICE_HALF_FP_CONFIG), P(CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR), P(CL_DEVICE_UUID_KHR),
    P(CL_DRIVER_UUID_KHR), P(CL_DEVICE_LUID_VALID_KHR), P(CL_DEVICE_LUID_KHR), P(CL_DEVICE_NODE_MASK_KHR),
    P(CL_DEVICE_PCI_BUS_INFO_KHR), P(CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR),
    P(CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_8BIT_KHR),
    P(CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_4x8BIT_PACKED_KHR),
    P(CL_DEVICE_TERMINATE_CAPABILITY_KHR), P(CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR), P(CL_DEVICE_SPIR_VERSIONS),
    P(CL_DEVICE_SUB_GROUP_SIZES_INTEL), P(CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV),
    P(CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV), P(CL_DEVICE_REGISTERS_PER_BLOCK_NV), P(CL_DEVICE_WARP_SIZE_NV),
    P(CL_DEVICE_GPU_OVERLAP_NV), P(CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV), P(CL_DEVICE_INTEGRATED_MEMORY_NV),
    P(CL_DEVICE_TOPOLOGY_AMD), P(CL_DEVICE_BOARD_NAME_AMD), P(CL_DEVICE_SIMD_PER_COMPUTE_UNIT_AMD),
    P(CL_DEVICE_SIMD_WIDTH_AMD), P(CL_DEVICE_WAVEFRONT_WIDTH_AMD), P(CL_DEVICE_GFXIP_MAJOR_AMD),
    P(CL_DEVICE_GFXIP_MINOR_AMD),
};

#undef P

// Asks for the size, then the value; an error at either step leaves the param out.
template <class Query>
bool query_raw(Query&& query, std::vector<uint8_t>& out) {
  size_t size = 0;
  if (query(0, nullptr, &size) != CL_SUCCESS) return false;
  out.resize(size);
  if (size == 0) return true;
  size_t got = 0;
  if (query(size, out.data(), &got) != CL_SUCCESS) return false;
  out.resize(got < size ? got : size);
  return true;
}

}  // namespace

std::span<const info_param> platform_params() { return platform_table; }
std::span<const info_param> device_params() { return device_table; }

std::vector<protocol::info_entry> collect_platform_info(cl_platform_id platform) {
  std::vector<protocol::info_entry> out;
  for (const info_param& p : platform_table) {
    protocol::info_entry entry{p.param, {}};
    if (query_raw([&](size_t size, void* value, size_t* ret) { return clGetPlatformInfo(platform, p.param, size, value, ret); },
                  entry.value))
      out.push_back(std::move(entry));
  }
  return out;
}

std::vector<protocol::info_entry> collect_device_info(cl_device_id device) {
  std::vector<protocol::info_entry> out;
  for (const info_param& p : device_table) {
    protocol::info_entry entry{p.param, {}};
    if (query_raw([&](size_t size, void* value, size_t* ret) { return clGetDeviceInfo(device, p.param, size, value, ret); },
                  entry.value))
      out.push_back(std::move(entry));
  }
  return out;
}

std::string platform_string(cl_platform_id platform, cl_platform_info param) {
  std::vector<uint8_t> raw;
  if (!query_raw([&](size_t size, void* value, size_t* ret) { return clGetPlatformInfo(platform, param, size, value, ret); }, raw))
    return {};
  std::string text(raw.begin(), raw.end());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

std::string device_string(cl_device_id device, cl_device_info param) {
  std::vector<uint8_t> raw;
  if (!query_raw([&](size_t size, void* value, size_t* ret) { return clGetDeviceInfo(device, param, size, value, ret); }, raw))
    return {};
  std::string text(raw.begin(), raw.end());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

}  // namespace ferry::server::native
