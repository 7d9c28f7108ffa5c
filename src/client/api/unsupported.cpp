// Entry points for features Ferry does not serve yet (pipes, native kernels,
// device-side queues). Each validates its handles and answers the code the
// spec gives for an unsupported feature, so programs that probe for them
// fall back cleanly instead of crashing in the loader.
#include "client/api/api.hpp"
#include "client/api/entry.hpp"

namespace ferry::client::api {

namespace {

template <class T>
T unsupported_create(cl_int* errcode_ret, cl_int code) {
  if (errcode_ret) *errcode_ret = code;
  return nullptr;
}

}  // namespace

cl_mem CL_API_CALL clCreatePipe(cl_context c, cl_mem_flags, cl_uint, cl_uint, const cl_pipe_properties*,
                                cl_int* errcode_ret) {
  // CL_INVALID_OPERATION if no devices in context support pipes.
  return unsupported_create<cl_mem>(errcode_ret, is_valid(c) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT);
}
cl_int CL_API_CALL clGetPipeInfo(cl_mem, cl_pipe_info, size_t, void*, size_t*) { return CL_INVALID_MEM_OBJECT; }
cl_int CL_API_CALL clEnqueueNativeKernel(cl_command_queue q, void(CL_CALLBACK*)(void*), void*, size_t, cl_uint,
                                         const cl_mem*, const void**, cl_uint, const cl_event*, cl_event*) {
  // CL_INVALID_OPERATION if the device associated with command_queue cannot
  // execute the native kernel (a host function cannot run on a server).
  return is_valid(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}
cl_int CL_API_CALL clSetDefaultDeviceCommandQueue(cl_context c, cl_device_id, cl_command_queue) {
  return is_valid(c) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT;
}

}  // namespace ferry::client::api
