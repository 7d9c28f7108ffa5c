// The daemon's driver loader, and through it the fake driver the CUDA tests run on
// (tests/cuda/fake_driver): if the fake misbehaves, every CUDA test above it lies.
#include "cuda/server/driver.hpp"
#include "cuda/server/testing/fake_driver.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace ferry::cuda {
namespace {

/// Sets an environment variable for one scope.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value != nullptr)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~scoped_env() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(cuda_driver, a_missing_library_fails_with_the_loader_reason) {
  std::string why;
  auto d = driver::load_from("/nonexistent/libcuda.so.1", symbol_lookup::proc_address, why);
  EXPECT_EQ(d, nullptr);
  EXPECT_NE(why.find("/nonexistent/libcuda.so.1"), std::string::npos) << why;
  EXPECT_NE(why.find("No such file"), std::string::npos) << why;
}

TEST(cuda_driver, a_library_without_the_entry_points_names_the_first_missing) {
  scoped_env env("FERRY_CUDA_DRIVER", "libm.so.6");
  std::string why;
  auto d = driver::load(why);
  EXPECT_EQ(d, nullptr);
  EXPECT_NE(why.find("libm.so.6"), std::string::npos) << why;
  EXPECT_NE(why.find("lacks cuInit"), std::string::npos) << why;
}

#ifdef FERRY_FAKE_CUDA_PATH

// ---------------------------------------------------------------------------
// Loading the fake
// ---------------------------------------------------------------------------

/// Every entry point the fake provides, optional ones included.
void expect_complete(const driver& d) {
  EXPECT_NE(d.cuInit, nullptr);
  EXPECT_NE(d.cuGetErrorName, nullptr);
  EXPECT_NE(d.cuGetErrorString, nullptr);
  EXPECT_NE(d.cuDeviceGetUuid, nullptr);
  EXPECT_NE(d.cuCtxCreate, nullptr);
  EXPECT_NE(d.cuCtxPushCurrent, nullptr);
  EXPECT_NE(d.cuCtxPopCurrent, nullptr);
  EXPECT_NE(d.cuCtxGetDevice, nullptr);
  EXPECT_NE(d.cuDevicePrimaryCtxRetain, nullptr);
  EXPECT_NE(d.cuDevicePrimaryCtxRelease, nullptr);
  EXPECT_NE(d.cuMemcpyHtoD, nullptr);
  EXPECT_NE(d.cuMemcpyDtoH, nullptr);
  EXPECT_NE(d.cuFuncSetCacheConfig, nullptr);
  EXPECT_NE(d.cuFuncGetParamInfo, nullptr);
  EXPECT_NE(d.cuLaunchKernelEx, nullptr);
  EXPECT_NE(d.cuLaunchHostFunc, nullptr);
  EXPECT_NE(d.cuStreamAddCallback, nullptr);
  EXPECT_NE(d.cuStreamCreateWithPriority, nullptr);
  EXPECT_NE(d.cuOccupancyMaxPotentialBlockSize, nullptr);
  EXPECT_NE(d.cuOccupancyMaxActiveBlocksPerMultiprocessor, nullptr);
  EXPECT_EQ(d.version(), driver_version);
}

TEST(cuda_driver, loads_the_fake_named_by_ferry_cuda_driver) {
  scoped_env env("FERRY_CUDA_DRIVER", FERRY_FAKE_CUDA_PATH);
  std::string why;
  auto d = driver::load(why);
  ASSERT_NE(d, nullptr) << why;
  EXPECT_EQ(d->path(), FERRY_FAKE_CUDA_PATH);
  EXPECT_EQ(d->lookup(), symbol_lookup::proc_address);
  expect_complete(*d);
  ASSERT_EQ(d->cuInit(0), CUDA_SUCCESS);
  int count = 0;
  ASSERT_EQ(d->cuDeviceGetCount(&count), CUDA_SUCCESS);
  EXPECT_EQ(count, 1);
  int version = 0;
  ASSERT_EQ(d->cuDriverGetVersion(&version), CUDA_SUCCESS);
  EXPECT_EQ(version, 13000);
}

