// Platform, device, context and queue queries through Ferry, compared with the native
// platform the daemon serves (the loader offers both: vendors-all).
#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

#include "cl_helpers.hpp"
#include "kernels.hpp"

namespace ferry::test {

suite_config this_suite() {
  suite_config config;
  config.loader = loader_mode::ferry_and_native;
  return config;
}

namespace {

// Devices of every native platform in this process (Ferry excluded): what ferryd serves.
std::vector<cl_device_id> native_devices(cl_device_type type) {
  std::vector<cl_device_id> out;
  for (cl_platform_id p : all_platforms()) {
    if (platform_name(p) == CL_FERRY_PLATFORM_NAME) continue;
    auto devices = platform_devices(p, type);
    out.insert(out.end(), devices.begin(), devices.end());
  }
  return out;
}

std::vector<std::string> sorted_names(const std::vector<cl_device_id>& devices) {
  std::vector<std::string> names;
  for (cl_device_id d : devices) names.push_back(device_string(d, CL_DEVICE_NAME));
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> extension_names(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream in(text);
  for (std::string name; in >> name;) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

// Host-API extensions that Ferry leaves out of a device's list (docs/extensions.md).
std::vector<std::string> served_only(std::vector<std::string> names) {
  static const char* const unserved[] = {"cl_khr_command_buffer", "cl_khr_external_memory", "cl_khr_external_semaphore",
                                         "cl_khr_semaphore", "cl_khr_gl_", "cl_khr_egl_", "cl_khr_d3d", "cl_khr_dx9_",
                                         "cl_khr_il_program", "cl_khr_terminate_context",
                                         "cl_khr_suggested_local_work_size", "cl_khr_create_command_queue",
                                         "cl_khr_priority_hints", "cl_khr_throttle_hints", "cl_ext_device_fission",
                                         "cl_ext_migrate_memobject",
                                         "cl_intel_unified_shared_memory", "cl_intel_accelerator",
                                         "cl_intel_motion_estimation", "cl_intel_va_api_media_sharing",
                                         "cl_intel_dx9_media_sharing", "cl_intel_command_queue_families",
                                         "cl_intel_create_buffer_with_properties", "cl_nv_create_buffer"};
  std::erase_if(names, [](const std::string& name) {
    return std::any_of(std::begin(unserved), std::end(unserved),
                       [&](const char* prefix) { return name.rfind(prefix, 0) == 0; });
  });
  return names;
}

cl_int device_count(cl_platform_id platform, cl_device_type type, cl_uint* count) {
  *count = 0;
  return clGetDeviceIDs(platform, type, 0, nullptr, count);
}

}  // namespace

using platform = ferry_and_native_test;
using device = ferry_and_native_test;
using context = ferry_and_native_test;
using queue = ferry_and_native_test;
using extension = ferry_and_native_test;

TEST(platform_lookup, loader_offers_ferry_and_a_native_platform) {
  if constexpr (self_check) GTEST_SKIP() << "needs Ferry";
  ASSERT_NE(find_ferry_platform(), nullptr) << "no platform named \"Ferry\"";
  ASSERT_NE(find_native_platform(), nullptr);
  EXPECT_NE(find_ferry_platform(), find_native_platform()) << (self_check ? "(self-check)" : "");
}

TEST_F(platform, info_strings_describe_ferry) {
  if constexpr (!self_check) {
    EXPECT_EQ(platform_string(platform_, CL_PLATFORM_NAME), "Ferry");
    const std::string extensions = platform_string(platform_, CL_PLATFORM_EXTENSIONS);
    EXPECT_NE(extensions.find("cl_khr_icd"), std::string::npos) << extensions;
    EXPECT_NE(extensions.find(CL_FERRY_REMOTE_EXTENSION_NAME), std::string::npos) << extensions;
  }
  EXPECT_EQ(platform_string(platform_, CL_PLATFORM_PROFILE), "FULL_PROFILE");
  const std::string version = platform_string(platform_, CL_PLATFORM_VERSION);
  int major = 0, minor = 0;
  ASSERT_EQ(std::sscanf(version.c_str(), "OpenCL %d.%d", &major, &minor), 2) << version;
  EXPECT_GE(major * 10 + minor, 12) << version;
  EXPECT_FALSE(platform_string(platform_, CL_PLATFORM_VENDOR).empty());
  EXPECT_FALSE(platform_string(platform_, CL_PLATFORM_ICD_SUFFIX_KHR).empty());
}

TEST_F(platform, info_sizes_are_negotiated_as_the_spec_says) {
  for (cl_platform_id p : {platform_, native_.platform}) {
    SCOPED_TRACE(platform_name(p));
    size_t size = 0;
    ASSERT_CL_OK(clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, nullptr, &size));
    EXPECT_EQ(size, platform_name(p).size() + 1);
    // CL_INVALID_VALUE if the size in bytes specified by param_value_size is < size of
    // return type and param_value is not a NULL value.
    char small[2];
    EXPECT_CL(CL_INVALID_VALUE, clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof small, small, nullptr));
    // CL_INVALID_VALUE if param_name is not one of the supported values.
    EXPECT_CL(CL_INVALID_VALUE, clGetPlatformInfo(p, 0x7fff, 0, nullptr, &size));
  }
}

TEST_F(device, ferry_offers_the_native_devices_under_their_names) {
  const auto ferry_devices = platform_devices(platform_);
  const auto native = native_devices(CL_DEVICE_TYPE_ALL);
  ASSERT_FALSE(native.empty());
  EXPECT_EQ(ferry_devices.size(), native.size());
  EXPECT_EQ(sorted_names(ferry_devices), sorted_names(native));
  for (cl_device_id d : ferry_devices)
    EXPECT_EQ(device_value<cl_platform_id>(d, CL_DEVICE_PLATFORM), platform_);
}

TEST_F(device, type_filters_agree_with_native) {
  for (cl_device_type type : std::initializer_list<cl_device_type>{CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ACCELERATOR,
                              CL_DEVICE_TYPE_CUSTOM, CL_DEVICE_TYPE_ALL}) {
    SCOPED_TRACE("device type " + std::to_string(type));
    const auto native = native_devices(type);
    cl_uint count = 0;
    // CL_DEVICE_NOT_FOUND if no OpenCL devices that matched device_type were found.
    EXPECT_CL(native.empty() ? CL_DEVICE_NOT_FOUND : CL_SUCCESS, device_count(platform_, type, &count));
    EXPECT_EQ(count, native.size());
    if (!native.empty()) {
      const auto ferry_devices = platform_devices(platform_, type);
      EXPECT_EQ(sorted_names(ferry_devices), sorted_names(native));
      for (cl_device_id d : ferry_devices)
        EXPECT_EQ(device_value<cl_device_type>(d, CL_DEVICE_TYPE) & type,
                  type == CL_DEVICE_TYPE_ALL ? device_value<cl_device_type>(d, CL_DEVICE_TYPE) : type);
    }
  }
  cl_uint count = 0;
  EXPECT_CL_OK(device_count(platform_, CL_DEVICE_TYPE_DEFAULT, &count));
  EXPECT_GE(count, 1u);
}

TEST_F(device, bad_device_queries_return_spec_codes) {
  cl_device_id d = nullptr;
  cl_uint count = 0;
  // CL_INVALID_DEVICE_TYPE if device_type is not a valid value. (PoCL 3.1 answers
  // CL_DEVICE_NOT_FOUND.)
  EXPECT_CL_SPEC(CL_INVALID_DEVICE_TYPE, clGetDeviceIDs(platform_, cl_device_type{1} << 40, 1, &d, &count));
  for (cl_platform_id p : {platform_, native_.platform}) {
    SCOPED_TRACE(platform_name(p));
    // CL_INVALID_VALUE if num_entries is equal to zero and devices is not NULL or if both
    // num_devices and devices are NULL.
    EXPECT_CL(CL_INVALID_VALUE, clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, &d, nullptr));
    EXPECT_CL(CL_INVALID_VALUE, clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, nullptr, nullptr));
    // CL_INVALID_VALUE if param_name is not one of the supported values.
    size_t size = 0;
    EXPECT_CL(CL_INVALID_VALUE, clGetDeviceInfo(platform_devices(p).front(), 0x7ffe, 0, nullptr, &size));
  }
}

