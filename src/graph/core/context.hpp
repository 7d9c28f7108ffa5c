// vx_context: the objects' owner, the kernel table, the log and the OpenCL
// devices graphs run on.
#pragma once

#include "graph/core/reference.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ferry::graph {
class device_set;
}

struct _vx_context : _vx_reference {
  _vx_context();
  ~_vx_context() override;

  /// vxRegisterLogCallback: the callback, and whether it may be called from
  /// several threads at once (else calls are serialized).
  vx_log_callback_f log_callback = nullptr;
  vx_bool log_reentrant = vx_false_e;
  std::mutex log_mutex;  // serializes a non-reentrant callback
  /// VX_DIRECTIVE_ENABLE_LOGGING / DISABLE_LOGGING.
  bool logging_enabled = true;
  bool performance_enabled = false;

  /// VX_CONTEXT_IMMEDIATE_BORDER and _POLICY (what vxu functions use).
  vx_border_t immediate_border{};
  vx_enum immediate_border_policy = VX_BORDER_POLICY_DEFAULT_TO_UNDEFINED;

  /// Every kernel known to the context (standard ones registered at creation,
  /// user kernels added later), by enumeration.
  std::map<vx_enum, vx_kernel> kernels;
  /// Next ids for vxAllocateUserKernelId / vxAllocateUserKernelLibraryId.
  vx_enum next_user_kernel = 0;
  vx_enum next_user_library = 1;
  /// vxRegisterUserStruct(WithName): sizes and names by enumeration.
  struct user_struct {
    vx_size size;
    std::string name;
  };
  std::map<vx_enum, user_struct> user_structs;

  /// One error object per status (vxGetStatus of a failed creation).
  std::map<vx_status, vx_reference> errors;

  /// The OpenCL devices graphs run on, opened on first use.
  std::unique_ptr<ferry::graph::device_set> devices;
  /// Why the devices could not be opened (logged once; later graphs fail the same way).
  std::string devices_error;
};

namespace ferry::graph {

/// The context's error object for `status` (its type is VX_TYPE_ERROR).
vx_reference error_object(vx_context context, vx_status status);
template <class T>
T error_as(vx_context context, vx_status status) {
  return reinterpret_cast<T>(error_object(context, status));
}

/// vxAddLogEntry's work: formats and hands the line to the callback (when set
/// and logging is enabled) and to Ferry's log at debug.
void add_log(vx_reference ref, vx_status status, const char* format, ...) __attribute__((format(printf, 3, 4)));

/// vxReleaseContext's last release: every object of the context is destroyed
/// (graphs first, each waiting for its run), then the context.
void destroy_context(vx_context context);

/// The context's OpenCL devices, opened now if they were not: null with a log
/// line when none can be had (no platform, FERRY_VX_DEVICES matches nothing).
device_set* open_devices(vx_context context);

}  // namespace ferry::graph
