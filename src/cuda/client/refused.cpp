// The refused CUDA driver entry points: one exported stub per symbol, all made from
// the one list below.
//
// Where the list came from:
// - The entry points are those of NVIDIA's CUDA Driver API reference
//   (docs.nvidia.com/cuda/cuda-driver-api, the 13.0 edition; its modules from "Error
//   Handling" to "EGL Interoperability"), module by module, less Ferry's implemented
//   list (entry_points.cpp). Direct3D interoperability is left out: it exists only
//   on Windows. Entry points added by 13.1-13.3 (Logical Endpoint, the graph and node
//   ids, the coredump callbacks, ...) are in too: a stub costs nothing, and a
//   program built against a newer toolkit then still loads.
// - The exported names come from cuda.h: its `#define cuX cuX_v2` list names the
//   variant each base name means today, and its __CUDA_API_VERSION_INTERNAL section
//   declares the older variants the driver still exports for old binaries (read in
//   the 12.6 toolkit's header). CUDA 13.0 moved more names to newer variants
//   (cuCtxCreate_v4, cuMemAdvise_v2, cuMemPrefetchAsync_v2, cuGraphGetEdges_v2 and the
//   other graph dependency calls, cuStreamGetCaptureInfo_v3, cuGraphAddNode_v2,
//   cuMemcpyBatchAsync_v2, ...); NVIDIA's cuda-bindings driver loader (generated for
//   12.9 to 13.2) names the newest variant of each base and the base name
//   cuGetProcAddress is asked with. Several "_v2" names are bases of their own, new
//   calls rather than new ABIs of an old one (cuCtxGetDevice_v2, cuCtxSynchronize_v2,
//   cuStreamGetCtx_v2, cuLaunchHostFunc_v2, cuMulticastBindMem_v2,
//   cuMulticastBindAddr_v2): they are rows of their own.
// - The per-thread default stream names (_ptds, _ptsz) are not rows: they are aliases
//   of their variant's stub, listed apart (FERRY_REFUSED_PER_THREAD_NAMES).
//
// Why a stub may declare no parameters: on x86-64 (System V) and AArch64 the caller
// passes arguments in registers and on its own stack frame and removes them itself,
// so a callee that reads none of them leaves nothing behind; the int result goes back
// in eax (w0), where a caller expecting CUresult (an enum, int-sized) reads it. A
// caller of a variadic or unprototyped function also sets al to the number of vector
// registers it used; only a variadic callee reads that, and the stubs are not
// variadic. The linker's duplicate-symbol check keeps this list and the implemented
// functions apart: an entry point in both fails the link.
#include "cuda/client/refused.hpp"

#include <atomic>

#include "common/log.hpp"
#include "cuda/abi/driver_abi.hpp"

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "refused.cpp's parameterless stubs are only known sound on x86-64 and AArch64"
#endif

