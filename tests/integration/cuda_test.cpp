// CUDA remoting end to end (docs/cuda.md): a program loads Ferry's libcuda.so.1 the way
// GCC's libgomp does (dlopen, dlsym) and drives a real ferryd on loopback. CI has no GPU,
// so the daemon loads the CPU stand-in driver of tests/cuda/fake_driver
// (FERRY_CUDA_DRIVER); every message, the daemon's streams, watches and pointer checks
// and the client's entry points are the real ones. A daemon without a driver gives a
// program no CUDA device and exact codes. Each client is a child process: cuInit
// connects once per process.
#include <dlfcn.h>
#include <unistd.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cuda/abi/per_thread_stream.hpp"
#include "daemon.hpp"

using namespace ferry::test;

suite_config ferry::test::this_suite() {
  suite_config config;
  config.start_daemon = false;    // each test starts a daemon with its own driver
  config.set_loader_env = false;  // clients are children with their own environment
  return config;
}

namespace {

// The driver ABI the program sees, as GCC's own fallback cuda.h declares it.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using handle = void*;

constexpr CUresult SUCCESS = 0, INVALID_VALUE = 1, NOT_INITIALIZED = 3, NO_DEVICE = 100, INVALID_DEVICE = 101,
                   INVALID_CONTEXT = 201, INVALID_HANDLE = 400, NOT_FOUND = 500, NOT_READY = 600,
                   ILLEGAL_ADDRESS = 700, NOT_SUPPORTED = 801;

/// The entry points of Ferry's libcuda.so.1, looked up by their exported names.
struct driver_api {
  void* library = nullptr;
  template <class F>
  F get(const char* name) {
    return reinterpret_cast<F>(dlsym(library, name));
  }
  bool open() {
    library = dlopen(FERRY_CUDA_CLIENT, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) std::printf("dlopen: %s\n", dlerror());
    return library != nullptr;
  }
};

/// A PTX module of the kernels the stand-in driver knows by name.
constexpr const char* module_ptx = R"PTX(
.version 7.0
.target sm_80
.address_size 64
.visible .entry saxpy(.param .u32 n, .param .f32 a, .param .u64 x, .param .u64 y)
{
  ret;
}
.visible .entry add_one_i32(.param .u64 p, .param .u32 n)
{
  ret;
}
.visible .entry fault(.param .u64 p)
{
  ret;
}
.visible .entry hang()
{
  ret;
}
.visible .global .align 4 .u32 counter;
)PTX";

std::string fake_driver_env() { return FERRY_FAKE_CUDA; }

#define CALL(expr, expected) CHILD_CHECK((rc = (expr)) == (expected), "%s gave %d, expected %d", #expr, rc, expected)

}  // namespace

// A daemon whose host has no CUDA driver: no device, exact codes, refused entry points.
FERRY_IT_CHILD(cuda_without_devices) {
  driver_api d;
  CHILD_CHECK(d.open(), "cannot load Ferry's libcuda.so.1");
  auto cuInit = d.get<CUresult (*)(unsigned)>("cuInit");
  auto cuDeviceGetCount = d.get<CUresult (*)(int*)>("cuDeviceGetCount");
  auto cuDeviceGet = d.get<CUresult (*)(CUdevice*, int)>("cuDeviceGet");
  auto cuCtxCreate = d.get<CUresult (*)(handle*, unsigned, CUdevice)>("cuCtxCreate_v2");
  auto cuCtxGetDevice = d.get<CUresult (*)(CUdevice*)>("cuCtxGetDevice");
  auto cuMemAlloc = d.get<CUresult (*)(CUdeviceptr*, size_t)>("cuMemAlloc_v2");
  auto cuDriverGetVersion = d.get<CUresult (*)(int*)>("cuDriverGetVersion");
  auto cuGetErrorName = d.get<CUresult (*)(CUresult, const char**)>("cuGetErrorName");
  auto cuGetProcAddress = d.get<CUresult (*)(const char*, void**, int, unsigned long long, int*)>("cuGetProcAddress_v2");
  auto cuGraphCreate = d.get<CUresult (*)(handle*, unsigned)>("cuGraphCreate");
  CHILD_CHECK(cuInit && cuDeviceGetCount && cuDeviceGet && cuCtxCreate && cuCtxGetDevice && cuMemAlloc &&
                  cuDriverGetVersion && cuGetErrorName && cuGetProcAddress && cuGraphCreate,
              "an entry point is missing");
  CUresult rc;
  int count = -1;
  CUdevice dev = -1;
  CALL(cuDeviceGetCount(&count), NOT_INITIALIZED);
  CALL(cuInit(1), INVALID_VALUE);
  CALL(cuInit(0), NO_DEVICE);
  CALL(cuInit(0), NO_DEVICE);  // the same answer again
  CALL(cuDeviceGetCount(&count), SUCCESS);
  CHILD_CHECK(count == 0, "%d devices", count);
  CALL(cuDeviceGet(&dev, 0), INVALID_DEVICE);
  handle ctx = nullptr;
  CALL(cuCtxCreate(&ctx, 0, 0), INVALID_DEVICE);
  CALL(cuCtxGetDevice(&dev), INVALID_CONTEXT);
  CUdeviceptr p = 0;
  CALL(cuMemAlloc(&p, 64), INVALID_CONTEXT);
  int version = 0;
  CALL(cuDriverGetVersion(&version), SUCCESS);
  CHILD_CHECK(version >= 12000, "driver version %d", version);
  const char* name = nullptr;
  CALL(cuGetErrorName(INVALID_DEVICE, &name), SUCCESS);
  CHILD_CHECK(name && std::strcmp(name, "CUDA_ERROR_INVALID_DEVICE") == 0, "%s", name ? name : "null");
  CALL(cuGetErrorName(123456, &name), INVALID_VALUE);
  // Refused entry points answer CUDA_ERROR_NOT_SUPPORTED, by symbol and through cuGetProcAddress.
  handle graph = nullptr;
  CALL(cuGraphCreate(&graph, 0), NOT_SUPPORTED);
  void* fn = nullptr;
  int status = -1;
  CALL(cuGetProcAddress("cuGraphCreate", &fn, 12000, 0, &status), SUCCESS);
  CHILD_CHECK(fn != nullptr, "no function for a refused entry point");
  CALL(reinterpret_cast<CUresult (*)(handle*, unsigned)>(fn)(&graph, 0), NOT_SUPPORTED);
  CALL(cuGetProcAddress("cuNoSuchEntryPoint", &fn, 12000, 0, &status), SUCCESS);
  CHILD_CHECK(fn == nullptr && status == 1, "unknown symbol: %p status %d", fn, status);
  // cuda-bindings 13 asks for cuCtxCreate at 12050 or later: _v4's arguments, implemented.
  CALL(cuGetProcAddress("cuCtxCreate", &fn, 13000, 0, &status), SUCCESS);
  CHILD_CHECK(fn != nullptr && status == 0, "cuCtxCreate@13000: %p status %d", fn, status);
  CALL(reinterpret_cast<CUresult (*)(handle*, void*, unsigned, CUdevice)>(fn)(nullptr, nullptr, 0, 0), INVALID_VALUE);
  CALL(cuGetProcAddress("cuMemAlloc", &fn, 12000, 0, &status), SUCCESS);
  CHILD_CHECK(fn == reinterpret_cast<void*>(cuMemAlloc) && status == 0, "cuMemAlloc@12000 is not cuMemAlloc_v2");
  // A program built with per-thread default streams calls <variant>_ptds/_ptsz: every
  // exported variant of those bases has that name too, and it is the same function.
  for (const ferry::cuda::per_thread_base& b : ferry::cuda::per_thread_bases) {
    int variants = 0;
    for (const char* version : {"", "_v2", "_v3", "_v4"}) {
      const std::string plain = std::string(b.base) + version, suffixed = plain + std::string(b.suffix);
      // Not a variant: a call of its own, with no per-thread name in cuda.h.
      if (plain == "cuLaunchHostFunc_v2") continue;
      void* function = dlsym(d.library, plain.c_str());
      void* alias = dlsym(d.library, suffixed.c_str());
      CHILD_CHECK(alias == function, "%s is %p, %s is %p", suffixed.c_str(), alias, plain.c_str(), function);
      variants += function != nullptr;
    }
    CHILD_CHECK(variants > 0, "no variant of %.*s is exported", static_cast<int>(b.base.size()), b.base.data());
  }
  std::printf("PASS\n");
  return 0;
}

