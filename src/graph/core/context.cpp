#include "graph/core/context.hpp"

#include "common/log.hpp"
#include "graph/core/graph.hpp"
#include "graph/core/kernel.hpp"
#include "graph/kernels/kernel_definition.hpp"
#include "graph/runtime/device_set.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <vector>

_vx_context::_vx_context() : _vx_reference(VX_TYPE_CONTEXT, this) {
  immediate_border.mode = VX_BORDER_UNDEFINED;
  next_user_kernel = VX_KERNEL_BASE(VX_ID_USER, 0);
}

_vx_context::~_vx_context() = default;

namespace ferry::graph {
namespace {

// Graphs go first: their runs must end before the objects they use do.
void destroy_graphs(vx_reference ref, void*) {
  if (ref->type == VX_TYPE_GRAPH && is_live(ref)) destroy(ref);
}
void destroy_rest(vx_reference ref, void*) {
  if (is_live(ref)) destroy(ref);
}

}  // namespace

vx_reference error_object(vx_context context, vx_status status) {
  auto found = context->errors.find(status);
  if (found != context->errors.end()) return found->second;
  auto* error = new _vx_reference(VX_TYPE_ERROR, context);
  error->status = status;
  error->external = 0;
  error->internal = 1;  // the context's
  register_reference(error);
  context->errors.emplace(status, error);
  return error;
}

void destroy_context(vx_context context) {
  for_each_reference(context, destroy_graphs, nullptr);
  for_each_reference(context, destroy_rest, nullptr);
  context->errors.clear();
  context->kernels.clear();
  destroy(context);
}

void add_log(vx_reference ref, vx_status status, const char* format, ...) {
  char message[VX_MAX_LOG_MESSAGE_LEN];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  FERRY_DEBUG("vx", "%s (status %d)", message, status);
  vx_context context = nullptr;
  if (ref != nullptr && is_live(ref)) context = ref->type == VX_TYPE_CONTEXT ? reinterpret_cast<vx_context>(ref) : ref->context;
  if (context == nullptr || context->log_callback == nullptr || !context->logging_enabled) return;
  if (context->log_reentrant) {
    context->log_callback(context, ref, status, message);
  } else {
    std::lock_guard lock(context->log_mutex);
    context->log_callback(context, ref, status, message);
  }
}

device_set* open_devices(vx_context context) {
  if (context->devices != nullptr) return context->devices.get();
  if (!context->devices_error.empty()) {
    add_log(context, VX_ERROR_NO_RESOURCES, "no OpenCL devices: %s", context->devices_error.c_str());
    return nullptr;
  }
  std::string error;
  context->devices = device_set::open(std::getenv("FERRY_VX_DEVICES"), error);
  if (context->devices == nullptr) {
    context->devices_error = error;
    FERRY_WARN("vx", "no OpenCL devices for OpenVX graphs: %s", error.c_str());
    add_log(context, VX_ERROR_NO_RESOURCES, "no OpenCL devices: %s", error.c_str());
    return nullptr;
  }
  std::string names;
  for (const auto& d : context->devices->devices()) names += (names.empty() ? "" : ", ") + d.name;
  FERRY_INFO("vx", "graphs run on %s: %s", context->devices->platform_name().c_str(), names.c_str());
  return context->devices.get();
}

}  // namespace ferry::graph