TEST_F(device, info_matches_the_native_device) {
  cl_device_id f = device_;
  cl_device_id n = native_.device;
  for (cl_device_info param : {CL_DEVICE_NAME, CL_DEVICE_VENDOR, CL_DEVICE_PROFILE, CL_DEVICE_OPENCL_C_VERSION})
    EXPECT_EQ(device_string(f, param), device_string(n, param)) << "param 0x" << std::hex << param;
  // The native extensions, less those whose host API Ferry does not serve (docs/extensions.md).
  EXPECT_EQ(extension_names(device_string(f, CL_DEVICE_EXTENSIONS)),
            served_only(extension_names(device_string(n, CL_DEVICE_EXTENSIONS))));
  for (cl_device_info param : {CL_DEVICE_VENDOR_ID, CL_DEVICE_MAX_COMPUTE_UNITS,
                               CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, CL_DEVICE_MAX_CLOCK_FREQUENCY,
                               CL_DEVICE_ADDRESS_BITS, CL_DEVICE_MEM_BASE_ADDR_ALIGN,
                               CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT,
                               CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
                               CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, CL_DEVICE_ENDIAN_LITTLE,
                               CL_DEVICE_AVAILABLE, CL_DEVICE_COMPILER_AVAILABLE})
    EXPECT_EQ(device_value<cl_uint>(f, param), device_value<cl_uint>(n, param)) << "param 0x" << std::hex << param;
  for (cl_device_info param : {CL_DEVICE_MAX_MEM_ALLOC_SIZE, CL_DEVICE_GLOBAL_MEM_SIZE,
                               CL_DEVICE_LOCAL_MEM_SIZE, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE,
                               CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, CL_DEVICE_SINGLE_FP_CONFIG,
                               CL_DEVICE_TYPE})
    EXPECT_EQ(device_value<cl_ulong>(f, param), device_value<cl_ulong>(n, param)) << "param 0x" << std::hex << param;
  for (cl_device_info param : {CL_DEVICE_MAX_WORK_GROUP_SIZE, CL_DEVICE_MAX_PARAMETER_SIZE,
                               CL_DEVICE_PRINTF_BUFFER_SIZE})
    EXPECT_EQ(device_value<size_t>(f, param), device_value<size_t>(n, param)) << "param 0x" << std::hex << param;
  EXPECT_EQ(info_array<size_t>(FERRY_IT_INFO_QUERY(clGetDeviceInfo, f, CL_DEVICE_MAX_WORK_ITEM_SIZES)),
            info_array<size_t>(FERRY_IT_INFO_QUERY(clGetDeviceInfo, n, CL_DEVICE_MAX_WORK_ITEM_SIZES)));
  EXPECT_EQ(device_value<cl_bool>(f, CL_DEVICE_AVAILABLE), CL_TRUE);
}

