// Pinned host memory for the source of a migration: blocks of a context's
// CL_MEM_ALLOC_HOST_PTR buffers, each mapped once for as long as it lives.
//
// Why not map the migrated range itself, as before: NVIDIA's OpenCL runs a
// map for reading only after the kernels of every queue of the context have
// ended (bench/native_overlap.cpp: "map_read_unmap overlapped=no"), so the
// halo exchange of an overlapped stencil waited for the interior's kernel. A
// read into pinned memory runs beside a kernel (read_pinned overlapped=yes,
// 4 MiB in 95 µs on an H200); a read into pageable memory would too, but
// NVIDIA's enqueue of one returns only once its bytes are there, which would
// hold up the session's executor. A buffer the context allocated in host
// memory is what NVIDIA's guide names for pinned memory; on a CPU device
// (PoCL) it is plain memory and the read a memcpy.
//
// Blocks come in power-of-two sizes and are kept for reuse up to a bound:
// creating and mapping one costs far more than a migration's read.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "server/native/api.hpp"
#include "server/native/mapping.hpp"

namespace ferry::server::native {

class pinned_pool : public std::enable_shared_from_this<pinned_pool> {
 public:
  /// Migrations up to this size read into pinned blocks; larger ones map.
  static constexpr size_t largest_block = size_t{64} << 20;
  /// Free blocks kept for reuse, in bytes; beyond it, returned blocks are released.
  static constexpr size_t kept_bytes = size_t{256} << 20;
  static constexpr size_t smallest_block = size_t{64} << 10;

  /// Blocks of `context`, mapped and unmapped on a queue of the pool's own
  /// on `device`: a block's map blocks, and on a queue that holds other work
  /// it would wait behind that (an in-order queue's command that waits for a
  /// user event the caller's thread sets later would never let it through).
  /// Null when no queue can be made.
  static std::shared_ptr<pinned_pool> create(const api& api, cl_context context, cl_device_id device);
  ~pinned_pool();
  pinned_pool(const pinned_pool&) = delete;
  pinned_pool& operator=(const pinned_pool&) = delete;

  /// A block of at least `size` bytes (0 < size <= largest_block) as a
  /// mapping whose unmap() hands it back here. False (and `out` untouched)
  /// when none can be had: the caller maps the range instead.
  bool take(size_t size, mapping& out);
  /// Free blocks kept (tests).
  size_t kept() const;
  /// A block take() gave out, back (unmap() of its mapping calls it).
  void give_back(cl_mem buffer, void* pointer, size_t size);

 private:
  struct block {
    cl_mem buffer = nullptr;
    void* pointer = nullptr;
    size_t size = 0;
  };
  pinned_pool(const api& api, cl_context context, cl_command_queue queue);  // adopts the queue
  void release(const block& b);

  const api& api_;
  cl_context context_;
  cl_command_queue queue_;
  mutable std::mutex mutex_;
  std::vector<block> free_;
  size_t free_bytes_ = 0;
};

}  // namespace ferry::server::native
