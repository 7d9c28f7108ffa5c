// Entry points for features Ferry does not serve yet (pipes, native kernels,
// device-side queues). Each validates its handles and answers the code the
// spec gives for an unsupported feature, so programs that probe for them
// fall back cleanly instead of crashing in the loader.
#include "client/api/api.hpp"
#include "client/api/entry.hpp"

namespace ferry::client::api {

cl_mem CL_API_CALL clCreatePipe(cl_context c, cl_mem_flags, cl_uint, cl_uint, const cl_pipe_properties*,
                                cl_int* errcode_ret) {
  return guarded_create<cl_mem>(__func__, errcode_ret, [&]() -> result<cl_mem> {
    FERRY_CHECK_HANDLE_R(c);
    // CL_INVALID_OPERATION if no devices in context support pipes.
    return fail(explain(CL_INVALID_OPERATION, "Ferry serves no pipes"));
  });
}
cl_int CL_API_CALL clGetPipeInfo(cl_mem pipe, cl_pipe_info, size_t, void*, size_t*) {
  return guarded(__func__, [&]() -> cl_int {
    // CL_INVALID_MEM_OBJECT if pipe is not a valid pipe object.
    return explain(CL_INVALID_MEM_OBJECT, "%p is no pipe: Ferry serves no pipes", static_cast<void*>(pipe));
  });
}
cl_int CL_API_CALL clEnqueueNativeKernel(cl_command_queue q, void(CL_CALLBACK*)(void*), void*, size_t, cl_uint,
                                         const cl_mem*, const void**, cl_uint, const cl_event*, cl_event*) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(q);
    // CL_INVALID_OPERATION if the device associated with command_queue cannot
    // execute the native kernel (a host function cannot run on a server).
    return explain(CL_INVALID_OPERATION, "a host function cannot run on a server");
  });
}
cl_int CL_API_CALL clSetDefaultDeviceCommandQueue(cl_context c, cl_device_id, cl_command_queue) {
  return guarded(__func__, [&]() -> cl_int {
    FERRY_CHECK_HANDLE(c);
    return explain(CL_INVALID_OPERATION, "Ferry serves no device-side queues");
  });
}

}  // namespace ferry::client::api