TEST_F(device, capabilities_ferry_cannot_serve_are_reported_absent) {
  // Fine-grained SVM cannot cross a network: at most coarse-grained buffers.
  auto svm = device_value<cl_device_svm_capabilities>(device_, CL_DEVICE_SVM_CAPABILITIES);
  EXPECT_EQ(svm & ~cl_device_svm_capabilities{CL_DEVICE_SVM_COARSE_GRAIN_BUFFER}, 0u);
  EXPECT_EQ(svm, device_value<cl_device_svm_capabilities>(native_.device, CL_DEVICE_SVM_CAPABILITIES) &
                     CL_DEVICE_SVM_COARSE_GRAIN_BUFFER);
  EXPECT_EQ(device_value<cl_bool>(device_, CL_DEVICE_HOST_UNIFIED_MEMORY), cl_bool{CL_FALSE});
  EXPECT_EQ(device_value<cl_device_exec_capabilities>(device_, CL_DEVICE_EXECUTION_CAPABILITIES),
            device_value<cl_device_exec_capabilities>(native_.device, CL_DEVICE_EXECUTION_CAPABILITIES) &
                ~cl_device_exec_capabilities{CL_EXEC_NATIVE_KERNEL});
  // ... and the entry point says so (spec: the device cannot execute the native kernel).
  auto host_function = [](void*) {};
  EXPECT_CL(CL_INVALID_OPERATION, clEnqueueNativeKernel(queue_, host_function, nullptr, 0, 0, nullptr, nullptr, 0,
                                                        nullptr, nullptr));
  EXPECT_EQ(device_string(device_, CL_DEVICE_BUILT_IN_KERNELS), "");
  EXPECT_EQ(device_value<cl_uint>(device_, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 0u);
  EXPECT_EQ(info_array<cl_device_partition_property>(
                FERRY_IT_INFO_QUERY(clGetDeviceInfo, device_, CL_DEVICE_PARTITION_PROPERTIES)),
            std::vector<cl_device_partition_property>{0});
  EXPECT_EQ(device_value<cl_bool>(device_, CL_DEVICE_PIPE_SUPPORT), cl_bool{CL_FALSE});
  EXPECT_EQ(device_value<cl_device_device_enqueue_capabilities>(device_, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES), 0u);
  // The versioned extension list says the same as the string.
  auto versioned = info_array<cl_name_version>(
      FERRY_IT_INFO_QUERY(clGetDeviceInfo, device_, CL_DEVICE_EXTENSIONS_WITH_VERSION));
  std::vector<std::string> names;
  for (const auto& entry : versioned) names.emplace_back(entry.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, extension_names(device_string(device_, CL_DEVICE_EXTENSIONS)));
}

TEST_F(device, reports_the_server_that_hosts_it) {
  if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
  ASSERT_NE(suite_daemon(), nullptr);
  EXPECT_EQ(device_string(device_, CL_DEVICE_FERRY_SERVER_ADDRESS), suite_daemon()->address());
  EXPECT_EQ(device_value<cl_uint>(device_, CL_DEVICE_FERRY_SERVER_DEVICE_INDEX), 0u);
  // The native platform knows nothing of Ferry's queries.
  size_t size = 0;
  EXPECT_CL(CL_INVALID_VALUE, clGetDeviceInfo(native_.device, CL_DEVICE_FERRY_SERVER_ADDRESS, 0, nullptr, &size));
}

TEST_F(extension, workers_check_their_arguments_and_asking_never_costs_the_session) {
  if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
  auto workers = reinterpret_cast<clFerryGetWorkers_fn>(ferry_extension(platform_, "clFerryGetWorkers"));
  ASSERT_NE(workers, nullptr);
  std::array<cl_ferry_worker, 16> entries{};
  cl_uint count = 0;
  EXPECT_CL(CL_INVALID_DEVICE, workers(native_.device, 0, nullptr, &count));
  EXPECT_CL(CL_INVALID_VALUE, workers(device_, 1, nullptr, &count));
  EXPECT_CL(CL_INVALID_VALUE, workers(device_, 0, nullptr, nullptr));
  const cl_int rc = workers(device_, static_cast<cl_uint>(entries.size()), entries.data(), &count);
  if (rc == CL_INVALID_OPERATION) {
    // A ferryd older than protocol version 7 reports no workers; libferry
    // did not ask it, so the session goes on.
    auto ping = reinterpret_cast<clFerryPingServer_fn>(ferry_extension(platform_, "clFerryPingServer"));
    ASSERT_NE(ping, nullptr);
    cl_ulong ns = 0;
    EXPECT_CL_OK(ping(device_, &ns));
    return;
  }
  ASSERT_CL_OK(rc);
  // At least this test's own session is served, and every string ends in its field.
  ASSERT_GE(count, 1u);
  size_t serving = 0;
  for (cl_uint i = 0; i < std::min<cl_uint>(count, entries.size()); ++i) {
    EXPECT_LE(entries[i].state, static_cast<cl_uint>(CL_FERRY_WORKER_ENDING));
    EXPECT_NE(std::memchr(entries[i].session, 0, sizeof entries[i].session), nullptr);
    EXPECT_NE(std::memchr(entries[i].client, 0, sizeof entries[i].client), nullptr);
    if (entries[i].state == CL_FERRY_WORKER_SERVING) ++serving;
  }
  EXPECT_GE(serving, 1u);
}

TEST_F(extension, ping_measures_a_round_trip_to_the_server) {
  if constexpr (self_check) GTEST_SKIP() << "needs ferryd";
  auto ping = reinterpret_cast<clFerryPingServer_fn>(ferry_extension(platform_, "clFerryPingServer"));
  ASSERT_NE(ping, nullptr);
  cl_ulong ns = 0;
  ASSERT_CL_OK(ping(device_, &ns));
  EXPECT_GT(ns, 0u);
  EXPECT_LT(ns, 10'000'000'000ull) << "a loopback round trip over 10 s";
  EXPECT_CL(CL_INVALID_VALUE, ping(device_, nullptr));
  EXPECT_CL(CL_INVALID_DEVICE, ping(native_.device, &ns));
  EXPECT_EQ(ferry_extension(platform_, "clFerryNoSuchFunction"), nullptr);
  EXPECT_EQ(ferry_extension(native_.platform, "clFerryPingServer"), nullptr);
  // The object counts hold no surprises for a device of another platform either.
  auto counts = reinterpret_cast<clFerryGetObjectCounts_fn>(
      ferry_extension(platform_, "clFerryGetObjectCounts"));
  ASSERT_NE(counts, nullptr);
  cl_ferry_object_counts c{};
  EXPECT_CL(CL_INVALID_DEVICE, counts(native_.device, &c));
  EXPECT_CL(CL_INVALID_VALUE, counts(device_, nullptr));
  // This test's own context and queue are alive right now: both sides count them.
  ASSERT_CL_OK(counts(device_, &c));
  EXPECT_GE(c.client_objects, 2u);
  EXPECT_GE(c.server_objects, 2u);
}

TEST_F(context, from_devices_reports_devices_properties_and_references) {
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                         reinterpret_cast<cl_context_properties>(platform_), 0};
  cl_int rc = CL_SUCCESS;
  context_handle ctx(clCreateContext(props, 1, &device_, nullptr, nullptr, &rc));
  ASSERT_CL_OK(rc);
  EXPECT_EQ(info_value<cl_uint>(FERRY_IT_INFO_QUERY(clGetContextInfo, ctx, CL_CONTEXT_NUM_DEVICES)), 1u);
  EXPECT_EQ(info_array<cl_device_id>(FERRY_IT_INFO_QUERY(clGetContextInfo, ctx, CL_CONTEXT_DEVICES)),
            std::vector<cl_device_id>{device_});
  EXPECT_EQ(info_array<cl_context_properties>(FERRY_IT_INFO_QUERY(clGetContextInfo, ctx, CL_CONTEXT_PROPERTIES)),
            std::vector<cl_context_properties>(std::begin(props), std::end(props)));
  auto refs = [&] { return info_value<cl_uint>(FERRY_IT_INFO_QUERY(clGetContextInfo, ctx, CL_CONTEXT_REFERENCE_COUNT)); };
  EXPECT_EQ(refs(), 1u);
  ASSERT_CL_OK(clRetainContext(ctx));
  EXPECT_EQ(refs(), 2u);
  ASSERT_CL_OK(clReleaseContext(ctx));
  EXPECT_EQ(refs(), 1u);
  // A context without properties reports none.
  context_handle bare(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &rc));
  ASSERT_CL_OK(rc);
  size_t size = 1;
  ASSERT_CL_OK(clGetContextInfo(bare, CL_CONTEXT_PROPERTIES, 0, nullptr, &size));
  EXPECT_EQ(size, 0u);
}

