// clLinkProgram past its checks: a new program linked from compiled inputs on
// the servers of its devices.
#pragma once

#include <string>
#include <vector>

#include "client/core/programs/build.hpp"

namespace ferry::client {

/// Links `inputs` into a new program of `c` for `devices`. `out` receives
/// the program whenever the servers made one, which a failed link may do (it
/// holds the log); the return value is the call's error code either way.
cl_int link_programs(cl_context c, std::vector<cl_device_id> devices, std::string options,
                     const std::vector<cl_program>& inputs, program_notify notify, void* user_data, cl_program& out);

}  // namespace ferry::client
