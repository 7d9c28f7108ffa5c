#include "server/native/mapping.hpp"

#include "server/native/pinned_pool.hpp"

namespace ferry::server::native {

cl_int map(const api& api, cl_command_queue queue, cl_mem buffer, cl_map_flags flags, size_t offset, size_t size,
           cl_uint wait_count, const cl_event* waits, cl_event* mapped, mapping& out) {
  cl_int rc = CL_SUCCESS;
  void* pointer = api.clEnqueueMapBuffer(queue, buffer, CL_FALSE, flags, offset, size, wait_count, waits, mapped, &rc);
  if (pointer == nullptr) return rc == CL_SUCCESS ? CL_MAP_FAILURE : rc;
  api.clRetainCommandQueue(queue);
  api.clRetainMemObject(buffer);
  out = mapping{queue, buffer, pointer, nullptr, 0};
  return CL_SUCCESS;
}

cl_int unmap(const api& api, mapping& m, cl_uint wait_count, const cl_event* waits, cl_event* done) {
  if (!m) return CL_SUCCESS;
  mapping held = std::exchange(m, mapping{});
  if (held.pool) {
    if (done) *done = nullptr;
    held.pool->give_back(held.buffer, held.pointer, held.pool_block);
    return CL_SUCCESS;
  }
  cl_int rc = api.clEnqueueUnmapMemObject(held.queue, held.buffer, held.pointer, wait_count, waits, done);
  api.clFlush(held.queue);
  api.clReleaseMemObject(held.buffer);
  api.clReleaseCommandQueue(held.queue);
  return rc;
}

}  // namespace ferry::server::native