TEST_F(context, destructor_callbacks_run_once_everything_holding_it_is_gone) {
  // Static: a callback that came late must not write into a finished test's stack.
  struct state {
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<int> calls;  // guarded by mutex
  };
  static state s;
  static std::pair<state*, int> first{&s, 1}, second{&s, 2};
  {
    std::lock_guard lock(s.mutex);
    s.calls.clear();
  }
  auto callback = [](cl_context, void* user) {
    auto* tag = static_cast<std::pair<state*, int>*>(user);
    std::lock_guard lock(tag->first->mutex);
    tag->first->calls.push_back(tag->second);
    tag->first->cv.notify_all();
  };
  cl_int rc = CL_SUCCESS;
  cl_context ctx = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &rc);
  ASSERT_CL_OK(rc);
  EXPECT_CL(CL_INVALID_VALUE, clSetContextDestructorCallback(ctx, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_CONTEXT, clSetContextDestructorCallback(nullptr, callback, nullptr));
  ASSERT_CL_OK(clSetContextDestructorCallback(ctx, callback, &first));
  ASSERT_CL_OK(clSetContextDestructorCallback(ctx, callback, &second));
  // A buffer holds the context past its release.
  cl_mem mem = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &rc);
  ASSERT_CL_OK(rc);
  ASSERT_CL_OK(clReleaseContext(ctx));
  {
    std::lock_guard lock(s.mutex);
    EXPECT_TRUE(s.calls.empty()) << "destructor callback while a buffer still holds the context";
  }
  ASSERT_CL_OK(clReleaseMemObject(mem));
  std::unique_lock lock(s.mutex);
  ASSERT_TRUE(s.cv.wait_for(lock, std::chrono::seconds(20), [&] { return s.calls.size() >= 2; }))
      << "destructor callbacks did not run within 20 s";
  // "called in the reverse order in which they were registered"
  EXPECT_EQ(s.calls, (std::vector<int>{2, 1}));
}