// R(name): an entry point whose exported name is its base name.
// V(name, base, since): a variant of `base` (since: see refused_entry::since).
// The variants of a base are listed oldest first.
#define FERRY_REFUSED_ENTRY_POINTS(R, V)                                 \
  /* Device Management */                                                \
  R(cuDeviceGetLuid)                                                     \
  R(cuDeviceGetTexture1DLinearMaxWidth)                                  \
  R(cuDeviceGetNvSciSyncAttributes)                                      \
  R(cuDeviceSetMemPool)                                                  \
  R(cuDeviceGetMemPool)                                                  \
  R(cuDeviceGetDefaultMemPool)                                           \
  R(cuDeviceGetExecAffinitySupport)                                      \
  R(cuFlushGPUDirectRDMAWrites)                                          \
  R(cuDeviceGetHostAtomicCapabilities)                                   \
  /* Device Management [DEPRECATED] */                                   \
  R(cuDeviceGetProperties)                                               \
  /* Context Management */                                               \
  R(cuCtxGetDevice_v2)                                                   \
  R(cuCtxSynchronize_v2)                                                 \
  R(cuCtxSetFlags)                                                       \
  R(cuCtxGetId)                                                          \
  R(cuCtxResetPersistingL2Cache)                                         \
  R(cuCtxGetExecAffinity)                                                \
  R(cuCtxRecordEvent)                                                    \
  R(cuCtxWaitEvent)                                                      \
  /* Context Management [DEPRECATED] */                                  \
  R(cuCtxAttach)                                                         \
  R(cuCtxDetach)                                                         \
  R(cuCtxGetSharedMemConfig)                                             \
  R(cuCtxSetSharedMemConfig)                                             \
  /* Module Management */                                                \
  R(cuModuleLoadFatBinary)                                               \
  R(cuModuleGetLoadingMode)                                              \
  R(cuModuleGetFunctionCount)                                            \
  R(cuModuleEnumerateFunctions)                                          \
  /* Module Management [DEPRECATED] */                                   \
  R(cuModuleGetTexRef)                                                   \
  R(cuModuleGetSurfRef)                                                  \
  /* Library Management */                                               \
  R(cuLibraryLoadFromFile)                                               \
  R(cuLibraryGetKernelCount)                                             \
  R(cuLibraryEnumerateKernels)                                           \
  R(cuLibraryGetGlobal)                                                  \
  R(cuLibraryGetManaged)                                                 \
  R(cuLibraryGetUnifiedFunction)                                         \
  R(cuKernelGetLibrary)                                                  \
  R(cuKernelSetAttribute)                                                \
  R(cuKernelSetCacheConfig)                                              \
  R(cuKernelGetName)                                                     \
  R(cuKernelGetParamInfo)                                                \
  R(cuKernelGetParamCount)                                               \
  /* Memory Management */                                                \
  V(cuMemAllocPitch, cuMemAllocPitch, 0)                                 \
  V(cuMemAllocPitch_v2, cuMemAllocPitch, 0)                              \
  R(cuMemAllocManaged)                                                   \
  R(cuDeviceRegisterAsyncNotification)                                   \
  R(cuDeviceUnregisterAsyncNotification)                                 \
  R(cuDeviceGetByPCIBusId)                                               \
  R(cuIpcGetEventHandle)                                                 \
  R(cuIpcOpenEventHandle)                                                \
  R(cuIpcGetMemHandle)                                                   \
  V(cuIpcOpenMemHandle, cuIpcOpenMemHandle, 0)                           \
  V(cuIpcOpenMemHandle_v2, cuIpcOpenMemHandle, 0)                        \
  R(cuIpcCloseMemHandle)                                                 \
  R(cuMemcpyPeer)                                                        \
  V(cuMemcpyDtoA, cuMemcpyDtoA, 0)                                       \
  V(cuMemcpyDtoA_v2, cuMemcpyDtoA, 0)                                    \
  V(cuMemcpyAtoD, cuMemcpyAtoD, 0)                                       \
  V(cuMemcpyAtoD_v2, cuMemcpyAtoD, 0)                                    \
  V(cuMemcpyHtoA, cuMemcpyHtoA, 0)                                       \
  V(cuMemcpyHtoA_v2, cuMemcpyHtoA, 0)                                    \
  V(cuMemcpyAtoH, cuMemcpyAtoH, 0)                                       \
  V(cuMemcpyAtoH_v2, cuMemcpyAtoH, 0)                                    \
  V(cuMemcpyAtoA, cuMemcpyAtoA, 0)                                       \
  V(cuMemcpyAtoA_v2, cuMemcpyAtoA, 0)                                    \
  V(cuMemcpy2D, cuMemcpy2D, 0)                                           \
  V(cuMemcpy2D_v2, cuMemcpy2D, 0)                                        \
  V(cuMemcpy2DUnaligned, cuMemcpy2DUnaligned, 0)                         \
  V(cuMemcpy2DUnaligned_v2, cuMemcpy2DUnaligned, 0)                      \
  V(cuMemcpy3D, cuMemcpy3D, 0)                                           \
  V(cuMemcpy3D_v2, cuMemcpy3D, 0)                                        \
  R(cuMemcpy3DPeer)                                                      \
  R(cuMemcpyPeerAsync)                                                   \
  V(cuMemcpyHtoAAsync, cuMemcpyHtoAAsync, 0)                             \
  V(cuMemcpyHtoAAsync_v2, cuMemcpyHtoAAsync, 0)                          \
  V(cuMemcpyAtoHAsync, cuMemcpyAtoHAsync, 0)                             \
  V(cuMemcpyAtoHAsync_v2, cuMemcpyAtoHAsync, 0)                          \
  V(cuMemcpy2DAsync, cuMemcpy2DAsync, 0)                                 \
  V(cuMemcpy2DAsync_v2, cuMemcpy2DAsync, 0)                              \
  V(cuMemcpy3DAsync, cuMemcpy3DAsync, 0)                                 \
  V(cuMemcpy3DAsync_v2, cuMemcpy3DAsync, 0)                              \
  R(cuMemcpy3DPeerAsync)                                                 \
  V(cuMemcpyBatchAsync, cuMemcpyBatchAsync, 0)                           \
  V(cuMemcpyBatchAsync_v2, cuMemcpyBatchAsync, 0)                        \
  V(cuMemcpy3DBatchAsync, cuMemcpy3DBatchAsync, 0)                       \
  V(cuMemcpy3DBatchAsync_v2, cuMemcpy3DBatchAsync, 0)                    \
  R(cuMemcpyWithAttributesAsync)                                         \
  R(cuMemcpy3DWithAttributesAsync)                                       \
  V(cuMemsetD2D8, cuMemsetD2D8, 0)                                       \
  V(cuMemsetD2D8_v2, cuMemsetD2D8, 0)                                    \
  V(cuMemsetD2D16, cuMemsetD2D16, 0)                                     \
  V(cuMemsetD2D16_v2, cuMemsetD2D16, 0)                                  \
  V(cuMemsetD2D32, cuMemsetD2D32, 0)                                     \
  V(cuMemsetD2D32_v2, cuMemsetD2D32, 0)                                  \
  R(cuMemsetD2D8Async)                                                   \
  R(cuMemsetD2D16Async)                                                  \
  R(cuMemsetD2D32Async)                                                  \
  V(cuArrayCreate, cuArrayCreate, 0)                                     \
  V(cuArrayCreate_v2, cuArrayCreate, 0)                                  \
  V(cuArrayGetDescriptor, cuArrayGetDescriptor, 0)                       \
  V(cuArrayGetDescriptor_v2, cuArrayGetDescriptor, 0)                    \
  R(cuArrayGetSparseProperties)                                          \
  R(cuMipmappedArrayGetSparseProperties)                                 \
  R(cuArrayGetMemoryRequirements)                                        \
  R(cuMipmappedArrayGetMemoryRequirements)                               \
  R(cuArrayGetPlane)                                                     \
  R(cuArrayDestroy)                                                      \
  V(cuArray3DCreate, cuArray3DCreate, 0)                                 \
  V(cuArray3DCreate_v2, cuArray3DCreate, 0)                              \
  V(cuArray3DGetDescriptor, cuArray3DGetDescriptor, 0)                   \
  V(cuArray3DGetDescriptor_v2, cuArray3DGetDescriptor, 0)                \
  R(cuMipmappedArrayCreate)                                              \
  R(cuMipmappedArrayGetLevel)                                            \
  R(cuMipmappedArrayDestroy)                                             \
  R(cuMemGetHandleForAddressRange)                                       \
  R(cuMemBatchDecompressAsync)                                           \
  /* Virtual Memory Management */                                        \
  R(cuMemAddressReserve)                                                 \
  R(cuMemAddressFree)                                                    \
  R(cuMemCreate)                                                         \
  R(cuMemRelease)                                                        \
  R(cuMemMap)                                                            \
  R(cuMemMapArrayAsync)                                                  \
  R(cuMemUnmap)                                                          \
  R(cuMemSetAccess)                                                      \
  R(cuMemGetAccess)                                                      \
  R(cuMemExportToShareableHandle)                                        \
  R(cuMemImportFromShareableHandle)                                      \
  R(cuMemGetAllocationGranularity)                                       \
  R(cuMemGetAllocationPropertiesFromHandle)                              \
  R(cuMemRetainAllocationHandle)                                         \
  /* Stream Ordered Memory Allocator */                                  \
  R(cuMemFreeAsync)                                                      \
  R(cuMemAllocAsync)                                                     \
  R(cuMemPoolTrimTo)                                                     \
  R(cuMemPoolSetAttribute)                                               \
  R(cuMemPoolGetAttribute)                                               \
  R(cuMemPoolSetAccess)                                                  \
  R(cuMemPoolGetAccess)                                                  \
  R(cuMemPoolCreate)                                                     \
  R(cuMemPoolDestroy)                                                    \
  R(cuMemAllocFromPoolAsync)                                             \
  R(cuMemPoolExportToShareableHandle)                                    \
  R(cuMemPoolImportFromShareableHandle)                                  \
  R(cuMemPoolExportPointer)                                              \
  R(cuMemPoolImportPointer)                                              \
  R(cuMemGetDefaultMemPool)                                              \
  R(cuMemGetMemPool)                                                     \
  R(cuMemSetMemPool)                                                     \
  /* Multicast Object Management */                                      \
  R(cuMulticastCreate)                                                   \
  R(cuMulticastAddDevice)                                                \
  R(cuMulticastBindMem)                                                  \
  R(cuMulticastBindMem_v2)                                               \
  R(cuMulticastBindAddr)                                                 \
  R(cuMulticastBindAddr_v2)                                              \
  R(cuMulticastUnbind)                                                   \
  R(cuMulticastGetGranularity)                                           \
  /* Logical Endpoint (13.3) */                                          \
  R(cuLogicalEndpointAddDevice)                                          \
  R(cuLogicalEndpointBindAddr)                                           \
  R(cuLogicalEndpointBindMem)                                            \
  R(cuLogicalEndpointCreate)                                             \
  R(cuLogicalEndpointDestroy)                                            \
  R(cuLogicalEndpointExport)                                             \
  R(cuLogicalEndpointGetLimits)                                          \
  R(cuLogicalEndpointIdRelease)                                          \
  R(cuLogicalEndpointIdReserve)                                          \
  R(cuLogicalEndpointImport)                                             \
  R(cuLogicalEndpointQuery)                                              \
  R(cuLogicalEndpointUnbind)                                             \
  /* Unified Addressing */                                               \
  V(cuMemPrefetchAsync, cuMemPrefetchAsync, 0)                           \
  V(cuMemPrefetchAsync_v2, cuMemPrefetchAsync, 0)                        \
  V(cuMemAdvise, cuMemAdvise, 0)                                         \
  V(cuMemAdvise_v2, cuMemAdvise, 0)                                      \
  R(cuMemPrefetchBatchAsync)                                             \
  R(cuMemDiscardBatchAsync)                                              \
  R(cuMemDiscardAndPrefetchBatchAsync)                                   \
  R(cuMemRangeGetAttribute)                                              \
  R(cuMemRangeGetAttributes)                                             \
  R(cuPointerSetAttribute)                                               \
  R(cuPointerGetAttributes)                                              \
  /* Stream Management */                                                \
  R(cuStreamGetDevice)                                                   \
  R(cuStreamGetId)                                                       \
  R(cuStreamGetCtx_v2)                                                   \
  V(cuStreamBeginCapture, cuStreamBeginCapture, 0)                       \
  V(cuStreamBeginCapture_v2, cuStreamBeginCapture, 0)                    \
  R(cuStreamBeginCaptureToGraph)                                         \
  R(cuStreamBeginCaptureToCig)                                           \
  R(cuStreamEndCaptureToCig)                                             \
  R(cuThreadExchangeStreamCaptureMode)                                   \
  R(cuStreamEndCapture)                                                  \
  R(cuStreamIsCapturing)                                                 \
  V(cuStreamGetCaptureInfo, cuStreamGetCaptureInfo, 0)                   \
  V(cuStreamGetCaptureInfo_v2, cuStreamGetCaptureInfo, 0)                \
  V(cuStreamGetCaptureInfo_v3, cuStreamGetCaptureInfo, 0)                \
  V(cuStreamUpdateCaptureDependencies, cuStreamUpdateCaptureDependencies, 0)    \
  V(cuStreamUpdateCaptureDependencies_v2, cuStreamUpdateCaptureDependencies, 0) \
  R(cuStreamAttachMemAsync)                                              \
  R(cuStreamCopyAttributes)                                              \
  R(cuStreamGetAttribute)                                                \
  R(cuStreamSetAttribute)                                                \
  R(cuStreamGetDevResource)                                              \
  /* External Resource Interoperability */                               \
  R(cuImportExternalMemory)                                              \
  R(cuExternalMemoryGetMappedBuffer)                                     \
  R(cuExternalMemoryGetMappedMipmappedArray)                             \
  R(cuDestroyExternalMemory)                                             \
  R(cuImportExternalSemaphore)                                           \
  R(cuSignalExternalSemaphoresAsync)                                     \
  R(cuWaitExternalSemaphoresAsync)                                       \
  R(cuDestroyExternalSemaphore)                                          \
  /* Stream Memory Operations */                                         \
  V(cuStreamWaitValue32, cuStreamWaitValue32, 0)                         \
  V(cuStreamWaitValue32_v2, cuStreamWaitValue32, 0)                      \
  V(cuStreamWaitValue64, cuStreamWaitValue64, 0)                         \
  V(cuStreamWaitValue64_v2, cuStreamWaitValue64, 0)                      \
  V(cuStreamWriteValue32, cuStreamWriteValue32, 0)                       \
  V(cuStreamWriteValue32_v2, cuStreamWriteValue32, 0)                    \
  V(cuStreamWriteValue64, cuStreamWriteValue64, 0)                       \
  V(cuStreamWriteValue64_v2, cuStreamWriteValue64, 0)                    \
  V(cuStreamBatchMemOp, cuStreamBatchMemOp, 0)                           \
  V(cuStreamBatchMemOp_v2, cuStreamBatchMemOp, 0)                        \
  /* Execution Control */                                                \
  R(cuFuncGetModule)                                                     \
  R(cuFuncGetName)                                                       \
  R(cuFuncGetParamCount)                                                 \
  R(cuFuncIsLoaded)                                                      \
  R(cuFuncLoad)                                                          \
  R(cuLaunchCooperativeKernel)                                           \
  R(cuLaunchCooperativeKernelMultiDevice)                                \
  R(cuLaunchHostFunc_v2)                                                 \
  /* Execution Control [DEPRECATED] */                                   \
  R(cuFuncSetBlockShape)                                                 \
  R(cuFuncSetSharedSize)                                                 \
  R(cuFuncSetSharedMemConfig)                                            \
  R(cuParamSetSize)                                                      \
  R(cuParamSeti)                                                         \
  R(cuParamSetf)                                                         \
  R(cuParamSetv)                                                         \
  R(cuParamSetTexRef)                                                    \
  R(cuLaunch)                                                            \
  R(cuLaunchGrid)                                                        \
  R(cuLaunchGridAsync)                                                   \
  /* Graph Management */                                                 \
  R(cuGraphCreate)                                                       \
  V(cuGraphAddKernelNode, cuGraphAddKernelNode, 0)                       \
  V(cuGraphAddKernelNode_v2, cuGraphAddKernelNode, 0)                    \
  V(cuGraphKernelNodeGetParams, cuGraphKernelNodeGetParams, 0)           \
  V(cuGraphKernelNodeGetParams_v2, cuGraphKernelNodeGetParams, 0)        \
  V(cuGraphKernelNodeSetParams, cuGraphKernelNodeSetParams, 0)           \
  V(cuGraphKernelNodeSetParams_v2, cuGraphKernelNodeSetParams, 0)        \
  R(cuGraphAddMemcpyNode)                                                \
  R(cuGraphMemcpyNodeGetParams)                                          \
  R(cuGraphMemcpyNodeSetParams)                                          \
  R(cuGraphAddMemsetNode)                                                \
  R(cuGraphMemsetNodeGetParams)                                          \
  R(cuGraphMemsetNodeSetParams)                                          \
  R(cuGraphAddHostNode)                                                  \
  R(cuGraphHostNodeGetParams)                                            \
  R(cuGraphHostNodeSetParams)                                            \
  R(cuGraphAddChildGraphNode)                                            \
  R(cuGraphChildGraphNodeGetGraph)                                       \
  R(cuGraphAddEmptyNode)                                                 \
  R(cuGraphAddEventRecordNode)                                           \
  R(cuGraphEventRecordNodeGetEvent)                                      \
  R(cuGraphEventRecordNodeSetEvent)                                      \
  R(cuGraphAddEventWaitNode)                                             \
  R(cuGraphEventWaitNodeGetEvent)                                        \
  R(cuGraphEventWaitNodeSetEvent)                                        \
  R(cuGraphAddExternalSemaphoresSignalNode)                              \
  R(cuGraphExternalSemaphoresSignalNodeGetParams)                        \
  R(cuGraphExternalSemaphoresSignalNodeSetParams)                        \
  R(cuGraphAddExternalSemaphoresWaitNode)                                \
  R(cuGraphExternalSemaphoresWaitNodeGetParams)                          \
  R(cuGraphExternalSemaphoresWaitNodeSetParams)                          \
  R(cuGraphAddBatchMemOpNode)                                            \
  R(cuGraphBatchMemOpNodeGetParams)                                      \
  R(cuGraphBatchMemOpNodeSetParams)                                      \
  R(cuGraphExecBatchMemOpNodeSetParams)                                  \
  R(cuGraphAddMemAllocNode)                                              \
  R(cuGraphMemAllocNodeGetParams)                                        \
  R(cuGraphAddMemFreeNode)                                               \
  R(cuGraphMemFreeNodeGetParams)                                         \
  R(cuDeviceGraphMemTrim)                                                \
  R(cuDeviceGetGraphMemAttribute)                                        \
  R(cuDeviceSetGraphMemAttribute)                                        \
  R(cuGraphClone)                                                        \
  R(cuGraphNodeFindInClone)                                              \
  R(cuGraphNodeGetType)                                                  \
  R(cuGraphGetNodes)                                                     \
  R(cuGraphGetRootNodes)                                                 \
  V(cuGraphGetEdges, cuGraphGetEdges, 0)                                 \
  V(cuGraphGetEdges_v2, cuGraphGetEdges, 0)                              \
  V(cuGraphNodeGetDependencies, cuGraphNodeGetDependencies, 0)           \
  V(cuGraphNodeGetDependencies_v2, cuGraphNodeGetDependencies, 0)        \
  V(cuGraphNodeGetDependentNodes, cuGraphNodeGetDependentNodes, 0)       \
  V(cuGraphNodeGetDependentNodes_v2, cuGraphNodeGetDependentNodes, 0)    \
  V(cuGraphAddDependencies, cuGraphAddDependencies, 0)                   \
  V(cuGraphAddDependencies_v2, cuGraphAddDependencies, 0)                \
  V(cuGraphRemoveDependencies, cuGraphRemoveDependencies, 0)             \
  V(cuGraphRemoveDependencies_v2, cuGraphRemoveDependencies, 0)          \
  R(cuGraphDestroyNode)                                                  \
  V(cuGraphInstantiate, cuGraphInstantiate, 0)                           \
  V(cuGraphInstantiate_v2, cuGraphInstantiate, 0)                        \
  R(cuGraphInstantiateWithFlags)                                         \
  R(cuGraphInstantiateWithParams)                                        \
  R(cuGraphExecGetFlags)                                                 \
  V(cuGraphExecKernelNodeSetParams, cuGraphExecKernelNodeSetParams, 0)   \
  V(cuGraphExecKernelNodeSetParams_v2, cuGraphExecKernelNodeSetParams, 0) \
  R(cuGraphExecMemcpyNodeSetParams)                                      \
  R(cuGraphExecMemsetNodeSetParams)                                      \
  R(cuGraphExecHostNodeSetParams)                                        \
  R(cuGraphExecChildGraphNodeSetParams)                                  \
  R(cuGraphExecEventRecordNodeSetEvent)                                  \
  R(cuGraphExecEventWaitNodeSetEvent)                                    \
  R(cuGraphExecExternalSemaphoresSignalNodeSetParams)                    \
  R(cuGraphExecExternalSemaphoresWaitNodeSetParams)                      \
  R(cuGraphNodeSetEnabled)                                               \
  R(cuGraphNodeGetEnabled)                                               \
  R(cuGraphUpload)                                                       \
  R(cuGraphLaunch)                                                       \
  R(cuGraphExecDestroy)                                                  \
  R(cuGraphDestroy)                                                      \
  V(cuGraphExecUpdate, cuGraphExecUpdate, 0)                             \
  V(cuGraphExecUpdate_v2, cuGraphExecUpdate, 0)                          \
  R(cuGraphKernelNodeCopyAttributes)                                     \
  R(cuGraphKernelNodeGetAttribute)                                       \
  R(cuGraphKernelNodeSetAttribute)                                       \
  R(cuGraphDebugDotPrint)                                                \
  R(cuUserObjectCreate)                                                  \
  R(cuUserObjectRetain)                                                  \
  R(cuUserObjectRelease)                                                 \
  R(cuGraphRetainUserObject)                                             \
  R(cuGraphReleaseUserObject)                                            \
  V(cuGraphAddNode, cuGraphAddNode, 0)                                   \
  V(cuGraphAddNode_v2, cuGraphAddNode, 0)                                \
  R(cuGraphNodeSetParams)                                                \
  R(cuGraphNodeGetParams)                                                \
  R(cuGraphExecNodeSetParams)                                            \
  R(cuGraphConditionalHandleCreate)                                      \
  R(cuGraphNodeGetContainingGraph)                                       \
  R(cuGraphNodeGetLocalId)                                               \
  R(cuGraphNodeGetToolsId)                                               \
  R(cuGraphGetId)                                                        \
  R(cuGraphExecGetId)                                                    \
  /* Occupancy */                                                        \
  R(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)                \
  R(cuOccupancyMaxPotentialBlockSizeWithFlags)                           \
  R(cuOccupancyAvailableDynamicSMemPerBlock)                             \
  R(cuOccupancyMaxPotentialClusterSize)                                  \
  R(cuOccupancyMaxActiveClusters)                                        \
  /* Texture Reference Management [DEPRECATED] */                        \
  R(cuTexRefSetArray)                                                    \
  R(cuTexRefSetMipmappedArray)                                           \
  V(cuTexRefSetAddress, cuTexRefSetAddress, 0)                           \
  V(cuTexRefSetAddress_v2, cuTexRefSetAddress, 0)                        \
  V(cuTexRefSetAddress2D, cuTexRefSetAddress2D, 0)                       \
  V(cuTexRefSetAddress2D_v2, cuTexRefSetAddress2D, 0)                    \
  V(cuTexRefSetAddress2D_v3, cuTexRefSetAddress2D, 0)                    \
  R(cuTexRefSetFormat)                                                   \
  R(cuTexRefSetAddressMode)                                              \
  R(cuTexRefSetFilterMode)                                               \
  R(cuTexRefSetMipmapFilterMode)                                         \
  R(cuTexRefSetMipmapLevelBias)                                          \
  R(cuTexRefSetMipmapLevelClamp)                                         \
  R(cuTexRefSetMaxAnisotropy)                                            \
  R(cuTexRefSetBorderColor)                                              \
  R(cuTexRefSetFlags)                                                    \
  V(cuTexRefGetAddress, cuTexRefGetAddress, 0)                           \
  V(cuTexRefGetAddress_v2, cuTexRefGetAddress, 0)                        \
  R(cuTexRefGetArray)                                                    \
  R(cuTexRefGetMipmappedArray)                                           \
  R(cuTexRefGetAddressMode)                                              \
  R(cuTexRefGetFilterMode)                                               \
  R(cuTexRefGetFormat)                                                   \
  R(cuTexRefGetMipmapFilterMode)                                         \
  R(cuTexRefGetMipmapLevelBias)                                          \
  R(cuTexRefGetMipmapLevelClamp)                                         \
  R(cuTexRefGetMaxAnisotropy)                                            \
  R(cuTexRefGetBorderColor)                                              \
  R(cuTexRefGetFlags)                                                    \
  R(cuTexRefCreate)                                                      \
  R(cuTexRefDestroy)                                                     \
  /* Surface Reference Management [DEPRECATED] */                        \
  R(cuSurfRefSetArray)                                                   \
  R(cuSurfRefGetArray)                                                   \
  /* Texture Object Management */                                        \
  R(cuTexObjectCreate)                                                   \
  R(cuTexObjectDestroy)                                                  \
  R(cuTexObjectGetResourceDesc)                                          \
  R(cuTexObjectGetTextureDesc)                                           \
  R(cuTexObjectGetResourceViewDesc)                                      \
  /* Surface Object Management */                                        \
  R(cuSurfObjectCreate)                                                  \
  R(cuSurfObjectDestroy)                                                 \
  R(cuSurfObjectGetResourceDesc)                                         \
  /* Tensor Map Object Management */                                     \
  R(cuTensorMapEncodeTiled)                                              \
  R(cuTensorMapEncodeIm2col)                                             \
  R(cuTensorMapEncodeIm2colWide)                                         \
  R(cuTensorMapReplaceAddress)                                           \
  /* Peer Context Memory Access */                                       \
  R(cuDeviceCanAccessPeer)                                               \
  R(cuCtxEnablePeerAccess)                                               \
  R(cuCtxDisablePeerAccess)                                              \
  R(cuDeviceGetP2PAttribute)                                             \
  R(cuDeviceGetP2PAtomicCapabilities)                                    \
  /* Graphics Interoperability */                                        \
  R(cuGraphicsUnregisterResource)                                        \
  R(cuGraphicsSubResourceGetMappedArray)                                 \
  R(cuGraphicsResourceGetMappedMipmappedArray)                           \
  V(cuGraphicsResourceGetMappedPointer, cuGraphicsResourceGetMappedPointer, 0)    \
  V(cuGraphicsResourceGetMappedPointer_v2, cuGraphicsResourceGetMappedPointer, 0) \
  V(cuGraphicsResourceSetMapFlags, cuGraphicsResourceSetMapFlags, 0)     \
  V(cuGraphicsResourceSetMapFlags_v2, cuGraphicsResourceSetMapFlags, 0)  \
  R(cuGraphicsMapResources)                                              \
  R(cuGraphicsUnmapResources)                                            \
  /* Driver Entry Point Access */                                        \
  R(cuGetExportTable)                                                    \
  /* Coredump Attributes Control API */                                  \
  R(cuCoredumpGetAttribute)                                              \
  R(cuCoredumpGetAttributeGlobal)                                        \
  R(cuCoredumpSetAttribute)                                              \
  R(cuCoredumpSetAttributeGlobal)                                        \
  R(cuCoredumpRegisterStartCallback)                                     \
  R(cuCoredumpRegisterCompleteCallback)                                  \
  R(cuCoredumpDeregisterStartCallback)                                   \
  R(cuCoredumpDeregisterCompleteCallback)                                \
  /* Green Contexts */                                                   \
  R(cuGreenCtxCreate)                                                    \
  R(cuGreenCtxDestroy)                                                   \
  R(cuCtxFromGreenCtx)                                                   \
  R(cuDeviceGetDevResource)                                              \
  R(cuCtxGetDevResource)                                                 \
  R(cuGreenCtxGetDevResource)                                            \
  R(cuDevSmResourceSplitByCount)                                         \
  R(cuDevSmResourceSplit)                                                \
  R(cuDevResourceGenerateDesc)                                           \
  R(cuGreenCtxRecordEvent)                                               \
  R(cuGreenCtxWaitEvent)                                                 \
  R(cuStreamGetGreenCtx)                                                 \
  R(cuGreenCtxStreamCreate)                                              \
  R(cuGreenCtxGetId)                                                     \
  /* Error Log Management Functions */                                   \
  R(cuLogsRegisterCallback)                                              \
  R(cuLogsUnregisterCallback)                                            \
  R(cuLogsCurrent)                                                       \
  R(cuLogsDumpToFile)                                                    \
  R(cuLogsDumpToMemory)                                                  \
  /* CUDA Checkpointing */                                               \
  R(cuCheckpointProcessGetRestoreThreadId)                               \
  R(cuCheckpointProcessGetState)                                         \
  R(cuCheckpointProcessLock)                                             \
  R(cuCheckpointProcessCheckpoint)                                       \
  R(cuCheckpointProcessRestore)                                          \
  R(cuCheckpointProcessUnlock)                                           \
  /* Profiler Control (and its deprecated cuProfilerInitialize) */      \
  R(cuProfilerInitialize)                                                \
  R(cuProfilerStart)                                                     \
  R(cuProfilerStop)                                                      \
  /* OpenGL Interoperability */                                          \
  R(cuGraphicsGLRegisterBuffer)                                          \
  R(cuGraphicsGLRegisterImage)                                           \
  V(cuGLGetDevices, cuGLGetDevices, 0)                                   \
  V(cuGLGetDevices_v2, cuGLGetDevices, 0)                                \
  V(cuGLCtxCreate, cuGLCtxCreate, 0)                                     \
  V(cuGLCtxCreate_v2, cuGLCtxCreate, 0)                                  \
  R(cuGLInit)                                                            \
  R(cuGLRegisterBufferObject)                                            \
  V(cuGLMapBufferObject, cuGLMapBufferObject, 0)                         \
  V(cuGLMapBufferObject_v2, cuGLMapBufferObject, 0)                      \
  R(cuGLUnmapBufferObject)                                               \
  R(cuGLUnregisterBufferObject)                                          \
  R(cuGLSetBufferObjectMapFlags)                                         \
  V(cuGLMapBufferObjectAsync, cuGLMapBufferObjectAsync, 0)               \
  V(cuGLMapBufferObjectAsync_v2, cuGLMapBufferObjectAsync, 0)            \
  R(cuGLUnmapBufferObjectAsync)                                          \
  /* VDPAU Interoperability */                                           \
  R(cuVDPAUGetDevice)                                                    \
  V(cuVDPAUCtxCreate, cuVDPAUCtxCreate, 0)                               \
  V(cuVDPAUCtxCreate_v2, cuVDPAUCtxCreate, 0)                            \
  R(cuGraphicsVDPAURegisterVideoSurface)                                 \
  R(cuGraphicsVDPAURegisterOutputSurface)                                \
  /* EGL Interoperability */                                             \
  R(cuGraphicsEGLRegisterImage)                                          \
  R(cuEGLStreamConsumerConnect)                                          \
  R(cuEGLStreamConsumerConnectWithFlags)                                 \
  R(cuEGLStreamConsumerDisconnect)                                       \
  R(cuEGLStreamConsumerAcquireFrame)                                     \
  R(cuEGLStreamConsumerReleaseFrame)                                     \
  R(cuEGLStreamProducerConnect)                                          \
  R(cuEGLStreamProducerDisconnect)                                       \
  R(cuEGLStreamProducerPresentFrame)                                     \
  R(cuEGLStreamProducerReturnFrame)                                      \
  R(cuGraphicsResourceGetMappedEglFrame)                                 \
  R(cuEventCreateFromEGLSync)

