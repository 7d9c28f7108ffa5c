// Coarse-grained shared virtual memory (SVM): allocations, the SVM
// enqueues, kernel exec info, and freeing.
//
// The client's SVM pointers belong to its own address space, so every
// message names an allocation by id plus a byte offset. Each range is checked
// against the size the daemon recorded at allocation before a native call
// sees a pointer: no client can make the daemon read or write outside an
// allocation.
//
// Freeing: clSVMFree does not wait for the commands that use the memory, and
// a client may free early by mistake or on purpose. The id goes at once; the
// native memory waits behind a marker on every queue of its context (and on
// the queues the client released before) and until no native buffer stands
// on it. reclaim_svm frees what is ready whenever the control reader runs
// out of frames.
#include <algorithm>
#include <cstring>

#include "common/cl_errors.hpp"
#include "common/log.hpp"
#include "server/commands/executor.hpp"
#include "server/commands/executor_inline.hpp"
#include "server/transport/staging.hpp"

namespace ferry::server {

namespace p = protocol;

namespace {

constexpr cl_svm_mem_flags svm_access_flags = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;

// Runs on whichever thread the driver destroys the buffer on.
void CL_CALLBACK svm_buffer_destroyed(cl_mem, void* block) {
  static_cast<svm_block*>(block)->buffers.fetch_sub(1, std::memory_order_acq_rel);
}

uint8_t* at(const svm_block* block, uint64_t offset) { return static_cast<uint8_t*>(block->pointer) + offset; }

}  // namespace

// ---------------------------------------------------------------------------
// Lookups

svm_block* executor::svm_range(p::object_id id, uint64_t offset, uint64_t size, cl_int& error) const {
  object_table::found entry = objects_.find<object_kind::svm>(id);
  if (!entry) {
    error = entry.error();
    return nullptr;
  }
  svm_block* block = entry->as_svm();
  if (size == 0 || offset > block->size || size > block->size - offset) {
    error = CL_INVALID_VALUE;
    return nullptr;
  }
  return block;
}

svm_block* executor::svm_for(const object_entry& queue, p::object_id id, uint64_t offset, uint64_t size,
                             cl_int& error) const {
  svm_block* block = svm_range(id, offset, size, error);
  if (block != nullptr && block->context != queue.context) {
    error = CL_INVALID_VALUE;
    return nullptr;
  }
  return block;
}

// ---------------------------------------------------------------------------
// Allocation and buffers

bool executor::on(const p::svm_alloc& m) {
  if (duplicate(m.id)) return false;
  p::status_reply reply{m.request, CL_SUCCESS, {}};
  object_table::found context = objects_.find<object_kind::context>(m.context);
  if (!context) {
    reply.status = context.error();
  } else if (m.flags & ~svm_access_flags) {
    // Fine-grained and atomic memory would be shared with a host that is
    // not on this machine: only coarse-grained buffers are offered.
    reply.status = CL_INVALID_VALUE;
  } else if (m.size == 0) {
    reply.status = CL_INVALID_BUFFER_SIZE;
  } else if (m.alignment & (m.alignment - 1)) {
    reply.status = CL_INVALID_VALUE;
  } else if ((reply.status = admit_objects(1, m.size)) != CL_SUCCESS) {
    // Over the session's object or memory quota.
  } else {
    // Memory the client freed earlier may be ready to go by now.
    reclaim_svm();
    cl_context native_context = context->as_context();
    void* pointer = api_.clSVMAlloc(native_context, m.flags, static_cast<size_t>(m.size), m.alignment);
    if (pointer == nullptr) {
      reply.status = CL_MEM_OBJECT_ALLOCATION_FAILURE;
    } else {
      // The block outlives its id while it waits to be freed, and with it
      // the context its memory belongs to.
      api_.clRetainContext(native_context);
      auto* block = new svm_block;
      block->context = native_context;
      block->pointer = pointer;
      block->size = m.size;
      auto entry = object_entry::native(object_kind::svm, block, native_context);
      entry.size = m.size;
      entry.device_bytes = m.size;
      objects_.insert(m.id, entry);
      // The native address, low half then high: a client that places its
      // host block at the same address lets kernels follow pointers stored
      // inside SVM memory (docs/extensions.md, SVM).
      const auto address = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(pointer));
      reply.details = {static_cast<int32_t>(static_cast<uint32_t>(address)),
                       static_cast<int32_t>(static_cast<uint32_t>(address >> 32))};
    }
  }
  if (reply.status != CL_SUCCESS)
    FERRY_DEBUG("session", "session %s: SVM allocation %llu of %llu bytes failed: %s", core_->label.c_str(),
                static_cast<unsigned long long>(m.id), static_cast<unsigned long long>(m.size),
                cl_error_name(reply.status).c_str());
  return answer(reply);
}

