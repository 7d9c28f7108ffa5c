// The version `ferry --version` prints.
#pragma once

#include <string_view>

namespace ferry::cli {

/// The project version from CMake ("0.1.0").
std::string_view ferry_version();

}  // namespace ferry::cli
