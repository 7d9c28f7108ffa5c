// The lookup table's entry points: creation (UINT8 or INT16 entries),
// attributes, copies, one map at a time, release.
#include "graph/api/attributes.hpp"
#include "graph/api/data_access.hpp"
#include "graph/core/lut.hpp"

#include <cstring>

using namespace ferry::graph;

namespace {

/// "If data_type is VX_TYPE_UINT8, count should not be greater than 256";
/// "If data_type is VX_TYPE_INT16, count should not be greater than 65536".
constexpr vx_size max_uint8_entries = 256;
constexpr vx_size max_int16_entries = 65536;

vx_size entry_size(vx_enum data_type) { return data_type == VX_TYPE_UINT8 ? sizeof(vx_uint8) : sizeof(vx_int16); }

vx_status check_lut(const char* entry, vx_reference owner, vx_enum data_type, vx_size count) {
  // "data_type can only be VX_TYPE_UINT8 or VX_TYPE_INT16"
  if (data_type != VX_TYPE_UINT8 && data_type != VX_TYPE_INT16)
    return refuse_logged(owner, VX_ERROR_INVALID_TYPE, "%s: type 0x%x is neither VX_TYPE_UINT8 nor VX_TYPE_INT16",
                         entry, data_type);
  vx_size most = data_type == VX_TYPE_UINT8 ? max_uint8_entries : max_int16_entries;
  if (count == 0 || count > most)
    return refuse_logged(owner, VX_ERROR_INVALID_PARAMETERS, "%s: %zu entries; a %s table holds 1 to %zu", entry,
                         count, data_type == VX_TYPE_UINT8 ? "VX_TYPE_UINT8" : "VX_TYPE_INT16", most);
  return VX_SUCCESS;
}

vx_lut make_lut(vx_context context, vx_enum data_type, vx_size count) {
  auto* lut = new _vx_lut(context);
  lut->data_type = data_type;
  lut->count = count;
  // "The value of VX_LUT_OFFSET is equal to 0 for data_type = VX_TYPE_UINT8,
  // and (vx_uint32)(count/2) for VX_TYPE_INT16"
  lut->offset = data_type == VX_TYPE_UINT8 ? 0 : static_cast<vx_uint32>(count / 2);
  lut->data.assign(count * entry_size(data_type), 0);
  register_reference(lut);
  return lut;
}

}  // namespace

VX_API_ENTRY vx_lut VX_API_CALL vxCreateLUT(vx_context context, vx_enum data_type, vx_size count) {
  return entry_object<vx_lut>("vxCreateLUT", context, [&](vx_status& status) -> vx_lut {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = refuse("vxCreateLUT", VX_ERROR_INVALID_REFERENCE, "not a context");
      return nullptr;
    }
    status = check_lut("vxCreateLUT", c, data_type, count);
    if (status != VX_SUCCESS) return nullptr;
    return make_lut(c, data_type, count);
  });
}

VX_API_ENTRY vx_lut VX_API_CALL vxCreateVirtualLUT(vx_graph graph, vx_enum data_type, vx_size count) {
  return entry_object<vx_lut>("vxCreateVirtualLUT", context_for_failure(graph), [&](vx_status& status) -> vx_lut {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) {
      status = refuse("vxCreateVirtualLUT", VX_ERROR_INVALID_REFERENCE, "not a graph");
      return nullptr;
    }
    status = check_lut("vxCreateVirtualLUT", g, data_type, count);
    if (status != VX_SUCCESS) return nullptr;
    vx_lut lut = make_lut(g->context, data_type, count);
    lut->is_virtual = true;
    lut->scope = g;
    return lut;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseLUT(vx_lut* lut) { return release_handle(lut, VX_TYPE_LUT); }

VX_API_ENTRY vx_status VX_API_CALL vxQueryLUT(vx_lut lut, vx_enum attribute, void* ptr, vx_size size) {
  return entry("vxQueryLUT", [&]() -> vx_status {
    vx_lut l = as<_vx_lut>(lut, VX_TYPE_LUT);
    if (l == nullptr) return refuse("vxQueryLUT", VX_ERROR_INVALID_REFERENCE, "not a lut");
    switch (attribute) {
      case VX_LUT_TYPE: return answer(ptr, size, l->data_type);
      case VX_LUT_COUNT: return answer(ptr, size, l->count);
      case VX_LUT_SIZE: return answer(ptr, size, static_cast<vx_size>(l->data.size()));
      case VX_LUT_OFFSET: return answer(ptr, size, l->offset);
      default: return refuse_logged(l, VX_ERROR_NOT_SUPPORTED, "vxQueryLUT: no lut attribute 0x%x", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyLUT(vx_lut lut, void* user_ptr, vx_enum usage, vx_enum user_mem_type) {
  return entry("vxCopyLUT", [&]() -> vx_status {
    vx_lut l = as<_vx_lut>(lut, VX_TYPE_LUT);
    if (l == nullptr) return refuse("vxCopyLUT", VX_ERROR_INVALID_REFERENCE, "not a lut");
    vx_status status = check_copy("vxCopyLUT", l, user_ptr, usage, user_mem_type);
    if (status != VX_SUCCESS) return status;
    // "an array with elements of the type corresponding to VX_LUT_TYPE, and
    // with a number of elements equal to ... VX_LUT_COUNT"
    if (usage == VX_READ_ONLY)
      std::memcpy(user_ptr, l->data.data(), l->data.size());
    else
      std::memcpy(l->data.data(), user_ptr, l->data.size());
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxMapLUT(vx_lut lut, vx_map_id* map_id, void** ptr, vx_enum usage,
                                            vx_enum mem_type, vx_bitfield flags) {
  return entry("vxMapLUT", [&]() -> vx_status {
    vx_lut l = as<_vx_lut>(lut, VX_TYPE_LUT);
    if (l == nullptr) return refuse("vxMapLUT", VX_ERROR_INVALID_REFERENCE, "not a lut");
    vx_status status = check_map("vxMapLUT", l, usage, mem_type, flags);
    if (status != VX_SUCCESS) return status;
    if (map_id == nullptr || ptr == nullptr)
      return refuse_logged(l, VX_ERROR_INVALID_PARAMETERS, "vxMapLUT: map_id or ptr is NULL");
    if (l->mapped)
      return refuse_logged(l, VX_ERROR_NO_RESOURCES, "vxMapLUT: the lut is mapped already; unmap it first");
    // The entries themselves: writes land at once, and unmapping has nothing to commit.
    l->mapped = true;
    *map_id = single_map_id(l);
    *ptr = l->data.data();
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxUnmapLUT(vx_lut lut, vx_map_id map_id) {
  return entry("vxUnmapLUT", [&]() -> vx_status {
    vx_lut l = as<_vx_lut>(lut, VX_TYPE_LUT);
    if (l == nullptr) return refuse("vxUnmapLUT", VX_ERROR_INVALID_REFERENCE, "not a lut");
    if (!l->mapped || map_id != single_map_id(l))
      return refuse_logged(l, VX_ERROR_INVALID_PARAMETERS, "vxUnmapLUT: map id %#zx is no live map of this lut",
                           static_cast<size_t>(map_id));
    l->mapped = false;
    return VX_SUCCESS;
  });
}
