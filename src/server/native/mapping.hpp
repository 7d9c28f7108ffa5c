// A range of a native buffer mapped into the daemon's memory, so that a
// migration sends straight from it (source) or receives straight into it
// (destination) instead of copying through staging. On a CPU device the map
// is the buffer's own memory; on a GPU it is pinned host memory that the
// driver moves with DMA.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <memory>
#include <utility>

#include "server/native/api.hpp"

namespace ferry::server::native {

class pinned_pool;

struct mapping {
  cl_command_queue queue = nullptr;  // retained: the queue the unmap goes on
  cl_mem buffer = nullptr;           // retained
  void* pointer = nullptr;           // valid once the map's event has completed
  /// Instead of a map: a block of pinned memory (pinned_pool.hpp) that a
  /// read filled; unmap() gives it back to its pool. `buffer` is the pool's.
  std::shared_ptr<pinned_pool> pool;
  size_t pool_block = 0;

  explicit operator bool() const { return pointer != nullptr; }
  uint8_t* bytes() const { return static_cast<uint8_t*>(pointer); }
};

/// Enqueues a non-blocking map of [offset, offset + size) on `queue` behind
/// the wait list and retains the queue and buffer for the unmap. On failure
/// the mapping stays empty and the error is returned.
cl_int map(const api& api, cl_command_queue queue, cl_mem buffer, cl_map_flags flags, size_t offset, size_t size,
           cl_uint wait_count, const cl_event* waits, cl_event* mapped, mapping& out);

/// Enqueues the unmap behind the wait list (the map's event at least, on a
/// queue that may run out of order), flushes, and drops the references; the
/// mapping is empty afterwards. `done` (may be null) receives the unmap's
/// event. A pinned block goes back to its pool at once, with no event (the
/// wait list is ignored: the read that filled it has ended). Does nothing for
/// an empty mapping.
cl_int unmap(const api& api, mapping& m, cl_uint wait_count, const cl_event* waits, cl_event* done);

}  // namespace ferry::server::native
