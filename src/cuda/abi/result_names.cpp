#include "cuda/abi/result_names.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>

namespace ferry::cuda {
namespace {

struct result_entry {
  CUresult value;
  const char* name;
  const char* text;
};

#define FERRY_RESULT(name, text) {name, #name, text}

// Each value once, in ascending order (looked up by binary search).
constexpr result_entry results[] = {
    FERRY_RESULT(CUDA_SUCCESS, "no error"),
    FERRY_RESULT(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    FERRY_RESULT(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    FERRY_RESULT(CUDA_ERROR_NOT_INITIALIZED, "the driver is not initialized (call cuInit first)"),
    FERRY_RESULT(CUDA_ERROR_DEINITIALIZED, "the driver is shutting down"),
    FERRY_RESULT(CUDA_ERROR_PROFILER_DISABLED, "the profiler is disabled by an external profiling tool"),
    FERRY_RESULT(CUDA_ERROR_PROFILER_NOT_INITIALIZED, "the profiler is not initialized"),
    FERRY_RESULT(CUDA_ERROR_PROFILER_ALREADY_STARTED, "the profiler was already started"),
    FERRY_RESULT(CUDA_ERROR_PROFILER_ALREADY_STOPPED, "the profiler was already stopped"),
    FERRY_RESULT(CUDA_ERROR_STUB_LIBRARY, "the loaded driver is a stub library, not a real driver"),
    FERRY_RESULT(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "this call needs a newer driver"),
    FERRY_RESULT(CUDA_ERROR_DEVICE_UNAVAILABLE, "the device is busy or unavailable"),
    FERRY_RESULT(CUDA_ERROR_NO_DEVICE, "no CUDA device was found"),
    FERRY_RESULT(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    FERRY_RESULT(CUDA_ERROR_DEVICE_NOT_LICENSED, "the device lacks a valid license"),
    FERRY_RESULT(CUDA_ERROR_INVALID_IMAGE, "invalid kernel image"),
    FERRY_RESULT(CUDA_ERROR_INVALID_CONTEXT, "no valid context (none is current, or it was destroyed)"),
    FERRY_RESULT(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "the context is already current"),
    FERRY_RESULT(CUDA_ERROR_MAP_FAILED, "mapping failed"),
    FERRY_RESULT(CUDA_ERROR_UNMAP_FAILED, "unmapping failed"),
    FERRY_RESULT(CUDA_ERROR_ARRAY_IS_MAPPED, "the array is mapped"),
    FERRY_RESULT(CUDA_ERROR_ALREADY_MAPPED, "the resource is already mapped"),
    FERRY_RESULT(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image fits this device"),
    FERRY_RESULT(CUDA_ERROR_ALREADY_ACQUIRED, "the resource is already acquired"),
    FERRY_RESULT(CUDA_ERROR_NOT_MAPPED, "the resource is not mapped"),
    FERRY_RESULT(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, "the resource is not mapped as an array"),
    FERRY_RESULT(CUDA_ERROR_NOT_MAPPED_AS_POINTER, "the resource is not mapped as a pointer"),
    FERRY_RESULT(CUDA_ERROR_ECC_UNCORRECTABLE, "an uncorrectable ECC error was detected"),
    FERRY_RESULT(CUDA_ERROR_UNSUPPORTED_LIMIT, "this limit is not supported by the device"),
    FERRY_RESULT(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "the context is already in use by another thread"),
    FERRY_RESULT(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "peer access between these devices is not supported"),
    FERRY_RESULT(CUDA_ERROR_INVALID_PTX, "PTX compilation failed"),
    FERRY_RESULT(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, "invalid graphics (OpenGL or DirectX) context"),
    FERRY_RESULT(CUDA_ERROR_NVLINK_UNCORRECTABLE, "an uncorrectable NVLink error was detected"),
    FERRY_RESULT(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "the PTX JIT compiler library was not found"),
    FERRY_RESULT(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the PTX was made by an unsupported toolchain"),
    FERRY_RESULT(CUDA_ERROR_JIT_COMPILATION_DISABLED, "PTX JIT compilation is disabled"),
    FERRY_RESULT(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, "this execution affinity is not supported"),
    FERRY_RESULT(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, "the code synchronizes on the device, which is not supported"),
    FERRY_RESULT(CUDA_ERROR_CONTAINED, "a contained error: peer memory access over NVLink or a hardware fault"),
    FERRY_RESULT(CUDA_ERROR_INVALID_SOURCE, "invalid kernel source"),
    FERRY_RESULT(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
    FERRY_RESULT(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "a shared object's symbol was not found"),
    FERRY_RESULT(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "a shared object failed to initialize"),
    FERRY_RESULT(CUDA_ERROR_OPERATING_SYSTEM, "an operating system call failed"),
    FERRY_RESULT(CUDA_ERROR_INVALID_HANDLE, "invalid handle"),
    FERRY_RESULT(CUDA_ERROR_ILLEGAL_STATE, "the object is in a state that forbids this call"),
    FERRY_RESULT(CUDA_ERROR_LOSSY_QUERY, "the answer could not be given without losing information"),
    FERRY_RESULT(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    FERRY_RESULT(CUDA_ERROR_NOT_READY, "the work is not finished yet"),
    FERRY_RESULT(CUDA_ERROR_ILLEGAL_ADDRESS, "a kernel accessed an illegal address"),
    FERRY_RESULT(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "the launch asked for more resources than the device has"),
    FERRY_RESULT(CUDA_ERROR_LAUNCH_TIMEOUT, "the kernel ran too long and was stopped"),
    FERRY_RESULT(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, "the launch uses an incompatible texturing mode"),
    FERRY_RESULT(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled"),
    FERRY_RESULT(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access is not enabled"),
    FERRY_RESULT(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "the primary context is already active"),
    FERRY_RESULT(CUDA_ERROR_CONTEXT_IS_DESTROYED, "the context was destroyed"),
    FERRY_RESULT(CUDA_ERROR_ASSERT, "a device-side assertion failed"),
    FERRY_RESULT(CUDA_ERROR_TOO_MANY_PEERS, "too many peers are mapped"),
    FERRY_RESULT(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "the host memory is already registered"),
    FERRY_RESULT(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "the host memory is not registered"),
    FERRY_RESULT(CUDA_ERROR_HARDWARE_STACK_ERROR, "a kernel corrupted the hardware stack"),
    FERRY_RESULT(CUDA_ERROR_ILLEGAL_INSTRUCTION, "a kernel ran an illegal instruction"),
    FERRY_RESULT(CUDA_ERROR_MISALIGNED_ADDRESS, "a kernel accessed a misaligned address"),
    FERRY_RESULT(CUDA_ERROR_INVALID_ADDRESS_SPACE, "a kernel used an address in the wrong address space"),
    FERRY_RESULT(CUDA_ERROR_INVALID_PC, "a kernel jumped to an invalid program counter"),
    FERRY_RESULT(CUDA_ERROR_LAUNCH_FAILED, "a kernel failed for an unspecified reason"),
    FERRY_RESULT(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "a cooperative launch has more blocks than can run at once"),
    FERRY_RESULT(CUDA_ERROR_TENSOR_MEMORY_LEAK, "a kernel left tensor memory allocated"),
    FERRY_RESULT(CUDA_ERROR_NOT_PERMITTED, "this operation is not permitted"),
    FERRY_RESULT(CUDA_ERROR_NOT_SUPPORTED, "this operation is not supported"),
    FERRY_RESULT(CUDA_ERROR_SYSTEM_NOT_READY, "the system is not ready yet"),
    FERRY_RESULT(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "the display driver and the CUDA driver do not match"),
    FERRY_RESULT(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "forward compatibility is not supported on this device"),
    FERRY_RESULT(CUDA_ERROR_MPS_CONNECTION_FAILED, "could not connect to the MPS daemon or server"),
    FERRY_RESULT(CUDA_ERROR_MPS_RPC_FAILURE, "a call between the MPS client and server failed"),
    FERRY_RESULT(CUDA_ERROR_MPS_SERVER_NOT_READY, "the MPS server does not accept clients yet"),
    FERRY_RESULT(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, "the MPS server has no room for another client"),
    FERRY_RESULT(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, "the MPS server has no room for another device connection"),
    FERRY_RESULT(CUDA_ERROR_MPS_CLIENT_TERMINATED, "the MPS server terminated this client"),
    FERRY_RESULT(CUDA_ERROR_CDP_NOT_SUPPORTED, "dynamic parallelism is not supported in this configuration"),
    FERRY_RESULT(CUDA_ERROR_CDP_VERSION_MISMATCH, "dynamic parallelism versions are mixed"),
    FERRY_RESULT(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "not permitted while the stream is capturing"),
    FERRY_RESULT(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "the capture was invalidated by an earlier error"),
    FERRY_RESULT(CUDA_ERROR_STREAM_CAPTURE_MERGE, "this would merge two separate captures"),
    FERRY_RESULT(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "the capture did not end in the stream it began in"),
    FERRY_RESULT(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "the capture forked into a stream that was not joined back"),
    FERRY_RESULT(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "the capture would depend on work outside it"),
    FERRY_RESULT(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "the legacy stream would depend on a capturing stream"),
    FERRY_RESULT(CUDA_ERROR_CAPTURED_EVENT, "not permitted on an event last recorded in a capturing stream"),
    FERRY_RESULT(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "a thread-local capture was ended from another thread"),
    FERRY_RESULT(CUDA_ERROR_TIMEOUT, "the wait timed out"),
    FERRY_RESULT(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "the graph update broke the rules of an instantiated graph"),
    FERRY_RESULT(CUDA_ERROR_EXTERNAL_DEVICE, "an external device reported an asynchronous error"),
    FERRY_RESULT(CUDA_ERROR_INVALID_CLUSTER_SIZE, "the launch's cluster configuration is invalid"),
    FERRY_RESULT(CUDA_ERROR_FUNCTION_NOT_LOADED, "the function is not loaded"),
    FERRY_RESULT(CUDA_ERROR_INVALID_RESOURCE_TYPE, "a resource is of the wrong type for this operation"),
    FERRY_RESULT(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "the resources are insufficient or do not apply here"),
    FERRY_RESULT(CUDA_ERROR_KEY_ROTATION, "key rotation failed"),
    FERRY_RESULT(CUDA_ERROR_UNKNOWN, "unknown error"),
};

#undef FERRY_RESULT

constexpr bool ascending() {
  for (std::size_t i = 1; i < std::size(results); ++i) {
    if (results[i - 1].value >= results[i].value) return false;
  }
  return true;
}
static_assert(ascending(), "results must be in ascending order, each value once");

const result_entry* find(CUresult result) {
  const auto* end = std::end(results);
  const auto* it = std::lower_bound(std::begin(results), end, result,
                                    [](const result_entry& e, CUresult v) { return e.value < v; });
  return it != end && it->value == result ? it : nullptr;
}

}  // namespace

const char* result_name(CUresult result) {
  const result_entry* e = find(result);
  return e ? e->name : nullptr;
}

const char* result_string(CUresult result) {
  const result_entry* e = find(result);
  return e ? e->text : nullptr;
}

const char* describe_result(CUresult result) {
  if (const char* name = result_name(result)) return name;
  thread_local char buffer[32];
  std::snprintf(buffer, sizeof buffer, "CUresult %d", result);
  return buffer;
}

}  // namespace ferry::cuda
