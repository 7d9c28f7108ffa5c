// Coarse-grained SVM allocations as the client holds them.
//
// The host and the server have separate address spaces, so an SVM
// allocation is two blocks: the native allocation on the server, named by an
// id, and a host block of the same size here, whose address is the pointer
// the application gets. The host block holds the allocation's contents while
// it is mapped (clEnqueueSVMMap fetches them, clEnqueueSVMUnmap sends them
// back); every other use translates an address inside it into (id, offset).
//
// The registry finds the allocation that contains an address. It is per
// process and thread-safe; an allocation lives as long as the registry or
// a command in flight holds it (shared_ptr), so a host block never goes
// while bulk data is still being written into it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "client/core/objects.hpp"

namespace ferry::client {

/// Where an allocation's host block is.
enum class svm_placement {
  own_block,       ///< anywhere (allocate_svm_block)
  server_address,  ///< at the native allocation's address (svm_same_address.hpp)
};

struct svm_allocation {
  /// Takes the host block (from allocate_svm_block or map_at_server_address,
  /// as `placement` says) and an internal reference to `owner`; the
  /// destructor gives both back.
  svm_allocation(uint8_t* host, size_t size, size_t alignment, protocol::object_id id, context* owner,
                 svm_placement placement);
  ~svm_allocation();
  svm_allocation(const svm_allocation&) = delete;
  svm_allocation& operator=(const svm_allocation&) = delete;

  uint8_t* const host;
  const size_t size;
  const size_t alignment;
  const protocol::object_id id;
  context* const owner;
  /// server_address: pointers stored inside the allocation mean the same on
  /// the server, so a kernel may follow them.
  const svm_placement placement;

  /// Whether [address, address + bytes) lies inside the allocation.
  bool contains(const void* address, size_t bytes) const;
  size_t offset_of(const void* address) const {
    return static_cast<size_t>(static_cast<const uint8_t*>(address) - host);
  }

  /// Regions mapped with clEnqueueSVMMap and not yet unmapped.
  struct mapping {
    void* pointer;
    size_t size;
    cl_map_flags flags;
  };
  std::mutex mappings_mutex;  // guards mappings
  std::vector<mapping> mappings;
};

using svm_ref = std::shared_ptr<svm_allocation>;

/// A host block of `size` bytes aligned to `alignment` (a power of two), or
/// nullptr when there is no memory.
uint8_t* allocate_svm_block(size_t size, size_t alignment) noexcept;

/// Makes `allocation` findable by the addresses of its host block.
void register_svm(svm_ref allocation);
/// Removes the allocation of context `c` that starts at `address` and
/// returns it (nullptr when there is none); never dereferences `address`.
svm_ref unregister_svm(const void* address, const context* c);
/// The allocation of context `c` that contains `address`, or nullptr.
svm_ref find_svm(const void* address, const context* c);
/// Allocations registered (for leak checks).
uint64_t svm_allocation_count();

/// Whether `d` offers coarse-grained SVM.
inline bool supports_svm(const device* d) { return (d->svm_capabilities & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) != 0; }
/// Whether any device of `c` does.
bool supports_svm(const context* c);

}  // namespace ferry::client
