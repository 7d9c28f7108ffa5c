// The CUDA driver API's types and constants, as Ferry's own declarations.
//
// Both sides of CUDA remoting speak this ABI: the client library (our libcuda.so.1)
// exports functions with these types, and the daemon calls NVIDIA's libcuda.so.1,
// loaded at run time, through function pointers of these types. We never include
// NVIDIA's cuda.h (not every build host has the toolkit, and its licence is not ours);
// the names and values below were written from NVIDIA's public driver API
// documentation. driver_abi.test.cpp checks them against cuda.h where the toolkit is
// installed.
//
// Names are NVIDIA's, so code that uses them reads like CUDA code; they live in
// namespace ferry::cuda, so they never clash with a real cuda.h in the same program.
// Enumerations are plain integers here: C passes an enum as an int, and a value the
// peer's newer driver knows but we do not must survive the trip unchanged.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ferry::cuda {

/// The version our client library reports through cuDriverGetVersion (13.0).
inline constexpr int driver_version = 13000;

// ---------------------------------------------------------------------------
// CUresult
// ---------------------------------------------------------------------------
using CUresult = int;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
inline constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
inline constexpr CUresult CUDA_ERROR_PROFILER_DISABLED = 5;
inline constexpr CUresult CUDA_ERROR_PROFILER_NOT_INITIALIZED = 6;
inline constexpr CUresult CUDA_ERROR_PROFILER_ALREADY_STARTED = 7;
inline constexpr CUresult CUDA_ERROR_PROFILER_ALREADY_STOPPED = 8;
inline constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
inline constexpr CUresult CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36;
inline constexpr CUresult CUDA_ERROR_DEVICE_UNAVAILABLE = 46;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
inline constexpr CUresult CUDA_ERROR_DEVICE_NOT_LICENSED = 102;
inline constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
inline constexpr CUresult CUDA_ERROR_INVALID_CONTEXT = 201;
inline constexpr CUresult CUDA_ERROR_CONTEXT_ALREADY_CURRENT = 202;
inline constexpr CUresult CUDA_ERROR_MAP_FAILED = 205;
inline constexpr CUresult CUDA_ERROR_UNMAP_FAILED = 206;
inline constexpr CUresult CUDA_ERROR_ARRAY_IS_MAPPED = 207;
inline constexpr CUresult CUDA_ERROR_ALREADY_MAPPED = 208;
inline constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
inline constexpr CUresult CUDA_ERROR_ALREADY_ACQUIRED = 210;
inline constexpr CUresult CUDA_ERROR_NOT_MAPPED = 211;
inline constexpr CUresult CUDA_ERROR_NOT_MAPPED_AS_ARRAY = 212;
inline constexpr CUresult CUDA_ERROR_NOT_MAPPED_AS_POINTER = 213;
inline constexpr CUresult CUDA_ERROR_ECC_UNCORRECTABLE = 214;
inline constexpr CUresult CUDA_ERROR_UNSUPPORTED_LIMIT = 215;
inline constexpr CUresult CUDA_ERROR_CONTEXT_ALREADY_IN_USE = 216;
inline constexpr CUresult CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217;
inline constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
inline constexpr CUresult CUDA_ERROR_INVALID_GRAPHICS_CONTEXT = 219;
inline constexpr CUresult CUDA_ERROR_NVLINK_UNCORRECTABLE = 220;
inline constexpr CUresult CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221;
inline constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
inline constexpr CUresult CUDA_ERROR_JIT_COMPILATION_DISABLED = 223;
inline constexpr CUresult CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY = 224;
inline constexpr CUresult CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC = 225;
inline constexpr CUresult CUDA_ERROR_CONTAINED = 226;
inline constexpr CUresult CUDA_ERROR_INVALID_SOURCE = 300;
inline constexpr CUresult CUDA_ERROR_FILE_NOT_FOUND = 301;
inline constexpr CUresult CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND = 302;
inline constexpr CUresult CUDA_ERROR_SHARED_OBJECT_INIT_FAILED = 303;
inline constexpr CUresult CUDA_ERROR_OPERATING_SYSTEM = 304;
inline constexpr CUresult CUDA_ERROR_INVALID_HANDLE = 400;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_STATE = 401;
inline constexpr CUresult CUDA_ERROR_LOSSY_QUERY = 402;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
inline constexpr CUresult CUDA_ERROR_NOT_READY = 600;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
inline constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;
inline constexpr CUresult CUDA_ERROR_LAUNCH_TIMEOUT = 702;
inline constexpr CUresult CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING = 703;
inline constexpr CUresult CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704;
inline constexpr CUresult CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705;
inline constexpr CUresult CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE = 708;
inline constexpr CUresult CUDA_ERROR_CONTEXT_IS_DESTROYED = 709;
inline constexpr CUresult CUDA_ERROR_ASSERT = 710;
inline constexpr CUresult CUDA_ERROR_TOO_MANY_PEERS = 711;
inline constexpr CUresult CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712;
inline constexpr CUresult CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713;
inline constexpr CUresult CUDA_ERROR_HARDWARE_STACK_ERROR = 714;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_INSTRUCTION = 715;
inline constexpr CUresult CUDA_ERROR_MISALIGNED_ADDRESS = 716;
inline constexpr CUresult CUDA_ERROR_INVALID_ADDRESS_SPACE = 717;
inline constexpr CUresult CUDA_ERROR_INVALID_PC = 718;
inline constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;
inline constexpr CUresult CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720;
inline constexpr CUresult CUDA_ERROR_TENSOR_MEMORY_LEAK = 721;
inline constexpr CUresult CUDA_ERROR_NOT_PERMITTED = 800;
inline constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;
inline constexpr CUresult CUDA_ERROR_SYSTEM_NOT_READY = 802;
inline constexpr CUresult CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803;
inline constexpr CUresult CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804;
inline constexpr CUresult CUDA_ERROR_MPS_CONNECTION_FAILED = 805;
inline constexpr CUresult CUDA_ERROR_MPS_RPC_FAILURE = 806;
inline constexpr CUresult CUDA_ERROR_MPS_SERVER_NOT_READY = 807;
inline constexpr CUresult CUDA_ERROR_MPS_MAX_CLIENTS_REACHED = 808;
inline constexpr CUresult CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED = 809;
inline constexpr CUresult CUDA_ERROR_MPS_CLIENT_TERMINATED = 810;
inline constexpr CUresult CUDA_ERROR_CDP_NOT_SUPPORTED = 811;
inline constexpr CUresult CUDA_ERROR_CDP_VERSION_MISMATCH = 812;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_MERGE = 902;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_UNJOINED = 904;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_ISOLATION = 905;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906;
inline constexpr CUresult CUDA_ERROR_CAPTURED_EVENT = 907;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908;
inline constexpr CUresult CUDA_ERROR_TIMEOUT = 909;
inline constexpr CUresult CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910;
inline constexpr CUresult CUDA_ERROR_EXTERNAL_DEVICE = 911;
inline constexpr CUresult CUDA_ERROR_INVALID_CLUSTER_SIZE = 912;
inline constexpr CUresult CUDA_ERROR_FUNCTION_NOT_LOADED = 913;
inline constexpr CUresult CUDA_ERROR_INVALID_RESOURCE_TYPE = 914;
inline constexpr CUresult CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION = 915;
inline constexpr CUresult CUDA_ERROR_KEY_ROTATION = 916;
inline constexpr CUresult CUDA_ERROR_UNKNOWN = 999;