// The per-thread default stream names of the refused entry points (per_thread_stream.hpp
// says which bases have them): each is an alias of its variant's stub, so a program built
// with per-thread default streams loads, and a call gets CUDA_ERROR_NOT_SUPPORTED.
// A(exported, suffix): exported##suffix is exported too.
#define FERRY_REFUSED_PER_THREAD_NAMES(A)                                \
  A(cuMemcpyPeer, _ptds)                                               \
  A(cuMemcpyDtoA, _ptds)                                               \
  A(cuMemcpyDtoA_v2, _ptds)                                            \
  A(cuMemcpyAtoD, _ptds)                                               \
  A(cuMemcpyAtoD_v2, _ptds)                                            \
  A(cuMemcpyHtoA, _ptds)                                               \
  A(cuMemcpyHtoA_v2, _ptds)                                            \
  A(cuMemcpyAtoH, _ptds)                                               \
  A(cuMemcpyAtoH_v2, _ptds)                                            \
  A(cuMemcpyAtoA, _ptds)                                               \
  A(cuMemcpyAtoA_v2, _ptds)                                            \
  A(cuMemcpy2D, _ptds)                                                 \
  A(cuMemcpy2D_v2, _ptds)                                              \
  A(cuMemcpy2DUnaligned, _ptds)                                        \
  A(cuMemcpy2DUnaligned_v2, _ptds)                                     \
  A(cuMemcpy3D, _ptds)                                                 \
  A(cuMemcpy3D_v2, _ptds)                                              \
  A(cuMemcpy3DPeer, _ptds)                                             \
  A(cuMemcpyPeerAsync, _ptsz)                                          \
  A(cuMemcpyHtoAAsync, _ptsz)                                          \
  A(cuMemcpyHtoAAsync_v2, _ptsz)                                       \
  A(cuMemcpyAtoHAsync, _ptsz)                                          \
  A(cuMemcpyAtoHAsync_v2, _ptsz)                                       \
  A(cuMemcpy2DAsync, _ptsz)                                            \
  A(cuMemcpy2DAsync_v2, _ptsz)                                         \
  A(cuMemcpy3DAsync, _ptsz)                                            \
  A(cuMemcpy3DAsync_v2, _ptsz)                                         \
  A(cuMemcpy3DPeerAsync, _ptsz)                                        \
  A(cuMemcpyBatchAsync, _ptsz)                                         \
  A(cuMemcpyBatchAsync_v2, _ptsz)                                      \
  A(cuMemcpy3DBatchAsync, _ptsz)                                       \
  A(cuMemcpy3DBatchAsync_v2, _ptsz)                                    \
  A(cuMemsetD2D8, _ptds)                                               \
  A(cuMemsetD2D8_v2, _ptds)                                            \
  A(cuMemsetD2D16, _ptds)                                              \
  A(cuMemsetD2D16_v2, _ptds)                                           \
  A(cuMemsetD2D32, _ptds)                                              \
  A(cuMemsetD2D32_v2, _ptds)                                           \
  A(cuMemsetD2D8Async, _ptsz)                                          \
  A(cuMemsetD2D16Async, _ptsz)                                         \
  A(cuMemsetD2D32Async, _ptsz)                                         \
  A(cuMemBatchDecompressAsync, _ptsz)                                  \
  A(cuMemMapArrayAsync, _ptsz)                                         \
  A(cuMemFreeAsync, _ptsz)                                             \
  A(cuMemAllocAsync, _ptsz)                                            \
  A(cuMemAllocFromPoolAsync, _ptsz)                                    \
  A(cuMemPrefetchAsync, _ptsz)                                         \
  A(cuMemPrefetchAsync_v2, _ptsz)                                      \
  A(cuMemPrefetchBatchAsync, _ptsz)                                    \
  A(cuMemDiscardBatchAsync, _ptsz)                                     \
  A(cuMemDiscardAndPrefetchBatchAsync, _ptsz)                          \
  A(cuStreamGetDevice, _ptsz)                                          \
  A(cuStreamGetId, _ptsz)                                              \
  A(cuStreamGetCtx_v2, _ptsz)                                          \
  A(cuStreamBeginCapture, _ptsz)                                       \
  A(cuStreamBeginCapture_v2, _ptsz)                                    \
  A(cuStreamBeginCaptureToGraph, _ptsz)                                \
  A(cuStreamEndCapture, _ptsz)                                         \
  A(cuStreamIsCapturing, _ptsz)                                        \
  A(cuStreamGetCaptureInfo, _ptsz)                                     \
  A(cuStreamGetCaptureInfo_v2, _ptsz)                                  \
  A(cuStreamGetCaptureInfo_v3, _ptsz)                                  \
  A(cuStreamUpdateCaptureDependencies, _ptsz)                          \
  A(cuStreamUpdateCaptureDependencies_v2, _ptsz)                       \
  A(cuStreamAttachMemAsync, _ptsz)                                     \
  A(cuStreamCopyAttributes, _ptsz)                                     \
  A(cuStreamGetAttribute, _ptsz)                                       \
  A(cuStreamSetAttribute, _ptsz)                                       \
  A(cuSignalExternalSemaphoresAsync, _ptsz)                            \
  A(cuWaitExternalSemaphoresAsync, _ptsz)                              \
  A(cuStreamWaitValue32, _ptsz)                                        \
  A(cuStreamWaitValue32_v2, _ptsz)                                     \
  A(cuStreamWaitValue64, _ptsz)                                        \
  A(cuStreamWaitValue64_v2, _ptsz)                                     \
  A(cuStreamWriteValue32, _ptsz)                                       \
  A(cuStreamWriteValue32_v2, _ptsz)                                    \
  A(cuStreamWriteValue64, _ptsz)                                       \
  A(cuStreamWriteValue64_v2, _ptsz)                                    \
  A(cuStreamBatchMemOp, _ptsz)                                         \
  A(cuStreamBatchMemOp_v2, _ptsz)                                      \
  A(cuLaunchCooperativeKernel, _ptsz)                                  \
  A(cuGraphInstantiateWithParams, _ptsz)                               \
  A(cuGraphUpload, _ptsz)                                              \
  A(cuGraphLaunch, _ptsz)                                              \
  A(cuGraphicsMapResources, _ptsz)                                     \
  A(cuGraphicsUnmapResources, _ptsz)

