// Samplers on every server of their context. Creation is a round trip, so a
// native refusal keeps its code; the server always gets every property, so
// the defaults are the client's.
#pragma once

#include <vector>

#include "client/core/objects.hpp"
#include "client/core/result.hpp"

namespace ferry::client {

/// A sampler's settings as the application gave them (defaults otherwise).
struct sampler_settings {
  cl_bool normalized_coords = CL_TRUE;
  cl_addressing_mode addressing_mode = CL_ADDRESS_CLAMP;
  cl_filter_mode filter_mode = CL_FILTER_NEAREST;
  /// As given, with the terminating 0 (empty when none were).
  std::vector<cl_sampler_properties> properties;
};

result<cl_sampler> create_sampler_on_servers(cl_context c, sampler_settings settings);

}  // namespace ferry::client