TEST(cuda_driver, loads_the_fake_by_exported_names_alone) {
  std::string why;
  auto d = driver::load_from(FERRY_FAKE_CUDA_PATH, symbol_lookup::exported_names, why);
  ASSERT_NE(d, nullptr) << why;
  EXPECT_EQ(d->lookup(), symbol_lookup::exported_names);
  expect_complete(*d);
}

TEST(cuda_driver, both_lookups_find_the_same_functions) {
  std::string why;
  auto a = driver::load_from(FERRY_FAKE_CUDA_PATH, symbol_lookup::proc_address, why);
  auto b = driver::load_from(FERRY_FAKE_CUDA_PATH, symbol_lookup::exported_names, why);
  ASSERT_TRUE(a && b) << why;
  EXPECT_EQ(a->cuCtxCreate, b->cuCtxCreate);
  EXPECT_EQ(a->cuMemAlloc, b->cuMemAlloc);
  EXPECT_EQ(a->cuLinkAddData, b->cuLinkAddData);
  EXPECT_EQ(a->cuEventElapsedTime, b->cuEventElapsedTime);
  EXPECT_EQ(a->cuFuncGetParamInfo, b->cuFuncGetParamInfo);
}

TEST(cuda_driver, fake_get_proc_address_answers_like_the_real_one) {
  void* handle = dlopen(FERRY_FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  using fn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto get = reinterpret_cast<fn>(dlsym(handle, "cuGetProcAddress_v2"));
  ASSERT_NE(get, nullptr);
  void* p = reinterpret_cast<void*>(1);
  CUdriverProcAddressQueryResult status = -1;
  EXPECT_EQ(get("cuNoSuchThing", &p, 12000, 0, &status), CUDA_SUCCESS);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_EQ(get("cuFuncGetParamInfo", &p, 12000, 0, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_EQ(get("cuFuncGetParamInfo", &p, 12040, 0, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
  EXPECT_EQ(p, dlsym(handle, "cuFuncGetParamInfo"));
  EXPECT_EQ(get("cuMemAlloc", &p, 12000, 0, &status), CUDA_SUCCESS);
  EXPECT_EQ(p, dlsym(handle, "cuMemAlloc_v2"));
  // A real 13.0 driver answers cuCtxCreate_v3/_v4 (other parameters) at these versions;
  // the fake has no such variant and answers nothing rather than the wrong one.
  EXPECT_EQ(get("cuCtxCreate", &p, 3020, 0, &status), CUDA_SUCCESS);
  EXPECT_EQ(p, dlsym(handle, "cuCtxCreate_v2"));
  EXPECT_EQ(get("cuCtxCreate", &p, 12080, 0, &status), CUDA_SUCCESS);
  EXPECT_EQ(p, nullptr);
  // Newer than the driver.
  EXPECT_EQ(get("cuMemAlloc", &p, 13010, 0, &status), CUDA_ERROR_INVALID_VALUE);
}

// ---------------------------------------------------------------------------
// The fake's behaviour, through the loader
// ---------------------------------------------------------------------------

/// The fake, loaded once (as the daemon loads a driver) and initialized with one device.
driver& fake() { return testing::fake_driver(); }

/// A test's own context on the fake's device 0, current on the test's thread.
class fake_cuda : public ::testing::Test {
 protected:
  void SetUp() override {
    scoped_env devices("FERRY_FAKE_CUDA_DEVICES", "1");
    ASSERT_EQ(d.cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(d.cuCtxCreate(&ctx, 0, 0), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (ctx != nullptr) {
      EXPECT_EQ(d.cuCtxDestroy(ctx), CUDA_SUCCESS);
    }
  }

  CUmodule load(const std::string& ptx) {
    CUmodule m = nullptr;
    EXPECT_EQ(d.cuModuleLoadDataEx(&m, ptx.c_str(), 0, nullptr, nullptr), CUDA_SUCCESS);
    return m;
  }
  CUdeviceptr alloc(std::size_t bytes) {
    CUdeviceptr p = 0;
    EXPECT_EQ(d.cuMemAlloc(&p, bytes), CUDA_SUCCESS);
    return p;
  }

  driver& d = fake();
  CUcontext ctx = nullptr;
};

const std::string kernels_ptx = R"(//
// Kernels the fake knows, as a compiler would declare them.
.version 8.0
.target sm_80
.address_size 64

.global .align 4 .u32 counter;
.visible .global .align 8 .b8 table[64];

.visible .entry saxpy(
	.param .u32 saxpy_param_0, .param .f32 saxpy_param_1,
	.param .u64 saxpy_param_2, .param .u64 saxpy_param_3
)
{
	.reg .f32 %f<5>;
	.reg .b64 %rd<8>;
	ld.global.f32 %f2, [%rd6];  // instructions name .global too: not a declaration
	st.global.f32 [%rd7], %f4;
	ret;
}
.visible .entry fill_u32(.param .u64 p, .param .u32 v, .param .u32 n) { ret; }
.entry add_one_i32(.param .u64 p, .param .u32 n) { ret; }
.visible .entry sum_f32(.param .u64 in, .param .u64 out, .param .u32 n) { ret; }
.visible .entry struct_arg(.param .u64 out, .param .align 8 .b8 s[16]) { ret; }
.visible .entry fault(.param .u64 p) { ret; }
.visible .entry not_in_the_fake(.param .u64 p) { ret; }
)";

TEST_F(fake_cuda, runs_saxpy_through_kernel_params) {
  constexpr unsigned n = 1000;
  std::vector<float> x(n), y(n);
  for (unsigned i = 0; i < n; ++i) x[i] = float(i), y[i] = 1.0f;
  CUdeviceptr dx = alloc(n * 4), dy = alloc(n * 4);
  ASSERT_EQ(d.cuMemcpyHtoDAsync(dx, x.data(), n * 4, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemcpyHtoDAsync(dy, y.data(), n * 4, nullptr), CUDA_SUCCESS);
  CUmodule m = load(kernels_ptx);
  CUfunction f = nullptr;
  ASSERT_EQ(d.cuModuleGetFunction(&f, m, "saxpy"), CUDA_SUCCESS);
  float a = 2.0f;
  unsigned count = n;
  void* params[] = {&count, &a, &dx, &dy};
  // 4 blocks of 256 threads cover 1024 >= n.
  ASSERT_EQ(d.cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemcpyDtoHAsync(y.data(), dy, n * 4, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(d.cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  for (unsigned i = 0; i < n; ++i) ASSERT_EQ(y[i], 2.0f * float(i) + 1.0f) << i;
  EXPECT_EQ(d.cuModuleUnload(m), CUDA_SUCCESS);
}

TEST_F(fake_cuda, answers_parameter_layouts_and_function_attributes) {
  CUmodule m = load(kernels_ptx);
  CUfunction f = nullptr;
  ASSERT_EQ(d.cuModuleGetFunction(&f, m, "struct_arg"), CUDA_SUCCESS);
  std::size_t offset = 0, size = 0;
  ASSERT_EQ(d.cuFuncGetParamInfo(f, 0, &offset, &size), CUDA_SUCCESS);
  EXPECT_EQ(offset, 0u);
  EXPECT_EQ(size, 8u);
  ASSERT_EQ(d.cuFuncGetParamInfo(f, 1, &offset, &size), CUDA_SUCCESS);
  EXPECT_EQ(offset, 8u);
  EXPECT_EQ(size, 16u);
  EXPECT_EQ(d.cuFuncGetParamInfo(f, 2, &offset, &size), CUDA_ERROR_INVALID_VALUE);
  int value = 0;
  ASSERT_EQ(d.cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f), CUDA_SUCCESS);
  EXPECT_EQ(value, 1024);
  ASSERT_EQ(d.cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, f), CUDA_SUCCESS);
  EXPECT_EQ(value, 16);
  ASSERT_EQ(d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024), CUDA_SUCCESS);
  ASSERT_EQ(d.cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f), CUDA_SUCCESS);
  EXPECT_EQ(value, 1024);
  EXPECT_EQ(d.cuModuleGetFunction(&f, m, "not_in_the_fake"), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(d.cuModuleGetFunction(&f, m, "nothing"), CUDA_ERROR_NOT_FOUND);
}

TEST_F(fake_cuda, runs_a_struct_argument_through_the_extra_buffer) {
  CUmodule m = load(kernels_ptx);
  CUfunction f = nullptr;
  ASSERT_EQ(d.cuModuleGetFunction(&f, m, "struct_arg"), CUDA_SUCCESS);
  CUdeviceptr out = alloc(8);
  alignas(8) unsigned char buffer[24] = {};
  double a = 1.5;
  unsigned b = 40;
  std::memcpy(buffer, &out, 8);
  std::memcpy(buffer + 8, &a, 8);
  std::memcpy(buffer + 16, &b, 4);
  std::size_t size = sizeof buffer;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER(), buffer, CU_LAUNCH_PARAM_BUFFER_SIZE(), &size,
                   CU_LAUNCH_PARAM_END()};
  ASSERT_EQ(d.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra), CUDA_SUCCESS);
  double result = 0;
  ASSERT_EQ(d.cuMemcpyDtoH(&result, out, 8), CUDA_SUCCESS);
  EXPECT_EQ(result, 41.5);
}

TEST_F(fake_cuda, fills_sums_and_adds_on_a_stream) {
  CUmodule m = load(kernels_ptx);
  CUfunction fill = nullptr, sum = nullptr, add = nullptr;
  ASSERT_EQ(d.cuModuleGetFunction(&fill, m, "fill_u32"), CUDA_SUCCESS);
  ASSERT_EQ(d.cuModuleGetFunction(&sum, m, "sum_f32"), CUDA_SUCCESS);
  ASSERT_EQ(d.cuModuleGetFunction(&add, m, "add_one_i32"), CUDA_SUCCESS);
  CUstream s = nullptr;
  ASSERT_EQ(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  constexpr unsigned n = 100;
  CUdeviceptr p = alloc(n * 4), out = alloc(4);
  unsigned one_f32 = 0x3f800000;  // 1.0f
  void* fill_params[] = {&p, &one_f32, const_cast<unsigned*>(&n)};
  ASSERT_EQ(d.cuLaunchKernel(fill, 1, 1, 1, 128, 1, 1, 0, s, fill_params, nullptr), CUDA_SUCCESS);
  void* sum_params[] = {&p, &out, const_cast<unsigned*>(&n)};
  ASSERT_EQ(d.cuLaunchKernel(sum, 1, 1, 1, 1, 1, 1, 0, s, sum_params, nullptr), CUDA_SUCCESS);
  float total = 0;
  ASSERT_EQ(d.cuMemcpyDtoHAsync(&total, out, 4, s), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemsetD32Async(p, 7, n, s), CUDA_SUCCESS);
  void* add_params[] = {&p, const_cast<unsigned*>(&n)};
  ASSERT_EQ(d.cuLaunchKernel(add, 1, 1, 1, 64, 1, 1, 0, s, add_params, nullptr), CUDA_SUCCESS);  // 64 < n
  std::vector<int> back(n);
  ASSERT_EQ(d.cuMemcpyDtoHAsync(back.data(), p, n * 4, s), CUDA_SUCCESS);
  ASSERT_EQ(d.cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(total, 100.0f);
  EXPECT_EQ(back[0], 8);
  EXPECT_EQ(back[63], 8);
  EXPECT_EQ(back[64], 7);  // beyond the grid's threads
  EXPECT_EQ(d.cuStreamDestroy(s), CUDA_SUCCESS);
}

TEST_F(fake_cuda, async_work_completes_later) {
  scoped_env delay("FERRY_FAKE_CUDA_DELAY_US", "100000");
  CUmodule m = load(kernels_ptx);
  CUfunction f = nullptr;
  ASSERT_EQ(d.cuModuleGetFunction(&f, m, "add_one_i32"), CUDA_SUCCESS);
  CUstream s = nullptr;
  ASSERT_EQ(d.cuStreamCreate(&s, 0), CUDA_SUCCESS);
  CUevent start = nullptr, end = nullptr;
  ASSERT_EQ(d.cuEventCreate(&start, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  ASSERT_EQ(d.cuEventCreate(&end, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  CUdeviceptr p = alloc(4);
  unsigned n = 1;
  void* params[] = {&p, &n};
  std::atomic<int> host_runs{0};
  ASSERT_EQ(d.cuEventRecord(start, s), CUDA_SUCCESS);
  ASSERT_EQ(d.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(d.cuLaunchHostFunc(s, [](void* c) { static_cast<std::atomic<int>*>(c)->fetch_add(1); }, &host_runs),
            CUDA_SUCCESS);
  ASSERT_EQ(d.cuEventRecord(end, s), CUDA_SUCCESS);
  EXPECT_EQ(d.cuStreamQuery(s), CUDA_ERROR_NOT_READY);
  EXPECT_EQ(d.cuEventQuery(end), CUDA_ERROR_NOT_READY);
  float ms = 0;
  EXPECT_EQ(d.cuEventElapsedTime(&ms, start, end), CUDA_ERROR_NOT_READY);
  EXPECT_EQ(host_runs.load(), 0);
  ASSERT_EQ(d.cuEventSynchronize(end), CUDA_SUCCESS);
  EXPECT_EQ(host_runs.load(), 1);
  EXPECT_EQ(d.cuStreamQuery(s), CUDA_SUCCESS);
  ASSERT_EQ(d.cuEventElapsedTime(&ms, start, end), CUDA_SUCCESS);
  EXPECT_GE(ms, 90.0f);
  int value = 0;
  ASSERT_EQ(d.cuMemcpyDtoH(&value, p, 4), CUDA_SUCCESS);
  EXPECT_EQ(value, 1);
  EXPECT_EQ(d.cuEventDestroy(start), CUDA_SUCCESS);
  EXPECT_EQ(d.cuEventDestroy(end), CUDA_SUCCESS);
  EXPECT_EQ(d.cuStreamDestroy(s), CUDA_SUCCESS);
}

TEST_F(fake_cuda, a_stream_waits_for_an_event_of_another) {
  scoped_env delay("FERRY_FAKE_CUDA_DELAY_US", "50000");
  CUmodule m = load(kernels_ptx);
  CUfunction f = nullptr;
  ASSERT_EQ(d.cuModuleGetFunction(&f, m, "fill_u32"), CUDA_SUCCESS);
  CUstream a = nullptr, b = nullptr;
  ASSERT_EQ(d.cuStreamCreate(&a, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(d.cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUevent done = nullptr;
  ASSERT_EQ(d.cuEventCreate(&done, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  CUdeviceptr p = alloc(4);
  unsigned value = 42, n = 1;
  void* params[] = {&p, &value, &n};
  ASSERT_EQ(d.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, a, params, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(d.cuEventRecord(done, a), CUDA_SUCCESS);
  ASSERT_EQ(d.cuStreamWaitEvent(b, done, 0), CUDA_SUCCESS);
  unsigned got = 0;
  ASSERT_EQ(d.cuMemcpyDtoHAsync(&got, p, 4, b), CUDA_SUCCESS);
  ASSERT_EQ(d.cuStreamSynchronize(b), CUDA_SUCCESS);
  EXPECT_EQ(got, 42u);
  float ms = 0;
  EXPECT_EQ(d.cuEventElapsedTime(&ms, done, done), CUDA_ERROR_INVALID_HANDLE);  // no timing
  EXPECT_EQ(d.cuEventDestroy(done), CUDA_SUCCESS);
  EXPECT_EQ(d.cuStreamDestroy(a), CUDA_SUCCESS);
  EXPECT_EQ(d.cuStreamDestroy(b), CUDA_SUCCESS);
}

TEST_F(fake_cuda, a_fault_fails_the_context_for_good) {
  CUmodule m = load(kernels_ptx);
  CUfunction f = nullptr;
  ASSERT_EQ(d.cuModuleGetFunction(&f, m, "fault"), CUDA_SUCCESS);
  CUdeviceptr p = alloc(4);
  void* params[] = {&p};
  ASSERT_EQ(d.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(d.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  CUdeviceptr q = 0;
  EXPECT_EQ(d.cuMemAlloc(&q, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(d.cuStreamSynchronize(nullptr), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(d.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr), CUDA_ERROR_ILLEGAL_ADDRESS);
  // Destroying it still works, and a new context is healthy.
  ASSERT_EQ(d.cuCtxDestroy(ctx), CUDA_SUCCESS);
  ASSERT_EQ(d.cuCtxCreate(&ctx, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(d.cuMemAlloc(&q, 16), CUDA_SUCCESS);
}

TEST_F(fake_cuda, a_pointer_outside_the_allocations_faults) {
  CUmodule m = load(kernels_ptx);
  CUfunction f = nullptr;
  ASSERT_EQ(d.cuModuleGetFunction(&f, m, "add_one_i32"), CUDA_SUCCESS);
  CUdeviceptr p = alloc(16);
  unsigned n = 5;  // 20 bytes: past the end
  void* params[] = {&p, &n};
  ASSERT_EQ(d.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(d.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
}

TEST_F(fake_cuda, rejects_bad_launches) {
  CUmodule m = load(kernels_ptx);
  CUfunction f = nullptr;
  ASSERT_EQ(d.cuModuleGetFunction(&f, m, "fault"), CUDA_SUCCESS);
  CUdeviceptr p = alloc(4);
  void* params[] = {&p};
  std::size_t size = 8;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER(), &p, CU_LAUNCH_PARAM_BUFFER_SIZE(), &size, CU_LAUNCH_PARAM_END()};
  EXPECT_EQ(d.cuLaunchKernel(f, 1, 1, 1, 1025, 1, 1, 0, nullptr, params, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(d.cuLaunchKernel(f, 1, 1, 1, 32, 32, 2, 0, nullptr, params, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(d.cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(d.cuLaunchKernel(f, 1, 1, 1, 1, 0, 1, 0, nullptr, params, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(d.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, extra), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(d.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(d.cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(d.cuCtxSynchronize(), CUDA_SUCCESS);  // nothing ran
}

TEST_F(fake_cuda, tracks_device_memory) {
  std::size_t free_before = 0, total = 0;
  ASSERT_EQ(d.cuMemGetInfo(&free_before, &total), CUDA_SUCCESS);
  EXPECT_EQ(total, std::size_t{1} << 30);
  CUdeviceptr p = alloc(1 << 20);
  EXPECT_EQ(p % 256, 0u);
  std::size_t free_after = 0;
  ASSERT_EQ(d.cuMemGetInfo(&free_after, &total), CUDA_SUCCESS);
  EXPECT_EQ(free_before - free_after, std::size_t{1} << 20);
  CUdeviceptr q = 0;
  EXPECT_EQ(d.cuMemAlloc(&q, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(d.cuMemAlloc(&q, std::size_t{2} << 30), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(d.cuMemFree(p + 4), CUDA_ERROR_INVALID_VALUE);
  // A copy past the end of an allocation is refused at once.
  char bytes[32] = {};
  EXPECT_EQ(d.cuMemcpyHtoDAsync(p + (1 << 20) - 16, bytes, 32, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(d.cuMemFree(p), CUDA_SUCCESS);
  EXPECT_EQ(d.cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
  void* host = nullptr;
  ASSERT_EQ(d.cuMemAllocHost(&host, 4096), CUDA_SUCCESS);
  EXPECT_EQ(d.cuMemFreeHost(host), CUDA_SUCCESS);
  EXPECT_EQ(d.cuMemFreeHost(host), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(fake_cuda, module_globals_are_device_memory) {
  CUmodule m = load(kernels_ptx);
  CUdeviceptr counter = 0, table = 0;
  std::size_t size = 0;
  ASSERT_EQ(d.cuModuleGetGlobal(&counter, &size, m, "counter"), CUDA_SUCCESS);
  EXPECT_EQ(size, 4u);
  ASSERT_EQ(d.cuModuleGetGlobal(&table, &size, m, "table"), CUDA_SUCCESS);
  EXPECT_EQ(size, 64u);
  EXPECT_EQ(d.cuModuleGetGlobal(&table, &size, m, "missing"), CUDA_ERROR_NOT_FOUND);
  ASSERT_EQ(d.cuMemsetD8Async(table, 0xab, 64, nullptr), CUDA_SUCCESS);
  unsigned char back[64] = {};
  ASSERT_EQ(d.cuMemcpyDtoH(back, table, 64), CUDA_SUCCESS);
  EXPECT_EQ(back[63], 0xab);
  unsigned zero = 1;
  ASSERT_EQ(d.cuMemcpyDtoH(&zero, counter, 4), CUDA_SUCCESS);
  EXPECT_EQ(zero, 0u);
  EXPECT_EQ(d.cuMemFree(counter), CUDA_ERROR_INVALID_VALUE);  // not cuMemAlloc's
}

TEST_F(fake_cuda, loads_only_ptx_or_its_own_cubins_and_reports_jit_logs) {
  CUmodule m = nullptr;
  char info[64] = {}, error[64] = {};
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME};
  void* values[] = {info, reinterpret_cast<void*>(std::uintptr_t{sizeof info}), error,
                    reinterpret_cast<void*>(std::uintptr_t{sizeof error}), nullptr};
  ASSERT_EQ(d.cuModuleLoadDataEx(&m, kernels_ptx.c_str(), 5, options, values), CUDA_SUCCESS);
  EXPECT_STREQ(info, "fake jit: ok");
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(values[1]), std::strlen("fake jit: ok") + 1);
  float wall = -1;
  std::memcpy(&wall, &values[4], sizeof wall);
  EXPECT_GE(wall, 0.0f);

  // A small log buffer gets what fits.
  char small[5] = {};
  void* small_values[] = {small, reinterpret_cast<void*>(std::uintptr_t{sizeof small})};
  ASSERT_EQ(d.cuModuleLoadDataEx(&m, kernels_ptx.c_str(), 2, options, small_values), CUDA_SUCCESS);
  EXPECT_STREQ(small, "fake");

  EXPECT_EQ(d.cuModuleLoadDataEx(&m, "not a module", 0, nullptr, nullptr), CUDA_ERROR_INVALID_IMAGE);
}

TEST_F(fake_cuda, links_ptx_into_a_loadable_image) {
  char info[64] = {};
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {info, reinterpret_cast<void*>(std::uintptr_t{sizeof info})};
  CUlinkState link = nullptr;
  ASSERT_EQ(d.cuLinkCreate(2, options, values, &link), CUDA_SUCCESS);
  std::string ptx = kernels_ptx;
  EXPECT_EQ(d.cuLinkAddData(link, CU_JIT_INPUT_CUBIN, ptx.data(), ptx.size(), nullptr, 0, nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  std::string garbage = "no version here";  // what a 13.0 driver answers for it, too
  EXPECT_EQ(d.cuLinkAddData(link, CU_JIT_INPUT_PTX, garbage.data(), garbage.size(), nullptr, 0, nullptr, nullptr),
            CUDA_ERROR_INVALID_IMAGE);
  ASSERT_EQ(d.cuLinkAddData(link, CU_JIT_INPUT_PTX, ptx.data(), ptx.size() + 1, "kernels.ptx", 0, nullptr, nullptr),
            CUDA_SUCCESS);
  void* image = nullptr;
  std::size_t size = 0;
  ASSERT_EQ(d.cuLinkComplete(link, &image, &size), CUDA_SUCCESS);
  EXPECT_STREQ(info, "fake jit: ok");
  ASSERT_GT(size, 15u);
  EXPECT_EQ(std::string(static_cast<char*>(image), 15), "FERRYFAKECUBIN\n");
  CUmodule m = nullptr;
  ASSERT_EQ(d.cuModuleLoadDataEx(&m, image, 0, nullptr, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(d.cuLinkDestroy(link), CUDA_SUCCESS);
  CUfunction f = nullptr;
  EXPECT_EQ(d.cuModuleGetFunction(&f, m, "saxpy"), CUDA_SUCCESS);
}

TEST_F(fake_cuda, contexts_are_current_per_thread) {
  CUcontext current = nullptr;
  ASSERT_EQ(d.cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, ctx);
  std::thread([&] {
    CUcontext none = ctx;
    EXPECT_EQ(d.cuCtxGetCurrent(&none), CUDA_SUCCESS);
    EXPECT_EQ(none, nullptr);
    CUdeviceptr p = 0;
    EXPECT_EQ(d.cuMemAlloc(&p, 16), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT_EQ(d.cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    EXPECT_EQ(d.cuMemAlloc(&p, 16), CUDA_SUCCESS);
    EXPECT_EQ(d.cuMemFree(p), CUDA_SUCCESS);
  }).join();
}

TEST_F(fake_cuda, no_call_is_permitted_inside_a_host_function) {
  struct probe {
    driver* d;
    std::atomic<CUresult> seen{-1};
  } p{&d};
  ASSERT_EQ(d.cuLaunchHostFunc(
                nullptr,
                [](void* raw) {
                  auto* self = static_cast<probe*>(raw);
                  self->seen = self->d->cuCtxSynchronize();
                },
                &p),
            CUDA_SUCCESS);
  ASSERT_EQ(d.cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(p.seen.load(), CUDA_ERROR_NOT_PERMITTED);
}

TEST(cuda_driver, fake_with_no_devices_refuses_init_and_every_later_call) {
  driver& d = fake();
  {
    scoped_env devices("FERRY_FAKE_CUDA_DEVICES", "0");
    EXPECT_EQ(d.cuInit(0), CUDA_ERROR_NO_DEVICE);
    int count = -1;
    EXPECT_EQ(d.cuDeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
    const char* name = nullptr;
    EXPECT_EQ(d.cuGetErrorName(CUDA_ERROR_NO_DEVICE, &name), CUDA_SUCCESS);  // needs no cuInit
    EXPECT_STREQ(name, "CUDA_ERROR_NO_DEVICE");
    EXPECT_EQ(d.cuGetErrorName(12345, &name), CUDA_ERROR_INVALID_VALUE);
  }
  EXPECT_EQ(d.cuInit(0), CUDA_SUCCESS);
}

#else

TEST(cuda_driver, DISABLED_needs_the_fake_driver) {}

#endif  // FERRY_FAKE_CUDA_PATH

}  // namespace
}  // namespace ferry::cuda