cl_mem executor::create_buffer_over_svm(cl_context context, cl_mem_flags flags, uint64_t size, p::object_id svm,
                                        uint64_t offset, cl_int& error) {
  svm_block* block = svm_range(svm, offset, size, error);
  // CL_INVALID_HOST_PTR: the region is no SVM memory of this context.
  if (block == nullptr || block->context != context) {
    error = CL_INVALID_HOST_PTR;
    return nullptr;
  }
  block->buffers.fetch_add(1, std::memory_order_acq_rel);
  cl_mem mem = api_.clCreateBuffer(context, flags | CL_MEM_USE_HOST_PTR, static_cast<size_t>(size), at(block, offset),
                                   &error);
  if (mem == nullptr) {
    block->buffers.fetch_sub(1, std::memory_order_acq_rel);
    return nullptr;
  }
  // The driver may keep the buffer past its release (commands in flight,
  // sub-buffers, images over it): its destruction is what counts.
  cl_int rc = api_.clSetMemObjectDestructorCallback(mem, &svm_buffer_destroyed, block);
  if (rc != CL_SUCCESS) {
    api_.clReleaseMemObject(mem);
    block->buffers.fetch_sub(1, std::memory_order_acq_rel);
    error = rc;
    return nullptr;
  }
  return mem;
}

// ---------------------------------------------------------------------------
// Freeing

void executor::retire_svm(const object_entry& entry) {
  svm_block* block = entry.as_svm();
  // Commands already enqueued may still read or write the memory: a marker
  // behind the last one of each queue of its context says when they are done.
  objects_.for_each([&](p::object_id, object_entry& queue) {
    if (queue.kind != object_kind::queue || queue.handle == nullptr || queue.context != block->context) return;
    cl_event marker = nullptr;
    if (api_.clEnqueueMarkerWithWaitList(queue.as_queue(), 0, nullptr, &marker) == CL_SUCCESS && marker) {
      block->fences.push_back(marker);
      touch(queue.as_queue());
    } else {
      api_.clFinish(queue.as_queue());  // no marker to wait for: wait now
    }
  });
  for (const queue_fence& fence : queue_fences_) {
    if (fence.context != block->context) continue;
    api_.clRetainEvent(fence.marker);
    block->fences.push_back(fence.marker);
  }
  retired_svm_.push_back(block);
}

void executor::fence_released_queue(const object_entry& queue) {
  bool svm_in_context = false;
  objects_.for_each([&](p::object_id, object_entry& entry) {
    if (entry.kind == object_kind::svm && entry.handle && entry.context == queue.context) svm_in_context = true;
  });
  for (const svm_block* block : retired_svm_) svm_in_context = svm_in_context || block->context == queue.context;
  if (!svm_in_context) return;
  // The queue's last commands may use SVM memory that is freed later.
  cl_event marker = nullptr;
  if (api_.clEnqueueMarkerWithWaitList(queue.as_queue(), 0, nullptr, &marker) == CL_SUCCESS && marker)
    queue_fences_.push_back({queue.context, marker});
  else
    api_.clFinish(queue.as_queue());
}

void executor::reclaim_svm() {
  auto done = [&](cl_event event) {
    // An event that cannot be asked counts as running: better a block kept
    // until the session ends than one freed under a command.
    return event_status(api_, event, CL_QUEUED) <= CL_COMPLETE;
  };
  std::erase_if(queue_fences_, [&](const queue_fence& fence) {
    if (!done(fence.marker)) return false;
    api_.clReleaseEvent(fence.marker);
    return true;
  });
  std::erase_if(retired_svm_, [&](svm_block* block) {
    if (block->buffers.load(std::memory_order_acquire) != 0) return false;
    if (!std::all_of(block->fences.begin(), block->fences.end(), done)) return false;
    FERRY_DEBUG("session", "session %s: freeing a released SVM allocation of %llu bytes", core_->label.c_str(),
                static_cast<unsigned long long>(block->size));
    free_svm_block(api_, block);
    return true;
  });
}

void executor::release_retired_svm() {
  for (const queue_fence& fence : queue_fences_) api_.clReleaseEvent(fence.marker);
  queue_fences_.clear();
  for (svm_block* block : retired_svm_) free_svm_block(api_, block);
  retired_svm_.clear();
}

// ---------------------------------------------------------------------------
// Enqueues

