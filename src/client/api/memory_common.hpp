// Checks shared by the buffer, image and SVM entry points: memory flags,
// host access rules, map flags, and the clauses common to every memory
// command.
#pragma once

#include "client/api/entry.hpp"
#include "client/core/objects.hpp"

namespace ferry::client::api {

inline constexpr cl_mem_flags access_flags = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
inline constexpr cl_mem_flags host_access_flags = CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
inline constexpr cl_mem_flags host_ptr_flags = CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;
inline constexpr cl_mem_flags known_flags = access_flags | host_access_flags | host_ptr_flags | CL_MEM_KERNEL_READ_AND_WRITE;

inline bool more_than_one(cl_mem_flags flags, cl_mem_flags group) {
  cl_mem_flags chosen = flags & group;
  return chosen & (chosen - 1);
}

// CL_INVALID_VALUE if values specified in flags are not valid as defined in
// the Memory Flags table.
inline bool valid_flags(cl_mem_flags flags) {
  if (flags & ~known_flags) return false;
  if (more_than_one(flags, access_flags) || more_than_one(flags, host_access_flags)) return false;
  if ((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))) return false;
  return true;
}

// Checks shared by every command on one buffer: queue, buffer, context.
inline cl_int check_queue_and_buffer(cl_command_queue q, cl_mem m) {
  // CL_INVALID_COMMAND_QUEUE if command_queue is not a valid host command-queue.
  FERRY_CHECK_HANDLE(q);
  // CL_INVALID_MEM_OBJECT if buffer is not a valid buffer object.
  FERRY_CHECK_HANDLE(m);
  if (m->is_image()) return CL_INVALID_MEM_OBJECT;
  // CL_INVALID_CONTEXT if the context associated with command_queue and
  // buffer are not the same.
  if (q->context != m->context) return CL_INVALID_CONTEXT;
  return CL_SUCCESS;
}

inline bool in_bounds(const memory* m, size_t offset, size_t size) { return offset <= m->size && size <= m->size - offset; }

enum class host_access { read, write };

// CL_INVALID_OPERATION if the host may not access the buffer this way.
inline bool host_may(const memory* m, host_access how) {
  if (m->flags & CL_MEM_HOST_NO_ACCESS) return false;
  if (how == host_access::read) return !(m->flags & CL_MEM_HOST_WRITE_ONLY);
  return !(m->flags & CL_MEM_HOST_READ_ONLY);
}

// CL_INVALID_VALUE if values specified in map_flags are not valid.
inline bool valid_map_flags(cl_map_flags flags) {
  constexpr cl_map_flags known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
  if (flags & ~known) return false;
  return !((flags & CL_MAP_WRITE_INVALIDATE_REGION) && (flags & (CL_MAP_READ | CL_MAP_WRITE)));
}

}  // namespace ferry::client::api
