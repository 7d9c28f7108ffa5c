// Page-locked memory for the copies back that travel on the bulk stream.
//
// The bulk stream keeps a copy back's bytes until the client acknowledges
// them (a resumed session sends them again), which can be after the context
// that copied them is gone. Memory from cuMemAllocHost dies with its context;
// these blocks are the process's own pages (mmap) that the driver pins for
// the context (cuMemHostRegister), so they stay readable after it: a block
// that comes back after its pool was retired is simply unmapped.
//
// One pool per context. take() and retire() run with the pool's context
// current (the session's control reader; take() also on the context's
// pre-warming thread, at the same time); blocks come back on any thread
// (the bulk writer, the acknowledging reader), which never calls the driver:
// what the pool cannot keep waits for the next take() to be unregistered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "cuda/server/driver.hpp"

namespace ferry::cuda {

class registered_staging : public std::enable_shared_from_this<registered_staging> {
 public:
  /// `spare_limit`: the most bytes of idle blocks kept for later copies.
  registered_staging(const driver& drv, size_t spare_limit) : drv_(drv), spare_limit_(spare_limit) {}
  ~registered_staging();
  registered_staging(const registered_staging&) = delete;
  registered_staging& operator=(const registered_staging&) = delete;

  /// A block of at least `size` bytes (size > 0), pinned for the current
  /// context; it comes back to the pool when its last owner lets go. Null,
  /// with the driver's error in `rc`, when memory or pinning fails.
  std::shared_ptr<uint8_t> take(size_t size, CUresult& rc);
  /// The context is about to be destroyed (and is current): idle blocks are
  /// unpinned and unmapped now, blocks still out when they come back.
  void retire();

  /// Idle blocks kept, in bytes (for tests).
  size_t spare_bytes() const;
  /// Blocks mapped and not yet unmapped, idle or out (for tests).
  size_t blocks_mapped() const;

 private:
  struct block {
    void* data = nullptr;
    size_t capacity = 0;
  };
  /// A block's owner let go of it.
  void give_back(block b);
  /// Unpins and unmaps `blocks` (the context is current).
  void release(std::vector<block>& blocks);
  static void unmap(block b);

  const driver& drv_;
  const size_t spare_limit_;
  mutable std::mutex mutex_;  // guards what follows
  std::multimap<size_t, void*> spare_;  // idle blocks by capacity
  size_t spare_bytes_ = 0;
  std::vector<block> surplus_;  // came back beyond the limit: unpinned by the next take
  size_t mapped_ = 0;
  bool retired_ = false;
};

}  // namespace ferry::cuda
