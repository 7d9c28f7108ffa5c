// Entry points for features Ferry does not serve yet (images, samplers,
// pipes, SVM, native kernels, sub-groups). Each validates its handles and
// answers the code the spec gives for an unsupported feature, so programs
// that probe for them fall back cleanly instead of crashing in the loader.
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

cl_mem CL_API_CALL clCreateImage(cl_context c, cl_mem_flags, const cl_image_format*, const cl_image_desc*, void*,
                                 cl_int* errcode_ret) {
  return unsupported_create<cl_mem>(errcode_ret, is_valid(c) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT);
}
cl_mem CL_API_CALL clCreateImage2D(cl_context c, cl_mem_flags, const cl_image_format*, size_t, size_t, size_t, void*,
                                   cl_int* errcode_ret) {
  return unsupported_create<cl_mem>(errcode_ret, is_valid(c) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT);
}
cl_mem CL_API_CALL clCreateImage3D(cl_context c, cl_mem_flags, const cl_image_format*, size_t, size_t, size_t, size_t,
                                   size_t, void*, cl_int* errcode_ret) {
  return unsupported_create<cl_mem>(errcode_ret, is_valid(c) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT);
}
cl_mem CL_API_CALL clCreateImageWithProperties(cl_context c, const cl_mem_properties*, cl_mem_flags,
                                               const cl_image_format*, const cl_image_desc*, void*,
                                               cl_int* errcode_ret) {
  return unsupported_create<cl_mem>(errcode_ret, is_valid(c) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT);
}
cl_int CL_API_CALL clGetSupportedImageFormats(cl_context c, cl_mem_flags, cl_mem_object_type, cl_uint num_entries,
                                              cl_image_format* formats, cl_uint* num_formats) {
  if (!is_valid(c)) return CL_INVALID_CONTEXT;
  // CL_INVALID_VALUE if num_entries is 0 and image_formats is not NULL.
  if (num_entries == 0 && formats != nullptr) return CL_INVALID_VALUE;
  if (num_formats) *num_formats = 0;  // no image formats are served yet
  return CL_SUCCESS;
}
cl_int CL_API_CALL clGetImageInfo(cl_mem m, cl_image_info, size_t, void*, size_t*) {
  return is_valid(m) ? CL_INVALID_MEM_OBJECT : CL_INVALID_MEM_OBJECT;  // no image objects exist
}
cl_int CL_API_CALL clEnqueueReadImage(cl_command_queue q, cl_mem, cl_bool, const size_t*, const size_t*, size_t,
                                      size_t, void*, cl_uint, const cl_event*, cl_event*) {
  return is_valid(q) ? CL_INVALID_MEM_OBJECT : CL_INVALID_COMMAND_QUEUE;
}
cl_int CL_API_CALL clEnqueueWriteImage(cl_command_queue q, cl_mem, cl_bool, const size_t*, const size_t*, size_t,
                                       size_t, const void*, cl_uint, const cl_event*, cl_event*) {
  return is_valid(q) ? CL_INVALID_MEM_OBJECT : CL_INVALID_COMMAND_QUEUE;
}
cl_int CL_API_CALL clEnqueueCopyImage(cl_command_queue q, cl_mem, cl_mem, const size_t*, const size_t*, const size_t*,
                                      cl_uint, const cl_event*, cl_event*) {
  return is_valid(q) ? CL_INVALID_MEM_OBJECT : CL_INVALID_COMMAND_QUEUE;
}
cl_int CL_API_CALL clEnqueueFillImage(cl_command_queue q, cl_mem, const void*, const size_t*, const size_t*, cl_uint,
                                      const cl_event*, cl_event*) {
  return is_valid(q) ? CL_INVALID_MEM_OBJECT : CL_INVALID_COMMAND_QUEUE;
}
cl_int CL_API_CALL clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem, cl_mem, const size_t*, const size_t*,
                                              size_t, cl_uint, const cl_event*, cl_event*) {
  return is_valid(q) ? CL_INVALID_MEM_OBJECT : CL_INVALID_COMMAND_QUEUE;
}
cl_int CL_API_CALL clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem, cl_mem, size_t, const size_t*,
                                              const size_t*, cl_uint, const cl_event*, cl_event*) {
  return is_valid(q) ? CL_INVALID_MEM_OBJECT : CL_INVALID_COMMAND_QUEUE;
}
void* CL_API_CALL clEnqueueMapImage(cl_command_queue q, cl_mem, cl_bool, cl_map_flags, const size_t*, const size_t*,
                                    size_t*, size_t*, cl_uint, const cl_event*, cl_event*, cl_int* errcode_ret) {
  return unsupported_create<void*>(errcode_ret, is_valid(q) ? CL_INVALID_MEM_OBJECT : CL_INVALID_COMMAND_QUEUE);
}
cl_sampler CL_API_CALL clCreateSampler(cl_context c, cl_bool, cl_addressing_mode, cl_filter_mode,
                                       cl_int* errcode_ret) {
  return unsupported_create<cl_sampler>(errcode_ret, is_valid(c) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT);
}
cl_sampler CL_API_CALL clCreateSamplerWithProperties(cl_context c, const cl_sampler_properties*,
                                                     cl_int* errcode_ret) {
  return unsupported_create<cl_sampler>(errcode_ret, is_valid(c) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT);
}
cl_int CL_API_CALL clRetainSampler(cl_sampler) { return CL_INVALID_SAMPLER; }
cl_int CL_API_CALL clReleaseSampler(cl_sampler) { return CL_INVALID_SAMPLER; }
cl_int CL_API_CALL clGetSamplerInfo(cl_sampler, cl_sampler_info, size_t, void*, size_t*) { return CL_INVALID_SAMPLER; }
cl_mem CL_API_CALL clCreatePipe(cl_context c, cl_mem_flags, cl_uint, cl_uint, const cl_pipe_properties*,
                                cl_int* errcode_ret) {
  // CL_INVALID_OPERATION if no devices in context support pipes.
  return unsupported_create<cl_mem>(errcode_ret, is_valid(c) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT);
}
cl_int CL_API_CALL clGetPipeInfo(cl_mem, cl_pipe_info, size_t, void*, size_t*) { return CL_INVALID_MEM_OBJECT; }
void* CL_API_CALL clSVMAlloc(cl_context, cl_svm_mem_flags, size_t, cl_uint) { return nullptr; }
void CL_API_CALL clSVMFree(cl_context, void*) {}
cl_int CL_API_CALL clEnqueueSVMFree(cl_command_queue q, cl_uint, void*[], void(CL_CALLBACK*)(cl_command_queue, cl_uint,
                                                                                             void*[], void*),
                                    void*, cl_uint, const cl_event*, cl_event*) {
  return is_valid(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}
cl_int CL_API_CALL clEnqueueSVMMemcpy(cl_command_queue q, cl_bool, void*, const void*, size_t, cl_uint,
                                      const cl_event*, cl_event*) {
  return is_valid(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}
cl_int CL_API_CALL clEnqueueSVMMemFill(cl_command_queue q, void*, const void*, size_t, size_t, cl_uint,
                                       const cl_event*, cl_event*) {
  return is_valid(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}
cl_int CL_API_CALL clEnqueueSVMMap(cl_command_queue q, cl_bool, cl_map_flags, void*, size_t, cl_uint, const cl_event*,
                                   cl_event*) {
  return is_valid(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}
cl_int CL_API_CALL clEnqueueSVMUnmap(cl_command_queue q, void*, cl_uint, const cl_event*, cl_event*) {
  return is_valid(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}
cl_int CL_API_CALL clEnqueueSVMMigrateMem(cl_command_queue q, cl_uint, const void**, const size_t*,
                                          cl_mem_migration_flags, cl_uint, const cl_event*, cl_event*) {
  return is_valid(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}
cl_int CL_API_CALL clSetKernelArgSVMPointer(cl_kernel k, cl_uint, const void*) {
  return is_valid(k) ? CL_INVALID_OPERATION : CL_INVALID_KERNEL;
}
cl_int CL_API_CALL clEnqueueNativeKernel(cl_command_queue q, void(CL_CALLBACK*)(void*), void*, size_t, cl_uint,
                                         const cl_mem*, const void**, cl_uint, const cl_event*, cl_event*) {
  // CL_INVALID_OPERATION if the device associated with command_queue cannot
  // execute the native kernel (a host function cannot run on a server).
  return is_valid(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}
cl_int CL_API_CALL clSetDefaultDeviceCommandQueue(cl_context c, cl_device_id, cl_command_queue) {
  return is_valid(c) ? CL_INVALID_OPERATION : CL_INVALID_CONTEXT;
}
cl_int CL_API_CALL clGetKernelSubGroupInfo(cl_kernel k, cl_device_id, cl_kernel_sub_group_info, size_t, const void*,
                                           size_t, void*, size_t*) {
  return is_valid(k) ? CL_INVALID_OPERATION : CL_INVALID_KERNEL;
}

}  // namespace ferry::client::api
