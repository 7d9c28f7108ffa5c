// The loader variables that make a process see the Ferry platform.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli/setup/environment.hpp"
#include "cli/setup/install_layout.hpp"

namespace ferry::cli {

using variable_list = std::vector<std::pair<std::string, std::string>>;

/// OCL_ICD_VENDORS (read by Debian's ocl-icd) and OCL_ICD_FILENAMES (read by the Khronos
/// loader), pointing at this tree's Ferry driver; empty when FERRY_KEEP_ICD_ENV=1 in `env`,
/// so a user can point the loader elsewhere (for example at etc/OpenCL/vendors-all).
variable_list icd_loader_variables(const environment& env, const install_layout& layout);

/// What makes a process load Ferry's libcuda.so.1 instead of NVIDIA's driver:
/// LD_LIBRARY_PATH with <lib>/ferry-cuda first (GCC's libgomp and cuda-bindings
/// dlopen "libcuda.so.1", numba-cuda "libcuda.so" first; both are there) and
/// NUMBA_CUDA_DRIVER naming the library, which numba-cuda reads before searching.
variable_list cuda_driver_variables(const environment& env, const install_layout& layout);

/// Sets the variables in this process, before its first OpenCL call.
void set_in_process(const variable_list& variables);

}  // namespace ferry::cli
