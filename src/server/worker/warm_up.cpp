#include "server/worker/warm_up.hpp"

#include "server/native/context_releaser.hpp"

namespace ferry::server::worker {

bool warm_up(const native::api& api, const native::device_catalog& catalog, std::string& error) {
  for (uint32_t i = 0; i < catalog.size(); ++i) {
    const native::device_entry& d = *catalog.find(i);
    cl_int rc = CL_SUCCESS;
    cl_context context = api.clCreateContext(nullptr, 1, &d.id, nullptr, nullptr, &rc);
    cl_command_queue queue = nullptr;
    cl_mem buffer = nullptr;
    const cl_uint value = 0;
    if (rc == CL_SUCCESS) queue = api.clCreateCommandQueueWithProperties(context, d.id, nullptr, &rc);
    if (rc == CL_SUCCESS) buffer = api.clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof value, nullptr, &rc);
    if (rc == CL_SUCCESS) rc = api.clEnqueueWriteBuffer(queue, buffer, CL_TRUE, 0, sizeof value, &value, 0, nullptr, nullptr);
    if (buffer) api.clReleaseMemObject(buffer);
    if (queue) api.clReleaseCommandQueue(queue);
    if (context) {
      // NVIDIA's clReleaseContext may block until another context is made.
      if (d.blocking_context_release) context_releaser::release(api, context);
      else api.clReleaseContext(context);
    }
    if (rc != CL_SUCCESS) {
      error = "device " + std::to_string(i) + " (" + d.name + ") fails its first use: OpenCL error " + std::to_string(rc);
      return false;
    }
  }
  return true;
}

}  // namespace ferry::server::worker
