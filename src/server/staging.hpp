// Host buffers that transfers pass through (the bytes of a write on their way
// into a native buffer, the bytes of a read on their way to the socket).
//
// Large buffers are recycled: a fresh multi-megabyte allocation is mapped by
// the kernel page by page on first touch, which costs more than copying the
// bytes, so the daemon keeps freed ones (up to a bound) for the next transfer.
#pragma once

#include <cstdint>
#include <memory>

namespace ferry::server {

/// A buffer of at least `size` bytes (64-byte aligned), or nullptr when no
/// memory can be had.
uint8_t* acquire_staging(uint64_t size) noexcept;
/// Returns a buffer from acquire_staging (nullptr is ignored).
void release_staging(uint8_t* data) noexcept;
/// Bytes currently kept for reuse (tests, logs).
uint64_t cached_staging_bytes() noexcept;

struct staging_deleter {
  void operator()(uint8_t* data) const noexcept { release_staging(data); }
};
using staging_ptr = std::unique_ptr<uint8_t[], staging_deleter>;

}  // namespace ferry::server
