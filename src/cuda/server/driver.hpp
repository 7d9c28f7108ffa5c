// The daemon's access to NVIDIA's CUDA driver (libcuda.so.1), loaded at run time.
//
// ferryd never links against the driver: a host without NVIDIA's driver still runs the
// daemon (it then serves no CUDA devices), and tests point FERRY_CUDA_DRIVER at a CPU
// stand-in (tests/cuda/fake_driver). Each entry point is a member function pointer
// named by the API's base name and typed with Ferry's ABI (driver_abi.hpp), so a call
// reads like CUDA code: `drv.cuMemAlloc(&p, size)`.
//
// Entry points are resolved the way NVIDIA recommends, through cuGetProcAddress_v2,
// asking each by its base name and the CUDA version whose signature we declare (so
// "cuCtxCreate" at 3020 is the (CUcontext*, unsigned, CUdevice) variant; a 13.0 driver
// asked at 12000 answers cuCtxCreate_v3, at 12080 cuCtxCreate_v4, both with other
// parameters). Where that answers nothing, or the driver is too old to export
// cuGetProcAddress_v2, the exact versioned symbol (cuCtxCreate_v2, ...) is taken with
// dlsym.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "cuda/abi/driver_abi.hpp"

namespace ferry::cuda {

/// How the entry points were found.
enum class symbol_lookup {
  proc_address,  ///< cuGetProcAddress_v2 first, the exported symbol where it answers nothing
  exported_names,  ///< dlsym of the exported (versioned) symbols only
};

/// Maps the driver's library (FERRY_CUDA_DRIVER, else libcuda.so.1) into this process
/// and keeps it there, without initializing it: a session worker does so before it takes
/// its unprivileged user, so that a driver in a directory that user cannot read still
/// loads later (dlopen finds the mapped library by the same name). Nothing happens when
/// it cannot be loaded: driver::load says why when a session asks.
void map_driver_library();

class driver {
 public:
  /// Loads FERRY_CUDA_DRIVER if set, else "libcuda.so.1", and resolves every entry point.
  /// Returns nullptr with `why` saying what failed (the loader's message, or the first
  /// mandatory entry point the library lacks).
  static std::unique_ptr<driver> load(std::string& why);

  /// Loads the library at `path` (a file name is searched as dlopen searches).
  static std::unique_ptr<driver> load_from(const std::string& path, symbol_lookup lookup,
                                           std::string& why);

  /// Does not unload the library: drivers keep threads and handlers of their own and do
  /// not survive dlclose, and the process may still hold objects they made.
  ~driver() = default;
  driver(const driver&) = delete;
  driver& operator=(const driver&) = delete;

  /// The path the library was loaded from, as given to dlopen.
  const std::string& path() const { return path_; }
  /// How the entry points were found (exported_names where the driver has no
  /// cuGetProcAddress_v2).
  symbol_lookup lookup() const { return lookup_; }
  /// What cuDriverGetVersion answered at load time (0 if it failed).
  int version() const { return version_; }

  // Initialization and version
  CUresult (*cuInit)(unsigned flags) = nullptr;
  CUresult (*cuDriverGetVersion)(int* version) = nullptr;
  CUresult (*cuGetErrorName)(CUresult error, const char** name) = nullptr;    // optional
  CUresult (*cuGetErrorString)(CUresult error, const char** text) = nullptr;  // optional

  // Devices
  CUresult (*cuDeviceGetCount)(int* count) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int* value, CUdevice_attribute attribute, CUdevice device) = nullptr;
  CUresult (*cuDeviceTotalMem)(std::size_t* bytes, CUdevice device) = nullptr;
  CUresult (*cuDeviceGetUuid)(CUuuid* uuid, CUdevice device) = nullptr;  // optional

