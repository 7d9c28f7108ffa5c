// Device memory as both sides of CUDA remoting keep it: ranges by start address.
#pragma once

#include <cstdint>
#include <map>

namespace ferry::cuda {

/// Start address -> size of the allocations (or module globals) of a context.
using address_ranges = std::map<std::uint64_t, std::uint64_t>;

/// Whether [address, address + size) lies inside one range of `ranges`
/// (without overflow, whatever the two numbers).
inline bool within_one(const address_ranges& ranges, std::uint64_t address, std::uint64_t size) {
  auto it = ranges.upper_bound(address);
  if (it == ranges.begin()) return false;
  --it;
  const std::uint64_t offset = address - it->first;
  return offset <= it->second && size <= it->second - offset;
}

}  // namespace ferry::cuda
