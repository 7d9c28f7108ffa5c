// The SVM enqueues once the entry point's checks have passed: maps and
// unmaps of regions of an allocation's host block, copies between SVM and
// host memory in all four directions, and frees behind a wait list.
#pragma once

#include <cstddef>

#include "client/core/command.hpp"
#include "client/core/memory/svm_registry.hpp"

namespace ferry::client {

/// Maps `size` bytes at `pointer` in `allocation`: their contents land in
/// the host block at the same offset.
cl_int enqueue_svm_map(queue* q, const svm_ref& allocation, blocking mode, cl_map_flags flags, void* pointer,
                       size_t size, cl_uint count, const cl_event* list, cl_event* event_out);

/// Unmaps `pointer` in `allocation`: what the host may have written goes
/// back to the server. A pointer that was not mapped unmaps nothing.
cl_int enqueue_svm_unmap(queue* q, const svm_ref& allocation, void* pointer, cl_uint count, const cl_event* list,
                         cl_event* event_out);

/// One side of an SVM copy: SVM memory (`allocation` set) or host memory.
struct svm_side {
  const svm_ref& allocation;
  const void* pointer;
};

/// Copies `size` bytes from `from` to `to`.
cl_int enqueue_svm_memcpy(queue* q, blocking mode, svm_side to, svm_side from, size_t size, cl_uint count,
                          const cl_event* list, cl_event* event_out);

using svm_free_callback = void(CL_CALLBACK*)(cl_command_queue, cl_uint, void*[], void*);

/// Frees `pointers` of the queue's context once the wait list is done, or
/// has `callback` free them then.
cl_int enqueue_svm_free(queue* q, cl_uint num_pointers, void* pointers[], svm_free_callback callback,
                        void* user_data, cl_uint count, const cl_event* list, cl_event* event_out);

}  // namespace ferry::client
