// vx_kernel: a function nodes run, with its parameters' signature. Standard
// kernels point at their definition (graph/kernels); user kernels
// (vxAddUserKernel) carry the application's callbacks and run on the host.
#pragma once

#include "graph/core/reference.hpp"

#include <string>
#include <vector>

namespace ferry::graph {
struct kernel_definition;
}

struct _vx_kernel : _vx_reference {
  explicit _vx_kernel(vx_context context) : _vx_reference(VX_TYPE_KERNEL, context) {}

  vx_enum enumeration = 0;
  std::string name;
  struct parameter_info {
    vx_enum direction = VX_INPUT;
    vx_enum type = VX_TYPE_REFERENCE;
    vx_enum state = VX_PARAMETER_STATE_REQUIRED;
    bool defined = false;  // user kernels: vxAddParameterToKernel has set it
  };
  std::vector<parameter_info> parameters;

  /// A standard kernel's definition (null for user kernels).
  const ferry::graph::kernel_definition* definition = nullptr;

  /// User kernels.
  vx_kernel_f function = nullptr;
  vx_kernel_validate_f validate = nullptr;
  vx_kernel_initialize_f initialize = nullptr;
  vx_kernel_deinitialize_f deinitialize = nullptr;
  vx_size local_data_size = 0;
  /// vxFinalizeKernel was called: nodes may be made of it.
  bool finalized = false;
  /// VX_KERNEL_... border attribute (VX_BORDER_UNDEFINED unless set).
  vx_bool enabled = vx_true_e;
};