TEST_F(context, from_type_holds_the_devices_of_that_type) {
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                         reinterpret_cast<cl_context_properties>(platform_), 0};
  const cl_context_properties native_props[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(native_.platform), 0};
  for (cl_device_type type : std::initializer_list<cl_device_type>{CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
                              CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_DEFAULT}) {
    SCOPED_TRACE("device type " + std::to_string(type));
    cl_int rc = CL_SUCCESS, native_rc = CL_SUCCESS;
    cl_context raw = clCreateContextFromType(props, type, nullptr, nullptr, &rc);
    context_handle ctx(rc == CL_SUCCESS ? raw : nullptr);
    cl_context native_raw = clCreateContextFromType(native_props, type, nullptr, nullptr, &native_rc);
    // PoCL 3.1 returns a half-made context along with CL_DEVICE_NOT_FOUND; releasing it
    // aborts, so only a successful one is owned.
    context_handle native_ctx(native_rc == CL_SUCCESS ? native_raw : nullptr);
    EXPECT_CL(native_rc, rc);
    if (rc != CL_SUCCESS) {
      // Otherwise, it returns a NULL value.
      if constexpr (!self_check) {
        EXPECT_EQ(raw, nullptr);
      }
      EXPECT_CL(CL_DEVICE_NOT_FOUND, rc);
      continue;
    }
    auto devices = info_array<cl_device_id>(FERRY_IT_INFO_QUERY(clGetContextInfo, ctx, CL_CONTEXT_DEVICES));
    auto native_devs = info_array<cl_device_id>(FERRY_IT_INFO_QUERY(clGetContextInfo, native_ctx, CL_CONTEXT_DEVICES));
    EXPECT_EQ(sorted_names(devices), sorted_names(native_devs));
    if (type != CL_DEVICE_TYPE_DEFAULT) {
      std::sort(devices.begin(), devices.end());
      auto expected = platform_devices(platform_, type);
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(devices, expected);
    }
  }
}

