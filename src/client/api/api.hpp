// The list of entry points libferry implements: the single source for their
// declarations here and for the loader's dispatch table (icd/dispatch.cpp).
// Each is defined in the api/ file of its object family, named as in the
// spec, inside namespace ferry::client::api (so nothing clashes with the
// loader's exported symbols).
#pragma once

#include <CL/cl.h>
#include <CL/cl_ext.h>

namespace ferry::client::api {

#define FERRY_ENTRY_POINTS(X)                                               \
  /* platform.cpp */                                                        \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clUnloadPlatformCompiler)      \
  X(clGetExtensionFunctionAddress) X(clGetExtensionFunctionAddressForPlatform) \
  /* device.cpp */                                                          \
  X(clGetDeviceIDs) X(clGetDeviceInfo) X(clRetainDevice) X(clReleaseDevice) \
  X(clCreateSubDevices) X(clGetDeviceAndHostTimer) X(clGetHostTimer)        \
  /* context.cpp */                                                         \
  X(clCreateContext) X(clCreateContextFromType) X(clRetainContext)          \
  X(clReleaseContext) X(clGetContextInfo) X(clSetContextDestructorCallback) \
  /* queue.cpp */                                                           \
  X(clCreateCommandQueue) X(clCreateCommandQueueWithProperties)             \
  X(clRetainCommandQueue) X(clReleaseCommandQueue) X(clGetCommandQueueInfo) \
  X(clSetCommandQueueProperty) X(clFlush) X(clFinish)                       \
  X(clEnqueueMarker) X(clEnqueueBarrier) X(clEnqueueWaitForEvents)          \
  X(clEnqueueMarkerWithWaitList) X(clEnqueueBarrierWithWaitList)            \
  /* memory.cpp */                                                          \
  X(clCreateBuffer) X(clCreateBufferWithProperties) X(clCreateSubBuffer)    \
  X(clRetainMemObject) X(clReleaseMemObject) X(clGetMemObjectInfo)          \
  X(clSetMemObjectDestructorCallback) X(clEnqueueReadBuffer)                \
  X(clEnqueueWriteBuffer) X(clEnqueueReadBufferRect)                        \
  X(clEnqueueWriteBufferRect) X(clEnqueueCopyBuffer)                        \
  X(clEnqueueCopyBufferRect) X(clEnqueueFillBuffer) X(clEnqueueMapBuffer)   \
  X(clEnqueueUnmapMemObject) X(clEnqueueMigrateMemObjects)                  \
  /* event.cpp */                                                           \
  X(clWaitForEvents) X(clGetEventInfo) X(clRetainEvent) X(clReleaseEvent)   \
  X(clCreateUserEvent) X(clSetUserEventStatus) X(clSetEventCallback)        \
  X(clGetEventProfilingInfo)                                                \
  /* program.cpp */                                                         \
  X(clCreateProgramWithSource) X(clCreateProgramWithBinary)                 \
  X(clCreateProgramWithBuiltInKernels) X(clCreateProgramWithIL)             \
  X(clRetainProgram) X(clReleaseProgram) X(clBuildProgram)                  \
  X(clCompileProgram) X(clLinkProgram) X(clUnloadCompiler)                  \
  X(clGetProgramInfo) X(clGetProgramBuildInfo)                              \
  X(clSetProgramReleaseCallback) X(clSetProgramSpecializationConstant)      \
  /* kernel.cpp */                                                          \
  X(clCreateKernel) X(clCreateKernelsInProgram) X(clRetainKernel)           \
  X(clReleaseKernel) X(clSetKernelArg) X(clGetKernelInfo)                   \
  X(clGetKernelWorkGroupInfo) X(clGetKernelArgInfo) X(clCloneKernel)        \
  X(clSetKernelExecInfo) X(clEnqueueNDRangeKernel) X(clEnqueueTask)         \
  X(clSetKernelArgSVMPointer) X(clGetKernelSubGroupInfo)                   \
  /* svm.cpp */                                                             \
  X(clSVMAlloc) X(clSVMFree) X(clEnqueueSVMFree) X(clEnqueueSVMMemcpy)      \
  X(clEnqueueSVMMemFill) X(clEnqueueSVMMap) X(clEnqueueSVMUnmap)            \
  X(clEnqueueSVMMigrateMem)                                                 \
  /* image.cpp */                                                           \
  X(clCreateImage) X(clCreateImage2D) X(clCreateImage3D)                    \
  X(clCreateImageWithProperties) X(clGetSupportedImageFormats)              \
  X(clGetImageInfo) X(clEnqueueReadImage) X(clEnqueueWriteImage)            \
  X(clEnqueueCopyImage) X(clEnqueueFillImage) X(clEnqueueCopyImageToBuffer) \
  X(clEnqueueCopyBufferToImage) X(clEnqueueMapImage)                        \
  /* sampler.cpp */                                                         \
  X(clCreateSampler) X(clCreateSamplerWithProperties) X(clRetainSampler)    \
  X(clReleaseSampler) X(clGetSamplerInfo)                                   \
  /* unsupported.cpp: answered with the spec's "not supported" codes */    \
  X(clCreatePipe) X(clGetPipeInfo) X(clEnqueueNativeKernel)                 \
  X(clSetDefaultDeviceCommandQueue)

#define FERRY_DECLARE_ENTRY(name) decltype(::name) name;
FERRY_ENTRY_POINTS(FERRY_DECLARE_ENTRY)
#undef FERRY_DECLARE_ENTRY

decltype(::clIcdGetPlatformIDsKHR) clIcdGetPlatformIDsKHR;

/// Ferry's extension functions (and clIcdGetPlatformIDsKHR) by name.
void* extension_function(const char* name);

}  // namespace ferry::client::api
