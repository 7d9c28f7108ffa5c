#include "cuda/server/driver.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>

#include "common/log.hpp"

namespace ferry::cuda {
namespace {

enum class necessity { mandatory, optional };

using get_proc_address_fn = CUresult (*)(const char* symbol, void** function, int cuda_version,
                                         cuuint64_t flags, CUdriverProcAddressQueryResult* status);

/// Resolves entry points of one loaded library.
class resolver {
 public:
  resolver(void* handle, get_proc_address_fn get_proc_address, int driver_version)
      : handle_(handle), get_proc_address_(get_proc_address), driver_version_(driver_version) {}

  /// Finds `base` as of CUDA `version` (1000 * major + 10 * minor: the version whose
  /// signature our member declares), else the exported `symbol`, else `fallback` (an
  /// older export with the same signature). Returns false, naming the entry in `why`,
  /// when a mandatory one is found nowhere.
  template <class F>
  bool bind(F& slot, const char* base, int version, const char* symbol, necessity need, std::string& why,
            const char* fallback = nullptr) {
    void* found = nullptr;
    if (get_proc_address_ != nullptr) {
      // A driver older than `version` would refuse the question; ask as of its own
      // version then, and where the signature changed in between, it answers nothing
      // and the exported symbol decides.
      int asked = driver_version_ > 0 ? std::min(version, driver_version_) : version;
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      CUresult rc = get_proc_address_(base, &found, asked, CU_GET_PROC_ADDRESS_DEFAULT, &status);
      if (rc != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS) found = nullptr;
    }
    if (found == nullptr) found = dlsym(handle_, symbol);
    if (found == nullptr && fallback != nullptr) found = dlsym(handle_, fallback);
    if (found == nullptr) {
      if (need == necessity::mandatory) {
        why = std::string("the driver lacks ") + symbol;
        return false;
      }
      FERRY_DEBUG("cuda", "the driver lacks %s (optional)", symbol);
    }
    slot = reinterpret_cast<F>(found);
    return true;
  }