// A daemon with a (stand-in) driver: contexts, memory, modules, launches both ways,
// streams, events, callbacks, and the errors a program meets.
FERRY_IT_CHILD(cuda_with_devices) {
  driver_api d;
  CHILD_CHECK(d.open(), "cannot load Ferry's libcuda.so.1");
#define GET(name, type) auto name = d.get<type>(#name)
#define GET2(name, symbol, type) auto name = d.get<type>(symbol)
  GET(cuInit, CUresult (*)(unsigned));
  GET(cuDeviceGetCount, CUresult (*)(int*));
  GET(cuDeviceGet, CUresult (*)(CUdevice*, int));
  GET(cuDeviceGetName, CUresult (*)(char*, int, CUdevice));
  GET(cuDeviceGetAttribute, CUresult (*)(int*, int, CUdevice));
  GET2(cuDeviceTotalMem, "cuDeviceTotalMem_v2", CUresult (*)(size_t*, CUdevice));
  GET(cuDevicePrimaryCtxRetain, CUresult (*)(handle*, CUdevice));
  GET2(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult (*)(CUdevice));
  GET2(cuCtxPushCurrent, "cuCtxPushCurrent_v2", CUresult (*)(handle));
  GET2(cuCtxPopCurrent, "cuCtxPopCurrent_v2", CUresult (*)(handle*));
  GET(cuCtxSynchronize, CUresult (*)());
  GET2(cuMemAlloc, "cuMemAlloc_v2", CUresult (*)(CUdeviceptr*, size_t));
  GET2(cuMemFree, "cuMemFree_v2", CUresult (*)(CUdeviceptr));
  GET2(cuMemGetAddressRange, "cuMemGetAddressRange_v2", CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr));
  GET2(cuMemGetInfo, "cuMemGetInfo_v2", CUresult (*)(size_t*, size_t*));
  GET2(cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult (*)(CUdeviceptr, const void*, size_t));
  GET2(cuMemcpyDtoH, "cuMemcpyDtoH_v2", CUresult (*)(void*, CUdeviceptr, size_t));
  GET2(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", CUresult (*)(CUdeviceptr, const void*, size_t, handle));
  GET2(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult (*)(void*, CUdeviceptr, size_t, handle));
  GET2(cuMemsetD32, "cuMemsetD32_v2", CUresult (*)(CUdeviceptr, unsigned, size_t));
  GET2(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", CUresult (*)(CUdeviceptr*, void*, unsigned));
  GET(cuModuleLoadData, CUresult (*)(handle*, const void*));
  GET(cuModuleGetFunction, CUresult (*)(handle*, handle, const char*));
  GET2(cuModuleGetGlobal, "cuModuleGetGlobal_v2", CUresult (*)(CUdeviceptr*, size_t*, handle, const char*));
  GET(cuLaunchKernel, CUresult (*)(handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   handle, void**, void**));
  GET(cuStreamCreate, CUresult (*)(handle*, unsigned));
  GET(cuStreamSynchronize, CUresult (*)(handle));
  GET2(cuStreamSynchronize_ptsz, "cuStreamSynchronize_ptsz", CUresult (*)(handle));
  GET(cuStreamQuery, CUresult (*)(handle));
  GET(cuStreamAddCallback, CUresult (*)(handle, void (*)(handle, CUresult, void*), void*, unsigned));
  GET2(cuStreamDestroy, "cuStreamDestroy_v2", CUresult (*)(handle));
  GET(cuEventCreate, CUresult (*)(handle*, unsigned));
  GET(cuEventRecord, CUresult (*)(handle, handle));
  GET(cuEventSynchronize, CUresult (*)(handle));
  GET(cuEventElapsedTime, CUresult (*)(float*, handle, handle));
  GET2(cuEventDestroy, "cuEventDestroy_v2", CUresult (*)(handle));
  GET2(cuCtxCreate, "cuCtxCreate_v2", CUresult (*)(handle*, unsigned, CUdevice));
  GET2(cuCtxDestroy, "cuCtxDestroy_v2", CUresult (*)(handle));
#undef GET
#undef GET2
  CUresult rc;
  CALL(cuInit(0), SUCCESS);
  int count = 0;
  CALL(cuDeviceGetCount(&count), SUCCESS);
  CHILD_CHECK(count == 1, "%d devices", count);
  CUdevice dev;
  CALL(cuDeviceGet(&dev, 0), SUCCESS);
  char name[128];
  CALL(cuDeviceGetName(name, sizeof name, dev), SUCCESS);
  CHILD_CHECK(std::strstr(name, "fake") != nullptr, "device name %s", name);
  int warp = 0, mapping = -1;
  CALL(cuDeviceGetAttribute(&warp, 10 /* WARP_SIZE */, dev), SUCCESS);
  CHILD_CHECK(warp == 32, "warp %d", warp);
  CALL(cuDeviceGetAttribute(&mapping, 19 /* CAN_MAP_HOST_MEMORY */, dev), SUCCESS);
  CHILD_CHECK(mapping == 0, "a remote device claims it maps host memory");
  CALL(cuDeviceGetAttribute(&warp, 100000, dev), INVALID_VALUE);
  size_t total = 0;
  CALL(cuDeviceTotalMem(&total, dev), SUCCESS);
  CHILD_CHECK(total > 0, "no memory");

  // numba's way in: the primary context, pushed.
  handle ctx = nullptr;
  CALL(cuDevicePrimaryCtxRetain(&ctx, dev), SUCCESS);
  CALL(cuCtxPushCurrent(ctx), SUCCESS);

  constexpr unsigned n = 3 * 1024 * 1024 + 17;  // over one copy piece (4 MiB) as floats
  std::vector<float> x(n), y(n), out(n);
  for (unsigned i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000) * 0.5f;
    y[i] = static_cast<float>(i % 7);
  }
  CUdeviceptr dx = 0, dy = 0;
  CALL(cuMemAlloc(&dx, n * sizeof(float)), SUCCESS);
  CALL(cuMemAlloc(&dy, n * sizeof(float)), SUCCESS);
  CUdeviceptr base = 0;
  size_t size = 0;
  CALL(cuMemGetAddressRange(&base, &size, dy + 100), SUCCESS);
  CHILD_CHECK(base == dy && size == n * sizeof(float), "address range of dy");
  size_t free_bytes = 0;
  CALL(cuMemGetInfo(&free_bytes, &total), SUCCESS);
  CALL(cuMemcpyHtoD(dx, x.data(), n * sizeof(float)), SUCCESS);
  CALL(cuMemcpyHtoD(dy, y.data(), n * sizeof(float)), SUCCESS);
  CALL(cuMemcpyHtoD(dy + 8, y.data(), n * sizeof(float)), INVALID_VALUE);  // past the end

  handle module = nullptr, saxpy = nullptr, missing = nullptr, add_one = nullptr, fault = nullptr;
  CALL(cuModuleLoadData(&module, "not an image"), 200 /* INVALID_IMAGE */);
  CALL(cuModuleLoadData(&module, module_ptx), SUCCESS);
  CALL(cuModuleGetFunction(&saxpy, module, "saxpy"), SUCCESS);
  CALL(cuModuleGetFunction(&missing, module, "no_such_kernel"), NOT_FOUND);
  CALL(cuModuleGetFunction(&add_one, module, "add_one_i32"), SUCCESS);

  // kernelParams: one pointer per parameter.
  float a = 2.0f;
  unsigned count_n = n;
  void* params[] = {&count_n, &a, &dx, &dy};
  const unsigned blocks = (n + 255) / 256;
  CALL(cuLaunchKernel(saxpy, blocks, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr), SUCCESS);
  CALL(cuStreamSynchronize_ptsz(nullptr), SUCCESS);  // the per-thread default stream: run as the legacy one
  CALL(cuLaunchKernel(saxpy, blocks, 1, 1, 2048, 1, 1, 0, nullptr, params, nullptr), INVALID_VALUE);
  CALL(cuLaunchKernel(saxpy, 0, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr), INVALID_VALUE);
  CALL(cuMemcpyDtoH(out.data(), dy, n * sizeof(float)), SUCCESS);
  for (unsigned i = 0; i < n; ++i) {
    const float expected = 2.0f * x[i] + y[i];
    CHILD_CHECK(out[i] == expected, "y[%u] = %g, expected %g", i, out[i], expected);
  }
  // extra: the packed buffer GCC's OpenMP plugin passes (u32 n, f32 a, u64 x, u64 y).
  struct alignas(8) {
    unsigned n;
    float a;
    CUdeviceptr x, y;
  } packed{n, -1.0f, dx, dy};
  size_t packed_size = sizeof packed;
  void* extra[] = {reinterpret_cast<void*>(1), &packed, reinterpret_cast<void*>(2), &packed_size, nullptr};
  CALL(cuLaunchKernel(saxpy, blocks, 1, 1, 256, 1, 1, 0, nullptr, nullptr, extra), SUCCESS);
  CALL(cuLaunchKernel(saxpy, blocks, 1, 1, 256, 1, 1, 0, nullptr, params, extra), INVALID_VALUE);
  CALL(cuMemcpyDtoH(out.data(), dy, n * sizeof(float)), SUCCESS);
  for (unsigned i = 0; i < n; i += 997)
    CHILD_CHECK(out[i] == y[i] + x[i], "after extra: y[%u] = %g, expected %g", i, out[i], y[i] + x[i]);

  // Streams: asynchronous copies, a launch, an event, a callback, in stream order.
  handle stream = nullptr, start = nullptr, stop = nullptr;
  CALL(cuStreamCreate(&stream, 1), SUCCESS);
  CALL(cuEventCreate(&start, 0), SUCCESS);
  CALL(cuEventCreate(&stop, 0), SUCCESS);
  constexpr unsigned m = 100000;
  std::vector<int> ints(m), back(m, -1);
  for (unsigned i = 0; i < m; ++i) ints[i] = static_cast<int>(i) - 500;
  CUdeviceptr di = 0;
  CALL(cuMemAlloc(&di, m * sizeof(int)), SUCCESS);
  CALL(cuEventRecord(start, stream), SUCCESS);
  CALL(cuMemcpyHtoDAsync(di, ints.data(), m * sizeof(int), stream), SUCCESS);
  unsigned mm = m;
  void* add_params[] = {&di, &mm};
  for (int k = 0; k < 3; ++k)
    CALL(cuLaunchKernel(add_one, (m + 127) / 128, 1, 1, 128, 1, 1, 0, stream, add_params, nullptr), SUCCESS);
  CALL(cuMemcpyDtoHAsync(back.data(), di, m * sizeof(int), stream), SUCCESS);
  CALL(cuEventRecord(stop, stream), SUCCESS);
  static std::atomic<int> callback_status{-1};
  static std::atomic<int> callback_saw_bytes{0};
  CALL(cuStreamAddCallback(stream,
                           [](handle, CUresult status, void* data) {
                             // The copy back ahead of it in the stream has landed.
                             callback_saw_bytes = static_cast<int*>(data)[m - 1] == static_cast<int>(m - 1) - 500 + 3;
                             callback_status = status;
                           },
                           back.data(), 0),
       SUCCESS);
  CALL(cuEventSynchronize(stop), SUCCESS);
  for (unsigned i = 0; i < m; ++i)
    CHILD_CHECK(back[i] == ints[i] + 3, "back[%u] = %d, expected %d", i, back[i], ints[i] + 3);
  CALL(cuStreamSynchronize(stream), SUCCESS);
  CALL(cuStreamQuery(stream), SUCCESS);
  for (int i = 0; i < 2000 && callback_status.load() < 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHILD_CHECK(callback_status.load() == SUCCESS, "the stream callback ran with %d", callback_status.load());
  CHILD_CHECK(callback_saw_bytes.load() == 1, "the callback ran before the copy ahead of it landed");
  float ms = -1;
  CALL(cuEventElapsedTime(&ms, start, stop), SUCCESS);
  CHILD_CHECK(ms >= 0, "elapsed %g ms", ms);

  // Memset, module globals.
  CALL(cuMemsetD32(di, 0xdeadbeef, m), SUCCESS);
  CALL(cuMemcpyDtoH(back.data(), di, m * sizeof(int)), SUCCESS);
  CHILD_CHECK(static_cast<unsigned>(back[m / 2]) == 0xdeadbeefu, "memset gave %x", back[m / 2]);
  CUdeviceptr counter = 0;
  size_t counter_size = 0;
  CALL(cuModuleGetGlobal(&counter, &counter_size, module, "counter"), SUCCESS);
  CHILD_CHECK(counter_size == 4, "global of %zu bytes", counter_size);
  const unsigned seven = 7;
  unsigned read_back = 0;
  CALL(cuMemcpyHtoD(counter, &seven, 4), SUCCESS);
  CALL(cuMemcpyDtoH(&read_back, counter, 4), SUCCESS);
  CHILD_CHECK(read_back == 7, "global reads %u", read_back);

  // Small allocations are pieces of slabs: a freed one comes back only after a
  // synchronization of the whole context (a kernel in flight may still read it).
  CUdeviceptr small1 = 0, small2 = 0, small3 = 0;
  CALL(cuMemAlloc(&small1, 100), SUCCESS);
  CHILD_CHECK(small1 % 256 == 0, "a piece at %llx is not 256-byte aligned", small1);
  CALL(cuMemFree(small1), SUCCESS);
  CALL(cuMemFree(small1), INVALID_VALUE);
  CALL(cuMemAlloc(&small2, 100), SUCCESS);
  CHILD_CHECK(small2 != small1, "a freed piece came back before a synchronization");
  CALL(cuCtxSynchronize(), SUCCESS);
  CALL(cuMemAlloc(&small3, 200), SUCCESS);
  CHILD_CHECK(small3 == small1, "an idle piece was not used again");
  CALL(cuMemGetAddressRange(&base, &size, small3 + 10), SUCCESS);
  CHILD_CHECK(base == small3 && size == 200, "the piece's range is %llx+%zu", base, size);
  CALL(cuMemcpyHtoD(small3, ints.data(), 200), SUCCESS);
  CALL(cuMemcpyHtoD(small3, ints.data(), 4 * 1024 * 1024 + 1), INVALID_VALUE);  // past the slab
  CALL(cuMemFree(small2), SUCCESS);
  CALL(cuMemFree(small3), SUCCESS);

  // What cannot be remote, and bad handles.
  CUdeviceptr mapped = 0;
  CALL(cuMemHostGetDevicePointer(&mapped, ints.data(), 0), INVALID_VALUE);
  CALL(cuMemFree(dx + 4), INVALID_VALUE);
  CALL(cuStreamSynchronize(reinterpret_cast<handle>(&count)), INVALID_HANDLE);

  // A second context of its own, then a kernel that faults: the error is sticky.
  handle own = nullptr, popped = nullptr;
  CALL(cuCtxCreate(&own, 0, dev), SUCCESS);
  CALL(cuCtxDestroy(own), SUCCESS);
  CALL(cuCtxPopCurrent(&popped), SUCCESS);  // the destroyed one was popped already: ours
  CHILD_CHECK(popped == ctx, "popped another context");
  CALL(cuCtxPushCurrent(ctx), SUCCESS);
  CALL(cuStreamDestroy(stream), SUCCESS);
  CALL(cuEventDestroy(start), SUCCESS);
  CALL(cuEventDestroy(stop), SUCCESS);
  CALL(cuModuleGetFunction(&fault, module, "fault"), SUCCESS);
  void* fault_params[] = {&dx};
  CALL(cuLaunchKernel(fault, 1, 1, 1, 1, 1, 1, 0, nullptr, fault_params, nullptr), SUCCESS);
  CALL(cuCtxSynchronize(), ILLEGAL_ADDRESS);
  CALL(cuCtxSynchronize(), ILLEGAL_ADDRESS);
  CALL(cuMemFree(dx), SUCCESS);  // the client's bookkeeping; the server's context is lost anyway
  CALL(cuDevicePrimaryCtxRelease(dev), SUCCESS);
  std::printf("PASS\n");
  return 0;
}

// A program started by `ferry run --cuda` that loads the driver by name, as GCC's
// libgomp does: it must get Ferry's and reach the daemon's (stand-in) device.
FERRY_IT_CHILD(cuda_by_name) {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  CHILD_CHECK(library != nullptr, "dlopen(libcuda.so.1): %s", dlerror());
  CHILD_CHECK(dlsym(library, "ferry_remote_cuda_driver") != nullptr, "libcuda.so.1 is not Ferry's");
  auto cuInit = reinterpret_cast<CUresult (*)(unsigned)>(dlsym(library, "cuInit"));
  auto cuDeviceGetCount = reinterpret_cast<CUresult (*)(int*)>(dlsym(library, "cuDeviceGetCount"));
  CUresult rc;
  int count = 0;
  CALL(cuInit(0), SUCCESS);
  CALL(cuDeviceGetCount(&count), SUCCESS);
  CHILD_CHECK(count == 1, "%d devices", count);
  const char* numba = std::getenv("NUMBA_CUDA_DRIVER");
  CHILD_CHECK(numba != nullptr && std::string(numba).ends_with("/lib/ferry-cuda/libcuda.so.1"), "NUMBA_CUDA_DRIVER=%s",
              numba ? numba : "(unset)");
  std::printf("PASS\n");
  return 0;
}

// A daemon with --session-memory 64 MiB: CUDA allocations count as buffers do.
FERRY_IT_CHILD(cuda_memory_quota) {
  driver_api d;
  CHILD_CHECK(d.open(), "cannot load Ferry's libcuda.so.1");
  auto cuInit = d.get<CUresult (*)(unsigned)>("cuInit");
  auto cuCtxCreate = d.get<CUresult (*)(handle*, unsigned, CUdevice)>("cuCtxCreate_v2");
  auto cuMemAlloc = d.get<CUresult (*)(CUdeviceptr*, size_t)>("cuMemAlloc_v2");
  auto cuMemFree = d.get<CUresult (*)(CUdeviceptr)>("cuMemFree_v2");
  CUresult rc;
  handle ctx = nullptr;
  CUdeviceptr a = 0, b = 0;
  CALL(cuInit(0), SUCCESS);
  CALL(cuCtxCreate(&ctx, 0, 0), SUCCESS);
  CALL(cuMemAlloc(&a, 48u << 20), SUCCESS);
  CALL(cuMemAlloc(&b, 32u << 20), 2 /* OUT_OF_MEMORY */);
  CALL(cuMemFree(a), SUCCESS);
  CALL(cuMemAlloc(&b, 32u << 20), SUCCESS);  // the free was counted (the client let go of what it kept)
  // A freed allocation is kept for the next of its size, usable once a
  // synchronization has passed (work in flight may still use it).
  auto cuCtxSynchronize = d.get<CUresult (*)()>("cuCtxSynchronize");
  auto cuMemcpyHtoD = d.get<CUresult (*)(CUdeviceptr, const void*, size_t)>("cuMemcpyHtoD_v2");
  CUdeviceptr c = 0, e = 0;
  CALL(cuMemFree(b), SUCCESS);
  CALL(cuMemAlloc(&c, 32u << 20), SUCCESS);
  CHILD_CHECK(c != b, "a freed allocation came back before a synchronization");
  const int word = 7;
  CALL(cuMemcpyHtoD(b, &word, sizeof word), INVALID_VALUE);  // freed, though kept
  CALL(cuCtxSynchronize(), SUCCESS);
  CALL(cuMemAlloc(&e, 32u << 20), SUCCESS);
  CHILD_CHECK(e == b, "the idle allocation was not used again");
  CALL(cuMemcpyHtoD(e, &word, sizeof word), SUCCESS);
  // Freed right after a synchronization with nothing posted since (GCC's OpenMP
  // stacks): idle at once. Freed after posted work: not before the next one.
  // (cuMemGetInfo lets go of what is kept: the quota is full.)
  auto cuMemGetInfo = d.get<CUresult (*)(size_t*, size_t*)>("cuMemGetInfo_v2");
  size_t free_bytes = 0, total_bytes = 0;
  CALL(cuMemFree(e), SUCCESS);
  CALL(cuMemFree(c), SUCCESS);
  CALL(cuMemGetInfo(&free_bytes, &total_bytes), SUCCESS);
  CUdeviceptr h = 0, f = 0, g = 0;
  CALL(cuMemAlloc(&h, 1u << 20), SUCCESS);
  CALL(cuCtxSynchronize(), SUCCESS);
  CALL(cuMemFree(h), SUCCESS);
  CALL(cuMemAlloc(&f, 1u << 20), SUCCESS);
  CHILD_CHECK(f == h, "memory freed with no work in flight was not used again at once");
  CALL(cuMemcpyHtoD(f, &word, sizeof word), SUCCESS);
  CALL(cuMemFree(f), SUCCESS);
  CALL(cuMemAlloc(&g, 1u << 20), SUCCESS);
  CHILD_CHECK(g != f, "memory freed behind a copy in flight came back before a synchronization");
  std::printf("PASS\n");
  return 0;
}

// Copies back from 1 MiB travel on the bulk stream in pieces, a few asked for at a time:
// a copy of more pieces than that window, an asynchronous one that a stream callback,
// a query and a synchronization must not overtake, and one that fails.
FERRY_IT_CHILD(cuda_copies_back_in_bulk) {
  driver_api d;
  CHILD_CHECK(d.open(), "cannot load Ferry's libcuda.so.1");
  auto cuInit = d.get<CUresult (*)(unsigned)>("cuInit");
  auto cuCtxCreate = d.get<CUresult (*)(handle*, unsigned, CUdevice)>("cuCtxCreate_v2");
  auto cuCtxDestroy = d.get<CUresult (*)(handle)>("cuCtxDestroy_v2");
  auto cuCtxSynchronize = d.get<CUresult (*)()>("cuCtxSynchronize");
  auto cuMemAlloc = d.get<CUresult (*)(CUdeviceptr*, size_t)>("cuMemAlloc_v2");
  auto cuMemcpyHtoD = d.get<CUresult (*)(CUdeviceptr, const void*, size_t)>("cuMemcpyHtoD_v2");
  auto cuMemcpyDtoH = d.get<CUresult (*)(void*, CUdeviceptr, size_t)>("cuMemcpyDtoH_v2");
  auto cuMemcpyDtoHAsync = d.get<CUresult (*)(void*, CUdeviceptr, size_t, handle)>("cuMemcpyDtoHAsync_v2");
  auto cuStreamCreate = d.get<CUresult (*)(handle*, unsigned)>("cuStreamCreate");
  auto cuStreamSynchronize = d.get<CUresult (*)(handle)>("cuStreamSynchronize");
  auto cuStreamQuery = d.get<CUresult (*)(handle)>("cuStreamQuery");
  auto cuStreamAddCallback =
      d.get<CUresult (*)(handle, void (*)(handle, CUresult, void*), void*, unsigned)>("cuStreamAddCallback");
  auto cuModuleLoadData = d.get<CUresult (*)(handle*, const void*)>("cuModuleLoadData");
  auto cuModuleGetFunction = d.get<CUresult (*)(handle*, handle, const char*)>("cuModuleGetFunction");
  auto cuLaunchKernel = d.get<CUresult (*)(handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, handle, void**, void**)>("cuLaunchKernel");
  CUresult rc;
  handle ctx = nullptr, stream = nullptr, module = nullptr, add_one = nullptr, fault = nullptr;
  CALL(cuInit(0), SUCCESS);
  CALL(cuCtxCreate(&ctx, 0, 0), SUCCESS);
  // Ten pieces of 16 MiB and a part: more than the eight asked for at once.
  const size_t big = (size_t{160} << 20) + 12345;
  std::vector<uint8_t> src(big), back(big, 0);
  for (size_t i = 0; i < big; ++i) src[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  CUdeviceptr dev = 0;
  CALL(cuMemAlloc(&dev, big), SUCCESS);
  CALL(cuMemcpyHtoD(dev, src.data(), big), SUCCESS);
  CALL(cuMemcpyDtoH(back.data(), dev, big), SUCCESS);
  CHILD_CHECK(std::memcmp(back.data(), src.data(), big) == 0, "the %zu bytes read back differ", big);

  // Asynchronous, behind kernels that change the bytes: the callback, a query and
  // the synchronization each come after the bytes landed.
  constexpr size_t ints = (size_t{40} << 20) / sizeof(int);
  std::vector<int> values(ints);
  for (size_t i = 0; i < ints; ++i) values[i] = static_cast<int>(i) - 1000;
  static std::vector<int> async_back;
  async_back.assign(ints, 0);
  CALL(cuMemcpyHtoD(dev, values.data(), ints * sizeof(int)), SUCCESS);
  CALL(cuModuleLoadData(&module, module_ptx), SUCCESS);
  CALL(cuModuleGetFunction(&add_one, module, "add_one_i32"), SUCCESS);
  CALL(cuStreamCreate(&stream, 0), SUCCESS);  // waits for the NULL stream's copy
  unsigned count = static_cast<unsigned>(ints);
  void* params[] = {&dev, &count};
  CALL(cuLaunchKernel(add_one, count / 256 + 1, 1, 1, 256, 1, 1, 0, stream, params, nullptr), SUCCESS);
  CALL(cuMemcpyDtoHAsync(async_back.data(), dev, ints * sizeof(int), stream), SUCCESS);
  static std::atomic<int> saw_bytes{-1};
  CALL(cuStreamAddCallback(stream,
                           [](handle, CUresult status, void*) {
                             saw_bytes = status == SUCCESS && async_back.back() == static_cast<int>(ints - 1) - 1000 + 1;
                           },
                           nullptr, 0),
       SUCCESS);
  while ((rc = cuStreamQuery(stream)) == NOT_READY) std::this_thread::yield();
  CHILD_CHECK(rc == SUCCESS, "cuStreamQuery gave %d", rc);
  CHILD_CHECK(async_back.back() == static_cast<int>(ints - 1) - 1000 + 1, "the stream was idle before its copy landed");
  CALL(cuStreamSynchronize(stream), SUCCESS);
  for (size_t i = 0; i < ints; i += 4099)
    CHILD_CHECK(async_back[i] == values[i] + 1, "async_back[%zu] = %d, expected %d", i, async_back[i], values[i] + 1);
  for (int i = 0; i < 2000 && saw_bytes.load() < 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHILD_CHECK(saw_bytes.load() == 1, "the stream callback ran before the copy back ahead of it landed");
  // A second asynchronous copy, then the context's synchronization.
  std::fill(async_back.begin(), async_back.end(), 0);
  CALL(cuMemcpyDtoHAsync(async_back.data(), dev, ints * sizeof(int), stream), SUCCESS);
  CALL(cuCtxSynchronize(), SUCCESS);
  CHILD_CHECK(async_back.back() == values.back() + 1, "cuCtxSynchronize returned before the copy back landed");

  // A faulted context: the copy back fails with the fault, and no bytes come.
  CALL(cuModuleGetFunction(&fault, module, "fault"), SUCCESS);
  void* fault_params[] = {&dev};
  CALL(cuLaunchKernel(fault, 1, 1, 1, 1, 1, 1, 0, nullptr, fault_params, nullptr), SUCCESS);
  std::fill(back.begin(), back.end(), 0);
  CALL(cuMemcpyDtoH(back.data(), dev, size_t{3} << 20), ILLEGAL_ADDRESS);
  CHILD_CHECK(back[0] == 0 && back[(size_t{3} << 20) - 1] == 0, "a failed copy back wrote bytes");
  CALL(cuCtxDestroy(ctx), SUCCESS);
  std::printf("PASS\n");
  return 0;
}

// A fresh context's first large copies, two in and one back, as a directive program's
// data region makes them: their staging was pinned when the context was made.
FERRY_IT_CHILD(cuda_first_copies) {
  driver_api d;
  CHILD_CHECK(d.open(), "cannot load Ferry's libcuda.so.1");
  auto cuInit = d.get<CUresult (*)(unsigned)>("cuInit");
  auto cuCtxCreate = d.get<CUresult (*)(handle*, unsigned, CUdevice)>("cuCtxCreate_v2");
  auto cuCtxDestroy = d.get<CUresult (*)(handle)>("cuCtxDestroy_v2");
  auto cuMemAlloc = d.get<CUresult (*)(CUdeviceptr*, size_t)>("cuMemAlloc_v2");
  auto cuMemcpyHtoD = d.get<CUresult (*)(CUdeviceptr, const void*, size_t)>("cuMemcpyHtoD_v2");
  auto cuMemcpyDtoH = d.get<CUresult (*)(void*, CUdeviceptr, size_t)>("cuMemcpyDtoH_v2");
  CUresult rc;
  handle ctx = nullptr;
  CALL(cuInit(0), SUCCESS);
  CALL(cuCtxCreate(&ctx, 0, 0), SUCCESS);
  const size_t size = size_t{64} << 20;
  std::vector<uint8_t> a(size), b(size), back(size, 0);
  for (size_t i = 0; i < size; ++i) {
    a[i] = static_cast<uint8_t>((i * 2654435761u) >> 11);
    b[i] = static_cast<uint8_t>(i * 7 + 3);
  }
  CUdeviceptr da = 0, db = 0;
  CALL(cuMemAlloc(&da, size), SUCCESS);
  CALL(cuMemAlloc(&db, size), SUCCESS);
  CALL(cuMemcpyHtoD(da, a.data(), size), SUCCESS);
  CALL(cuMemcpyHtoD(db, b.data(), size), SUCCESS);
  CALL(cuMemcpyDtoH(back.data(), da, size), SUCCESS);
  CHILD_CHECK(back == a, "the bytes read back differ from those written");
  CALL(cuCtxDestroy(ctx), SUCCESS);
  std::printf("PASS\n");
  return 0;
}

// A daemon with --session-objects 4: contexts, modules, functions, streams and events
// count, and one past the limit fails with CUDA_ERROR_OUT_OF_MEMORY (at the call, or at
// the next synchronization for what is posted) until one is released.
FERRY_IT_CHILD(cuda_object_quota) {
  driver_api d;
  CHILD_CHECK(d.open(), "cannot load Ferry's libcuda.so.1");
  auto cuInit = d.get<CUresult (*)(unsigned)>("cuInit");
  auto cuCtxCreate = d.get<CUresult (*)(handle*, unsigned, CUdevice)>("cuCtxCreate_v2");
  auto cuCtxSynchronize = d.get<CUresult (*)()>("cuCtxSynchronize");
  auto cuModuleLoadData = d.get<CUresult (*)(handle*, const void*)>("cuModuleLoadData");
  auto cuModuleGetFunction = d.get<CUresult (*)(handle*, handle, const char*)>("cuModuleGetFunction");
  auto cuStreamCreate = d.get<CUresult (*)(handle*, unsigned)>("cuStreamCreate");
  auto cuStreamDestroy = d.get<CUresult (*)(handle)>("cuStreamDestroy_v2");
  auto cuEventCreate = d.get<CUresult (*)(handle*, unsigned)>("cuEventCreate");
  CUresult rc;
  handle ctx = nullptr, module = nullptr, saxpy = nullptr, add_one = nullptr, stream = nullptr, event = nullptr;
  CALL(cuInit(0), SUCCESS);
  CALL(cuCtxCreate(&ctx, 0, 0), SUCCESS);
  CALL(cuModuleLoadData(&module, module_ptx), SUCCESS);
  CALL(cuModuleGetFunction(&saxpy, module, "saxpy"), SUCCESS);
  CALL(cuStreamCreate(&stream, 0), SUCCESS);  // the fourth
  CALL(cuEventCreate(&event, 0), SUCCESS);    // posted: refused on the server
  CALL(cuCtxSynchronize(), 2 /* OUT_OF_MEMORY */);
  CALL(cuModuleGetFunction(&add_one, module, "add_one_i32"), 2 /* OUT_OF_MEMORY */);
  CALL(cuStreamDestroy(stream), SUCCESS);
  CALL(cuModuleGetFunction(&add_one, module, "add_one_i32"), SUCCESS);
  CALL(cuCtxSynchronize(), SUCCESS);
  std::printf("PASS\n");
  return 0;
}

// A client that leaves work in flight (kernels the stand-in runs 20 ms each, a copy back
// still to come) and says READY; the test kills it there.
FERRY_IT_CHILD(cuda_dies_mid_stream) {
  driver_api d;
  CHILD_CHECK(d.open(), "cannot load Ferry's libcuda.so.1");
  auto cuInit = d.get<CUresult (*)(unsigned)>("cuInit");
  auto cuCtxCreate = d.get<CUresult (*)(handle*, unsigned, CUdevice)>("cuCtxCreate_v2");
  auto cuMemAlloc = d.get<CUresult (*)(CUdeviceptr*, size_t)>("cuMemAlloc_v2");
  auto cuMemcpyHtoD = d.get<CUresult (*)(CUdeviceptr, const void*, size_t)>("cuMemcpyHtoD_v2");
  auto cuMemcpyDtoHAsync = d.get<CUresult (*)(void*, CUdeviceptr, size_t, handle)>("cuMemcpyDtoHAsync_v2");
  auto cuModuleLoadData = d.get<CUresult (*)(handle*, const void*)>("cuModuleLoadData");
  auto cuModuleGetFunction = d.get<CUresult (*)(handle*, handle, const char*)>("cuModuleGetFunction");
  auto cuLaunchKernel = d.get<CUresult (*)(handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, handle, void**, void**)>("cuLaunchKernel");
  CUresult rc;
  handle ctx = nullptr, module = nullptr, add_one = nullptr;
  CUdeviceptr p = 0;
  constexpr unsigned n = 1 << 20;
  static std::vector<int> host(n, 1);
  CALL(cuInit(0), SUCCESS);
  CALL(cuCtxCreate(&ctx, 0, 0), SUCCESS);
  CALL(cuMemAlloc(&p, n * sizeof(int)), SUCCESS);
  CALL(cuMemcpyHtoD(p, host.data(), n * sizeof(int)), SUCCESS);
  CALL(cuModuleLoadData(&module, module_ptx), SUCCESS);
  CALL(cuModuleGetFunction(&add_one, module, "add_one_i32"), SUCCESS);
  unsigned count = n;
  void* params[] = {&p, &count};
  for (int i = 0; i < 50; ++i) CALL(cuLaunchKernel(add_one, n / 256, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr), SUCCESS);
  CALL(cuMemcpyDtoHAsync(host.data(), p, n * sizeof(int), nullptr), SUCCESS);
  std::printf("READY\n");
  std::fflush(stdout);
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

// A client that starts a 512 MiB copy to the device on another thread and says READY as
// it begins; the test kills it there, with the copy's bytes on their way.
FERRY_IT_CHILD(cuda_dies_mid_copy) {
  driver_api d;
  CHILD_CHECK(d.open(), "cannot load Ferry's libcuda.so.1");
  auto cuInit = d.get<CUresult (*)(unsigned)>("cuInit");
  auto cuCtxCreate = d.get<CUresult (*)(handle*, unsigned, CUdevice)>("cuCtxCreate_v2");
  auto cuCtxSetCurrent = d.get<CUresult (*)(handle)>("cuCtxSetCurrent");
  auto cuMemAlloc = d.get<CUresult (*)(CUdeviceptr*, size_t)>("cuMemAlloc_v2");
  auto cuMemcpyHtoD = d.get<CUresult (*)(CUdeviceptr, const void*, size_t)>("cuMemcpyHtoD_v2");
  CUresult rc;
  handle ctx = nullptr;
  CUdeviceptr p = 0;
  const size_t size = size_t{512} << 20;
  static std::vector<uint8_t> host(size, 3);
  CALL(cuInit(0), SUCCESS);
  CALL(cuCtxCreate(&ctx, 0, 0), SUCCESS);
  CALL(cuMemAlloc(&p, size), SUCCESS);
  std::thread copier([&] {
    cuCtxSetCurrent(ctx);
    cuMemcpyHtoD(p, host.data(), size);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::printf("READY\n");
  std::fflush(stdout);
  copier.join();
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

// A client whose kernel never returns, with a copy back behind it (a watch the daemon
// holds), says READY; the test kills it there.
FERRY_IT_CHILD(cuda_kernel_hangs) {
  driver_api d;
  CHILD_CHECK(d.open(), "cannot load Ferry's libcuda.so.1");
  auto cuInit = d.get<CUresult (*)(unsigned)>("cuInit");
  auto cuCtxCreate = d.get<CUresult (*)(handle*, unsigned, CUdevice)>("cuCtxCreate_v2");
  auto cuMemAlloc = d.get<CUresult (*)(CUdeviceptr*, size_t)>("cuMemAlloc_v2");
  auto cuMemcpyDtoHAsync = d.get<CUresult (*)(void*, CUdeviceptr, size_t, handle)>("cuMemcpyDtoHAsync_v2");
  auto cuStreamQuery = d.get<CUresult (*)(handle)>("cuStreamQuery");
  auto cuModuleLoadData = d.get<CUresult (*)(handle*, const void*)>("cuModuleLoadData");
  auto cuModuleGetFunction = d.get<CUresult (*)(handle*, handle, const char*)>("cuModuleGetFunction");
  auto cuLaunchKernel = d.get<CUresult (*)(handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, handle, void**, void**)>("cuLaunchKernel");
  CUresult rc;
  handle ctx = nullptr, module = nullptr, hang = nullptr;
  CALL(cuInit(0), SUCCESS);
  CALL(cuCtxCreate(&ctx, 0, 0), SUCCESS);
  CALL(cuModuleLoadData(&module, module_ptx), SUCCESS);
  CALL(cuModuleGetFunction(&hang, module, "hang"), SUCCESS);
  void* no_params[] = {nullptr};
  CUdeviceptr p = 0;
  static int back[1024];
  CALL(cuMemAlloc(&p, sizeof back), SUCCESS);
  CALL(cuLaunchKernel(hang, 1, 1, 1, 1, 1, 1, 0, nullptr, no_params, nullptr), SUCCESS);
  CALL(cuMemcpyDtoHAsync(back, p, sizeof back, nullptr), SUCCESS);  // its answer never comes
  CALL(cuStreamQuery(nullptr), NOT_READY);  // sent after the copy's request: the watch is made
  std::printf("READY\n");
  std::fflush(stdout);
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

// cuEventSynchronize waits for its event alone: not for what its stream runs after it
// (a kernel that never returns), not for another thread's wait for another event, not
// for a stream destroyed since (whose copy back still arrives first), through streams
// made and destroyed by the hundred.
FERRY_IT_CHILD(cuda_event_waits) {
  driver_api d;
  CHILD_CHECK(d.open(), "cannot load Ferry's libcuda.so.1");
#define GET(name, symbol, type) auto name = d.get<type>(symbol)
  GET(cuInit, "cuInit", CUresult (*)(unsigned));
  GET(cuCtxCreate, "cuCtxCreate_v2", CUresult (*)(handle*, unsigned, CUdevice));
  GET(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult (*)(handle));
  GET(cuMemAlloc, "cuMemAlloc_v2", CUresult (*)(CUdeviceptr*, size_t));
  GET(cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult (*)(CUdeviceptr, const void*, size_t));
  GET(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult (*)(void*, CUdeviceptr, size_t, handle));
  GET(cuModuleLoadData, "cuModuleLoadData", CUresult (*)(handle*, const void*));
  GET(cuModuleGetFunction, "cuModuleGetFunction", CUresult (*)(handle*, handle, const char*));
  GET(cuLaunchKernel, "cuLaunchKernel",
      CUresult (*)(handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, handle, void**, void**));
  GET(cuStreamCreate, "cuStreamCreate", CUresult (*)(handle*, unsigned));
  GET(cuStreamDestroy, "cuStreamDestroy_v2", CUresult (*)(handle));
  GET(cuStreamQuery, "cuStreamQuery", CUresult (*)(handle));
  GET(cuEventCreate, "cuEventCreate", CUresult (*)(handle*, unsigned));
  GET(cuEventRecord, "cuEventRecord", CUresult (*)(handle, handle));
  GET(cuEventQuery, "cuEventQuery", CUresult (*)(handle));
  GET(cuEventSynchronize, "cuEventSynchronize", CUresult (*)(handle));
  GET(cuEventDestroy, "cuEventDestroy_v2", CUresult (*)(handle));
#undef GET
  CUresult rc;
  handle ctx = nullptr, module = nullptr, add_one = nullptr, hang = nullptr;
  CALL(cuInit(0), SUCCESS);
  CALL(cuCtxCreate(&ctx, 0, 0), SUCCESS);
  CALL(cuModuleLoadData(&module, module_ptx), SUCCESS);
  CALL(cuModuleGetFunction(&add_one, module, "add_one_i32"), SUCCESS);
  CALL(cuModuleGetFunction(&hang, module, "hang"), SUCCESS);
  // Everything on the NULL stream first: once a stream hangs, the NULL stream waits for it.
  constexpr unsigned n = 1 << 16;
  std::vector<int> host(n);
  for (unsigned i = 0; i < n; ++i) host[i] = static_cast<int>(i);
  CUdeviceptr a = 0, b = 0;
  CALL(cuMemAlloc(&a, n * sizeof(int)), SUCCESS);
  CALL(cuMemAlloc(&b, n * sizeof(int)), SUCCESS);
  CALL(cuMemcpyHtoD(a, host.data(), n * sizeof(int)), SUCCESS);
  CALL(cuMemcpyHtoD(b, host.data(), n * sizeof(int)), SUCCESS);
  unsigned count = n;
  void* a_params[] = {&a, &count};
  void* b_params[] = {&b, &count};
  void* no_params[] = {nullptr};

  // A stream that hangs after its event.
  handle s1 = nullptr, e1 = nullptr;
  CALL(cuStreamCreate(&s1, 0), SUCCESS);
  CALL(cuEventCreate(&e1, 0), SUCCESS);
  CALL(cuLaunchKernel(add_one, (n + 255) / 256, 1, 1, 256, 1, 1, 0, s1, a_params, nullptr), SUCCESS);
  CALL(cuEventRecord(e1, s1), SUCCESS);
  CALL(cuLaunchKernel(hang, 1, 1, 1, 1, 1, 1, 0, s1, no_params, nullptr), SUCCESS);
  // A thread that waits for good (an event after the hung kernel) holds nobody else's
  // wait; it says when it is about to ask.
  handle never = nullptr;
  CALL(cuEventCreate(&never, 0), SUCCESS);
  CALL(cuEventRecord(never, s1), SUCCESS);
  std::atomic<bool> asking{false};
  std::thread([&] {
    cuCtxSetCurrent(ctx);
    asking = true;
    cuEventSynchronize(never);
  }).detach();
  while (!asking) std::this_thread::yield();
  CALL(cuEventSynchronize(e1), SUCCESS);
  CALL(cuEventQuery(e1), SUCCESS);
  CALL(cuStreamQuery(s1), NOT_READY);
  // A copy back behind the hung kernel never arrives: the stream stays busy, the event
  // recorded before the copy stays complete.
  static std::vector<int> never_back(n);
  CALL(cuMemcpyDtoHAsync(never_back.data(), a, n * sizeof(int), s1), SUCCESS);
  CALL(cuEventQuery(e1), SUCCESS);
  CALL(cuStreamQuery(s1), NOT_READY);

  // A stream destroyed between its event and the synchronization, with a copy back before it.
  handle s2 = nullptr, e2 = nullptr;
  std::vector<int> back(n, -1);
  CALL(cuStreamCreate(&s2, 0), SUCCESS);
  CALL(cuEventCreate(&e2, 0), SUCCESS);
  CALL(cuLaunchKernel(add_one, (n + 255) / 256, 1, 1, 256, 1, 1, 0, s2, b_params, nullptr), SUCCESS);
  CALL(cuMemcpyDtoHAsync(back.data(), b, n * sizeof(int), s2), SUCCESS);
  CALL(cuEventRecord(e2, s2), SUCCESS);
  CALL(cuStreamDestroy(s2), SUCCESS);
  CALL(cuEventSynchronize(e2), SUCCESS);
  for (unsigned i = 0; i < n; ++i) CHILD_CHECK(back[i] == static_cast<int>(i) + 1, "back[%u] = %d", i, back[i]);

  // Streams by the hundred, each destroyed after an event on it.
  handle e3 = nullptr;
  CALL(cuEventCreate(&e3, 0), SUCCESS);
  for (int i = 0; i < 300; ++i) {
    handle s = nullptr;
    CALL(cuStreamCreate(&s, 0), SUCCESS);
    CALL(cuLaunchKernel(add_one, 1, 1, 1, 1, 1, 1, 0, s, b_params, nullptr), SUCCESS);
    CALL(cuEventRecord(e3, s), SUCCESS);
    CALL(cuStreamDestroy(s), SUCCESS);
    if (i % 50 == 49) CALL(cuEventSynchronize(e3), SUCCESS);
  }
  CALL(cuEventDestroy(e3), SUCCESS);
  std::printf("PASS\n");
  std::fflush(stdout);
  std::_Exit(0);  // s1 never ends: no teardown to wait for it
}

/// Runs child `name` against `server` until it prints READY, then kills it; false
/// when it never did (within a minute).
bool kill_once_ready(const char* name, ferry::test::daemon& server) {
  child_process child = spawn_self(name, {}, {{"FERRY_SERVERS", server.address()}});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::optional<std::string> line;
  while ((line = child.read_line(deadline)) && *line != "READY") {
  }
  child.kill_and_wait();
  return line.has_value();
}

/// Whether the file `log` says `what` within 20 s (looked at every 50 ms).
bool log_says_soon(const std::string& log, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (read_file(log).find(what) == std::string::npos) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

TEST(cuda, a_daemon_without_a_driver_has_no_device_and_answers_exactly) {
  ferry::test::daemon server({}, {}, {{"FERRY_CUDA_DRIVER", "/nonexistent/libcuda.so.1"}});
  ASSERT_TRUE(server.started());
  expect_child_passes("cuda_without_devices", std::chrono::seconds(60), {{"FERRY_SERVERS", server.address()}});
}

TEST(cuda, a_program_runs_its_kernels_through_the_daemons_driver) {
  ferry::test::daemon server({}, {}, {{"FERRY_CUDA_DRIVER", fake_driver_env()}});
  ASSERT_TRUE(server.started());
  expect_child_passes("cuda_with_devices", std::chrono::seconds(120), {{"FERRY_SERVERS", server.address()}});
}

TEST(cuda, a_daemon_refuses_to_serve_ferrys_own_driver) {
  // A daemon started with the client's LD_LIBRARY_PATH would load Ferry's libcuda.so.1.
  const std::string log = ::testing::TempDir() + "ferry_cuda_own_driver." + std::to_string(::getpid()) + ".log";
  {
    ferry::test::daemon server({}, log, {{"FERRY_CUDA_DRIVER", FERRY_CUDA_CLIENT}});
    ASSERT_TRUE(server.started());
    expect_child_passes("cuda_without_devices", std::chrono::seconds(60), {{"FERRY_SERVERS", server.address()}});
  }
  EXPECT_NE(read_file(log).find("is Ferry's own CUDA driver"), std::string::npos) << read_file(log);
}

TEST(cuda, copies_back_come_on_the_bulk_stream_in_order) {
  ferry::test::daemon server({}, {}, {{"FERRY_CUDA_DRIVER", fake_driver_env()}});
  ASSERT_TRUE(server.started());
  expect_child_passes("cuda_copies_back_in_bulk", std::chrono::seconds(120), {{"FERRY_SERVERS", server.address()}});
}

TEST(cuda, copies_back_to_a_client_on_the_same_host_go_through_a_read_window) {
  // Named by this process: another run of the suite may share the directory.
  const std::string stem = ::testing::TempDir() + "ferry_cuda_bulk_back." + std::to_string(::getpid());
  const std::string socket = stem + ".sock", log = stem + ".log";
  {
    ferry::test::daemon server({"--unix", socket, "--log-level", "info"}, log, {{"FERRY_CUDA_DRIVER", fake_driver_env()}});
    ASSERT_TRUE(server.started());
    expect_child_passes("cuda_copies_back_in_bulk", std::chrono::seconds(120), {{"FERRY_SERVERS", "unix:" + socket}});
  }
  EXPECT_NE(read_file(log).find("shares a read window"), std::string::npos) << read_file(log);
}

TEST(cuda, ferry_run_with_cuda_gives_a_program_ferrys_driver) {
  ferry::test::daemon server({}, {}, {{"FERRY_CUDA_DRIVER", fake_driver_env()}});
  ASSERT_TRUE(server.started());
  spawn_options options;
  options.argv = {binary_paths().bin_dir + "/bin/ferry", "run", "--cuda", "--servers", server.address(), "--",
                  self_executable(), "--ferry-child=cuda_by_name"};
  child_process run = child_process::spawn(options);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const std::string out = run.read_all(deadline);
  auto status = run.wait(deadline);
  ASSERT_TRUE(status.has_value()) << "ferry run did not end: " << out;
  EXPECT_TRUE(exited_with(*status, 0)) << describe_wait_status(*status) << ": " << out;
  EXPECT_NE(out.find("PASS"), std::string::npos) << out;
}

TEST(cuda, the_sessions_memory_limit_holds_for_cuda_allocations) {
  ferry::test::daemon server({"--session-memory", "67108864"}, {}, {{"FERRY_CUDA_DRIVER", fake_driver_env()}});
  ASSERT_TRUE(server.started());
  expect_child_passes("cuda_memory_quota", std::chrono::seconds(60), {{"FERRY_SERVERS", server.address()}});
}

TEST(cuda, a_new_contexts_first_copies_find_their_staging_pinned) {
  // Pinning is slow (an H100 host: 23 ms for 64 MiB): the daemon pins what a
  // context's first copies need when it makes the context, in the background.
  const std::string log =
      ::testing::TempDir() + "ferry_cuda_first_copies." + std::to_string(::getpid()) + ".log";
  {
    ferry::test::daemon server({"--log-level", "trace"}, log, {{"FERRY_CUDA_DRIVER", fake_driver_env()}});
    ASSERT_TRUE(server.started());
    expect_child_passes("cuda_first_copies", std::chrono::seconds(120), {{"FERRY_SERVERS", server.address()}});
  }
  const std::string text = read_file(log);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_NE(text.find("staging pinned in"), std::string::npos) << "the context's staging was not pinned ahead";
  EXPECT_EQ(count("cuMemAllocHost of 67108864 bytes of staging"), 0u) << "a copy in pinned its own staging";
  EXPECT_EQ(count("cuMemHostRegister of 16777216 bytes"), 4u) << "the copy back pinned more than the pre-warmed pieces";
  std::remove(log.c_str());
}

TEST(cuda, the_sessions_object_limit_holds_for_cuda_objects) {
  ferry::test::daemon server({"--session-objects", "4"}, {}, {{"FERRY_CUDA_DRIVER", fake_driver_env()}});
  ASSERT_TRUE(server.started());
  expect_child_passes("cuda_object_quota", std::chrono::seconds(60), {{"FERRY_SERVERS", server.address()}});
}

TEST(cuda, a_client_killed_with_work_in_flight_leaves_the_daemon_serving_others) {
  ferry::test::daemon server({}, {},
                             {{"FERRY_CUDA_DRIVER", fake_driver_env()}, {"FERRY_FAKE_CUDA_DELAY_US", "20000"}});
  ASSERT_TRUE(server.started());
  // Killed mid-stream: 50 kernels of 20 ms and a copy back are still to run.
  ASSERT_TRUE(kill_once_ready("cuda_dies_mid_stream", server)) << "the client never got its work in flight";
  // Another client's session runs in full meanwhile (its kernels pay the delay too).
  expect_child_passes("cuda_with_devices", std::chrono::seconds(120), {{"FERRY_SERVERS", server.address()}});
  // The daemon stops cleanly with the dead client's session still kept for a resumption.
  server.stop();
}

TEST(cuda, a_kernel_that_never_returns_does_not_hold_the_worker_of_a_session_that_ended) {
  // --session-grace 0: the session ends as its client's connection goes.
  const std::string log = ::testing::TempDir() + "ferry_cuda_hang." + std::to_string(::getpid()) + ".log";
  {
    ferry::test::daemon server({"--session-grace", "0", "--log-level", "debug"}, log,
                               {{"FERRY_CUDA_DRIVER", fake_driver_env()}});
    ASSERT_TRUE(server.started());
    ASSERT_TRUE(kill_once_ready("cuda_kernel_hangs", server)) << "the client never got its kernel running";
    // The worker gives up on the kernel after 2 s and ends the session (a destroyed
    // context would have waited for it for good).
    const bool ended = log_says_soon(log, "ended in worker");
    const std::string text = read_file(log);
    EXPECT_NE(text.find("its GPU work has not ended"), std::string::npos) << text;
    EXPECT_TRUE(ended) << "the session's worker never ended\n" << text;
    // The daemon serves the next client in full.
    expect_child_passes("cuda_with_devices", std::chrono::seconds(120), {{"FERRY_SERVERS", server.address()}});
  }
}

TEST(cuda, a_client_killed_mid_copy_does_not_hold_its_session) {
  // --session-grace 0: the session ends as its client's connection goes. The daemon's
  // control reader waits there for the copy's bytes, which will never come: the lost
  // connection must end that wait (it used to hold the session, its worker and its GPU
  // memory until the daemon stopped).
  const std::string log = ::testing::TempDir() + "ferry_cuda_mid_copy." + std::to_string(::getpid()) + ".log";
  {
    ferry::test::daemon server({"--session-grace", "0", "--log-level", "info"}, log,
                               {{"FERRY_CUDA_DRIVER", fake_driver_env()}});
    ASSERT_TRUE(server.started());
    ASSERT_TRUE(kill_once_ready("cuda_dies_mid_copy", server)) << "the client never began its copy";
    EXPECT_TRUE(log_says_soon(log, " closed (")) << "the session of the client killed mid-copy never ended\n"
                                                 << read_file(log);
    expect_child_passes("cuda_with_devices", std::chrono::seconds(120), {{"FERRY_SERVERS", server.address()}});
  }
  std::remove(log.c_str());
}

TEST(cuda, an_event_synchronization_waits_for_its_event_alone) {
  ferry::test::daemon server({"--session-grace", "0"}, {}, {{"FERRY_CUDA_DRIVER", fake_driver_env()}});
  ASSERT_TRUE(server.started());
  expect_child_passes("cuda_event_waits", std::chrono::seconds(40), {{"FERRY_SERVERS", server.address()}});
}