TEST_F(context, bad_arguments_return_spec_codes) {
  for (cl_side* side : {&ferry_, &native_}) {
    SCOPED_TRACE(platform_name(side->platform));
    cl_int rc = CL_SUCCESS;
    // CL_INVALID_VALUE if devices is NULL / if num_devices is equal to zero.
    EXPECT_EQ(clCreateContext(nullptr, 0, &side->device, nullptr, nullptr, &rc), nullptr);
    EXPECT_CL(CL_INVALID_VALUE, rc);
    EXPECT_EQ(clCreateContext(nullptr, 1, nullptr, nullptr, nullptr, &rc), nullptr);
    EXPECT_CL(CL_INVALID_VALUE, rc);
    // CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL.
    int user_data = 0;
    EXPECT_EQ(clCreateContext(nullptr, 1, &side->device, nullptr, &user_data, &rc), nullptr);
    EXPECT_CL(CL_INVALID_VALUE, rc);
    // CL_INVALID_PROPERTY if context property name in properties is not a supported property name.
    const cl_context_properties bad_props[] = {0x7fff, 1, 0};
    EXPECT_EQ(clCreateContext(bad_props, 1, &side->device, nullptr, nullptr, &rc), nullptr);
    EXPECT_CL(CL_INVALID_PROPERTY, rc);
    // errcode_ret may be NULL.
    EXPECT_EQ(clCreateContext(nullptr, 0, &side->device, nullptr, nullptr, nullptr), nullptr);
  }
  if constexpr (!self_check) {
    // CL_INVALID_DEVICE_TYPE if device_type is not a valid value. (PoCL 3.1 returns a
    // context it cannot release together with CL_DEVICE_NOT_FOUND.)
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                           reinterpret_cast<cl_context_properties>(platform_), 0};
    cl_int rc = CL_SUCCESS;
    EXPECT_EQ(clCreateContextFromType(props, cl_device_type{1} << 40, nullptr, nullptr, &rc), nullptr);
    EXPECT_CL(CL_INVALID_DEVICE_TYPE, rc);
    // CL_INVALID_DEVICE if any device in devices is not a valid device: a native device
    // cannot join a Ferry context.
    const cl_device_id mixed[] = {device_, native_.device};
    EXPECT_EQ(clCreateContext(nullptr, 2, mixed, nullptr, nullptr, &rc), nullptr);
    EXPECT_CL(CL_INVALID_DEVICE, rc);
  }
}