 private:
  void* handle_;
  get_proc_address_fn get_proc_address_;
  int driver_version_;
};

}  // namespace

namespace {

std::string driver_path() {
  const char* configured = std::getenv("FERRY_CUDA_DRIVER");
  return configured != nullptr && configured[0] != '\0' ? configured : "libcuda.so.1";
}

}  // namespace

void map_driver_library() {
  // Never closed (see ~driver); RTLD_LAZY: nothing is resolved yet.
  dlopen(driver_path().c_str(), RTLD_LAZY | RTLD_LOCAL);
  dlerror();
}

std::unique_ptr<driver> driver::load(std::string& why) {
  return load_from(driver_path(), symbol_lookup::proc_address, why);
}

std::unique_ptr<driver> driver::load_from(const std::string& path, symbol_lookup lookup, std::string& why) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    why = "cannot load " + path + ": " + (error != nullptr ? error : "unknown dlopen error");
    return nullptr;
  }
  // A daemon started with the client's LD_LIBRARY_PATH would find Ferry's own
  // libcuda.so.1 and serve its sessions to itself. The client's library marks
  // itself (src/cuda/client/entry_points.cpp).
  if (dlsym(handle, "ferry_remote_cuda_driver") != nullptr) {
    why = path + " is Ferry's own CUDA driver (the client's), not NVIDIA's; take lib/ferry-cuda out of "
                 "LD_LIBRARY_PATH or name NVIDIA's driver with FERRY_CUDA_DRIVER";
    return nullptr;
  }
  std::unique_ptr<driver> d(new driver);
  d->handle_ = handle;
  d->path_ = path;

  // cuDriverGetVersion has kept its name and signature since CUDA 2.2 and works before
  // cuInit; its answer caps the versions asked of cuGetProcAddress.
  d->cuDriverGetVersion = reinterpret_cast<decltype(d->cuDriverGetVersion)>(dlsym(handle, "cuDriverGetVersion"));
  if (d->cuDriverGetVersion != nullptr && d->cuDriverGetVersion(&d->version_) != CUDA_SUCCESS) d->version_ = 0;

  get_proc_address_fn get_proc_address = nullptr;
  if (lookup == symbol_lookup::proc_address)
    get_proc_address = reinterpret_cast<get_proc_address_fn>(dlsym(handle, "cuGetProcAddress_v2"));
  d->lookup_ = get_proc_address != nullptr ? symbol_lookup::proc_address : symbol_lookup::exported_names;
  resolver r(handle, get_proc_address, d->version_);

  constexpr necessity M = necessity::mandatory;
  constexpr necessity O = necessity::optional;
  // Versions: when the signature declared in driver.hpp became the one the base name
  // stands for (NVIDIA's cudaTypedefs.h names them PFN_<name>_v<version>).
  // clang-format off
  bool ok =
      r.bind(d->cuInit,                      "cuInit",                      2000,  "cuInit", M, why) &&
      r.bind(d->cuDriverGetVersion,          "cuDriverGetVersion",          2020,  "cuDriverGetVersion", M, why) &&
      r.bind(d->cuGetErrorName,              "cuGetErrorName",              6000,  "cuGetErrorName", O, why) &&
      r.bind(d->cuGetErrorString,            "cuGetErrorString",            6000,  "cuGetErrorString", O, why) &&
      r.bind(d->cuDeviceGetCount,            "cuDeviceGetCount",            2000,  "cuDeviceGetCount", M, why) &&
      r.bind(d->cuDeviceGet,                 "cuDeviceGet",                 2000,  "cuDeviceGet", M, why) &&
      r.bind(d->cuDeviceGetName,             "cuDeviceGetName",             2000,  "cuDeviceGetName", M, why) &&
      r.bind(d->cuDeviceGetAttribute,        "cuDeviceGetAttribute",        2000,  "cuDeviceGetAttribute", M, why) &&
      r.bind(d->cuDeviceTotalMem,            "cuDeviceTotalMem",            3020,  "cuDeviceTotalMem_v2", M, why) &&
      r.bind(d->cuDeviceGetUuid,             "cuDeviceGetUuid",             11040, "cuDeviceGetUuid_v2", O, why, "cuDeviceGetUuid") &&
      r.bind(d->cuCtxCreate,                 "cuCtxCreate",                 3020,  "cuCtxCreate_v2", M, why) &&
      r.bind(d->cuCtxDestroy,                "cuCtxDestroy",                4000,  "cuCtxDestroy_v2", M, why) &&
      r.bind(d->cuCtxSetCurrent,             "cuCtxSetCurrent",             4000,  "cuCtxSetCurrent", M, why) &&
      r.bind(d->cuCtxGetCurrent,             "cuCtxGetCurrent",             4000,  "cuCtxGetCurrent", M, why) &&
      r.bind(d->cuCtxSynchronize,            "cuCtxSynchronize",            2000,  "cuCtxSynchronize", M, why) &&
      r.bind(d->cuCtxPushCurrent,            "cuCtxPushCurrent",            4000,  "cuCtxPushCurrent_v2", O, why) &&
      r.bind(d->cuCtxPopCurrent,             "cuCtxPopCurrent",             4000,  "cuCtxPopCurrent_v2", O, why) &&
      r.bind(d->cuCtxGetDevice,              "cuCtxGetDevice",              2000,  "cuCtxGetDevice", O, why) &&
      r.bind(d->cuDevicePrimaryCtxRetain,    "cuDevicePrimaryCtxRetain",    7000,  "cuDevicePrimaryCtxRetain", O, why) &&
      r.bind(d->cuDevicePrimaryCtxRelease,   "cuDevicePrimaryCtxRelease",   11000, "cuDevicePrimaryCtxRelease_v2", O, why) &&
      r.bind(d->cuMemAlloc,                  "cuMemAlloc",                  3020,  "cuMemAlloc_v2", M, why) &&
      r.bind(d->cuMemFree,                   "cuMemFree",                   3020,  "cuMemFree_v2", M, why) &&
      r.bind(d->cuMemGetInfo,                "cuMemGetInfo",                3020,  "cuMemGetInfo_v2", M, why) &&
      r.bind(d->cuMemAllocHost,              "cuMemAllocHost",              3020,  "cuMemAllocHost_v2", M, why) &&
      r.bind(d->cuMemFreeHost,               "cuMemFreeHost",               2000,  "cuMemFreeHost", M, why) &&
      r.bind(d->cuMemHostRegister,           "cuMemHostRegister",           6050,  "cuMemHostRegister_v2", M, why) &&
      r.bind(d->cuMemHostUnregister,         "cuMemHostUnregister",         4000,  "cuMemHostUnregister", M, why) &&
      r.bind(d->cuMemcpyHtoDAsync,           "cuMemcpyHtoDAsync",           3020,  "cuMemcpyHtoDAsync_v2", M, why) &&
      r.bind(d->cuMemcpyDtoHAsync,           "cuMemcpyDtoHAsync",           3020,  "cuMemcpyDtoHAsync_v2", M, why) &&
      r.bind(d->cuMemcpyDtoDAsync,           "cuMemcpyDtoDAsync",           3020,  "cuMemcpyDtoDAsync_v2", M, why) &&
      r.bind(d->cuMemcpyHtoD,                "cuMemcpyHtoD",                3020,  "cuMemcpyHtoD_v2", O, why) &&
      r.bind(d->cuMemcpyDtoH,                "cuMemcpyDtoH",                3020,  "cuMemcpyDtoH_v2", O, why) &&
      r.bind(d->cuMemsetD8Async,             "cuMemsetD8Async",             3020,  "cuMemsetD8Async", M, why) &&
      r.bind(d->cuMemsetD16Async,            "cuMemsetD16Async",            3020,  "cuMemsetD16Async", M, why) &&
      r.bind(d->cuMemsetD32Async,            "cuMemsetD32Async",            3020,  "cuMemsetD32Async", M, why) &&
      r.bind(d->cuModuleLoadDataEx,          "cuModuleLoadDataEx",          2010,  "cuModuleLoadDataEx", M, why) &&
      r.bind(d->cuModuleUnload,              "cuModuleUnload",              2000,  "cuModuleUnload", M, why) &&
      r.bind(d->cuModuleGetFunction,         "cuModuleGetFunction",         2000,  "cuModuleGetFunction", M, why) &&
      r.bind(d->cuModuleGetGlobal,           "cuModuleGetGlobal",           3020,  "cuModuleGetGlobal_v2", M, why) &&
      r.bind(d->cuFuncGetAttribute,          "cuFuncGetAttribute",          2020,  "cuFuncGetAttribute", M, why) &&
      r.bind(d->cuFuncSetAttribute,          "cuFuncSetAttribute",          9000,  "cuFuncSetAttribute", M, why) &&
      r.bind(d->cuFuncSetCacheConfig,        "cuFuncSetCacheConfig",        3000,  "cuFuncSetCacheConfig", O, why) &&
      r.bind(d->cuFuncGetParamInfo,          "cuFuncGetParamInfo",          12040, "cuFuncGetParamInfo", O, why) &&
      r.bind(d->cuLaunchKernel,              "cuLaunchKernel",              4000,  "cuLaunchKernel", M, why) &&
      r.bind(d->cuLaunchKernelEx,            "cuLaunchKernelEx",            11060, "cuLaunchKernelEx", O, why) &&
      r.bind(d->cuLaunchHostFunc,            "cuLaunchHostFunc",            10000, "cuLaunchHostFunc", O, why) &&
      r.bind(d->cuStreamAddCallback,         "cuStreamAddCallback",         5000,  "cuStreamAddCallback", O, why) &&
      r.bind(d->cuStreamCreate,              "cuStreamCreate",              2000,  "cuStreamCreate", M, why) &&
      r.bind(d->cuStreamCreateWithPriority,  "cuStreamCreateWithPriority",  5050,  "cuStreamCreateWithPriority", O, why) &&
      r.bind(d->cuStreamDestroy,             "cuStreamDestroy",             4000,  "cuStreamDestroy_v2", M, why) &&
      r.bind(d->cuStreamSynchronize,         "cuStreamSynchronize",         2000,  "cuStreamSynchronize", M, why) &&
      r.bind(d->cuStreamQuery,               "cuStreamQuery",               2000,  "cuStreamQuery", M, why) &&
      r.bind(d->cuStreamWaitEvent,           "cuStreamWaitEvent",           3020,  "cuStreamWaitEvent", M, why) &&
      r.bind(d->cuEventCreate,               "cuEventCreate",               2000,  "cuEventCreate", M, why) &&
      r.bind(d->cuEventRecord,               "cuEventRecord",               2000,  "cuEventRecord", M, why) &&
      r.bind(d->cuEventDestroy,              "cuEventDestroy",              4000,  "cuEventDestroy_v2", M, why) &&
      r.bind(d->cuEventQuery,                "cuEventQuery",                2000,  "cuEventQuery", M, why) &&
      r.bind(d->cuEventSynchronize,          "cuEventSynchronize",          2000,  "cuEventSynchronize", M, why) &&
      r.bind(d->cuEventElapsedTime,          "cuEventElapsedTime",          2000,  "cuEventElapsedTime", M, why, "cuEventElapsedTime_v2") &&
      r.bind(d->cuLinkCreate,                "cuLinkCreate",                6050,  "cuLinkCreate_v2", M, why) &&
      r.bind(d->cuLinkAddData,               "cuLinkAddData",               6050,  "cuLinkAddData_v2", M, why) &&
      r.bind(d->cuLinkComplete,              "cuLinkComplete",              5050,  "cuLinkComplete", M, why) &&
      r.bind(d->cuLinkDestroy,               "cuLinkDestroy",               5050,  "cuLinkDestroy", M, why) &&
      r.bind(d->cuOccupancyMaxPotentialBlockSize, "cuOccupancyMaxPotentialBlockSize", 6050,
             "cuOccupancyMaxPotentialBlockSize", O, why) &&
      r.bind(d->cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050,
             "cuOccupancyMaxActiveBlocksPerMultiprocessor", O, why);
  // clang-format on
  if (!ok) {
    why = path + ": " + why;
    // Not closed: the library may have started threads of its own (see ~driver).
    return nullptr;
  }
  FERRY_DEBUG("cuda", "loaded %s (driver version %d, entry points by %s)", path.c_str(), d->version_,
              d->lookup_ == symbol_lookup::proc_address ? "cuGetProcAddress_v2" : "exported names");
  return d;
}

}  // namespace ferry::cuda
