// Images on every server of their context, and the formats the servers
// offer. Creation is a round trip, so every native refusal (unsupported
// format, sizes beyond the device's limits) reaches the caller with its
// exact code; initial contents travel packed between the request and its
// reply, to the first server, which then holds the only current copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "client/core/memory/buffer_creation.hpp"
#include "client/core/objects.hpp"
#include "client/core/result.hpp"

namespace ferry::client {

/// An image as the checks accepted it.
struct image_request {
  cl_mem_flags flags;
  const cl_image_format* format;
  const cl_image_desc* desc;
  void* host_ptr;
  /// The buffer (or image) it is made from, or NULL.
  cl_mem from;
  /// The initial contents, packed (empty: none).
  std::vector<uint8_t> packed;
  /// Bytes per pixel as the format says (0: unknown to the spec).
  size_t element;
  /// The host pitches of the initial contents, or the given ones.
  size_t row_pitch;
  size_t slice_pitch;
  property_list properties;
};

result<cl_mem> create_image_on_servers(cl_context c, image_request request);

/// The image formats of `type` and `flags` that the context's first server
/// supports (its formats stand for the context's).
result<std::vector<cl_image_format>> supported_image_formats(cl_context c, cl_mem_flags flags,
                                                             cl_mem_object_type type);

}  // namespace ferry::client
