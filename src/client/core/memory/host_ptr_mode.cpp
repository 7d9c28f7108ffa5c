#include "client/core/memory/host_ptr_mode.hpp"

#include <cstdlib>
#include <cstring>

#include "common/log.hpp"

namespace ferry::client {

bool parse_host_ptr_mode(const char* text, host_ptr_mode& out) {
  if (std::strcmp(text, "auto") == 0) out = host_ptr_mode::automatic;
  else if (std::strcmp(text, "coherent") == 0) out = host_ptr_mode::coherent;
  else if (std::strcmp(text, "cached") == 0) out = host_ptr_mode::cached;
  else return false;
  return true;
}

host_ptr_mode configured_host_ptr_mode() {
  static const host_ptr_mode mode = [] {
    host_ptr_mode m = host_ptr_mode::automatic;
    const char* v = std::getenv("FERRY_HOST_PTR");
    if (v && *v && !parse_host_ptr_mode(v, m))
      FERRY_WARN("config", "FERRY_HOST_PTR=%s is not one of auto, coherent, cached; using auto", v);
    return m;
  }();
  return mode;
}

}  // namespace ferry::client