bool executor::on(const p::enqueue_svm_read& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  cl_int error;
  const svm_block* block = svm_for(*queue, m.allocation, m.offset, m.size, error);
  if (block == nullptr) return fail(m.header, error);
  return read_to_bulk(m.header, *queue, m.size, [&](uint8_t* staging, cl_event* event) {
    return api_.clEnqueueSVMMemcpy(queue->as_queue(), CL_FALSE, staging, at(block, m.offset),
                                   static_cast<size_t>(m.size), wait_count(), wait_events(), event);
  });
}

bool executor::on(const p::enqueue_svm_write& m) {
  const std::optional<uint64_t> transfer = bulk_transfer(m.header, m.size);
  const object_entry* queue;
  if (step s = prepare_write(m.header, transfer, queue); s != step::go) return s == step::failed;
  cl_int error;
  const svm_block* block = svm_for(*queue, m.allocation, m.offset, m.size, error);
  if (block == nullptr) return fail_write(m.header, transfer, error);
  cl_command_queue q = queue->as_queue();
  uint8_t* target = at(block, m.offset);
  return write_from_bulk(m.header, *queue, m.size, [&](const uint8_t* data, cl_event* event) {
    return api_.clEnqueueSVMMemcpy(q, CL_FALSE, target, data, static_cast<size_t>(m.size), wait_count(),
                                   wait_events(), event);
  });
}

bool executor::on(const p::enqueue_svm_copy& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  cl_int error;
  const svm_block* destination = svm_for(*queue, m.destination, m.destination_offset, m.size, error);
  if (destination == nullptr) return fail(m.header, error);
  const svm_block* source = svm_for(*queue, m.source, m.source_offset, m.size, error);
  if (source == nullptr) return fail(m.header, error);
  // CL_MEM_COPY_OVERLAP if the values specified for dst_ptr, src_ptr and
  // size result in an overlapping copy.
  if (destination == source && m.destination_offset < m.source_offset + m.size &&
      m.source_offset < m.destination_offset + m.size)
    return fail(m.header, CL_MEM_COPY_OVERLAP);
  return enqueue_native(m.header, *queue, [&](cl_event* event) {
    return api_.clEnqueueSVMMemcpy(queue->as_queue(), CL_FALSE, at(destination, m.destination_offset),
                                   at(source, m.source_offset), static_cast<size_t>(m.size), wait_count(),
                                   wait_events(), event);
  });
}

bool executor::on(const p::enqueue_svm_fill& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  cl_int error;
  const svm_block* block = svm_for(*queue, m.allocation, m.offset, m.size, error);
  if (block == nullptr) return fail(m.header, error);
  // CL_INVALID_VALUE if pattern is NULL or if pattern_size is 0 or if
  // pattern_size is not one of {1, 2, 4, 8, 16, 32, 64, 128}, or if size is
  // not a multiple of pattern_size: the native call then writes exactly the
  // checked range.
  size_t pattern_size = m.pattern.size();
  if (pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)) || m.size % pattern_size != 0)
    return fail(m.header, CL_INVALID_VALUE);
  return enqueue_native(m.header, *queue, [&](cl_event* event) {
    return api_.clEnqueueSVMMemFill(queue->as_queue(), at(block, m.offset), m.pattern.data(), pattern_size,
                                    static_cast<size_t>(m.size), wait_count(), wait_events(), event);
  });
}

// ---------------------------------------------------------------------------
// Kernels

bool executor::on(const p::set_kernel_exec_info& m) {
  auto status = [&](cl_int error) { return answer(p::status_reply{m.request, error, {}}); };
  object_table::found kernel = objects_.find<object_kind::kernel>(m.kernel);
  if (!kernel) return status(kernel.error());
  std::vector<void*> pointers;
  pointers.reserve(m.pointers.size());
  for (const p::svm_pointer& pointer : m.pointers) {
    // Each pointer lies inside an allocation of the kernel's context.
    cl_int error;
    const svm_block* block = svm_range(pointer.allocation, pointer.offset, 1, error);
    if (block == nullptr || block->context != kernel->context) return status(CL_INVALID_VALUE);
    pointers.push_back(at(block, pointer.offset));
  }
  void* none = nullptr;  // an empty list still passes a valid address
  return status(api_.clSetKernelExecInfo(kernel->as_kernel(), CL_KERNEL_EXEC_INFO_SVM_PTRS,
                                         pointers.size() * sizeof(void*),
                                         pointers.empty() ? static_cast<void*>(&none) : pointers.data()));
}

}  // namespace ferry::server
