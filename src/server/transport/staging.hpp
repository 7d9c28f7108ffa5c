// Host buffers that transfers pass through (the bytes of a write on their way
// into a native buffer, the bytes of a read on their way to the socket).
//
// Large buffers are recycled: a fresh multi-megabyte allocation is mapped by
// the kernel page by page on first touch, which costs more than copying the
// bytes, so the daemon keeps freed ones (up to a bound) for the next transfer.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace ferry::server {

/// Bytes of staging one owner (a session) holds: charged by acquire_staging,
/// given back by release_staging on whatever thread frees the buffer. Must
/// outlive every buffer charged to it.
struct staging_account {
  std::atomic<uint64_t> bytes{0};
};

/// A buffer of at least `size` bytes (64-byte aligned), or nullptr when no
/// memory can be had. `size` bytes are charged to `account` (if any) until
/// the buffer is released.
uint8_t* acquire_staging(uint64_t size, staging_account* account = nullptr) noexcept;
/// Returns a buffer from acquire_staging (nullptr is ignored).
void release_staging(uint8_t* data) noexcept;
/// Bytes currently kept for reuse (tests, logs).
uint64_t cached_staging_bytes() noexcept;

struct staging_deleter {
  void operator()(uint8_t* data) const noexcept { release_staging(data); }
};
using staging_ptr = std::unique_ptr<uint8_t[], staging_deleter>;

}  // namespace ferry::server
