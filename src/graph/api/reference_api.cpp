// What every reference has: its count, type and name, retain and release.
#include "graph/api/attributes.hpp"
#include "graph/api/entry.hpp"

#include <cstring>

using namespace ferry::graph;

VX_API_ENTRY vx_status VX_API_CALL vxQueryReference(vx_reference ref, vx_enum attribute, void* ptr, vx_size size) {
  return entry("vxQueryReference", [&]() -> vx_status {
    vx_reference r = find(ref, VX_TYPE_REFERENCE);
    if (r == nullptr) return VX_ERROR_INVALID_REFERENCE;
    switch (attribute) {
      case VX_REFERENCE_COUNT: return answer(ptr, size, r->external.load());
      case VX_REFERENCE_TYPE: return answer(ptr, size, r->type);
      case VX_REFERENCE_NAME: {
        // A pointer to the name, valid while the reference lives (the spec's vx_char*).
        const vx_char* name = r->name.c_str();
        return answer(ptr, size, name);
      }
      default:
        return refuse("vxQueryReference", VX_ERROR_NOT_SUPPORTED, "no reference attribute 0x%x", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseReference(vx_reference* ref_ptr) {
  if (ref_ptr == nullptr) return VX_ERROR_INVALID_REFERENCE;
  vx_reference ref = nullptr;
  {
    std::lock_guard lock(api_mutex());
    ref = find(*ref_ptr, VX_TYPE_REFERENCE);
  }
  if (ref == nullptr) return VX_ERROR_INVALID_REFERENCE;
  // A context's release ends everything in it.
  if (ref->type == VX_TYPE_CONTEXT) {
    auto* context = reinterpret_cast<vx_context>(ref);
    vx_status status = vxReleaseContext(&context);
    if (status == VX_SUCCESS) *ref_ptr = nullptr;
    return status;
  }
  return release_handle(ref_ptr, VX_TYPE_REFERENCE);
}

VX_API_ENTRY vx_status VX_API_CALL vxRetainReference(vx_reference ref) {
  return entry("vxRetainReference", [&]() -> vx_status {
    vx_reference r = find(ref, VX_TYPE_REFERENCE);
    if (r == nullptr) return VX_ERROR_INVALID_REFERENCE;
    r->external.fetch_add(1);
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSetReferenceName(vx_reference ref, const vx_char* name) {
  return entry("vxSetReferenceName", [&]() -> vx_status {
    vx_reference r = find(ref, VX_TYPE_REFERENCE);
    if (r == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (name == nullptr) {
      r->name.clear();
      return VX_SUCCESS;
    }
    size_t length = strnlen(name, VX_MAX_REFERENCE_NAME);
    if (length == VX_MAX_REFERENCE_NAME) {
      add_log(r, VX_ERROR_INVALID_PARAMETERS, "vxSetReferenceName: the name is longer than %d characters",
              VX_MAX_REFERENCE_NAME - 1);
      return VX_ERROR_INVALID_PARAMETERS;
    }
    r->name.assign(name, length);
    return VX_SUCCESS;
  });
}