namespace ferry::cuda {
namespace {

enum refused_index : size_t {
#define FERRY_REFUSED_INDEX_R(name) index_##name,
#define FERRY_REFUSED_INDEX_V(name, base, since) index_##name,
  FERRY_REFUSED_ENTRY_POINTS(FERRY_REFUSED_INDEX_R, FERRY_REFUSED_INDEX_V)
#undef FERRY_REFUSED_INDEX_R
#undef FERRY_REFUSED_INDEX_V
  refused_index_count
};

// One flag per stub: set at its first call, so each name is logged once a process.
// Zero-initialized before any code runs, so a stub called during another file's
// static initialization still finds it.
std::atomic<bool> called[refused_index_count];

}  // namespace

// The body of every stub (declared before the table so the stubs below can call it).
int refuse(size_t index) noexcept;

}  // namespace ferry::cuda

extern "C" {
#define FERRY_REFUSED_STUB_R(name) \
  __attribute__((visibility("default"))) int name() noexcept { return ::ferry::cuda::refuse(::ferry::cuda::index_##name); }
#define FERRY_REFUSED_STUB_V(name, base, since) FERRY_REFUSED_STUB_R(name)
FERRY_REFUSED_ENTRY_POINTS(FERRY_REFUSED_STUB_R, FERRY_REFUSED_STUB_V)
#undef FERRY_REFUSED_STUB_R
#undef FERRY_REFUSED_STUB_V

#define FERRY_REFUSED_ALIAS(name, suffix) \
  __attribute__((visibility("default"), alias(#name))) int name##suffix() noexcept;
FERRY_REFUSED_PER_THREAD_NAMES(FERRY_REFUSED_ALIAS)
#undef FERRY_REFUSED_ALIAS
}  // extern "C"

namespace ferry::cuda {

// Constant-initialized (string literals and function addresses only), so
// cuGetProcAddress may read it from another file's static initializer.
constinit const refused_entry refused_entries[] = {
#define FERRY_REFUSED_ROW_R(name) {#name, #name, 0, &::name},
#define FERRY_REFUSED_ROW_V(name, base, since) {#name, #base, since, &::name},
    FERRY_REFUSED_ENTRY_POINTS(FERRY_REFUSED_ROW_R, FERRY_REFUSED_ROW_V)
#undef FERRY_REFUSED_ROW_R
#undef FERRY_REFUSED_ROW_V
};

constinit const size_t refused_entry_count = sizeof refused_entries / sizeof refused_entries[0];

constinit const refused_alias refused_per_thread_names[] = {
#define FERRY_REFUSED_ALIAS_ROW(name, suffix) {#name #suffix, &::name##suffix},
    FERRY_REFUSED_PER_THREAD_NAMES(FERRY_REFUSED_ALIAS_ROW)
#undef FERRY_REFUSED_ALIAS_ROW
};

constinit const size_t refused_per_thread_name_count =
    sizeof refused_per_thread_names / sizeof refused_per_thread_names[0];

static_assert(sizeof refused_entries / sizeof refused_entries[0] == refused_index_count);

int refuse(size_t index) noexcept {
  if (!called[index].exchange(true, std::memory_order_relaxed))
    FERRY_WARN("cuda", "%s is not supported by Ferry's CUDA driver; it returns CUDA_ERROR_NOT_SUPPORTED",
               refused_entries[index].exported);
  return CUDA_ERROR_NOT_SUPPORTED;
}

bool refused_was_called(size_t index) {
  return index < refused_index_count && called[index].load(std::memory_order_relaxed);
}

}  // namespace ferry::cuda
