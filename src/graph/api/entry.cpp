#include "graph/api/entry.hpp"

#include <cstdarg>
#include <cstdio>

namespace ferry::graph {

vx_status refuse(const char* entry, vx_status status, const char* format, ...) {
  char reason[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(reason, sizeof reason, format, args);
  va_end(args);
  FERRY_DEBUG("vx", "%s: %s (status %d)", entry, reason, status);
  return status;
}

vx_status refuse_logged(vx_reference ref, vx_status status, const char* format, ...) {
  char line[VX_MAX_LOG_MESSAGE_LEN];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  add_log(ref, status, "%s", line);
  return status;
}

}  // namespace ferry::graph
