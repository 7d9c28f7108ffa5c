#include "server/native/pinned_pool.hpp"

#include <algorithm>
#include <bit>

namespace ferry::server::native {

std::shared_ptr<pinned_pool> pinned_pool::create(const api& api, cl_context context, cl_device_id device) {
  cl_int rc = CL_SUCCESS;
  cl_command_queue queue = api.clCreateCommandQueueWithProperties(context, device, nullptr, &rc);
  if (queue == nullptr) return nullptr;
  return std::shared_ptr<pinned_pool>(new pinned_pool(api, context, queue));
}

// The queue keeps the context alive; the pool does not retain the context,
// so it never makes the last clReleaseContext, which blocks on NVIDIA's
// OpenCL (context_releaser.hpp).
pinned_pool::pinned_pool(const api& api, cl_context context, cl_command_queue queue)
    : api_(api), context_(context), queue_(queue) {}

pinned_pool::~pinned_pool() {
  // Every block taken came back first (each mapping holds the pool).
  for (const block& b : free_) release(b);
  api_.clReleaseCommandQueue(queue_);
}

void pinned_pool::release(const block& b) {
  api_.clEnqueueUnmapMemObject(queue_, b.buffer, b.pointer, 0, nullptr, nullptr);
  api_.clFlush(queue_);
  api_.clReleaseMemObject(b.buffer);  // freed once the unmap has run
}

bool pinned_pool::take(size_t size, mapping& out) {
  if (size == 0 || size > largest_block) return false;
  const size_t wanted = std::max(smallest_block, std::bit_ceil(size));
  {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(free_.begin(), free_.end(), [&](const block& b) { return b.size == wanted; });
    if (it != free_.end()) {
      out = mapping{nullptr, it->buffer, it->pointer, shared_from_this(), it->size};
      free_bytes_ -= it->size;
      free_.erase(it);
      return true;
    }
  }
  cl_int rc = CL_SUCCESS;
  cl_mem buffer = api_.clCreateBuffer(context_, CL_MEM_ALLOC_HOST_PTR, wanted, nullptr, &rc);
  if (buffer == nullptr) return false;
  void* pointer =
      api_.clEnqueueMapBuffer(queue_, buffer, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, wanted, 0, nullptr, nullptr, &rc);
  if (pointer == nullptr) {
    api_.clReleaseMemObject(buffer);
    return false;
  }
  out = mapping{nullptr, buffer, pointer, shared_from_this(), wanted};
  return true;
}

void pinned_pool::give_back(cl_mem buffer, void* pointer, size_t size) {
  {
    std::lock_guard lock(mutex_);
    if (free_bytes_ + size <= kept_bytes) {
      free_.push_back({buffer, pointer, size});
      free_bytes_ += size;
      return;
    }
  }
  release({buffer, pointer, size});
}

size_t pinned_pool::kept() const {
  std::lock_guard lock(mutex_);
  return free_.size();
}

}  // namespace ferry::server::native
