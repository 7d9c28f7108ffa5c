// Host blocks of SVM allocations at the server's own addresses.
//
// A coarse-grained SVM allocation is two blocks (svm_registry.hpp): the
// native allocation on the server and a host block here. Pointers passed
// through the API are translated, but a pointer the program stores inside
// SVM memory is not: on the server it would point into the client's address
// space. When the host block can take the very address of the native
// allocation, stored pointers mean the same thing on both sides, and a
// kernel may follow them (CL_KERNEL_EXEC_INFO_SVM_PTRS).
//
// Blocks are whole pages mapped with MAP_FIXED_NOREPLACE, so nothing of the
// program is ever overwritten: an address the process already uses cannot be
// taken, and the allocation keeps an ordinary host block instead. Native
// allocations may share a page (small ones on one server), so each page
// counts the blocks on it; a page serves the allocations of one server only
// (two servers may hand out the same address).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ferry::client {

/// Maps the pages covering [address, address + size) for the server named
/// by `server_key`, sharing pages it already holds for that server; returns
/// `address`, or nullptr when some page is taken (by the process or for
/// another server) or the range is unusable. Never replaces a mapping.
uint8_t* map_at_server_address(uint64_t address, size_t size, const void* server_key) noexcept;

/// Gives back what map_at_server_address(address, size, ...) took; pages
/// no block uses any more are unmapped.
void unmap_server_address(const uint8_t* address, size_t size) noexcept;

/// Largest allocation placed at the server's address (larger ones keep an
/// ordinary host block: the page table would outgrow its use).
inline constexpr size_t max_same_address_size = size_t{256} << 20;

}  // namespace ferry::client
