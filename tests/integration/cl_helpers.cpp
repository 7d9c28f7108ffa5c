#include "cl_helpers.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

#include "kernels.hpp"

namespace ferry::test {

std::string cl_error_name(cl_int code) {
  switch (code) {
#define FERRY_IT_CODE(c) \
  case c:                \
    return #c;
    FERRY_IT_CODE(CL_SUCCESS)
    FERRY_IT_CODE(CL_DEVICE_NOT_FOUND)
    FERRY_IT_CODE(CL_DEVICE_NOT_AVAILABLE)
    FERRY_IT_CODE(CL_COMPILER_NOT_AVAILABLE)
    FERRY_IT_CODE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    FERRY_IT_CODE(CL_OUT_OF_RESOURCES)
    FERRY_IT_CODE(CL_OUT_OF_HOST_MEMORY)
    FERRY_IT_CODE(CL_PROFILING_INFO_NOT_AVAILABLE)
    FERRY_IT_CODE(CL_MEM_COPY_OVERLAP)
    FERRY_IT_CODE(CL_IMAGE_FORMAT_MISMATCH)
    FERRY_IT_CODE(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    FERRY_IT_CODE(CL_BUILD_PROGRAM_FAILURE)
    FERRY_IT_CODE(CL_MAP_FAILURE)
    FERRY_IT_CODE(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    FERRY_IT_CODE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    FERRY_IT_CODE(CL_COMPILE_PROGRAM_FAILURE)
    FERRY_IT_CODE(CL_LINKER_NOT_AVAILABLE)
    FERRY_IT_CODE(CL_LINK_PROGRAM_FAILURE)
    FERRY_IT_CODE(CL_DEVICE_PARTITION_FAILED)
    FERRY_IT_CODE(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    FERRY_IT_CODE(CL_INVALID_VALUE)
    FERRY_IT_CODE(CL_INVALID_DEVICE_TYPE)
    FERRY_IT_CODE(CL_INVALID_PLATFORM)
    FERRY_IT_CODE(CL_INVALID_DEVICE)
    FERRY_IT_CODE(CL_INVALID_CONTEXT)
    FERRY_IT_CODE(CL_INVALID_QUEUE_PROPERTIES)
    FERRY_IT_CODE(CL_INVALID_COMMAND_QUEUE)
    FERRY_IT_CODE(CL_INVALID_HOST_PTR)
    FERRY_IT_CODE(CL_INVALID_MEM_OBJECT)
    FERRY_IT_CODE(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    FERRY_IT_CODE(CL_INVALID_IMAGE_SIZE)
    FERRY_IT_CODE(CL_INVALID_SAMPLER)
    FERRY_IT_CODE(CL_INVALID_BINARY)
    FERRY_IT_CODE(CL_INVALID_BUILD_OPTIONS)
    FERRY_IT_CODE(CL_INVALID_PROGRAM)
    FERRY_IT_CODE(CL_INVALID_PROGRAM_EXECUTABLE)
    FERRY_IT_CODE(CL_INVALID_KERNEL_NAME)
    FERRY_IT_CODE(CL_INVALID_KERNEL_DEFINITION)
    FERRY_IT_CODE(CL_INVALID_KERNEL)
    FERRY_IT_CODE(CL_INVALID_ARG_INDEX)
    FERRY_IT_CODE(CL_INVALID_ARG_VALUE)
    FERRY_IT_CODE(CL_INVALID_ARG_SIZE)
    FERRY_IT_CODE(CL_INVALID_KERNEL_ARGS)
    FERRY_IT_CODE(CL_INVALID_WORK_DIMENSION)
    FERRY_IT_CODE(CL_INVALID_WORK_GROUP_SIZE)
    FERRY_IT_CODE(CL_INVALID_WORK_ITEM_SIZE)
    FERRY_IT_CODE(CL_INVALID_GLOBAL_OFFSET)
    FERRY_IT_CODE(CL_INVALID_EVENT_WAIT_LIST)
    FERRY_IT_CODE(CL_INVALID_EVENT)
    FERRY_IT_CODE(CL_INVALID_OPERATION)
    FERRY_IT_CODE(CL_INVALID_GL_OBJECT)
    FERRY_IT_CODE(CL_INVALID_BUFFER_SIZE)
    FERRY_IT_CODE(CL_INVALID_MIP_LEVEL)
    FERRY_IT_CODE(CL_INVALID_GLOBAL_WORK_SIZE)
    FERRY_IT_CODE(CL_INVALID_PROPERTY)
    FERRY_IT_CODE(CL_INVALID_IMAGE_DESCRIPTOR)
    FERRY_IT_CODE(CL_INVALID_COMPILER_OPTIONS)
    FERRY_IT_CODE(CL_INVALID_LINKER_OPTIONS)
    FERRY_IT_CODE(CL_INVALID_DEVICE_PARTITION_COUNT)
    FERRY_IT_CODE(CL_INVALID_PIPE_SIZE)
    FERRY_IT_CODE(CL_INVALID_DEVICE_QUEUE)
    FERRY_IT_CODE(CL_INVALID_SPEC_ID)
    FERRY_IT_CODE(CL_MAX_SIZE_RESTRICTION_EXCEEDED)
#undef FERRY_IT_CODE
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "CL_<unknown " + std::to_string(code) + ">";
  }
}

void PrintTo(const cl_status& status, std::ostream* os) {
  *os << cl_error_name(status.code) << " (" << status.code << ")";
}

std::vector<cl_platform_id> all_platforms() {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_platform_id> platforms(count);
  if (clGetPlatformIDs(count, platforms.data(), nullptr) != CL_SUCCESS) return {};
  return platforms;
}

std::string platform_name(cl_platform_id platform) {
  size_t size = 0;
  if (clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string name(size, '\0');
  if (clGetPlatformInfo(platform, CL_PLATFORM_NAME, size, name.data(), nullptr) != CL_SUCCESS)
    return {};
  while (!name.empty() && name.back() == '\0') name.pop_back();
  return name;
}

cl_platform_id find_ferry_platform() {
  if constexpr (self_check) return find_native_platform();
  for (cl_platform_id p : all_platforms())
    if (platform_name(p) == CL_FERRY_PLATFORM_NAME) return p;
  return nullptr;
}

cl_platform_id find_native_platform() {
  cl_platform_id first = nullptr;
  for (cl_platform_id p : all_platforms()) {
    const std::string name = platform_name(p);
    if (name == "Portable Computing Language") return p;
    if (name != CL_FERRY_PLATFORM_NAME && first == nullptr) first = p;
  }
  return first;
}

std::vector<cl_device_id> platform_devices(cl_platform_id platform, cl_device_type type) {
  cl_uint count = 0;
  if (clGetDeviceIDs(platform, type, 0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_device_id> devices(count);
  if (clGetDeviceIDs(platform, type, count, devices.data(), nullptr) != CL_SUCCESS) return {};
  return devices;
}

std::pair<int, int> device_version(cl_device_id device) {
  char text[256] = {};
  if (clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof text - 1, text, nullptr) != CL_SUCCESS)
    return {0, 0};
  int major = 0, minor = 0;
  if (std::sscanf(text, "OpenCL %d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

void* ferry_extension(cl_platform_id platform, const char* name) {
  return clGetExtensionFunctionAddressForPlatform(platform, name);
}

std::optional<cl_ferry_object_counts> object_counts(cl_platform_id platform, cl_device_id device,
                                                    cl_int* error) {
  auto fn = reinterpret_cast<clFerryGetObjectCounts_fn>(
      ferry_extension(platform, "clFerryGetObjectCounts"));
  if (fn == nullptr) {
    if (error != nullptr) *error = CL_INVALID_OPERATION;
    return std::nullopt;
  }
  cl_ferry_object_counts counts{};
  const cl_int rc = fn(device, &counts);
  if (error != nullptr) *error = rc;
  if (rc != CL_SUCCESS) return std::nullopt;
  return counts;
}

void wait_for_counts(cl_platform_id platform, cl_device_id device, const cl_ferry_object_counts& baseline,
                     std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const auto counts = object_counts(platform, device);
    if (!counts ||
        (counts->client_objects <= baseline.client_objects && counts->server_objects <= baseline.server_objects) ||
        std::chrono::steady_clock::now() > deadline)
      return;
    std::this_thread::yield();
  }
}

void expect_no_leaks(cl_platform_id platform, cl_device_id device) {
  if constexpr (self_check) return;
  ASSERT_NE(ferry_extension(platform, "clFerryGetObjectCounts"), nullptr)
      << "clGetExtensionFunctionAddressForPlatform(Ferry, \"clFerryGetObjectCounts\") is NULL";
  cl_int rc = CL_SUCCESS;
  auto counts = object_counts(platform, device, &rc);
  ASSERT_CL_OK(rc);
  EXPECT_EQ(counts->client_objects, 0u) << "Ferry objects still alive in this process";
  EXPECT_EQ(counts->server_objects, 0u) << "native objects still alive in this session on ferryd";
}

std::string build_log(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
      CL_SUCCESS)
    return "<no build log>";
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

program_handle build_program(cl_context context, cl_device_id device, std::string_view source,
                             const char* options, bool report) {
  const char* text = source.data();
  const size_t length = source.size();
  cl_int rc = CL_SUCCESS;
  program_handle program(clCreateProgramWithSource(context, 1, &text, &length, &rc));
  if (rc != CL_SUCCESS) {
    if (report) ADD_FAILURE() << "clCreateProgramWithSource: " << cl_error_name(rc);
    return {};
  }
  rc = clBuildProgram(program, 1, &device, options, nullptr, nullptr);
  if (rc != CL_SUCCESS) {
    if (report)
      ADD_FAILURE() << "clBuildProgram: " << cl_error_name(rc) << "\n" << build_log(program, device);
    return {};
  }
  return program;
}

kernel_handle create_kernel(cl_program program, const char* name) {
  cl_int rc = CL_SUCCESS;
  kernel_handle kernel(clCreateKernel(program, name, &rc));
  EXPECT_CL_OK(rc) << " creating kernel " << name;
  return kernel;
}

mem_handle create_buffer(cl_context context, cl_mem_flags flags, size_t size, void* host) {
  cl_int rc = CL_SUCCESS;
  mem_handle mem(clCreateBuffer(context, flags, size, host, &rc));
  EXPECT_CL_OK(rc) << " creating a buffer of " << size << " bytes";
  return mem;
}

std::string run_vector_add(cl_device_id device, size_t n, float scale) {
  // Plain C API with explicit cleanup: children run this without gtest.
  std::string error;
  auto fail = [&](const char* what, cl_int rc) {
    if (error.empty()) error = std::string(what) + ": " + cl_error_name(rc);
  };
  cl_int rc = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  if (rc != CL_SUCCESS) return "clCreateContext: " + cl_error_name(rc);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &rc);
  if (rc != CL_SUCCESS) fail("clCreateCommandQueue", rc);
  const char* src = kernels::vector_add;
  cl_program program = clCreateProgramWithSource(context, 1, &src, nullptr, &rc);
  if (rc != CL_SUCCESS) fail("clCreateProgramWithSource", rc);
  if (error.empty()) {
    rc = clBuildProgram(program, 1, &device, "", nullptr, nullptr);
    if (rc != CL_SUCCESS) error = "clBuildProgram: " + cl_error_name(rc) + "\n" + build_log(program, device);
  }
  cl_kernel kernel = nullptr;
  if (error.empty()) {
    kernel = clCreateKernel(program, "vector_add", &rc);
    if (rc != CL_SUCCESS) fail("clCreateKernel", rc);
  }
  std::vector<float> a(n), b(n), c(n, -1.0f);
  for (size_t i = 0; i < n; ++i) {
    a[i] = scale * static_cast<float>(i);
    b[i] = static_cast<float>(n - i) * 0.5f;
  }
  cl_mem ma = nullptr, mb = nullptr, mc = nullptr;
  if (error.empty()) {
    ma = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float), a.data(), &rc);
    if (rc != CL_SUCCESS) fail("clCreateBuffer a", rc);
    mb = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(float), b.data(), &rc);
    if (rc != CL_SUCCESS) fail("clCreateBuffer b", rc);
    mc = clCreateBuffer(context, CL_MEM_WRITE_ONLY, n * sizeof(float), nullptr, &rc);
    if (rc != CL_SUCCESS) fail("clCreateBuffer c", rc);
  }
  if (error.empty()) {
    if ((rc = clSetKernelArg(kernel, 0, sizeof(cl_mem), &ma)) != CL_SUCCESS) fail("clSetKernelArg 0", rc);
    if ((rc = clSetKernelArg(kernel, 1, sizeof(cl_mem), &mb)) != CL_SUCCESS) fail("clSetKernelArg 1", rc);
    if ((rc = clSetKernelArg(kernel, 2, sizeof(cl_mem), &mc)) != CL_SUCCESS) fail("clSetKernelArg 2", rc);
  }
  if (error.empty()) {
    rc = clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &n, nullptr, 0, nullptr, nullptr);
    if (rc != CL_SUCCESS) fail("clEnqueueNDRangeKernel", rc);
  }
  if (error.empty()) {
    rc = clEnqueueReadBuffer(queue, mc, CL_TRUE, 0, n * sizeof(float), c.data(), 0, nullptr, nullptr);
    if (rc != CL_SUCCESS) fail("clEnqueueReadBuffer", rc);
  }
  if (error.empty()) {
    for (size_t i = 0; i < n; ++i) {
      if (c[i] != a[i] + b[i]) {
        error = "c[" + std::to_string(i) + "] = " + std::to_string(c[i]) + ", expected " +
                std::to_string(a[i] + b[i]);
        break;
      }
    }
  }
  for (cl_mem m : {ma, mb, mc})
    if (m != nullptr && (rc = clReleaseMemObject(m)) != CL_SUCCESS) fail("clReleaseMemObject", rc);
  if (kernel != nullptr && (rc = clReleaseKernel(kernel)) != CL_SUCCESS) fail("clReleaseKernel", rc);
  if (program != nullptr && (rc = clReleaseProgram(program)) != CL_SUCCESS) fail("clReleaseProgram", rc);
  if (queue != nullptr && (rc = clReleaseCommandQueue(queue)) != CL_SUCCESS) fail("clReleaseCommandQueue", rc);
  if ((rc = clReleaseContext(context)) != CL_SUCCESS) fail("clReleaseContext", rc);
  return error;
}

std::string try_open_side(cl_side& side, cl_platform_id platform) {
  if (platform == nullptr) return "no such platform";
  side.platform = platform;
  auto devices = platform_devices(platform);
  if (devices.empty()) return "platform \"" + platform_name(platform) + "\" has no devices";
  side.device = devices.front();
  cl_int rc = CL_SUCCESS;
  side.context.reset(clCreateContext(nullptr, 1, &side.device, nullptr, nullptr, &rc));
  if (rc != CL_SUCCESS) return "clCreateContext on " + platform_name(platform) + ": " + cl_error_name(rc);
  side.queue.reset(clCreateCommandQueue(side.context, side.device, 0, &rc));
  if (rc != CL_SUCCESS) return "clCreateCommandQueue on " + platform_name(platform) + ": " + cl_error_name(rc);
  return {};
}

void open_side(cl_side& side, cl_platform_id platform) {
  const std::string error = try_open_side(side, platform);
  ASSERT_EQ(error, "");
}

void ferry_test::SetUp() {
  cl_platform_id platform = find_ferry_platform();
  ASSERT_NE(platform, nullptr) << "the Ferry platform is not among the loader's platforms "
                                  "(OCL_ICD_VENDORS=" << (std::getenv("OCL_ICD_VENDORS") ?: "")
                               << "); refusing to test anything else";
  if constexpr (!self_check) {
    ASSERT_EQ(platform_name(platform), CL_FERRY_PLATFORM_NAME);
  }
  ASSERT_NO_FATAL_FAILURE(open_side(ferry_, platform));
  platform_ = ferry_.platform;
  device_ = ferry_.device;
  context_ = ferry_.context;
  queue_ = ferry_.queue;
}

void ferry_test::TearDown() {
  if (ferry_.queue) {
    EXPECT_CL_OK(clFinish(ferry_.queue));
  }
  ferry_.queue.reset();
  ferry_.context.reset();
  queue_ = nullptr;
  context_ = nullptr;
  if (platform_ != nullptr && device_ != nullptr) expect_no_leaks(platform_, device_);
}

void ferry_and_native_test::SetUp() {
  ASSERT_NO_FATAL_FAILURE(ferry_test::SetUp());
  cl_platform_id native = find_native_platform();
  ASSERT_NE(native, nullptr) << "no native platform beside Ferry (OCL_ICD_VENDORS should name "
                                "the vendors-all directory)";
  ASSERT_NO_FATAL_FAILURE(open_side(native_, native));
}

void ferry_and_native_test::TearDown() {
  if (native_.queue) {
    EXPECT_CL_OK(clFinish(native_.queue));
  }
  native_.queue.reset();
  native_.context.reset();
  ferry_test::TearDown();
}

}  // namespace ferry::test
