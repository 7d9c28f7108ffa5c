// Rectangles of host memory: the caller's pitched layout on one side, the
// packed rows that cross the network on the other (host data always
// travels packed: rows of `region[0]` bytes, no padding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ferry::client {

enum class pack_direction { pack, unpack };

/// Copies `region` (bytes, rows, slices) between a pitched host layout
/// starting at `host_origin` and a packed one.
inline void copy_rect(uint8_t* packed, uint8_t* host, const size_t* host_origin, const size_t* region,
                      size_t row_pitch, size_t slice_pitch, pack_direction direction) {
  size_t row = region[0];
  for (size_t z = 0; z < region[2]; ++z)
    for (size_t y = 0; y < region[1]; ++y) {
      uint8_t* h = host + (host_origin[2] + z) * slice_pitch + (host_origin[1] + y) * row_pitch + host_origin[0];
      uint8_t* p = packed + (z * region[1] + y) * row;
      if (direction == pack_direction::pack) std::memcpy(p, h, row);
      else std::memcpy(h, p, row);
    }
}

}  // namespace ferry::client
