// A kernel launch once its arguments passed the checks: the launch message
// (the kernel's arguments whole, the work sizes), the buffers it may write,
// and the command that carries it.
#pragma once

#include <array>
#include <cstddef>

#include "client/core/objects.hpp"

namespace ferry::client {

/// Whether a launch names its work-group size or leaves it to the runtime.
enum class group_size { chosen_by_runtime, given };

/// The work of one launch, every dimension filled (unused ones: offset 0,
/// global and local size 1).
struct ndrange {
  cl_uint work_dim = 1;
  std::array<size_t, 3> offset{0, 0, 0};
  std::array<size_t, 3> global{1, 1, 1};
  std::array<size_t, 3> local{1, 1, 1};
  group_size group = group_size::chosen_by_runtime;
};

/// Enqueues `k` over `range` on `q` after the wait list; its event reports
/// `type` (CL_COMMAND_NDRANGE_KERNEL or CL_COMMAND_TASK).
cl_int launch(queue* q, kernel* k, const ndrange& range, cl_uint count, const cl_event* list, cl_event* event_out,
              cl_command_type type);

}  // namespace ferry::client
