// The geometry of images: element sizes of formats, extents in the (x, y, z)
// coordinates that origin and region use, and the host layouts (pitches)
// that image data is packed from and unpacked into.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "client/core/memory/host_rect.hpp"
#include "client/core/objects.hpp"

namespace ferry::client {

/// Bytes per pixel of a format; 0 for a format the spec does not define.
size_t element_size_of(const cl_image_format& format);

bool is_image_type(cl_mem_object_type type);
bool is_array(cl_mem_object_type type);

/// The extent of an image in the (x, y, z) coordinates that origin and
/// region use: array layers count as y for 1D arrays and as z for 2D arrays.
std::array<size_t, 3> extent_of(const cl_image_desc& d);

/// A host layout in the (x, y, z) coordinates: bytes between consecutive y
/// and between consecutive z. For a 1D array, y steps from image to image,
/// which the spec gives as the slice pitch.
struct host_layout {
  size_t y_pitch;
  size_t z_pitch;
};

host_layout layout_of(cl_mem_object_type type, size_t row_pitch, size_t slice_pitch);

/// Applies the spec's pitch defaults for host data covering `region` pixels;
/// false when a given pitch is too small (CL_INVALID_VALUE).
bool resolve_host_pitches(cl_mem_object_type type, const size_t* region, size_t element, size_t& row_pitch,
                          size_t& slice_pitch);

/// Packs (or unpacks into) the caller's layout.
void copy_image_rect(uint8_t* packed, uint8_t* host, const size_t* region, size_t element, host_layout layout,
                     pack_direction direction);

/// The bytes of `region` pixels, packed.
inline size_t packed_size(const size_t* region, size_t element) {
  return region[0] * region[1] * region[2] * element;
}

}  // namespace ferry::client
