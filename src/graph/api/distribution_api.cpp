// The distribution's entry points: creation, attributes, copies of its bins,
// one map at a time, release.
#include "graph/api/attributes.hpp"
#include "graph/api/data_access.hpp"
#include "graph/core/distribution.hpp"

#include <cstring>

using namespace ferry::graph;

namespace {

// "A 1D Distribution of a consecutive interval [offset, offset+range-1] ...
// divided equally into numBins parts": at least one bin, each at least one value wide.
vx_status check_distribution(const char* entry, vx_reference owner, vx_size bins, vx_uint32 range) {
  if (bins == 0 || range == 0 || bins > range)
    return refuse_logged(owner, VX_ERROR_INVALID_PARAMETERS,
                         "%s: %zu bins over a range of %u values: needs 1 to range bins and a range of at least 1",
                         entry, bins, range);
  return VX_SUCCESS;
}

vx_distribution make_distribution(vx_context context, vx_size bins, vx_int32 offset, vx_uint32 range) {
  auto* distribution = new _vx_distribution(context);
  distribution->bins = bins;
  distribution->offset = offset;
  distribution->range = range;
  distribution->counts.assign(bins, 0);
  register_reference(distribution);
  return distribution;
}

vx_size bytes_of(vx_distribution d) { return d->counts.size() * sizeof(vx_int32); }

}  // namespace

VX_API_ENTRY vx_distribution VX_API_CALL vxCreateDistribution(vx_context context, vx_size numBins, vx_int32 offset,
                                                              vx_uint32 range) {
  return entry_object<vx_distribution>("vxCreateDistribution", context, [&](vx_status& status) -> vx_distribution {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = refuse("vxCreateDistribution", VX_ERROR_INVALID_REFERENCE, "not a context");
      return nullptr;
    }
    status = check_distribution("vxCreateDistribution", c, numBins, range);
    if (status != VX_SUCCESS) return nullptr;
    return make_distribution(c, numBins, offset, range);
  });
}

VX_API_ENTRY vx_distribution VX_API_CALL vxCreateVirtualDistribution(vx_graph graph, vx_size numBins, vx_int32 offset,
                                                                     vx_uint32 range) {
  return entry_object<vx_distribution>("vxCreateVirtualDistribution", context_for_failure(graph),
                                       [&](vx_status& status) -> vx_distribution {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) {
      status = refuse("vxCreateVirtualDistribution", VX_ERROR_INVALID_REFERENCE, "not a graph");
      return nullptr;
    }
    status = check_distribution("vxCreateVirtualDistribution", g, numBins, range);
    if (status != VX_SUCCESS) return nullptr;
    vx_distribution distribution = make_distribution(g->context, numBins, offset, range);
    distribution->is_virtual = true;
    distribution->scope = g;
    return distribution;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseDistribution(vx_distribution* distribution) {
  return release_handle(distribution, VX_TYPE_DISTRIBUTION);
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryDistribution(vx_distribution distribution, vx_enum attribute, void* ptr,
                                                       vx_size size) {
  return entry("vxQueryDistribution", [&]() -> vx_status {
    vx_distribution d = as<_vx_distribution>(distribution, VX_TYPE_DISTRIBUTION);
    if (d == nullptr) return refuse("vxQueryDistribution", VX_ERROR_INVALID_REFERENCE, "not a distribution");
    switch (attribute) {
      case VX_DISTRIBUTION_DIMENSIONS: return answer(ptr, size, vx_size{1});
      case VX_DISTRIBUTION_OFFSET: return answer(ptr, size, d->offset);
      case VX_DISTRIBUTION_RANGE: return answer(ptr, size, d->range);
      case VX_DISTRIBUTION_BINS: return answer(ptr, size, d->bins);
      // "Equal to the range divided by the number of bins. If the range is
      // not a multiple of the number of bins, it is not valid": 0 then.
      case VX_DISTRIBUTION_WINDOW: {
        vx_uint32 window = d->range % d->bins == 0 ? static_cast<vx_uint32>(d->range / d->bins) : 0;
        return answer(ptr, size, window);
      }
      case VX_DISTRIBUTION_SIZE: return answer(ptr, size, bytes_of(d));
      default:
        return refuse_logged(d, VX_ERROR_NOT_SUPPORTED, "vxQueryDistribution: no distribution attribute 0x%x",
                             attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyDistribution(vx_distribution distribution, void* user_ptr, vx_enum usage,
                                                      vx_enum user_mem_type) {
  return entry("vxCopyDistribution", [&]() -> vx_status {
    vx_distribution d = as<_vx_distribution>(distribution, VX_TYPE_DISTRIBUTION);
    if (d == nullptr) return refuse("vxCopyDistribution", VX_ERROR_INVALID_REFERENCE, "not a distribution");
    vx_status status = check_copy("vxCopyDistribution", d, user_ptr, usage, user_mem_type);
    if (status != VX_SUCCESS) return status;
    // "a vx_uint32 array with a number of elements equal to ... VX_DISTRIBUTION_BINS"
    if (usage == VX_READ_ONLY)
      std::memcpy(user_ptr, d->counts.data(), bytes_of(d));
    else
      std::memcpy(d->counts.data(), user_ptr, bytes_of(d));
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxMapDistribution(vx_distribution distribution, vx_map_id* map_id, void** ptr,
                                                     vx_enum usage, vx_enum mem_type, vx_bitfield flags) {
  return entry("vxMapDistribution", [&]() -> vx_status {
    vx_distribution d = as<_vx_distribution>(distribution, VX_TYPE_DISTRIBUTION);
    if (d == nullptr) return refuse("vxMapDistribution", VX_ERROR_INVALID_REFERENCE, "not a distribution");
    vx_status status = check_map("vxMapDistribution", d, usage, mem_type, flags);
    if (status != VX_SUCCESS) return status;
    if (map_id == nullptr || ptr == nullptr)
      return refuse_logged(d, VX_ERROR_INVALID_PARAMETERS, "vxMapDistribution: map_id or ptr is NULL");
    if (d->mapped)
      return refuse_logged(d, VX_ERROR_NO_RESOURCES,
                           "vxMapDistribution: the distribution is mapped already; unmap it first");
    // The bins themselves: writes land at once, and unmapping has nothing to commit.
    d->mapped = true;
    *map_id = single_map_id(d);
    *ptr = d->counts.data();
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxUnmapDistribution(vx_distribution distribution, vx_map_id map_id) {
  return entry("vxUnmapDistribution", [&]() -> vx_status {
    vx_distribution d = as<_vx_distribution>(distribution, VX_TYPE_DISTRIBUTION);
    if (d == nullptr) return refuse("vxUnmapDistribution", VX_ERROR_INVALID_REFERENCE, "not a distribution");
    if (!d->mapped || map_id != single_map_id(d))
      return refuse_logged(d, VX_ERROR_INVALID_PARAMETERS,
                           "vxUnmapDistribution: map id %#zx is no live map of this distribution",
                           static_cast<size_t>(map_id));
    d->mapped = false;
    return VX_SUCCESS;
  });
}
