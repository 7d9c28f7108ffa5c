// Shared virtual memory entry points: allocation, freeing, and the SVM
// enqueues (map, unmap, memcpy, fill, migrate, free).
//
// Ferry offers coarse-grained buffer SVM only: host and device would have to
// share coherent memory without maps for the fine-grained kinds, which a
// network cannot give. core/memory/svm_registry.hpp describes the two blocks of an
// allocation (the host block whose address the application holds, the
// native allocation on the server) and how addresses are translated.
#include <cstdint>

#include "client/api/api.hpp"
#include "client/api/entry.hpp"
#include "client/api/memory_common.hpp"
#include "client/core/markers.hpp"
#include "client/core/memory/svm_lifetime.hpp"
#include "client/core/memory/svm_registry.hpp"
#include "client/core/transfers/fills.hpp"
#include "client/core/transfers/svm_transfers.hpp"
#include "common/log.hpp"

namespace ferry::client::api {

namespace {

constexpr cl_svm_mem_flags svm_access_flags = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;

void* svm_alloc(cl_context c, cl_svm_mem_flags flags, size_t size, cl_uint alignment) {
  // clSVMAlloc returns NULL if context is not a valid context,
  if (!is_valid(c)) return nullptr;
  // or no devices in context support SVM,
  if (!supports_svm(c)) return nullptr;
  // or values specified in flags do not follow rules described for supported
  // values in the SVM Memory Flags table,
  if (flags & ~(svm_access_flags | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS)) return nullptr;
  cl_svm_mem_flags access = flags & svm_access_flags;
  if (access & (access - 1)) return nullptr;
  if ((flags & CL_MEM_SVM_ATOMICS) && !(flags & CL_MEM_SVM_FINE_GRAIN_BUFFER)) return nullptr;
  // or CL_MEM_SVM_FINE_GRAIN_BUFFER or CL_MEM_SVM_ATOMICS is specified in
  // flags and these are not supported by at least one device in context (no
  // Ferry device supports them),
  if (flags & (CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS)) return nullptr;
  // or size is 0 or > CL_DEVICE_MAX_MEM_ALLOC_SIZE value for any device in context,
  if (size == 0) return nullptr;
  for (const device* d : c->devices)
    if (size > d->max_mem_alloc_size) return nullptr;
  // or alignment is not a power of two or the OpenCL implementation cannot
  // support the specified alignment for at least one device in context.
  if ((alignment & (alignment - 1)) || alignment > largest_type_size) return nullptr;
  // (Ferry) SVM allocations live on one server: a context that spans several
  // has none to offer.
  if (c->spans_servers()) return nullptr;
  return allocate_svm(c, access ? flags : flags | CL_MEM_READ_WRITE, size);
}

// Checks shared by the SVM enqueues.
cl_int check_svm_queue(cl_command_queue q) {
  // CL_INVALID_COMMAND_QUEUE if command_queue is not a valid host command-queue.
  FERRY_CHECK_HANDLE(q);
  // CL_INVALID_OPERATION if the device associated with command_queue does not support SVM.
  if (!supports_svm(q->device)) return CL_INVALID_OPERATION;
  return CL_SUCCESS;
}

cl_int svm_map(cl_command_queue q, cl_bool blocking_map, cl_map_flags flags, void* pointer, size_t size,
               cl_uint count, const cl_event* list, cl_event* event_out) {
  if (cl_int code = check_svm_queue(q); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if svm_ptr is NULL.
  if (pointer == nullptr) return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if size is 0 or if values specified in map_flags are not valid.
  if (size == 0 || !valid_map_flags(flags)) return CL_INVALID_VALUE;
  // (Ferry) ... or if the region is not inside one SVM allocation of the
  // queue's context: the host has no other memory that Ferry could map.
  svm_ref allocation = find_svm(pointer, q->context);
  if (!allocation || !allocation->contains(pointer, size)) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;

  return enqueue_svm_map(q, allocation, blocking_map ? blocking::yes : blocking::no, flags, pointer, size, count, list,
                         event_out);
}

cl_int svm_unmap(cl_command_queue q, void* pointer, cl_uint count, const cl_event* list, cl_event* event_out) {
  if (cl_int code = check_svm_queue(q); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if svm_ptr is NULL.
  if (pointer == nullptr) return CL_INVALID_VALUE;
  // (Ferry) ... or if it is in no SVM allocation of the queue's context.
  svm_ref allocation = find_svm(pointer, q->context);
  if (!allocation) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  return enqueue_svm_unmap(q, allocation, pointer, count, list, event_out);
}

// Whether [a, a + size) and [b, b + size) overlap (without overflowing).
bool overlapping(const void* a, const void* b, size_t size) {
  auto x = reinterpret_cast<uintptr_t>(a);
  auto y = reinterpret_cast<uintptr_t>(b);
  return x < y ? y - x < size : x - y < size;
}

cl_int svm_memcpy(cl_command_queue q, cl_bool blocking_copy, void* destination, const void* source, size_t size,
                  cl_uint count, const cl_event* list, cl_event* event_out) {
  if (cl_int code = check_svm_queue(q); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if dst_ptr or src_ptr is NULL (PoCL also refuses a size of 0).
  if (destination == nullptr || source == nullptr || size == 0) return CL_INVALID_VALUE;
  // Each side is SVM memory of the queue's context or host memory; (Ferry)
  // CL_INVALID_VALUE for a region that starts in an allocation and runs past
  // its end.
  svm_ref to = find_svm(destination, q->context);
  svm_ref from = find_svm(source, q->context);
  if ((to && !to->contains(destination, size)) || (from && !from->contains(source, size))) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  // CL_MEM_COPY_OVERLAP if the values specified for dst_ptr, src_ptr and size
  // result in an overlapping copy.
  if (overlapping(destination, source, size)) return CL_MEM_COPY_OVERLAP;

  return enqueue_svm_memcpy(q, blocking_copy ? blocking::yes : blocking::no, {to, destination}, {from, source}, size,
                            count, list, event_out);
}

cl_int svm_fill(cl_command_queue q, void* pointer, const void* pattern, size_t pattern_size, size_t size,
                cl_uint count, const cl_event* list, cl_event* event_out) {
  if (cl_int code = check_svm_queue(q); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if svm_ptr is NULL.
  if (pointer == nullptr) return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if pattern is NULL or if pattern_size is 0 or if
  // pattern_size is not one of { 1, 2, 4, 8, 16, 32, 64, 128 }.
  if (pattern == nullptr || pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)))
    return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if svm_ptr is not aligned to pattern_size bytes.
  if (reinterpret_cast<uintptr_t>(pointer) % pattern_size != 0) return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if size is not a multiple of pattern_size (PoCL also
  // refuses a size of 0).
  if (size == 0 || size % pattern_size != 0) return CL_INVALID_VALUE;
  // (Ferry) CL_INVALID_VALUE if the region is not inside one SVM allocation
  // of the queue's context: host memory cannot be filled on the server.
  svm_ref allocation = find_svm(pointer, q->context);
  if (!allocation || !allocation->contains(pointer, size)) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  return enqueue_svm_fill(q, *allocation, pointer, pattern, pattern_size, size, count, list, event_out);
}

cl_int svm_free_enqueue(cl_command_queue q, cl_uint num_pointers, void* pointers[], svm_free_callback callback,
                        void* user_data, cl_uint count, const cl_event* list, cl_event* event_out) {
  if (cl_int code = check_svm_queue(q); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if num_svm_pointers is 0 and svm_pointers is non-NULL,
  // or if svm_pointers is NULL and num_svm_pointers is not 0.
  if ((num_pointers == 0) != (pointers == nullptr)) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  return enqueue_svm_free(q, num_pointers, pointers, callback, user_data, count, list, event_out);
}

cl_int svm_migrate(cl_command_queue q, cl_uint num_pointers, const void** pointers, const size_t* sizes,
                   cl_mem_migration_flags flags, cl_uint count, const cl_event* list, cl_event* event_out) {
  if (cl_int code = check_svm_queue(q); code != CL_SUCCESS) return code;
  // CL_INVALID_VALUE if num_svm_pointers is zero or svm_pointers is NULL.
  if (num_pointers == 0 || pointers == nullptr) return CL_INVALID_VALUE;
  // CL_INVALID_VALUE if sizes[i] is non-zero and the range [svm_pointers[i],
  // svm_pointers[i] + sizes[i]) is not contained within an existing
  // clSVMAlloc allocation; (Ferry) likewise a pointer with size 0 that lies
  // in no allocation.
  for (cl_uint i = 0; i < num_pointers; ++i) {
    if (pointers[i] == nullptr) return CL_INVALID_VALUE;
    svm_ref allocation = find_svm(pointers[i], q->context);
    size_t size = sizes ? sizes[i] : 0;
    if (!allocation || (size != 0 && !allocation->contains(pointers[i], size))) return CL_INVALID_VALUE;
  }
  // CL_INVALID_VALUE if flags is not 0 or any of the values described in the table.
  if (flags & ~(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)) return CL_INVALID_VALUE;
  if (cl_int code = check_wait_list(q, count, list); code != CL_SUCCESS) return code;
  // One server holds all of a context's memory: there is nowhere to move it,
  // and the command only orders.
  return enqueue_sync(q, sync_kind::marker, CL_COMMAND_SVM_MIGRATE_MEM, count, list, event_out, blocking::no,
                      pending_reads::implied);
}

}  // namespace

void* CL_API_CALL clSVMAlloc(cl_context context, cl_svm_mem_flags flags, size_t size, cl_uint alignment) {
  clear_explanations();
  void* pointer = nullptr;
  try {
    pointer = svm_alloc(context, flags, size, alignment);
  } catch (...) {
  }
  // No error code to log: the arguments tell which of the spec's reasons it is.
  if (pointer == nullptr)
    FERRY_DEBUG("api", "clSVMAlloc: NULL (context %p, flags 0x%llx, size %zu, alignment %u)",
                static_cast<void*>(context), static_cast<unsigned long long>(flags), size, alignment);
  return pointer;
}

void CL_API_CALL clSVMFree(cl_context context, void* svm_pointer) {
  try {
    // If a NULL pointer is passed in svm_pointer, no action occurs. Anything
    // but the pointer of an allocation of `context` is undefined; Ferry
    // ignores it.
    free_svm(context, svm_pointer);
  } catch (...) {
  }
}

cl_int CL_API_CALL clEnqueueSVMFree(cl_command_queue command_queue, cl_uint num_svm_pointers, void* svm_pointers[],
                                    void(CL_CALLBACK* pfn_free_func)(cl_command_queue queue,
                                                                     cl_uint num_svm_pointers,
                                                                     void* svm_pointers[], void* user_data),
                                    void* user_data, cl_uint num_events_in_wait_list,
                                    const cl_event* event_wait_list, cl_event* event) {
  return guarded(__func__, [&] {
    return svm_free_enqueue(command_queue, num_svm_pointers, svm_pointers, pfn_free_func, user_data,
                            num_events_in_wait_list, event_wait_list, event);
  });
}

cl_int CL_API_CALL clEnqueueSVMMemcpy(cl_command_queue command_queue, cl_bool blocking_copy, void* dst_ptr,
                                      const void* src_ptr, size_t size, cl_uint num_events_in_wait_list,
                                      const cl_event* event_wait_list, cl_event* event) {
  return guarded(__func__, [&] {
    return svm_memcpy(command_queue, blocking_copy, dst_ptr, src_ptr, size, num_events_in_wait_list,
                      event_wait_list, event);
  });
}

cl_int CL_API_CALL clEnqueueSVMMemFill(cl_command_queue command_queue, void* svm_ptr, const void* pattern,
                                       size_t pattern_size, size_t size, cl_uint num_events_in_wait_list,
                                       const cl_event* event_wait_list, cl_event* event) {
  return guarded(__func__, [&] {
    return svm_fill(command_queue, svm_ptr, pattern, pattern_size, size, num_events_in_wait_list, event_wait_list,
                    event);
  });
}

cl_int CL_API_CALL clEnqueueSVMMap(cl_command_queue command_queue, cl_bool blocking_map, cl_map_flags flags,
                                   void* svm_ptr, size_t size, cl_uint num_events_in_wait_list,
                                   const cl_event* event_wait_list, cl_event* event) {
  return guarded(__func__, [&] {
    return svm_map(command_queue, blocking_map, flags, svm_ptr, size, num_events_in_wait_list, event_wait_list,
                   event);
  });
}

cl_int CL_API_CALL clEnqueueSVMUnmap(cl_command_queue command_queue, void* svm_ptr, cl_uint num_events_in_wait_list,
                                     const cl_event* event_wait_list, cl_event* event) {
  return guarded(__func__, [&] {
    return svm_unmap(command_queue, svm_ptr, num_events_in_wait_list, event_wait_list, event);
  });
}

cl_int CL_API_CALL clEnqueueSVMMigrateMem(cl_command_queue command_queue, cl_uint num_svm_pointers,
                                          const void** svm_pointers, const size_t* sizes,
                                          cl_mem_migration_flags flags, cl_uint num_events_in_wait_list,
                                          const cl_event* event_wait_list, cl_event* event) {
  return guarded(__func__, [&] {
    return svm_migrate(command_queue, num_svm_pointers, svm_pointers, sizes, flags, num_events_in_wait_list,
                       event_wait_list, event);
  });
}

}  // namespace ferry::client::api