  // Contexts
  CUresult (*cuCtxCreate)(CUcontext* context, unsigned flags, CUdevice device) = nullptr;
  CUresult (*cuCtxDestroy)(CUcontext context) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext context) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext* context) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuCtxPushCurrent)(CUcontext context) = nullptr;                  // optional
  CUresult (*cuCtxPopCurrent)(CUcontext* context) = nullptr;                  // optional
  CUresult (*cuCtxGetDevice)(CUdevice* device) = nullptr;                     // optional
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device) = nullptr;  // optional
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device) = nullptr;                     // optional

  // Memory
  CUresult (*cuMemAlloc)(CUdeviceptr* pointer, std::size_t bytes) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr pointer) = nullptr;
  CUresult (*cuMemGetInfo)(std::size_t* free, std::size_t* total) = nullptr;
  CUresult (*cuMemAllocHost)(void** pointer, std::size_t bytes) = nullptr;
  CUresult (*cuMemFreeHost)(void* pointer) = nullptr;
  CUresult (*cuMemHostRegister)(void* pointer, std::size_t bytes, unsigned flags) = nullptr;
  CUresult (*cuMemHostUnregister)(void* pointer) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream stream) = nullptr;
  CUresult (*cuMemcpyDtoHAsync)(void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream) = nullptr;
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, std::size_t bytes) = nullptr;  // optional
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, std::size_t bytes) = nullptr;        // optional
  CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, std::size_t count, CUstream stream) = nullptr;
  CUresult (*cuMemsetD16Async)(CUdeviceptr dst, unsigned short value, std::size_t count, CUstream stream) = nullptr;
  CUresult (*cuMemsetD32Async)(CUdeviceptr dst, unsigned value, std::size_t count, CUstream stream) = nullptr;

  // Modules and functions
  CUresult (*cuModuleLoadDataEx)(CUmodule* module, const void* image, unsigned num_options, CUjit_option* options,
                                 void** option_values) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule module) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name) = nullptr;
  CUresult (*cuModuleGetGlobal)(CUdeviceptr* pointer, std::size_t* bytes, CUmodule module, const char* name) = nullptr;
  CUresult (*cuFuncGetAttribute)(int* value, CUfunction_attribute attribute, CUfunction function) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction function, CUfunction_attribute attribute, int value) = nullptr;
  CUresult (*cuFuncSetCacheConfig)(CUfunction function, CUfunc_cache config) = nullptr;  // optional
  /// Optional: drivers before 12.4 lack it.
  CUresult (*cuFuncGetParamInfo)(CUfunction function, std::size_t index, std::size_t* offset,
                                 std::size_t* size) = nullptr;

  // Launches
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
                             CUstream stream, void** params, void** extra) = nullptr;
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig* config, CUfunction function, void** params,
                               void** extra) = nullptr;  // optional
  CUresult (*cuLaunchHostFunc)(CUstream stream, CUhostFn function, void* user_data) = nullptr;  // optional
  CUresult (*cuStreamAddCallback)(CUstream stream, CUstreamCallback callback, void* user_data,
                                  unsigned flags) = nullptr;  // optional

  // Streams
  CUresult (*cuStreamCreate)(CUstream* stream, unsigned flags) = nullptr;
  CUresult (*cuStreamCreateWithPriority)(CUstream* stream, unsigned flags, int priority) = nullptr;  // optional
  CUresult (*cuStreamDestroy)(CUstream stream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream stream) = nullptr;
  CUresult (*cuStreamQuery)(CUstream stream) = nullptr;
  CUresult (*cuStreamWaitEvent)(CUstream stream, CUevent event, unsigned flags) = nullptr;

  // Events
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags) = nullptr;
  CUresult (*cuEventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*cuEventDestroy)(CUevent event) = nullptr;
  CUresult (*cuEventQuery)(CUevent event) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent event) = nullptr;
  CUresult (*cuEventElapsedTime)(float* milliseconds, CUevent start, CUevent end) = nullptr;

  // Linking PTX
  CUresult (*cuLinkCreate)(unsigned num_options, CUjit_option* options, void** option_values,
                           CUlinkState* state) = nullptr;
  CUresult (*cuLinkAddData)(CUlinkState state, CUjitInputType type, void* data, std::size_t size, const char* name,
                            unsigned num_options, CUjit_option* options, void** option_values) = nullptr;
  CUresult (*cuLinkComplete)(CUlinkState state, void** image, std::size_t* size) = nullptr;
  CUresult (*cuLinkDestroy)(CUlinkState state) = nullptr;

  // Occupancy (optional)
  using block_to_shared_bytes = std::size_t (*)(int block_size);
  CUresult (*cuOccupancyMaxPotentialBlockSize)(int* min_grid_size, int* block_size, CUfunction function,
                                               block_to_shared_bytes shared_for_block,
                                               std::size_t dynamic_shared_bytes, int block_size_limit) = nullptr;
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int* blocks, CUfunction function, int block_size,
                                                          std::size_t dynamic_shared_bytes) = nullptr;

 private:
  driver() = default;

  void* handle_ = nullptr;  // never closed (see the destructor)
  std::string path_;
  symbol_lookup lookup_ = symbol_lookup::exported_names;
  int version_ = 0;
};

}  // namespace ferry::cuda