// ---------------------------------------------------------------------------
// Handles
// ---------------------------------------------------------------------------
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUlinkState_st;
struct CUlib_st;
struct CUkern_st;
struct CUarray_st;
struct CUgraph_st;
struct CUgraphNode_st;
struct CUgraphExec_st;
struct CUmemPoolHandle_st;
struct CUgraphDeviceUpdatableNode_st;

using CUdevice = int;
using CUdeviceptr = unsigned long long;
using cuuint32_t = std::uint32_t;
using cuuint64_t = std::uint64_t;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
using CUlinkState = CUlinkState_st*;
using CUlibrary = CUlib_st*;
using CUkernel = CUkern_st*;
using CUarray = CUarray_st*;
using CUgraph = CUgraph_st*;
using CUgraphNode = CUgraphNode_st*;
using CUgraphExec = CUgraphExec_st*;
using CUmemoryPool = CUmemPoolHandle_st*;
using CUgraphDeviceNode = CUgraphDeviceUpdatableNode_st*;

/// A host function run in stream order (cuLaunchHostFunc).
using CUhostFn = void (*)(void* user_data);
/// A stream callback (cuStreamAddCallback): the stream, its status, the user's data.
using CUstreamCallback = void (*)(CUstream stream, CUresult status, void* user_data);

