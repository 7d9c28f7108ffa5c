// The per-thread default stream names of CUDA's driver API. A program built with
// per-thread default streams (nvcc --default-stream per-thread, or
// CUDA_API_PER_THREAD_DEFAULT_STREAM defined before cuda.h) calls the stream-ordered
// entry points under suffixed names: "<exported variant>_ptds" for the synchronous
// copies and sets (cuMemcpyHtoD_v2_ptds), "<exported variant>_ptsz" for the calls that
// take a stream (cuLaunchKernel_ptsz, cuStreamSynchronize_ptsz). NVIDIA's driver
// exports the suffixed name of every variant of these bases, so a binary built with an
// older toolkit (cuStreamBeginCapture_ptsz, from before _v2) still loads.
//
// The list is by base name, as cuda.h's __CUDA_API_PTDS/__CUDA_API_PTSZ wrappers name
// them (read in the CUDA 13.0 toolkit's header).
#pragma once

#include <array>
#include <string_view>

namespace ferry::cuda {

/// A base whose variants have per-thread default stream names, and their suffix.
struct per_thread_base {
  std::string_view base;
  std::string_view suffix;  // "_ptds" or "_ptsz"
};

inline constexpr std::string_view ptds = "_ptds";
inline constexpr std::string_view ptsz = "_ptsz";

inline constexpr std::array per_thread_bases = {
    // Synchronous copies and sets: _ptds.
    per_thread_base{"cuMemcpy", ptds},
    per_thread_base{"cuMemcpyPeer", ptds},
    per_thread_base{"cuMemcpyHtoD", ptds},
    per_thread_base{"cuMemcpyDtoH", ptds},
    per_thread_base{"cuMemcpyDtoD", ptds},
    per_thread_base{"cuMemcpyDtoA", ptds},
    per_thread_base{"cuMemcpyAtoD", ptds},
    per_thread_base{"cuMemcpyHtoA", ptds},
    per_thread_base{"cuMemcpyAtoH", ptds},
    per_thread_base{"cuMemcpyAtoA", ptds},
    per_thread_base{"cuMemcpy2D", ptds},
    per_thread_base{"cuMemcpy2DUnaligned", ptds},
    per_thread_base{"cuMemcpy3D", ptds},
    per_thread_base{"cuMemcpy3DPeer", ptds},
    per_thread_base{"cuMemsetD8", ptds},
    per_thread_base{"cuMemsetD16", ptds},
    per_thread_base{"cuMemsetD32", ptds},
    per_thread_base{"cuMemsetD2D8", ptds},
    per_thread_base{"cuMemsetD2D16", ptds},
    per_thread_base{"cuMemsetD2D32", ptds},
    // Calls that take a stream: _ptsz.
    per_thread_base{"cuMemcpyAsync", ptsz},
    per_thread_base{"cuMemcpyPeerAsync", ptsz},
    per_thread_base{"cuMemcpyHtoAAsync", ptsz},
    per_thread_base{"cuMemcpyAtoHAsync", ptsz},
    per_thread_base{"cuMemcpyHtoDAsync", ptsz},
    per_thread_base{"cuMemcpyDtoHAsync", ptsz},
    per_thread_base{"cuMemcpyDtoDAsync", ptsz},
    per_thread_base{"cuMemcpy2DAsync", ptsz},
    per_thread_base{"cuMemcpy3DAsync", ptsz},
    per_thread_base{"cuMemcpy3DPeerAsync", ptsz},
    per_thread_base{"cuMemcpyBatchAsync", ptsz},
    per_thread_base{"cuMemcpy3DBatchAsync", ptsz},
    per_thread_base{"cuMemsetD8Async", ptsz},
    per_thread_base{"cuMemsetD16Async", ptsz},
    per_thread_base{"cuMemsetD32Async", ptsz},
    per_thread_base{"cuMemsetD2D8Async", ptsz},
    per_thread_base{"cuMemsetD2D16Async", ptsz},
    per_thread_base{"cuMemsetD2D32Async", ptsz},
    per_thread_base{"cuMemPrefetchAsync", ptsz},
    per_thread_base{"cuMemPrefetchBatchAsync", ptsz},
    per_thread_base{"cuMemDiscardBatchAsync", ptsz},
    per_thread_base{"cuMemDiscardAndPrefetchBatchAsync", ptsz},
    per_thread_base{"cuMemMapArrayAsync", ptsz},
    per_thread_base{"cuMemFreeAsync", ptsz},
    per_thread_base{"cuMemAllocAsync", ptsz},
    per_thread_base{"cuMemAllocFromPoolAsync", ptsz},
    per_thread_base{"cuMemBatchDecompressAsync", ptsz},
    per_thread_base{"cuStreamGetPriority", ptsz},
    per_thread_base{"cuStreamGetId", ptsz},
    per_thread_base{"cuStreamGetFlags", ptsz},
    per_thread_base{"cuStreamGetDevice", ptsz},
    per_thread_base{"cuStreamGetCtx", ptsz},
    per_thread_base{"cuStreamGetCtx_v2", ptsz},  // a base of its own (a new call, not a new ABI)
    per_thread_base{"cuStreamWaitEvent", ptsz},
    per_thread_base{"cuStreamAddCallback", ptsz},
    per_thread_base{"cuStreamAttachMemAsync", ptsz},
    per_thread_base{"cuStreamQuery", ptsz},
    per_thread_base{"cuStreamSynchronize", ptsz},
    per_thread_base{"cuStreamBeginCapture", ptsz},
    per_thread_base{"cuStreamBeginCaptureToGraph", ptsz},
    per_thread_base{"cuStreamEndCapture", ptsz},
    per_thread_base{"cuStreamIsCapturing", ptsz},
    per_thread_base{"cuStreamGetCaptureInfo", ptsz},
    per_thread_base{"cuStreamUpdateCaptureDependencies", ptsz},
    per_thread_base{"cuStreamWriteValue32", ptsz},
    per_thread_base{"cuStreamWaitValue32", ptsz},
    per_thread_base{"cuStreamWriteValue64", ptsz},
    per_thread_base{"cuStreamWaitValue64", ptsz},
    per_thread_base{"cuStreamBatchMemOp", ptsz},
    per_thread_base{"cuStreamCopyAttributes", ptsz},
    per_thread_base{"cuStreamGetAttribute", ptsz},
    per_thread_base{"cuStreamSetAttribute", ptsz},
    per_thread_base{"cuEventRecord", ptsz},
    per_thread_base{"cuEventRecordWithFlags", ptsz},
    per_thread_base{"cuLaunchKernel", ptsz},
    per_thread_base{"cuLaunchKernelEx", ptsz},
    per_thread_base{"cuLaunchCooperativeKernel", ptsz},
    per_thread_base{"cuLaunchHostFunc", ptsz},
    per_thread_base{"cuGraphicsMapResources", ptsz},
    per_thread_base{"cuGraphicsUnmapResources", ptsz},
    per_thread_base{"cuSignalExternalSemaphoresAsync", ptsz},
    per_thread_base{"cuWaitExternalSemaphoresAsync", ptsz},
    per_thread_base{"cuGraphInstantiateWithParams", ptsz},
    per_thread_base{"cuGraphUpload", ptsz},
    per_thread_base{"cuGraphLaunch", ptsz},
};

/// The per-thread suffix of `base`'s variants ("_ptds", "_ptsz"), or empty when it has none.
constexpr std::string_view per_thread_suffix(std::string_view base) {
  for (const per_thread_base& b : per_thread_bases)
    if (b.base == base) return b.suffix;
  return {};
}

}  // namespace ferry::cuda
