// The MPI functions of a library built where CMake found no MPI: they exist,
// so that a program built elsewhere against <mpi.h> links and runs its file
// transfers, and each refuses with CL_INVALID_OPERATION and a log line. The
// MPI types are not known here; every MPI handle is passed in one register
// (a pointer in Open MPI, an int in MPICH), which these ignore.
#include <CL/cl.h>

#include "common/log.hpp"

namespace {

cl_int refuse(const char* call) {
  FERRY_WARN("transfer", "%s: libferry_transfer was built without MPI (no MPI found at build time)", call);
  return CL_INVALID_OPERATION;
}

}  // namespace

extern "C" {

cl_int clEnqueueSendBuffer(cl_command_queue, cl_mem, cl_bool, size_t, size_t, int, int, void*, cl_uint,
                           const cl_event*, cl_event*) {
  return refuse("clEnqueueSendBuffer");
}

cl_int clEnqueueRecvBuffer(cl_command_queue, cl_mem, cl_bool, size_t, size_t, int, int, void*, cl_uint,
                           const cl_event*, cl_event*) {
  return refuse("clEnqueueRecvBuffer");
}

cl_int clEnqueueSendrecvBuffer(cl_command_queue, cl_mem, cl_bool, size_t, size_t, size_t, int, int, int, int, void*,
                               cl_uint, const cl_event*, cl_event*) {
  return refuse("clEnqueueSendrecvBuffer");
}

cl_event clCreateEventFromMPIRequest(cl_context, void*, cl_int* errcode_ret) {
  cl_int rc = refuse("clCreateEventFromMPIRequest");
  if (errcode_ret) *errcode_ret = rc;
  return nullptr;
}

// An MPI error code cannot be named without <mpi.h>; any non-zero one is a failure.
int clHostRecvFromBuffer(void*, size_t, int, int, void*, void*) {
  refuse("clHostRecvFromBuffer");
  return 1;
}

}  // extern "C"
