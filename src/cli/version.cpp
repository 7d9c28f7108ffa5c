#include "cli/version.hpp"

#ifndef FERRY_VERSION
#define FERRY_VERSION "unknown"
#endif

namespace ferry::cli {

std::string_view ferry_version() { return FERRY_VERSION; }

}  // namespace ferry::cli
