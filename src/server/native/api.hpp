// The native OpenCL entry points the daemon calls, as a table of function
// pointers (the same idea as an ICD dispatch table).
//
// The session code calls `api.clEnqueueNDRangeKernel(...)` instead of the
// global function so that one build of it runs either on the host's OpenCL
// (real_api) or on an inert stand-in that never touches a device (dry_api),
// which the fuzz target and the protocol unit tests use. The indirect call
// costs nothing next to a native enqueue.
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <cstdint>

namespace ferry::server::native {

struct api {
#define FERRY_NATIVE_FUNCTIONS(X)                                                               \
  X(clCreateContext) X(clReleaseContext) X(clCreateCommandQueueWithProperties)                \
  X(clReleaseCommandQueue) X(clCreateBuffer) X(clCreateSubBuffer) X(clReleaseMemObject)       \
  X(clCreateUserEvent) X(clSetUserEventStatus) X(clRetainEvent) X(clReleaseEvent)             \
  X(clGetEventInfo) X(clGetEventProfilingInfo) X(clSetEventCallback)                          \
  X(clCreateProgramWithSource) X(clCreateProgramWithBinary) X(clBuildProgram)                 \
  X(clCompileProgram) X(clLinkProgram) X(clReleaseProgram) X(clGetProgramInfo)                \
  X(clGetProgramBuildInfo) X(clCreateKernel) X(clReleaseKernel) X(clGetKernelInfo)            \
  X(clGetKernelWorkGroupInfo) X(clGetKernelSubGroupInfo) X(clGetKernelArgInfo)                \
  X(clSetKernelArg) X(clEnqueueNDRangeKernel) X(clEnqueueWriteBuffer)                         \
  X(clEnqueueWriteBufferRect) X(clEnqueueReadBuffer) X(clEnqueueReadBufferRect)               \
  X(clEnqueueCopyBuffer) X(clEnqueueCopyBufferRect) X(clEnqueueFillBuffer)                    \
  X(clEnqueueMarkerWithWaitList) X(clEnqueueBarrierWithWaitList) X(clFlush) X(clFinish)            \
  X(clCreateImageWithProperties) X(clGetImageInfo) X(clGetSupportedImageFormats)              \
  X(clCreateSamplerWithProperties) X(clReleaseSampler) X(clEnqueueReadImage)                  \
  X(clEnqueueWriteImage) X(clEnqueueCopyImage) X(clEnqueueFillImage)                          \
  X(clEnqueueCopyImageToBuffer) X(clEnqueueCopyBufferToImage)                                \
  X(clRetainContext) X(clSetMemObjectDestructorCallback) X(clSVMAlloc) X(clSVMFree)           \
  X(clEnqueueSVMMemcpy) X(clEnqueueSVMMemFill) X(clSetKernelArgSVMPointer)                    \
  X(clSetKernelExecInfo) X(clWaitForEvents) X(clCreateProgramWithIL)                          \
  X(clSetProgramSpecializationConstant) X(clRetainCommandQueue) X(clRetainMemObject)            \
  X(clEnqueueMapBuffer) X(clEnqueueUnmapMemObject)
#define FERRY_NATIVE_MEMBER(name) decltype(&::name) name;
  FERRY_NATIVE_FUNCTIONS(FERRY_NATIVE_MEMBER)
#undef FERRY_NATIVE_MEMBER
  /// Not OpenCL: releases the events clReleaseEvent parked in `context`
  /// (native/event_parking.hpp); the session's teardown calls it last.
  void (*release_parked_events)(cl_context context);
  /// Not OpenCL: whether clReleaseEvent parked an event of `context`.
  bool (*holds_parked_events)(cl_context context);
};

/// The host's OpenCL, through the ICD loader; clReleaseEvent parks events
/// that have not completed (native/event_parking.hpp).
const api& real_api();

/// An inert implementation: creators return unique fake handles, enqueues
/// succeed at once (event callbacks run immediately with CL_COMPLETE), info
/// queries answer a few fixed values, buffers above 64 MiB fail like a small
/// device would. Fake handles must never reach the real API.
const api& dry_api();
/// Fake handles created and not yet released (retain counts as a creation).
int64_t dry_live_handles();

}  // namespace ferry::server::native
