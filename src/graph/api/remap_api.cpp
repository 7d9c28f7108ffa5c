// The remap's entry points: creation, attributes, copies and maps of
// rectangular patches of its table, release.
#include "graph/api/attributes.hpp"
#include "graph/api/data_access.hpp"
#include "graph/core/remap.hpp"

#include <cstring>
#include <map>

using namespace ferry::graph;

namespace {

constexpr vx_size point_size = sizeof(vx_coordinates2df_t);

// Live maps of remap patches, by map id. _vx_remap has no member for them;
// this table stands in, guarded by api_mutex like the objects (every use is
// inside an entry point). Ids are never reused, and an unmap checks the
// remap as well as the id; entries of remaps that died mapped are dropped at
// the next map.
std::map<vx_map_id, vx_remap>& remap_maps() {
  static auto* maps = new std::map<vx_map_id, vx_remap>;  // never destroyed: remaps may die at exit
  return *maps;
}
vx_map_id next_remap_map = 1;

vx_status check_sizes(const char* entry, vx_reference owner, vx_uint32 src_width, vx_uint32 src_height,
                      vx_uint32 dst_width, vx_uint32 dst_height, vx_size& points) {
  if (src_width == 0 || src_height == 0 || dst_width == 0 || dst_height == 0)
    return refuse_logged(owner, VX_ERROR_INVALID_DIMENSION,
                         "%s: source %ux%u to destination %ux%u: every size must be at least 1", entry, src_width,
                         src_height, dst_width, dst_height);
  vx_size bytes = 0;
  points = static_cast<vx_size>(dst_width) * dst_height;  // two 32-bit factors: no overflow in 64 bits
  if (__builtin_mul_overflow(points, point_size, &bytes) || !storable(bytes))
    return refuse_logged(owner, VX_ERROR_NO_MEMORY, "%s: a %ux%u table does not fit in memory", entry, dst_width,
                         dst_height);
  return VX_SUCCESS;
}

vx_remap make_remap(vx_context context, vx_uint32 src_width, vx_uint32 src_height, vx_uint32 dst_width,
                    vx_uint32 dst_height, vx_size points) {
  auto* remap = new _vx_remap(context);
  remap->source_width = src_width;
  remap->source_height = src_height;
  remap->destination_width = dst_width;
  remap->destination_height = dst_height;
  // The spec leaves a new table's points undefined; they start at (0, 0).
  remap->points.assign(points, vx_coordinates2df_t{0.0f, 0.0f});
  register_reference(remap);
  return remap;
}

// "The patch must be specified within the bounds of the remap destination
// dimensions", "(end_x, end_y) gives the coordinate of the bottomright element
// out of the patch": a non-empty rectangle inside the destination.
vx_status check_patch(const char* entry, vx_remap r, const vx_rectangle_t* rect, vx_enum coordinate_type) {
  if (rect == nullptr) return refuse_logged(r, VX_ERROR_INVALID_PARAMETERS, "%s: rect is NULL", entry);
  if (rect->start_x >= rect->end_x || rect->start_y >= rect->end_y || rect->end_x > r->destination_width ||
      rect->end_y > r->destination_height)
    return refuse_logged(r, VX_ERROR_INVALID_PARAMETERS,
                         "%s: patch (%u, %u)-(%u, %u) is empty or outside the %ux%u destination", entry, rect->start_x,
                         rect->start_y, rect->end_x, rect->end_y, r->destination_width, r->destination_height);
  // "It must be VX_TYPE_COORDINATES2DF."
  if (coordinate_type != VX_TYPE_COORDINATES2DF)
    return refuse_logged(r, VX_ERROR_INVALID_PARAMETERS, "%s: coordinate type 0x%x is not VX_TYPE_COORDINATES2DF",
                         entry, coordinate_type);
  return VX_SUCCESS;
}

vx_coordinates2df_t* patch_start(vx_remap r, const vx_rectangle_t& rect) {
  return r->points.data() + static_cast<vx_size>(rect.start_y) * r->destination_width + rect.start_x;
}

}  // namespace

VX_API_ENTRY vx_remap VX_API_CALL vxCreateRemap(vx_context context, vx_uint32 src_width, vx_uint32 src_height,
                                                vx_uint32 dst_width, vx_uint32 dst_height) {
  return entry_object<vx_remap>("vxCreateRemap", context, [&](vx_status& status) -> vx_remap {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = refuse("vxCreateRemap", VX_ERROR_INVALID_REFERENCE, "not a context");
      return nullptr;
    }
    vx_size points = 0;
    status = check_sizes("vxCreateRemap", c, src_width, src_height, dst_width, dst_height, points);
    if (status != VX_SUCCESS) return nullptr;
    return make_remap(c, src_width, src_height, dst_width, dst_height, points);
  });
}

