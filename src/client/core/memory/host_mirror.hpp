// The host side of a CL_MEM_USE_HOST_PTR buffer kept coherent with its
// server copy (see host_ptr_coherence.hpp for when and why).
//
// A mirror holds the application's memory (`host`) and a shadow: the bytes
// the server's copy had when the two last agreed. Comparing them page by
// page finds what the application wrote since, without any help from the
// application or the kernel (no write protection, no signals: a protected
// page would make the application's own read(2) into it fail with EFAULT).
// Coming back, the server's bytes are compared with the shadow the same
// way, so only pages the server changed overwrite the application's, and a
// page the application wrote meanwhile is not lost unless both wrote it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ferry::client {

class host_mirror {
 public:
  /// Granularity of comparison and transfer.
  static constexpr size_t page_size = 4096;
  /// Changed ranges closer than this are sent as one: a write command costs
  /// more than sending a few unchanged pages with it.
  static constexpr size_t merge_gap = 16 * page_size;
  /// At most this many separate writes per push; past it, neighbours merge
  /// regardless of the gap between them.
  static constexpr size_t max_ranges = 32;

  struct range {
    size_t offset;
    size_t size;
  };

  /// Mirrors `size` bytes at `host`, which hold what the server's copy holds
  /// now (its initial contents).
  host_mirror(void* host, size_t size);

  size_t size() const { return size_; }
  const uint8_t* shadow() const { return shadow_.data(); }

  /// The ranges the application changed since the last agreement, with the
  /// shadow updated to match them (the caller sends those ranges of the
  /// host memory to the server before anything else can run there).
  std::vector<range> take_host_changes();

  /// Applies the server's bytes (`server`, all `size()` of them): each page
  /// the server changed since the last agreement is written to the host
  /// memory. They become the shadow by a swap, not a copy: `server` is left
  /// holding the old shadow, good only to be overwritten. Returns the number
  /// of bytes written to the host.
  size_t merge_server_bytes(std::vector<uint8_t>& server);

 private:
  uint8_t* host_;
  size_t size_;
  std::vector<uint8_t> shadow_;
};

/// Merges `ranges` (sorted, disjoint) whose gaps are below `gap`, then, while
/// more than `max_count` remain, merges the pair with the smallest gap.
std::vector<host_mirror::range> coalesce_ranges(std::vector<host_mirror::range> ranges, size_t gap,
                                                size_t max_count);

}  // namespace ferry::client
