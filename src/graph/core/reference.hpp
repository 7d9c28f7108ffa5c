// The base of every OpenVX object (vx_reference) and the registry that tells a
// live handle from anything else.
//
// OpenVX hands out pointers; a program may pass a released one, one of another
// type or garbage. Every entry point turns a handle into an object through
// `as<T>()`, which looks the pointer up in the registry before it reads a byte
// of it, so a stale handle gets VX_ERROR_INVALID_REFERENCE rather than a crash.
//
// Counts: `external` is the application's (vxRetainReference/vxRelease*,
// VX_REFERENCE_COUNT); `internal` is what nodes, graphs, ROI children and
// delays hold. An object dies when both are zero (the OpenVX sample's
// external/internal split, style.md "ICD objects and lifetime").
#pragma once

#include <VX/vx.h>

#include <atomic>
#include <mutex>
#include <string>

namespace ferry::graph {
struct context_state;
}

struct _vx_reference {
  _vx_reference(vx_enum type, vx_context context);
  virtual ~_vx_reference();
  _vx_reference(const _vx_reference&) = delete;
  _vx_reference& operator=(const _vx_reference&) = delete;

  const vx_enum type;
  /// The context the object belongs to (the context itself for a context).
  vx_context const context;
  std::atomic<vx_uint32> external{1};
  std::atomic<vx_uint32> internal{0};
  /// vxSetReferenceName; empty until set.
  std::string name;
  /// Virtual objects (images, scalars, ... created in a graph's scope).
  bool is_virtual = false;
  /// The graph a virtual object was created in (null otherwise).
  vx_graph scope = nullptr;
  /// Error objects (type VX_TYPE_ERROR) carry the status vxGetStatus reports.
  vx_status status = VX_SUCCESS;
};

namespace ferry::graph {

/// The one lock of the object model: every entry point that reads or changes
/// objects holds it (graphs are run by vxProcessGraph's caller or a graph's
/// worker, which hold it too). Recursive: a vxu function runs a whole graph.
std::recursive_mutex& api_mutex();

/// True when `handle` is a live reference (registered and not yet destroyed).
bool is_live(const void* handle);
/// A live reference of `type` (VX_TYPE_REFERENCE: any type), or null.
vx_reference find(const void* handle, vx_enum type);
template <class T>
T* as(const void* handle, vx_enum type) {
  return static_cast<T*>(find(handle, type));
}

/// Registers a new object (its count starts at one external reference).
void register_reference(vx_reference ref);

void add_internal(vx_reference ref);
/// Drops one internal reference; destroys the object when none of either kind is left.
void release_internal(vx_reference ref);
/// Drops one external reference; VX_ERROR_INVALID_REFERENCE when there is none.
vx_status release_external(vx_reference ref);

/// Unregisters and deletes `ref` whatever its counts (a context's teardown).
void destroy(vx_reference ref);

/// Writes `*ref` to null after releasing it, as vxRelease* do.
template <class T>
vx_status release_handle(T** handle, vx_enum type) {
  if (handle == nullptr) return VX_ERROR_INVALID_REFERENCE;
  std::lock_guard lock(api_mutex());
  vx_reference ref = find(*handle, type);
  if (ref == nullptr) return VX_ERROR_INVALID_REFERENCE;
  vx_status status = release_external(ref);
  if (status == VX_SUCCESS) *handle = nullptr;
  return status;
}

/// Every live object of `context` (a snapshot, for vxReleaseContext).
void for_each_reference(vx_context context, void (*visit)(vx_reference, void*), void* data);

/// The name of a VX_TYPE_* for log lines ("image", "graph", ...).
const char* type_name(vx_enum type);

}  // namespace ferry::graph
