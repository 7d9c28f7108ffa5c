// What the entry points of the data objects (scalar, threshold, convolution,
// matrix, LUT, distribution, array, remap) share: the checks of their copy and
// map calls, the application's access to virtual objects, the context a
// creator reports its failure to, and the byte size of an item type.
//
// Copies and maps move host memory only: the objects keep their data on the
// host, and a graph run stages it to its devices itself.
#pragma once

#include "graph/api/entry.hpp"
#include "graph/core/context.hpp"
#include "graph/core/graph.hpp"
#include "graph/core/scalar.hpp"

#include <cstdarg>
#include <cstdint>
#include <cstdio>

namespace ferry::graph {

/// Whether a virtual object's data is out of the application's reach. The
/// spec makes virtual objects opaque to the application
/// (VX_ERROR_OPTIMIZED_AWAY); during a run of the graph it belongs to, the
/// calls come from that graph's user kernels, which must reach their
/// parameters' data.
inline bool data_hidden(vx_reference ref) {
  if (!ref->is_virtual) return false;
  auto* graph = as<_vx_graph>(ref->scope, VX_TYPE_GRAPH);
  return graph == nullptr || graph->state != VX_GRAPH_STATE_RUNNING;
}

inline vx_status refuse_hidden(const char* entry, vx_reference ref) {
  return refuse_logged(ref, VX_ERROR_OPTIMIZED_AWAY,
                       "%s: the %s is virtual: only its graph's kernels reach its data", entry, type_name(ref->type));
}

/// The usage and memory type of a vxCopy* call: "Only VX_READ_ONLY and
/// VX_WRITE_ONLY are supported", and memory is the host's.
inline vx_status check_copy_mode(const char* entry, vx_reference ref, vx_enum usage, vx_enum user_mem_type) {
  if (usage != VX_READ_ONLY && usage != VX_WRITE_ONLY)
    return refuse_logged(ref, VX_ERROR_INVALID_PARAMETERS, "%s: usage 0x%x is neither VX_READ_ONLY nor VX_WRITE_ONLY",
                         entry, usage);
  if (user_mem_type != VX_MEMORY_TYPE_HOST)
    return refuse_logged(ref, VX_ERROR_INVALID_PARAMETERS, "%s: memory type 0x%x is not VX_MEMORY_TYPE_HOST", entry,
                         user_mem_type);
  return VX_SUCCESS;
}

/// A vxCopy* call's checks after the handle's: the object's data is
/// reachable, the user memory is given, the usage and memory type are ones
/// a copy takes.
inline vx_status check_copy(const char* entry, vx_reference ref, const void* user_ptr, vx_enum usage,
                            vx_enum user_mem_type) {
  if (data_hidden(ref)) return refuse_hidden(entry, ref);
  if (user_ptr == nullptr)
    return refuse_logged(ref, VX_ERROR_INVALID_PARAMETERS, "%s: no user memory (user_ptr is NULL)", entry);
  return check_copy_mode(entry, ref, usage, user_mem_type);
}

/// A vxMap* call's checks after the handle's: reachable data, an access
/// mode of vx_accessor_e, host memory, and no flag but VX_NOGAP_X (which
/// every map here satisfies: items lie back to back).
inline vx_status check_map(const char* entry, vx_reference ref, vx_enum usage, vx_enum mem_type, vx_bitfield flags) {
  if (data_hidden(ref)) return refuse_hidden(entry, ref);
  if (usage != VX_READ_ONLY && usage != VX_WRITE_ONLY && usage != VX_READ_AND_WRITE)
    return refuse_logged(ref, VX_ERROR_INVALID_PARAMETERS, "%s: usage 0x%x is no vx_accessor_e", entry, usage);
  if (mem_type != VX_MEMORY_TYPE_HOST)
    return refuse_logged(ref, VX_ERROR_INVALID_PARAMETERS, "%s: memory type 0x%x is not VX_MEMORY_TYPE_HOST", entry,
                         mem_type);
  if ((flags & ~static_cast<vx_bitfield>(VX_NOGAP_X)) != 0)
    return refuse_logged(ref, VX_ERROR_INVALID_PARAMETERS, "%s: unknown map flags 0x%x", entry, flags);
  return VX_SUCCESS;
}

/// Bytes of one value of `type`: a user struct registered in `context`, or a
/// scalar or struct type of the spec; 0 for anything else.
inline vx_size item_type_size(vx_context context, vx_enum type) {
  auto found = context->user_structs.find(type);
  if (found != context->user_structs.end()) return found->second.size;
  return scalar_size(type);
}

/// Whether `bytes` of storage can be asked of the allocator at all (a
/// std::vector refuses more than PTRDIFF_MAX bytes with length_error, which
/// is no out-of-memory; sizes above it are refused as VX_ERROR_NO_MEMORY first).
inline bool storable(vx_size bytes) { return bytes <= static_cast<vx_size>(PTRDIFF_MAX); }

/// One map id per object for the objects that allow one map at a time (LUT,
/// distribution, array: their `mapped` flag): the object's address, which no
/// other live object shares.
inline vx_map_id single_map_id(const void* object) { return reinterpret_cast<vx_map_id>(object); }

}  // namespace ferry::graph