/// A device's UUID (cuDeviceGetUuid).
struct CUuuid {
  char bytes[16];
};

/// The legacy default stream, whatever the caller was compiled with.
inline CUstream CU_STREAM_LEGACY() { return reinterpret_cast<CUstream>(0x1); }
/// The calling thread's own default stream.
inline CUstream CU_STREAM_PER_THREAD() { return reinterpret_cast<CUstream>(0x2); }
inline constexpr std::uintptr_t stream_legacy_value = 0x1;
inline constexpr std::uintptr_t stream_per_thread_value = 0x2;

// ---------------------------------------------------------------------------
// cuLaunchKernel's `extra` array: {BUFFER_POINTER, buf, BUFFER_SIZE, &size, END}
// ---------------------------------------------------------------------------
inline void* CU_LAUNCH_PARAM_END() { return reinterpret_cast<void*>(0x00); }
inline void* CU_LAUNCH_PARAM_BUFFER_POINTER() { return reinterpret_cast<void*>(0x01); }
inline void* CU_LAUNCH_PARAM_BUFFER_SIZE() { return reinterpret_cast<void*>(0x02); }
inline constexpr std::uintptr_t launch_param_end_value = 0x00;
inline constexpr std::uintptr_t launch_param_buffer_pointer_value = 0x01;
inline constexpr std::uintptr_t launch_param_buffer_size_value = 0x02;

// ---------------------------------------------------------------------------
// CUdevice_attribute
// ---------------------------------------------------------------------------
using CUdevice_attribute = int;

inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
inline constexpr int CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK = 8;
inline constexpr int CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY = 9;
inline constexpr int CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_PITCH = 11;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12;
inline constexpr int CU_DEVICE_ATTRIBUTE_REGISTERS_PER_BLOCK = 12;
inline constexpr int CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13;
inline constexpr int CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT = 14;
inline constexpr int CU_DEVICE_ATTRIBUTE_GPU_OVERLAP = 15;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT = 17;
inline constexpr int CU_DEVICE_ATTRIBUTE_INTEGRATED = 18;
inline constexpr int CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH = 21;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH = 22;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT = 23;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH = 24;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT = 25;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH = 26;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH = 27;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT = 28;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS = 29;
inline constexpr int CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT = 30;
inline constexpr int CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS = 31;
inline constexpr int CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32;
inline constexpr int CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33;
inline constexpr int CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34;
inline constexpr int CU_DEVICE_ATTRIBUTE_TCC_DRIVER = 35;
inline constexpr int CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36;
inline constexpr int CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37;
inline constexpr int CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39;
inline constexpr int CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40;
inline constexpr int CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH = 42;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS = 43;
inline constexpr int CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER = 44;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH = 45;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT = 46;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE = 47;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE = 48;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE = 49;
inline constexpr int CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50;
inline constexpr int CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT = 51;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH = 52;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH = 53;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS = 54;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH = 55;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH = 56;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT = 57;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH = 58;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT = 59;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH = 60;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH = 61;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS = 62;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH = 63;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT = 64;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS = 65;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH = 66;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH = 67;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS = 68;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH = 69;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH = 70;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT = 71;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH = 72;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH = 73;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT = 74;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH = 77;
inline constexpr int CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED = 78;
inline constexpr int CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED = 79;
inline constexpr int CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED = 80;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82;
inline constexpr int CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD = 84;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID = 85;
inline constexpr int CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED = 86;
inline constexpr int CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO = 87;
inline constexpr int CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88;
inline constexpr int CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED = 90;
inline constexpr int CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91;
inline constexpr int CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 = 92;
inline constexpr int CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1 = 93;
inline constexpr int CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1 = 94;
inline constexpr int CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95;
inline constexpr int CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH = 96;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
inline constexpr int CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES = 98;
inline constexpr int CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED = 99;
inline constexpr int CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 100;
inline constexpr int CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST = 101;
inline constexpr int CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102;
inline constexpr int CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103;
inline constexpr int CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED = 104;
inline constexpr int CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED = 105;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106;
inline constexpr int CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED = 107;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 108;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE = 109;
inline constexpr int CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 110;
inline constexpr int CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK = 111;
inline constexpr int CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED = 112;
inline constexpr int CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED = 113;
inline constexpr int CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED = 114;
inline constexpr int CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115;
inline constexpr int CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116;
inline constexpr int CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = 117;
inline constexpr int CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING = 118;
inline constexpr int CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES = 119;
inline constexpr int CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120;
inline constexpr int CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED = 121;
inline constexpr int CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS = 122;
inline constexpr int CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR = 123;
inline constexpr int CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124;
inline constexpr int CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED = 125;
inline constexpr int CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT = 126;
inline constexpr int CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED = 127;
inline constexpr int CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 128;
inline constexpr int CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS = 129;
inline constexpr int CU_DEVICE_ATTRIBUTE_NUMA_CONFIG = 130;
inline constexpr int CU_DEVICE_ATTRIBUTE_NUMA_ID = 131;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 132;
inline constexpr int CU_DEVICE_ATTRIBUTE_MPS_ENABLED = 133;
inline constexpr int CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID = 134;
inline constexpr int CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED = 135;
inline constexpr int CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK = 136;
inline constexpr int CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH = 137;
inline constexpr int CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED = 138;
inline constexpr int CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID = 139;
inline constexpr int CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID = 140;
inline constexpr int CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 141;
inline constexpr int CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED = 142;
inline constexpr int CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED = 143;
inline constexpr int CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED = 144;
inline constexpr int CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 145;
inline constexpr int CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED = 146;
inline constexpr int CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED = 147;
/// One past the last attribute this header knows.
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX = 148;

// ---------------------------------------------------------------------------
// CUfunction_attribute
// ---------------------------------------------------------------------------
using CUfunction_attribute = int;

inline constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
inline constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
inline constexpr int CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2;
inline constexpr int CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
inline constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
inline constexpr int CU_FUNC_ATTRIBUTE_PTX_VERSION = 5;
inline constexpr int CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6;
inline constexpr int CU_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7;
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
inline constexpr int CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9;
inline constexpr int CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET = 10;
inline constexpr int CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11;
inline constexpr int CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT = 12;
inline constexpr int CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH = 13;
inline constexpr int CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14;
inline constexpr int CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15;
inline constexpr int CU_FUNC_ATTRIBUTE_MAX = 16;

// ---------------------------------------------------------------------------
// CUfunc_cache (cuFuncSetCacheConfig, cuCtxSetCacheConfig)
// ---------------------------------------------------------------------------
using CUfunc_cache = int;

inline constexpr int CU_FUNC_CACHE_PREFER_NONE = 0;
inline constexpr int CU_FUNC_CACHE_PREFER_SHARED = 1;
inline constexpr int CU_FUNC_CACHE_PREFER_L1 = 2;
inline constexpr int CU_FUNC_CACHE_PREFER_EQUAL = 3;

// ---------------------------------------------------------------------------
// CUjit_option (cuModuleLoadDataEx, cuLinkCreate, cuLinkAddData)
// ---------------------------------------------------------------------------
using CUjit_option = int;

