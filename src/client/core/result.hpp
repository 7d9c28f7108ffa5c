// `result<T>` lives in common/ so that net/ can return one without including
// core/; the client's code keeps naming it as its own.
#pragma once

#include "common/result.hpp"

namespace ferry::client {
using ferry::error_code;
using ferry::fail;
using ferry::result;
}  // namespace ferry::client
