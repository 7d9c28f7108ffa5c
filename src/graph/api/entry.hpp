// What every OpenVX entry point is made of (style.md, "Errors at the C
// boundary"): it takes the object model's lock, never lets an exception out
// (bad_alloc becomes VX_ERROR_NO_MEMORY), and logs at debug why it refused.
//
// `entry` runs a body returning vx_status; `entry_object` one returning an
// object, where a failure becomes the context's error object for the status
// (vxGetStatus reads it), or null where no context is known.
#pragma once

#include "common/log.hpp"
#include "graph/core/context.hpp"
#include "graph/core/reference.hpp"

#include <VX/vx.h>

#include <mutex>
#include <new>

namespace ferry::graph {

/// Logs at debug "ENTRY: reason" and returns `status`.
vx_status refuse(const char* entry, vx_status status, const char* format, ...) __attribute__((format(printf, 3, 4)));

/// Logs through add_log (the application's log callback) and returns `status`.
vx_status refuse_logged(vx_reference ref, vx_status status, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

template <class Body>
vx_status entry(const char* name, Body&& body) noexcept {
  try {
    std::lock_guard lock(api_mutex());
    return body();
  } catch (const std::bad_alloc&) {
    return refuse(name, VX_ERROR_NO_MEMORY, "out of host memory");
  } catch (...) {
    return refuse(name, VX_FAILURE, "an internal error");
  }
}

/// For bodies returning a value that is not a status (vxGetContext, ...).
template <class T, class Body>
T entry_value(const char* name, T on_failure, Body&& body) noexcept {
  try {
    std::lock_guard lock(api_mutex());
    return body();
  } catch (...) {
    refuse(name, VX_FAILURE, "an internal error");
    return on_failure;
  }
}

/// The context of a live reference (null when `ref` is not one).
inline vx_context context_of(const void* ref) {
  vx_reference found = find(ref, VX_TYPE_REFERENCE);
  if (found == nullptr) return nullptr;
  return found->type == VX_TYPE_CONTEXT ? reinterpret_cast<vx_context>(found) : found->context;
}

/// The context a creator's failure is handed back in (see entry_object):
/// `handle`'s, looked up under the lock, or null when it is no live object.
inline vx_context context_for_failure(const void* handle) {
  std::lock_guard lock(api_mutex());
  return context_of(handle);
}

/// A body that makes an object of type T: returns it, or sets `status` and
/// returns null; a failure is handed back as `context`'s error object.
template <class T, class Body>
T entry_object(const char* name, vx_context context, Body&& body) noexcept {
  vx_status status = VX_SUCCESS;
  try {
    std::lock_guard lock(api_mutex());
    T made = body(status);
    if (made != nullptr) return made;
    if (status == VX_SUCCESS) status = VX_FAILURE;
    if (find(context, VX_TYPE_CONTEXT) == nullptr) return nullptr;
    return error_as<T>(context, status);
  } catch (const std::bad_alloc&) {
    refuse(name, VX_ERROR_NO_MEMORY, "out of host memory");
    std::lock_guard lock(api_mutex());
    return find(context, VX_TYPE_CONTEXT) == nullptr ? nullptr : error_as<T>(context, VX_ERROR_NO_MEMORY);
  } catch (...) {
    refuse(name, VX_FAILURE, "an internal error");
    return nullptr;
  }
}

}  // namespace ferry::graph
