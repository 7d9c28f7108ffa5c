#include "server/transport/staging.hpp"

#include <sys/sysinfo.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

namespace ferry::server {
namespace {

// Each buffer carries a header in front of the data: its capacity, the
// account it is charged to and how much (see header).
constexpr size_t header_size = 64;

struct header {
  uint64_t capacity;
  staging_account* account;
  uint64_t charged;
};
static_assert(sizeof(header) <= header_size);
// Smaller buffers come from malloc's own free lists quickly enough.
constexpr uint64_t recycle_from = 1u << 20;
// At most this much freed memory is kept.
constexpr uint64_t cache_limit = uint64_t{1} << 30;

struct cache {
  std::mutex mutex;  // guards free_by_size, bytes
  std::multimap<uint64_t, uint8_t*> free_by_size;
  uint64_t bytes = 0;
};

cache& the_cache() {
  static auto* instance = new cache;  // used by callbacks until the process ends
  return *instance;
}

uint64_t capacity_of(uint8_t* data) {
  uint64_t capacity;
  std::memcpy(&capacity, data - header_size, sizeof capacity);
  return capacity;
}

uint8_t* charge(uint8_t* data, staging_account* account, uint64_t size) {
  header h{capacity_of(data), account, account ? size : 0};
  std::memcpy(data - header_size, &h, sizeof h);
  if (account) account->bytes.fetch_add(size, std::memory_order_acq_rel);
  return data;
}

void discharge(uint8_t* data) {
  header h;
  std::memcpy(&h, data - header_size, sizeof h);
  if (h.account) h.account->bytes.fetch_sub(h.charged, std::memory_order_acq_rel);
}

// The machine's memory and swap: more can never be staged. A client announces a
// transfer's size before sending its bytes, so any size up to max_transfer_size
// reaches here. Refusing the impossible ones up front makes every allocator agree:
// glibc's heuristic overcommit returns null for them, while ASan's allocator aborts
// the whole daemon on a request above its own maximum (1 TiB).
uint64_t stageable_bytes() {
  static const uint64_t limit = [] {
    struct sysinfo info {};
    if (::sysinfo(&info) != 0) return UINT64_MAX;
    return (static_cast<uint64_t>(info.totalram) + info.totalswap) * info.mem_unit;
  }();
  return limit;
}

}  // namespace

uint8_t* acquire_staging(uint64_t size, staging_account* account) noexcept {
  if (size == 0) size = 1;
  if (size > stageable_bytes()) return nullptr;
  if (size >= recycle_from) {
    cache& c = the_cache();
    std::lock_guard lock(c.mutex);
    // The smallest kept buffer that fits, if it wastes less than half.
    auto it = c.free_by_size.lower_bound(size);
    if (it != c.free_by_size.end() && it->first / 2 <= size) {
      uint8_t* data = it->second;
      c.bytes -= it->first;
      c.free_by_size.erase(it);
      return charge(data, account, size);
    }
  }
  if (size > UINT64_MAX - header_size) return nullptr;
  void* raw = std::aligned_alloc(header_size, ((size + header_size + header_size - 1) / header_size) * header_size);
  if (raw == nullptr) return nullptr;
  auto* data = static_cast<uint8_t*>(raw) + header_size;
  std::memcpy(static_cast<uint8_t*>(raw), &size, sizeof size);
  return charge(data, account, size);
}

void release_staging(uint8_t* data) noexcept {
  if (data == nullptr) return;
  discharge(data);
  uint64_t capacity = capacity_of(data);
  if (capacity >= recycle_from && capacity <= cache_limit) {
    cache& c = the_cache();
    std::lock_guard lock(c.mutex);
    // Make room by dropping the largest kept buffers first.
    while (c.bytes + capacity > cache_limit && !c.free_by_size.empty()) {
      auto largest = std::prev(c.free_by_size.end());
      c.bytes -= largest->first;
      std::free(largest->second - header_size);
      c.free_by_size.erase(largest);
    }
    try {
      c.free_by_size.emplace(capacity, data);
      c.bytes += capacity;
      return;
    } catch (...) {
      // No memory for the bookkeeping: free the buffer instead.
    }
  }
  std::free(data - header_size);
}

uint64_t cached_staging_bytes() noexcept {
  cache& c = the_cache();
  std::lock_guard lock(c.mutex);
  return c.bytes;
}

}  // namespace ferry::server