VX_API_ENTRY vx_remap VX_API_CALL vxCreateVirtualRemap(vx_graph graph, vx_uint32 src_width, vx_uint32 src_height,
                                                       vx_uint32 dst_width, vx_uint32 dst_height) {
  return entry_object<vx_remap>("vxCreateVirtualRemap", context_for_failure(graph), [&](vx_status& status) -> vx_remap {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) {
      status = refuse("vxCreateVirtualRemap", VX_ERROR_INVALID_REFERENCE, "not a graph");
      return nullptr;
    }
    vx_size points = 0;
    status = check_sizes("vxCreateVirtualRemap", g, src_width, src_height, dst_width, dst_height, points);
    if (status != VX_SUCCESS) return nullptr;
    vx_remap remap = make_remap(g->context, src_width, src_height, dst_width, dst_height, points);
    remap->is_virtual = true;
    remap->scope = g;
    return remap;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseRemap(vx_remap* table) { return release_handle(table, VX_TYPE_REMAP); }

VX_API_ENTRY vx_status VX_API_CALL vxQueryRemap(vx_remap table, vx_enum attribute, void* ptr, vx_size size) {
  return entry("vxQueryRemap", [&]() -> vx_status {
    vx_remap r = as<_vx_remap>(table, VX_TYPE_REMAP);
    if (r == nullptr) return refuse("vxQueryRemap", VX_ERROR_INVALID_REFERENCE, "not a remap");
    switch (attribute) {
      case VX_REMAP_SOURCE_WIDTH: return answer(ptr, size, r->source_width);
      case VX_REMAP_SOURCE_HEIGHT: return answer(ptr, size, r->source_height);
      case VX_REMAP_DESTINATION_WIDTH: return answer(ptr, size, r->destination_width);
      case VX_REMAP_DESTINATION_HEIGHT: return answer(ptr, size, r->destination_height);
      default: return refuse_logged(r, VX_ERROR_NOT_SUPPORTED, "vxQueryRemap: no remap attribute 0x%x", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyRemapPatch(vx_remap remap, const vx_rectangle_t* rect, vx_size user_stride_y,
                                                    void* user_ptr, vx_enum user_coordinate_type, vx_enum usage,
                                                    vx_enum user_mem_type) {
  return entry("vxCopyRemapPatch", [&]() -> vx_status {
    vx_remap r = as<_vx_remap>(remap, VX_TYPE_REMAP);
    if (r == nullptr) return refuse("vxCopyRemapPatch", VX_ERROR_INVALID_REFERENCE, "not a remap");
    vx_status status = check_copy("vxCopyRemapPatch", r, user_ptr, usage, user_mem_type);
    if (status != VX_SUCCESS) return status;
    status = check_patch("vxCopyRemapPatch", r, rect, user_coordinate_type);
    if (status != VX_SUCCESS) return status;
    // "user_stride_y >= sizeof(<ELEMENT_TYPE>) * (rect->end_x - rect->start_x)"
    vx_size row_bytes = point_size * (rect->end_x - rect->start_x);
    if (user_stride_y < row_bytes)
      return refuse_logged(r, VX_ERROR_INVALID_PARAMETERS,
                           "vxCopyRemapPatch: user_stride_y %zu is less than a row of the patch (%zu bytes)",
                           user_stride_y, row_bytes);
    auto* user = static_cast<uint8_t*>(user_ptr);
    vx_coordinates2df_t* table = patch_start(r, *rect);
    // Row by row: "The potential padding after each line in user memory will stay unchanged."
    for (vx_uint32 row = 0; row < rect->end_y - rect->start_y; ++row) {
      vx_coordinates2df_t* line = table + static_cast<vx_size>(row) * r->destination_width;
      if (usage == VX_READ_ONLY)
        std::memcpy(user + row * user_stride_y, line, row_bytes);
      else
        std::memcpy(line, user + row * user_stride_y, row_bytes);
    }
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxMapRemapPatch(vx_remap remap, const vx_rectangle_t* rect, vx_map_id* map_id,
                                                   vx_size* stride_y, void** ptr, vx_enum coordinate_type,
                                                   vx_enum usage, vx_enum mem_type) {
  return entry("vxMapRemapPatch", [&]() -> vx_status {
    vx_remap r = as<_vx_remap>(remap, VX_TYPE_REMAP);
    if (r == nullptr) return refuse("vxMapRemapPatch", VX_ERROR_INVALID_REFERENCE, "not a remap");
    vx_status status = check_map("vxMapRemapPatch", r, usage, mem_type, 0);
    if (status != VX_SUCCESS) return status;
    if (map_id == nullptr || stride_y == nullptr || ptr == nullptr)
      return refuse_logged(r, VX_ERROR_INVALID_PARAMETERS, "vxMapRemapPatch: map_id, stride_y or ptr is NULL");
    status = check_patch("vxMapRemapPatch", r, rect, coordinate_type);
    if (status != VX_SUCCESS) return status;
    auto& maps = remap_maps();
    for (auto it = maps.begin(); it != maps.end();) it = is_live(it->second) ? std::next(it) : maps.erase(it);
    // The table itself, whose rows are the destination's width apart: writes
    // land at once, and unmapping has nothing to commit. Patches may overlap.
    vx_map_id id = next_remap_map++;
    maps.emplace(id, r);
    *map_id = id;
    *stride_y = point_size * r->destination_width;
    *ptr = patch_start(r, *rect);
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxUnmapRemapPatch(vx_remap remap, vx_map_id map_id) {
  return entry("vxUnmapRemapPatch", [&]() -> vx_status {
    vx_remap r = as<_vx_remap>(remap, VX_TYPE_REMAP);
    if (r == nullptr) return refuse("vxUnmapRemapPatch", VX_ERROR_INVALID_REFERENCE, "not a remap");
    auto& maps = remap_maps();
    auto found = maps.find(map_id);
    if (found == maps.end() || found->second != r)
      return refuse_logged(r, VX_ERROR_INVALID_PARAMETERS, "vxUnmapRemapPatch: map id %zu is no live map of this remap",
                           static_cast<size_t>(map_id));
    maps.erase(found);
    return VX_SUCCESS;
  });
}