inline constexpr int CU_JIT_MAX_REGISTERS = 0;
inline constexpr int CU_JIT_THREADS_PER_BLOCK = 1;
inline constexpr int CU_JIT_WALL_TIME = 2;
inline constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
inline constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
inline constexpr int CU_JIT_OPTIMIZATION_LEVEL = 7;
inline constexpr int CU_JIT_TARGET_FROM_CUCONTEXT = 8;
inline constexpr int CU_JIT_TARGET = 9;
inline constexpr int CU_JIT_FALLBACK_STRATEGY = 10;
inline constexpr int CU_JIT_GENERATE_DEBUG_INFO = 11;
inline constexpr int CU_JIT_LOG_VERBOSE = 12;
inline constexpr int CU_JIT_GENERATE_LINE_INFO = 13;
inline constexpr int CU_JIT_CACHE_MODE = 14;
inline constexpr int CU_JIT_NEW_SM3X_OPT = 15;
inline constexpr int CU_JIT_FAST_COMPILE = 16;
inline constexpr int CU_JIT_GLOBAL_SYMBOL_NAMES = 17;
inline constexpr int CU_JIT_GLOBAL_SYMBOL_ADDRESSES = 18;
inline constexpr int CU_JIT_GLOBAL_SYMBOL_COUNT = 19;
inline constexpr int CU_JIT_LTO = 20;
inline constexpr int CU_JIT_FTZ = 21;
inline constexpr int CU_JIT_PREC_DIV = 22;
inline constexpr int CU_JIT_PREC_SQRT = 23;
inline constexpr int CU_JIT_FMA = 24;
inline constexpr int CU_JIT_REFERENCED_KERNEL_NAMES = 25;
inline constexpr int CU_JIT_REFERENCED_KERNEL_COUNT = 26;
inline constexpr int CU_JIT_REFERENCED_VARIABLE_NAMES = 27;
inline constexpr int CU_JIT_REFERENCED_VARIABLE_COUNT = 28;
inline constexpr int CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES = 29;
inline constexpr int CU_JIT_POSITION_INDEPENDENT_CODE = 30;
inline constexpr int CU_JIT_MIN_CTA_PER_SM = 31;
inline constexpr int CU_JIT_MAX_THREADS_PER_BLOCK = 32;
inline constexpr int CU_JIT_OVERRIDE_DIRECTIVE_VALUES = 33;
inline constexpr int CU_JIT_SPLIT_COMPILE = 34;
inline constexpr int CU_JIT_NUM_OPTIONS = 35;

// ---------------------------------------------------------------------------
// CUjitInputType (cuLinkAddData)
// ---------------------------------------------------------------------------
using CUjitInputType = int;

inline constexpr int CU_JIT_INPUT_CUBIN = 0;
inline constexpr int CU_JIT_INPUT_PTX = 1;
inline constexpr int CU_JIT_INPUT_FATBINARY = 2;
inline constexpr int CU_JIT_INPUT_OBJECT = 3;
inline constexpr int CU_JIT_INPUT_LIBRARY = 4;
inline constexpr int CU_JIT_INPUT_NVVM = 5;
inline constexpr int CU_JIT_NUM_INPUT_TYPES = 6;

// ---------------------------------------------------------------------------
// CUpointer_attribute (cuPointerGetAttribute)
// ---------------------------------------------------------------------------
using CUpointer_attribute = int;

inline constexpr int CU_POINTER_ATTRIBUTE_CONTEXT = 1;
inline constexpr int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
inline constexpr int CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3;
inline constexpr int CU_POINTER_ATTRIBUTE_HOST_POINTER = 4;
inline constexpr int CU_POINTER_ATTRIBUTE_P2P_TOKENS = 5;
inline constexpr int CU_POINTER_ATTRIBUTE_SYNC_MEMOPS = 6;
inline constexpr int CU_POINTER_ATTRIBUTE_BUFFER_ID = 7;
inline constexpr int CU_POINTER_ATTRIBUTE_IS_MANAGED = 8;
inline constexpr int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;
inline constexpr int CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE = 10;
inline constexpr int CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11;
inline constexpr int CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12;
inline constexpr int CU_POINTER_ATTRIBUTE_MAPPED = 13;
inline constexpr int CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES = 14;
inline constexpr int CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE = 15;
inline constexpr int CU_POINTER_ATTRIBUTE_ACCESS_FLAGS = 16;
inline constexpr int CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17;
inline constexpr int CU_POINTER_ATTRIBUTE_MAPPING_SIZE = 18;
inline constexpr int CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR = 19;
inline constexpr int CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID = 20;
inline constexpr int CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE = 21;

