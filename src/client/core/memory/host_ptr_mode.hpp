// FERRY_HOST_PTR: how CL_MEM_USE_HOST_PTR buffers treat their host memory
// (see host_ptr_coherence.hpp).
#pragma once

namespace ferry::client {

enum class host_ptr_mode {
  automatic,  ///< coherent until the program maps, reads or writes one explicitly
  coherent,   ///< coherent whatever the program does
  cached,     ///< never: the host memory is only meaningful under a map
};

/// FERRY_HOST_PTR: "auto" (the default), "coherent" or "cached"; read once.
host_ptr_mode configured_host_ptr_mode();
/// Parses a FERRY_HOST_PTR value; false for anything else.
bool parse_host_ptr_mode(const char* text, host_ptr_mode& out);

}  // namespace ferry::client
