// clBuildProgram and clCompileProgram past their checks: the request with
// the headers the program includes from this machine, one round trip per
// server, and what the step leaves behind (the devices with an executable,
// the kernel names). The outcome is the native implementation's answer.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "client/core/objects.hpp"

namespace ferry::client {

using program_notify = void(CL_CALLBACK*)(cl_program, void*);

/// The longest options (with header names) a build, compile or link carries.
inline constexpr size_t max_build_options = (size_t{1} << 20) - 4096;

/// Builds `p` for the `listed` devices (none: all of the program's). The
/// notification runs once the compiler ran, on the calling thread.
cl_int build(program* p, const std::vector<cl_device_id>& listed, std::string options, program_notify notify,
             void* user_data);

/// The header programs of a compile, under the names the source includes.
struct compile_headers {
  std::vector<cl_program> programs;
  std::vector<std::string> names;
};

/// Compiles `p` for the `listed` devices (none: all of the program's) with
/// `headers`; notifies as build does.
cl_int compile(program* p, const std::vector<cl_device_id>& listed, std::string options, compile_headers headers,
               program_notify notify, void* user_data);

}  // namespace ferry::client