// ---------------------------------------------------------------------------
// CUmemorytype
// ---------------------------------------------------------------------------
using CUmemorytype = int;

inline constexpr int CU_MEMORYTYPE_HOST = 1;
inline constexpr int CU_MEMORYTYPE_DEVICE = 2;
inline constexpr int CU_MEMORYTYPE_ARRAY = 3;
inline constexpr int CU_MEMORYTYPE_UNIFIED = 4;

// ---------------------------------------------------------------------------
// Flags: contexts, streams, events, host memory
// ---------------------------------------------------------------------------
inline constexpr unsigned CU_CTX_SCHED_AUTO = 0x00;
inline constexpr unsigned CU_CTX_SCHED_SPIN = 0x01;
inline constexpr unsigned CU_CTX_SCHED_YIELD = 0x02;
inline constexpr unsigned CU_CTX_SCHED_BLOCKING_SYNC = 0x04;
inline constexpr unsigned CU_CTX_BLOCKING_SYNC = 0x04;
inline constexpr unsigned CU_CTX_SCHED_MASK = 0x07;
inline constexpr unsigned CU_CTX_MAP_HOST = 0x08;
inline constexpr unsigned CU_CTX_LMEM_RESIZE_TO_MAX = 0x10;
inline constexpr unsigned CU_CTX_COREDUMP_ENABLE = 0x20;
inline constexpr unsigned CU_CTX_USER_COREDUMP_ENABLE = 0x40;
inline constexpr unsigned CU_CTX_SYNC_MEMOPS = 0x80;
inline constexpr unsigned CU_CTX_FLAGS_MASK = 0xFF;

inline constexpr unsigned CU_STREAM_DEFAULT = 0x0;
inline constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;

inline constexpr unsigned CU_EVENT_DEFAULT = 0x0;
inline constexpr unsigned CU_EVENT_BLOCKING_SYNC = 0x1;
inline constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;
inline constexpr unsigned CU_EVENT_INTERPROCESS = 0x4;

inline constexpr unsigned CU_EVENT_RECORD_DEFAULT = 0x0;
inline constexpr unsigned CU_EVENT_RECORD_EXTERNAL = 0x1;
inline constexpr unsigned CU_EVENT_WAIT_DEFAULT = 0x0;
inline constexpr unsigned CU_EVENT_WAIT_EXTERNAL = 0x1;

inline constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 0x01;
inline constexpr unsigned CU_MEMHOSTALLOC_DEVICEMAP = 0x02;
inline constexpr unsigned CU_MEMHOSTALLOC_WRITECOMBINED = 0x04;

inline constexpr unsigned CU_MEMHOSTREGISTER_PORTABLE = 0x01;
inline constexpr unsigned CU_MEMHOSTREGISTER_DEVICEMAP = 0x02;
inline constexpr unsigned CU_MEMHOSTREGISTER_IOMEMORY = 0x04;
inline constexpr unsigned CU_MEMHOSTREGISTER_READ_ONLY = 0x08;

/// cuMemAttachGlobal etc. (cuMemAllocManaged)
inline constexpr unsigned CU_MEM_ATTACH_GLOBAL = 0x1;
inline constexpr unsigned CU_MEM_ATTACH_HOST = 0x2;
inline constexpr unsigned CU_MEM_ATTACH_SINGLE = 0x4;

// ---------------------------------------------------------------------------
// CUlimit (cuCtxSetLimit, cuCtxGetLimit)
// ---------------------------------------------------------------------------
using CUlimit = int;

inline constexpr int CU_LIMIT_STACK_SIZE = 0x00;
inline constexpr int CU_LIMIT_PRINTF_FIFO_SIZE = 0x01;
inline constexpr int CU_LIMIT_MALLOC_HEAP_SIZE = 0x02;
inline constexpr int CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH = 0x03;
inline constexpr int CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT = 0x04;
inline constexpr int CU_LIMIT_MAX_L2_FETCH_GRANULARITY = 0x05;
inline constexpr int CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06;
inline constexpr int CU_LIMIT_SHMEM_SIZE = 0x07;
inline constexpr int CU_LIMIT_CIG_ENABLED = 0x08;
inline constexpr int CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED = 0x09;
inline constexpr int CU_LIMIT_MAX = 0x0a;

