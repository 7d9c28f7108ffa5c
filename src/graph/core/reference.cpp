#include "graph/core/reference.hpp"

#include <unordered_set>
#include <vector>

namespace ferry::graph {
namespace {

// Guards `live` (the registry's own lock, taken inside api_mutex where both are).
std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::unordered_set<const void*>& live() {
  static auto* set = new std::unordered_set<const void*>;  // never destroyed: used at exit
  return *set;
}

}  // namespace

void destroy(vx_reference ref) {
  {
    std::lock_guard lock(registry_mutex());
    live().erase(ref);
  }
  delete ref;
}

std::recursive_mutex& api_mutex() {
  static auto* mutex = new std::recursive_mutex;  // never destroyed: objects may die at exit
  return *mutex;
}

bool is_live(const void* handle) {
  if (handle == nullptr) return false;
  std::lock_guard lock(registry_mutex());
  return live().count(handle) != 0;
}

vx_reference find(const void* handle, vx_enum type) {
  if (!is_live(handle)) return nullptr;
  auto* ref = static_cast<vx_reference>(const_cast<void*>(handle));
  if (ref->type == VX_TYPE_ERROR && type != VX_TYPE_ERROR) return nullptr;
  if (type != VX_TYPE_REFERENCE && ref->type != type) return nullptr;
  return ref;
}

void register_reference(vx_reference ref) {
  std::lock_guard lock(registry_mutex());
  live().insert(ref);
}

void add_internal(vx_reference ref) { ref->internal.fetch_add(1); }

void release_internal(vx_reference ref) {
  // During a context's teardown an object's holder may outlive it.
  if (!is_live(ref)) return;
  if (ref->internal.fetch_sub(1) == 1 && ref->external.load() == 0) destroy(ref);
}

vx_status release_external(vx_reference ref) {
  vx_uint32 count = ref->external.load();
  if (count == 0) return VX_ERROR_INVALID_REFERENCE;
  if (ref->external.fetch_sub(1) == 1 && ref->internal.load() == 0) destroy(ref);
  return VX_SUCCESS;
}

void for_each_reference(vx_context context, void (*visit)(vx_reference, void*), void* data) {
  std::vector<vx_reference> found;
  {
    std::lock_guard lock(registry_mutex());
    for (const void* p : live()) {
      auto* ref = static_cast<vx_reference>(const_cast<void*>(p));
      if (ref->context == context && ref != reinterpret_cast<vx_reference>(context)) found.push_back(ref);
    }
  }
  for (vx_reference ref : found)
    if (is_live(ref)) visit(ref, data);
}

const char* type_name(vx_enum type) {
  switch (type) {
    case VX_TYPE_REFERENCE: return "reference";
    case VX_TYPE_CONTEXT: return "context";
    case VX_TYPE_GRAPH: return "graph";
    case VX_TYPE_NODE: return "node";
    case VX_TYPE_KERNEL: return "kernel";
    case VX_TYPE_PARAMETER: return "parameter";
    case VX_TYPE_DELAY: return "delay";
    case VX_TYPE_LUT: return "lut";
    case VX_TYPE_DISTRIBUTION: return "distribution";
    case VX_TYPE_PYRAMID: return "pyramid";
    case VX_TYPE_THRESHOLD: return "threshold";
    case VX_TYPE_MATRIX: return "matrix";
    case VX_TYPE_CONVOLUTION: return "convolution";
    case VX_TYPE_SCALAR: return "scalar";
    case VX_TYPE_ARRAY: return "array";
    case VX_TYPE_IMAGE: return "image";
    case VX_TYPE_REMAP: return "remap";
    case VX_TYPE_ERROR: return "error";
    case VX_TYPE_META_FORMAT: return "meta format";
    case VX_TYPE_OBJECT_ARRAY: return "object array";
    case VX_TYPE_TENSOR: return "tensor";
    default: return "object";
  }
}

}  // namespace ferry::graph

_vx_reference::_vx_reference(vx_enum t, vx_context c) : type(t), context(c) {}
_vx_reference::~_vx_reference() = default;
