// What the servers know of a program: the native program and build info,
// and the binaries (CL_PROGRAM_BINARIES), which the client copies where the
// application's pointers say.
#pragma once

#include <vector>

#include "client/core/objects.hpp"
#include "client/core/result.hpp"

namespace ferry::client {

/// clGetProgramInfo's native answer.
result<protocol::bytes> program_info_from_server(const program* p, cl_uint param);
/// clGetProgramBuildInfo's native answer for `d`.
result<protocol::bytes> program_build_info_from_server(const program* p, const device* d, cl_uint param);
/// The program's binaries, one per device in the order of its devices
/// (empty for a device without one).
result<std::vector<protocol::bytes>> program_binaries(const program* p);

}  // namespace ferry::client