// ---------------------------------------------------------------------------
// cuGetProcAddress
// ---------------------------------------------------------------------------
using CUdriverProcAddress_flags = int;

inline constexpr cuuint64_t CU_GET_PROC_ADDRESS_DEFAULT = 0;
inline constexpr cuuint64_t CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1 << 0;
inline constexpr cuuint64_t CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 1 << 1;

using CUdriverProcAddressQueryResult = int;

inline constexpr int CU_GET_PROC_ADDRESS_SUCCESS = 0;
inline constexpr int CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1;
inline constexpr int CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2;

// ---------------------------------------------------------------------------
// cuLaunchKernelEx: launch attributes and configuration
// ---------------------------------------------------------------------------
using CUlaunchAttributeID = int;

inline constexpr int CU_LAUNCH_ATTRIBUTE_IGNORE = 0;
inline constexpr int CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1;
inline constexpr int CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2;
inline constexpr int CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY = 3;
inline constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4;
inline constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5;
inline constexpr int CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6;
inline constexpr int CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT = 7;
inline constexpr int CU_LAUNCH_ATTRIBUTE_PRIORITY = 8;
inline constexpr int CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP = 9;
inline constexpr int CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN = 10;
inline constexpr int CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION = 11;
inline constexpr int CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT = 12;
inline constexpr int CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE = 13;
inline constexpr int CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 14;
inline constexpr int CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING = 16;

/// The window of an access policy (CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW).
struct CUaccessPolicyWindow {
  void* base_ptr;
  std::size_t num_bytes;
  float hitRatio;
  int hitProp;   // CUaccessProperty
  int missProp;  // CUaccessProperty
};

/// One launch attribute's value; which member counts depends on the attribute's id.
/// 64 bytes whatever the member, so newer members fit without an ABI change.
union CUlaunchAttributeValue {
  char pad[64];
  CUaccessPolicyWindow accessPolicyWindow;
  int cooperative;
  int syncPolicy;  // CUsynchronizationPolicy
  struct {
    unsigned x;
    unsigned y;
    unsigned z;
  } clusterDim;
  int clusterSchedulingPolicyPreference;  // CUclusterSchedulingPolicy
  int programmaticStreamSerializationAllowed;
  struct {
    CUevent event;
    int flags;
    int triggerAtBlockStart;
  } programmaticEvent;
  struct {
    CUevent event;
    int flags;
  } launchCompletionEvent;
  int priority;
  struct {
    unsigned char default_;
    unsigned char remote;
  } memSyncDomainMap;
  int memSyncDomain;  // CUlaunchMemSyncDomain
  struct {
    unsigned x;
    unsigned y;
    unsigned z;
  } preferredClusterDim;
  struct {
    int deviceUpdatable;
    CUgraphDeviceNode devNode;
  } deviceUpdatableKernelNode;
  unsigned sharedMemCarveout;
};

/// One launch attribute: its id, padding to 8 bytes, its value (72 bytes in all).
struct CUlaunchAttribute {
  CUlaunchAttributeID id;
  char pad[8 - sizeof(CUlaunchAttributeID)];
  CUlaunchAttributeValue value;
};

/// What cuLaunchKernelEx launches with.
struct CUlaunchConfig {
  unsigned gridDimX;
  unsigned gridDimY;
  unsigned gridDimZ;
  unsigned blockDimX;
  unsigned blockDimY;
  unsigned blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute* attrs;
  unsigned numAttrs;
};

// ---------------------------------------------------------------------------
// cuMemcpy2D
// ---------------------------------------------------------------------------
/// A 2D copy between host, device and array memory (cuMemcpy2D, cuMemcpy2DAsync).
struct CUDA_MEMCPY2D {
  std::size_t srcXInBytes;
  std::size_t srcY;
  CUmemorytype srcMemoryType;
  const void* srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  std::size_t srcPitch;

  std::size_t dstXInBytes;
  std::size_t dstY;
  CUmemorytype dstMemoryType;
  void* dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  std::size_t dstPitch;

  std::size_t WidthInBytes;
  std::size_t Height;
};

}  // namespace ferry::cuda
