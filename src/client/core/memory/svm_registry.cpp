#include "client/core/memory/svm_registry.hpp"

#include <cstdint>
#include <map>
#include <new>

#include "client/core/memory/svm_same_address.hpp"

namespace ferry::client {
namespace {

struct registry {
  std::mutex mutex;  // guards by_start
  /// Allocations by the address of their host block. Blocks of live
  /// allocations never overlap, so the one that may contain an address is
  /// the last that starts at or below it.
  std::map<uintptr_t, svm_ref> by_start;
};

registry& the_registry() {
  static auto* instance = new registry;  // lives as long as the process
  return *instance;
}

}  // namespace

svm_allocation::svm_allocation(uint8_t* host_block, size_t bytes, size_t align, protocol::object_id remote,
                               context* c, svm_placement where)
    : host(host_block), size(bytes), alignment(align), id(remote), owner(c), placement(where) {
  retain_internal(owner);
}

svm_allocation::~svm_allocation() {
  if (placement == svm_placement::server_address) unmap_server_address(host, size);
  else ::operator delete(host, std::align_val_t{alignment});
  release_internal(owner);
}

bool svm_allocation::contains(const void* address, size_t bytes) const {
  auto a = reinterpret_cast<uintptr_t>(address);
  auto start = reinterpret_cast<uintptr_t>(host);
  return a >= start && a - start < size && bytes <= size - (a - start);
}

uint8_t* allocate_svm_block(size_t size, size_t alignment) noexcept {
  return static_cast<uint8_t*>(::operator new(size, std::align_val_t{alignment}, std::nothrow));
}

void register_svm(svm_ref allocation) {
  auto& r = the_registry();
  auto start = reinterpret_cast<uintptr_t>(allocation->host);
  std::lock_guard lock(r.mutex);
  r.by_start[start] = std::move(allocation);
}

svm_ref unregister_svm(const void* address, const context* c) {
  auto& r = the_registry();
  std::lock_guard lock(r.mutex);
  auto it = r.by_start.find(reinterpret_cast<uintptr_t>(address));
  if (it == r.by_start.end() || it->second->owner != c) return nullptr;
  svm_ref found = std::move(it->second);
  r.by_start.erase(it);
  return found;
}

svm_ref find_svm(const void* address, const context* c) {
  auto& r = the_registry();
  auto a = reinterpret_cast<uintptr_t>(address);
  std::lock_guard lock(r.mutex);
  auto it = r.by_start.upper_bound(a);
  if (it == r.by_start.begin()) return nullptr;
  --it;
  const svm_ref& candidate = it->second;
  if (candidate->owner != c || !candidate->contains(address, 1)) return nullptr;
  return candidate;
}

uint64_t svm_allocation_count() {
  auto& r = the_registry();
  std::lock_guard lock(r.mutex);
  return r.by_start.size();
}

bool supports_svm(const context* c) {
  for (const device* d : c->devices)
    if (supports_svm(d)) return true;
  return false;
}

}  // namespace ferry::client