TEST_F(queue, in_order_queue_reports_its_info) {
  auto q = [&](cl_command_queue_info param, auto type_tag) {
    return info_value<decltype(type_tag)>(FERRY_IT_INFO_QUERY(clGetCommandQueueInfo, queue_, param));
  };
  EXPECT_EQ(q(CL_QUEUE_CONTEXT, cl_context{}), context_);
  EXPECT_EQ(q(CL_QUEUE_DEVICE, cl_device_id{}), device_);
  EXPECT_EQ(q(CL_QUEUE_PROPERTIES, cl_command_queue_properties{}), 0u);
  EXPECT_EQ(q(CL_QUEUE_REFERENCE_COUNT, cl_uint{}), 1u);
  ASSERT_CL_OK(clRetainCommandQueue(queue_));
  EXPECT_EQ(q(CL_QUEUE_REFERENCE_COUNT, cl_uint{}), 2u);
  ASSERT_CL_OK(clReleaseCommandQueue(queue_));
  EXPECT_CL_OK(clFlush(queue_));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(queue, out_of_order_queue_honours_wait_lists) {
  const auto supported = device_value<cl_command_queue_properties>(device_, CL_DEVICE_QUEUE_PROPERTIES);
  EXPECT_EQ(supported, device_value<cl_command_queue_properties>(native_.device, CL_DEVICE_QUEUE_PROPERTIES));
  cl_int rc = CL_SUCCESS;
  queue_handle ooo(clCreateCommandQueue(context_, device_, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &rc));
  if ((supported & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0) {
    // CL_INVALID_QUEUE_PROPERTIES if values specified in properties are valid but are not
    // supported by the device.
    EXPECT_CL(CL_INVALID_QUEUE_PROPERTIES, rc);
    return;
  }
  ASSERT_CL_OK(rc);
  EXPECT_EQ(info_value<cl_command_queue_properties>(FERRY_IT_INFO_QUERY(clGetCommandQueueInfo, ooo, CL_QUEUE_PROPERTIES)),
            CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  auto program = build(kernels::vector_add);
  ASSERT_TRUE(program);
  auto kernel = create_kernel(program, "vector_add");
  constexpr size_t n = 4096;
  std::vector<float> a(n), b(n), c(n, 0);
  for (size_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(3 * i);
  }
  auto ma = buffer(CL_MEM_READ_ONLY, n * sizeof(float));
  auto mb = buffer(CL_MEM_READ_ONLY, n * sizeof(float));
  auto mc = buffer(CL_MEM_WRITE_ONLY, n * sizeof(float));
  event_handle wa, wb, run, read;
  ASSERT_CL_OK(clEnqueueWriteBuffer(ooo, ma, CL_FALSE, 0, n * sizeof(float), a.data(), 0, nullptr, wa.out()));
  ASSERT_CL_OK(clEnqueueWriteBuffer(ooo, mb, CL_FALSE, 0, n * sizeof(float), b.data(), 0, nullptr, wb.out()));
  for (cl_uint i = 0; i < 3; ++i) {
    cl_mem m = i == 0 ? ma.get() : i == 1 ? mb.get() : mc.get();
    ASSERT_CL_OK(clSetKernelArg(kernel, i, sizeof m, &m));
  }
  const cl_event writes[] = {wa, wb};
  ASSERT_CL_OK(clEnqueueNDRangeKernel(ooo, kernel, 1, nullptr, &n, nullptr, 2, writes, run.out()));
  const cl_event after_run = run;
  ASSERT_CL_OK(clEnqueueReadBuffer(ooo, mc, CL_FALSE, 0, n * sizeof(float), c.data(), 1, &after_run, read.out()));
  const cl_event wait_for = read;
  ASSERT_CL_OK(clWaitForEvents(1, &wait_for));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "at " << i;
  EXPECT_CL_OK(clFinish(ooo));
}

TEST_F(queue, properties_api_creates_a_profiling_queue) {
  if (device_version(device_).first < 2) GTEST_SKIP() << "clCreateCommandQueueWithProperties needs OpenCL 2.0";
  const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_int rc = CL_SUCCESS;
  queue_handle q(clCreateCommandQueueWithProperties(context_, device_, props, &rc));
  ASSERT_CL_OK(rc);
  EXPECT_EQ(info_value<cl_command_queue_properties>(FERRY_IT_INFO_QUERY(clGetCommandQueueInfo, q, CL_QUEUE_PROPERTIES)),
            CL_QUEUE_PROFILING_ENABLE);
  auto program = build(kernels::basics);
  ASSERT_TRUE(program);
  auto kernel = create_kernel(program, "iota");
  auto mem = buffer(CL_MEM_READ_WRITE, 256 * sizeof(cl_int));
  cl_mem m = mem;
  cl_int base = 7;
  ASSERT_CL_OK(clSetKernelArg(kernel, 0, sizeof m, &m));
  ASSERT_CL_OK(clSetKernelArg(kernel, 1, sizeof base, &base));
  const size_t n = 256;
  event_handle ev;
  ASSERT_CL_OK(clEnqueueNDRangeKernel(q, kernel, 1, nullptr, &n, nullptr, 0, nullptr, ev.out()));
  ASSERT_CL_OK(clFinish(q));
  auto prof = [&](cl_profiling_info param) {
    return info_value<cl_ulong>(FERRY_IT_INFO_QUERY(clGetEventProfilingInfo, ev, param));
  };
  const cl_ulong queued = prof(CL_PROFILING_COMMAND_QUEUED), submit = prof(CL_PROFILING_COMMAND_SUBMIT),
                 start = prof(CL_PROFILING_COMMAND_START), end = prof(CL_PROFILING_COMMAND_END);
  EXPECT_LE(queued, submit);
  EXPECT_LE(submit, start);
  EXPECT_LE(start, end);
  std::vector<cl_int> out(n);
  ASSERT_CL_OK(clEnqueueReadBuffer(q, mem, CL_TRUE, 0, n * sizeof(cl_int), out.data(), 0, nullptr, nullptr));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], base + static_cast<cl_int>(i));
  // CL_INVALID_VALUE if values specified in properties are not valid.
  const cl_queue_properties bad[] = {CL_QUEUE_PROPERTIES, cl_queue_properties{1} << 20, 0};
  for (cl_side* side : {&ferry_, &native_}) {
    EXPECT_EQ(clCreateCommandQueueWithProperties(side->context, side->device, bad, &rc), nullptr);
    EXPECT_CL(CL_INVALID_VALUE, rc) << platform_name(side->platform);
  }
}

TEST_F(queue, bad_arguments_return_spec_codes) {
  for (cl_side* side : {&ferry_, &native_}) {
    SCOPED_TRACE(platform_name(side->platform));
    cl_int rc = CL_SUCCESS;
    // CL_INVALID_VALUE if values specified in properties are not valid.
    EXPECT_EQ(clCreateCommandQueue(side->context, side->device, cl_command_queue_properties{1} << 20, &rc), nullptr);
    EXPECT_CL(CL_INVALID_VALUE, rc);
    // CL_INVALID_VALUE if param_name is not one of the supported values.
    size_t size = 0;
    EXPECT_CL(CL_INVALID_VALUE, clGetCommandQueueInfo(side->queue, 0x7fff, 0, nullptr, &size));
  }
  if constexpr (!self_check) {
    // CL_INVALID_DEVICE if device is not a valid device or is not associated with context.
    cl_int rc = CL_SUCCESS;
    EXPECT_EQ(clCreateCommandQueue(context_, native_.device, 0, &rc), nullptr);
    EXPECT_CL(CL_INVALID_DEVICE, rc);
  }
}

}  // namespace ferry::test
