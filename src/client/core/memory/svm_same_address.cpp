#include "client/core/memory/svm_same_address.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <vector>

namespace ferry::client {
namespace {

struct page_use {
  const void* server_key;
  uint32_t blocks;
};

struct page_table {
  std::mutex mutex;  // guards pages
  std::map<uintptr_t, page_use> pages;
};

page_table& the_table() {
  static auto* table = new page_table;  // lives as long as the process
  return *table;
}

uintptr_t page_size() {
  static const uintptr_t size = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// The pages covering [address, address + size): false when the range wraps
// or leaves the user half of the address space.
bool page_range(uint64_t address, size_t size, uintptr_t& first, uintptr_t& end) {
  const uintptr_t page = page_size();
  if (address == 0 || size == 0 || size > max_same_address_size) return false;
  if (address > UINTPTR_MAX - size - page) return false;
  if (((address + size) >> 47) != 0) return false;  // not a user address on this host
  first = static_cast<uintptr_t>(address) & ~(page - 1);
  end = (static_cast<uintptr_t>(address) + size + page - 1) & ~(page - 1);
  return true;
}

// Maps [start, start + length) at exactly that place, or fails.
bool map_exactly(uintptr_t start, size_t length) {
  void* wanted = reinterpret_cast<void*>(start);
  void* got = ::mmap(wanted, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (got == MAP_FAILED) return false;
  if (got != wanted) {
    // A kernel before 4.17 takes the flag as a hint only.
    ::munmap(got, length);
    return false;
  }
  return true;
}

}  // namespace

uint8_t* map_at_server_address(uint64_t address, size_t size, const void* server_key) noexcept {
  uintptr_t first = 0, end = 0;
  if (!page_range(address, size, first, end)) return nullptr;
  const uintptr_t page = page_size();
  auto& table = the_table();
  std::lock_guard lock(table.mutex);
  try {
    for (uintptr_t p = first; p < end; p += page) {
      auto it = table.pages.find(p);
      if (it != table.pages.end() && it->second.server_key != server_key) return nullptr;
    }
    // Maps the runs of pages not held yet; undoes them all on a failure.
    std::vector<std::pair<uintptr_t, size_t>> mapped;
    auto undo = [&] {
      for (const auto& [start, length] : mapped) ::munmap(reinterpret_cast<void*>(start), length);
    };
    for (uintptr_t p = first; p < end;) {
      if (table.pages.count(p) != 0) {
        p += page;
        continue;
      }
      uintptr_t run_end = p;
      while (run_end < end && table.pages.count(run_end) == 0) run_end += page;
      if (!map_exactly(p, run_end - p)) {
        undo();
        return nullptr;
      }
      mapped.emplace_back(p, run_end - p);
      p = run_end;
    }
    for (uintptr_t p = first; p < end; p += page) {
      auto [it, fresh] = table.pages.try_emplace(p, page_use{server_key, 0});
      ++it->second.blocks;
    }
  } catch (...) {
    return nullptr;  // the table could not grow: nothing was recorded
  }
  return reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(address));
}

void unmap_server_address(const uint8_t* address, size_t size) noexcept {
  uintptr_t first = 0, end = 0;
  if (!page_range(reinterpret_cast<uintptr_t>(address), size, first, end)) return;
  const uintptr_t page = page_size();
  auto& table = the_table();
  std::lock_guard lock(table.mutex);
  for (uintptr_t p = first; p < end; p += page) {
    auto it = table.pages.find(p);
    if (it == table.pages.end()) continue;
    if (--it->second.blocks == 0) {
      ::munmap(reinterpret_cast<void*>(p), page);
      table.pages.erase(it);
    }
  }
}

}  // namespace ferry::client
