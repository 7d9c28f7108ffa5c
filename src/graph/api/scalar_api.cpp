// The scalar's entry points: creation (plain, with a size, virtual), its one
// attribute, copies of its value, release.
#include "graph/api/attributes.hpp"
#include "graph/api/data_access.hpp"
#include "graph/core/scalar.hpp"

#include <cstring>

using namespace ferry::graph;

namespace {

// "Must be greater than VX_TYPE_INVALID and less than or equal to
// VX_TYPE_VENDOR_STRUCT_END. Or must be a vx_enum returned from
// vxRegisterUserStruct."
bool in_scalar_range(vx_enum type) { return type > VX_TYPE_INVALID && type <= VX_TYPE_VENDOR_STRUCT_END; }

vx_scalar make_scalar(vx_context context, vx_enum data_type, vx_size size, const void* ptr) {
  auto* scalar = new _vx_scalar(context);
  scalar->data_type = data_type;
  // A NULL ptr leaves the value zero (the spec gives ptr no requirement).
  scalar->value.assign(size, 0);
  if (ptr != nullptr && size != 0) std::memcpy(scalar->value.data(), ptr, size);
  register_reference(scalar);
  return scalar;
}

// vxCopyScalar and vxCopyScalarWithSize after their size check.
vx_status copy_value(vx_scalar scalar, void* user_ptr, vx_enum usage) {
  if (usage == VX_READ_ONLY)
    std::memcpy(user_ptr, scalar->value.data(), scalar->value.size());
  else
    std::memcpy(scalar->value.data(), user_ptr, scalar->value.size());
  return VX_SUCCESS;
}

}  // namespace

VX_API_ENTRY vx_scalar VX_API_CALL vxCreateScalar(vx_context context, vx_enum data_type, const void* ptr) {
  return entry_object<vx_scalar>("vxCreateScalar", context, [&](vx_status& status) -> vx_scalar {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = refuse("vxCreateScalar", VX_ERROR_INVALID_REFERENCE, "not a context");
      return nullptr;
    }
    vx_size size = item_type_size(c, data_type);
    if (size == 0) {
      status = refuse_logged(c, VX_ERROR_INVALID_TYPE,
                             "vxCreateScalar: 0x%x is no scalar type (a VX_TYPE_* up to VX_TYPE_VENDOR_STRUCT_END or "
                             "a registered user struct)",
                             data_type);
      return nullptr;
    }
    return make_scalar(c, data_type, size, ptr);
  });
}

VX_API_ENTRY vx_scalar VX_API_CALL vxCreateScalarWithSize(vx_context context, vx_enum data_type, const void* ptr,
                                                          vx_size size) {
  return entry_object<vx_scalar>("vxCreateScalarWithSize", context, [&](vx_status& status) -> vx_scalar {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = refuse("vxCreateScalarWithSize", VX_ERROR_INVALID_REFERENCE, "not a context");
      return nullptr;
    }
    if (!in_scalar_range(data_type) && c->user_structs.count(data_type) == 0) {
      status = refuse_logged(c, VX_ERROR_INVALID_TYPE,
                             "vxCreateScalarWithSize: 0x%x is no scalar type (a VX_TYPE_* up to "
                             "VX_TYPE_VENDOR_STRUCT_END or a registered user struct)",
                             data_type);
      return nullptr;
    }
    // A type of known size takes exactly that many bytes; a vendor struct
    // this implementation does not know takes the size given.
    vx_size known = item_type_size(c, data_type);
    if (size == 0 || (known != 0 && size != known)) {
      status = refuse_logged(c, VX_ERROR_INVALID_PARAMETERS,
                             "vxCreateScalarWithSize: size %zu does not fit type 0x%x (of %zu bytes)", size, data_type,
                             known);
      return nullptr;
    }
    return make_scalar(c, data_type, size, ptr);
  });
}

VX_API_ENTRY vx_scalar VX_API_CALL vxCreateVirtualScalar(vx_graph graph, vx_enum data_type) {
  return entry_object<vx_scalar>("vxCreateVirtualScalar", context_for_failure(graph),
                                 [&](vx_status& status) -> vx_scalar {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) {
      status = refuse("vxCreateVirtualScalar", VX_ERROR_INVALID_REFERENCE, "not a graph");
      return nullptr;
    }
    // VX_TYPE_INVALID leaves the type to the graph (a kernel's validator settles it).
    vx_size size = 0;
    if (data_type != VX_TYPE_INVALID) {
      size = item_type_size(g->context, data_type);
      if (size == 0) {
        status = refuse_logged(g, VX_ERROR_INVALID_TYPE, "vxCreateVirtualScalar: 0x%x is no scalar type", data_type);
        return nullptr;
      }
    }
    vx_scalar scalar = make_scalar(g->context, data_type, size, nullptr);
    scalar->is_virtual = true;
    scalar->scope = g;
    return scalar;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseScalar(vx_scalar* scalar) {
  return release_handle(scalar, VX_TYPE_SCALAR);
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryScalar(vx_scalar scalar, vx_enum attribute, void* ptr, vx_size size) {
  return entry("vxQueryScalar", [&]() -> vx_status {
    vx_scalar s = as<_vx_scalar>(scalar, VX_TYPE_SCALAR);
    if (s == nullptr) return refuse("vxQueryScalar", VX_ERROR_INVALID_REFERENCE, "not a scalar");
    switch (attribute) {
      case VX_SCALAR_TYPE: return answer(ptr, size, s->data_type);
      default:
        return refuse_logged(s, VX_ERROR_NOT_SUPPORTED, "vxQueryScalar: no scalar attribute 0x%x", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyScalar(vx_scalar scalar, void* user_ptr, vx_enum usage,
                                                vx_enum user_mem_type) {
  return entry("vxCopyScalar", [&]() -> vx_status {
    vx_scalar s = as<_vx_scalar>(scalar, VX_TYPE_SCALAR);
    if (s == nullptr) return refuse("vxCopyScalar", VX_ERROR_INVALID_REFERENCE, "not a scalar");
    vx_status status = check_copy("vxCopyScalar", s, user_ptr, usage, user_mem_type);
    if (status != VX_SUCCESS) return status;
    // "In the user memory, the scalar is a variable of the type corresponding to VX_SCALAR_TYPE."
    return copy_value(s, user_ptr, usage);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyScalarWithSize(vx_scalar scalar, vx_size size, void* user_ptr,
                                                        vx_enum usage, vx_enum user_mem_type) {
  return entry("vxCopyScalarWithSize", [&]() -> vx_status {
    vx_scalar s = as<_vx_scalar>(scalar, VX_TYPE_SCALAR);
    if (s == nullptr) return refuse("vxCopyScalarWithSize", VX_ERROR_INVALID_REFERENCE, "not a scalar");
    vx_status status = check_copy("vxCopyScalarWithSize", s, user_ptr, usage, user_mem_type);
    if (status != VX_SUCCESS) return status;
    // "size - The size in bytes of the container to which user_ptr points":
    // it holds the scalar's value, no more and no less.
    if (size != s->value.size())
      return refuse_logged(s, VX_ERROR_INVALID_PARAMETERS,
                           "vxCopyScalarWithSize: size %zu is not the scalar's %zu bytes", size, s->value.size());
    return copy_value(s, user_ptr, usage);
  });
}
