// The array's entry points: creation (any scalar or struct item type, user
// structs included), attributes, adding and truncating items, range copies,
// one map at a time, release.
#include "graph/api/attributes.hpp"
#include "graph/api/data_access.hpp"
#include "graph/core/array.hpp"

#include <algorithm>
#include <cstring>

using namespace ferry::graph;

namespace {

// The item type's size: "Must be greater than VX_TYPE_INVALID and less than
// or equal to VX_TYPE_VENDOR_STRUCT_END. Or must be a vx_enum returned from
// vxRegisterUserStruct." Types in that range with no size known here (vendor
// structs of other implementations) are refused too: an array must know its item size.
vx_status check_item_type(const char* entry, vx_context context, vx_reference owner, vx_enum item_type,
                          vx_size& item_size) {
  item_size = item_type_size(context, item_type);
  if (item_size == 0)
    return refuse_logged(owner, VX_ERROR_INVALID_TYPE,
                         "%s: 0x%x is no item type (a VX_TYPE_* up to VX_TYPE_VENDOR_STRUCT_END or a registered user "
                         "struct)",
                         entry, item_type);
  return VX_SUCCESS;
}

// Storage for `capacity` items, refused when its size overflows.
vx_status check_storage(const char* entry, vx_reference owner, vx_size capacity, vx_size item_size, vx_size& bytes) {
  if (__builtin_mul_overflow(capacity, item_size, &bytes) || !storable(bytes))
    return refuse_logged(owner, VX_ERROR_NO_MEMORY, "%s: %zu items of %zu bytes do not fit in memory", entry,
                         capacity, item_size);
  return VX_SUCCESS;
}

vx_array make_array(vx_context context, vx_enum item_type, vx_size item_size, vx_size capacity, vx_size bytes) {
  auto* array = new _vx_array(context);
  array->item_type = item_type;
  array->item_size = item_size;
  array->capacity = capacity;
  array->count = 0;
  array->items.assign(bytes, 0);
  register_reference(array);
  return array;
}

// The items the storage holds room for: the capacity, unless the item type
// of a virtual array is still unsettled (or its storage not yet made).
vx_size room_for(vx_array a) {
  if (a->item_size == 0) return 0;
  return std::min(a->capacity, a->items.size() / a->item_size);
}

// "0 <= range_start < range_end <= number of items in the array"
vx_status check_range(const char* entry, vx_array a, vx_size range_start, vx_size range_end) {
  if (range_start >= range_end || range_end > std::min(a->count, room_for(a)))
    return refuse_logged(a, VX_ERROR_INVALID_PARAMETERS, "%s: range [%zu, %zu) is not within the array's %zu items",
                         entry, range_start, range_end, a->count);
  return VX_SUCCESS;
}

}  // namespace

VX_API_ENTRY vx_array VX_API_CALL vxCreateArray(vx_context context, vx_enum item_type, vx_size capacity) {
  return entry_object<vx_array>("vxCreateArray", context, [&](vx_status& status) -> vx_array {
    vx_context c = as<_vx_context>(context, VX_TYPE_CONTEXT);
    if (c == nullptr) {
      status = refuse("vxCreateArray", VX_ERROR_INVALID_REFERENCE, "not a context");
      return nullptr;
    }
    vx_size item_size = 0, bytes = 0;
    status = check_item_type("vxCreateArray", c, c, item_type, item_size);
    if (status != VX_SUCCESS) return nullptr;
    // "This value must be greater than zero."
    if (capacity == 0) {
      status = refuse_logged(c, VX_ERROR_INVALID_PARAMETERS, "vxCreateArray: the capacity must be greater than zero");
      return nullptr;
    }
    status = check_storage("vxCreateArray", c, capacity, item_size, bytes);
    if (status != VX_SUCCESS) return nullptr;
    return make_array(c, item_type, item_size, capacity, bytes);
  });
}

VX_API_ENTRY vx_array VX_API_CALL vxCreateVirtualArray(vx_graph graph, vx_enum item_type, vx_size capacity) {
  return entry_object<vx_array>("vxCreateVirtualArray", context_for_failure(graph), [&](vx_status& status) -> vx_array {
    vx_graph g = as<_vx_graph>(graph, VX_TYPE_GRAPH);
    if (g == nullptr) {
      status = refuse("vxCreateVirtualArray", VX_ERROR_INVALID_REFERENCE, "not a graph");
      return nullptr;
    }
    // "This may to set to zero to indicate an unspecified item type", and
    // the capacity may be zero likewise: the graph settles them.
    vx_size item_size = 0, bytes = 0;
    if (item_type != VX_TYPE_INVALID) {
      status = check_item_type("vxCreateVirtualArray", g->context, g, item_type, item_size);
      if (status != VX_SUCCESS) return nullptr;
      status = check_storage("vxCreateVirtualArray", g, capacity, item_size, bytes);
      if (status != VX_SUCCESS) return nullptr;
    }
    vx_array array = make_array(g->context, item_type, item_size, capacity, bytes);
    array->is_virtual = true;
    array->scope = g;
    return array;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseArray(vx_array* arr) { return release_handle(arr, VX_TYPE_ARRAY); }

VX_API_ENTRY vx_status VX_API_CALL vxQueryArray(vx_array arr, vx_enum attribute, void* ptr, vx_size size) {
  return entry("vxQueryArray", [&]() -> vx_status {
    vx_array a = as<_vx_array>(arr, VX_TYPE_ARRAY);
    if (a == nullptr) return refuse("vxQueryArray", VX_ERROR_INVALID_REFERENCE, "not an array");
    switch (attribute) {
      case VX_ARRAY_ITEMTYPE: return answer(ptr, size, a->item_type);
      case VX_ARRAY_NUMITEMS: return answer(ptr, size, a->count);
      case VX_ARRAY_CAPACITY: return answer(ptr, size, a->capacity);
      case VX_ARRAY_ITEMSIZE: return answer(ptr, size, a->item_size);
      default: return refuse_logged(a, VX_ERROR_NOT_SUPPORTED, "vxQueryArray: no array attribute 0x%x", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxAddArrayItems(vx_array arr, vx_size count, const void* ptr, vx_size stride) {
  return entry("vxAddArrayItems", [&]() -> vx_status {
    vx_array a = as<_vx_array>(arr, VX_TYPE_ARRAY);
    if (a == nullptr) return refuse("vxAddArrayItems", VX_ERROR_INVALID_REFERENCE, "not an array");
    if (data_hidden(a)) return refuse_hidden("vxAddArrayItems", a);
    if (count == 0) return VX_SUCCESS;
    if (ptr == nullptr) return refuse_logged(a, VX_ERROR_INVALID_PARAMETERS, "vxAddArrayItems: ptr is NULL");
    // "stride - The number of bytes between the beginning of two consecutive
    // elements": items may not overlap.
    if (stride < a->item_size)
      return refuse_logged(a, VX_ERROR_INVALID_PARAMETERS, "vxAddArrayItems: stride %zu is less than the item size %zu",
                           stride, a->item_size);
    // "By default, the function does not reallocate memory, so if the
    // container is already full ... or it doesn't have enough space, the
    // function returns VX_FAILURE"
    vx_size room = room_for(a);
    if (a->count > room || count > room - a->count)
      return refuse_logged(a, VX_FAILURE, "vxAddArrayItems: %zu more items do not fit (%zu of %zu held)", count,
                           a->count, a->capacity);
    const auto* from = static_cast<const uint8_t*>(ptr);
    uint8_t* to = a->items.data() + a->count * a->item_size;
    for (vx_size i = 0; i < count; ++i) std::memcpy(to + i * a->item_size, from + i * stride, a->item_size);
    a->count += count;
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxTruncateArray(vx_array arr, vx_size new_num_items) {
  return entry("vxTruncateArray", [&]() -> vx_status {
    vx_array a = as<_vx_array>(arr, VX_TYPE_ARRAY);
    if (a == nullptr) return refuse("vxTruncateArray", VX_ERROR_INVALID_REFERENCE, "not an array");
    if (data_hidden(a)) return refuse_hidden("vxTruncateArray", a);
    // VX_ERROR_INVALID_PARAMETERS: "The new_size is greater than the current size."
    if (new_num_items > a->count)
      return refuse_logged(a, VX_ERROR_INVALID_PARAMETERS, "vxTruncateArray: %zu items is more than the %zu held",
                           new_num_items, a->count);
    a->count = new_num_items;
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyArrayRange(vx_array array, vx_size range_start, vx_size range_end,
                                                    vx_size user_stride, void* user_ptr, vx_enum usage,
                                                    vx_enum user_mem_type) {
  return entry("vxCopyArrayRange", [&]() -> vx_status {
    vx_array a = as<_vx_array>(array, VX_TYPE_ARRAY);
    if (a == nullptr) return refuse("vxCopyArrayRange", VX_ERROR_INVALID_REFERENCE, "not an array");
    vx_status status = check_copy("vxCopyArrayRange", a, user_ptr, usage, user_mem_type);
    if (status != VX_SUCCESS) return status;
    status = check_range("vxCopyArrayRange", a, range_start, range_end);
    if (status != VX_SUCCESS) return status;
    // "user_stride >= element size in bytes"
    if (user_stride < a->item_size)
      return refuse_logged(a, VX_ERROR_INVALID_PARAMETERS,
                           "vxCopyArrayRange: user_stride %zu is less than the item size %zu", user_stride,
                           a->item_size);
    auto* user = static_cast<uint8_t*>(user_ptr);
    uint8_t* items = a->items.data() + range_start * a->item_size;
    // Item by item: the gaps between items in user memory stay as they are.
    for (vx_size i = 0; i < range_end - range_start; ++i) {
      if (usage == VX_READ_ONLY)
        std::memcpy(user + i * user_stride, items + i * a->item_size, a->item_size);
      else
        std::memcpy(items + i * a->item_size, user + i * user_stride, a->item_size);
    }
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxMapArrayRange(vx_array array, vx_size range_start, vx_size range_end,
                                                   vx_map_id* map_id, vx_size* stride, void** ptr, vx_enum usage,
                                                   vx_enum mem_type, vx_uint32 flags) {
  return entry("vxMapArrayRange", [&]() -> vx_status {
    vx_array a = as<_vx_array>(array, VX_TYPE_ARRAY);
    if (a == nullptr) return refuse("vxMapArrayRange", VX_ERROR_INVALID_REFERENCE, "not an array");
    vx_status status = check_map("vxMapArrayRange", a, usage, mem_type, flags);
    if (status != VX_SUCCESS) return status;
    if (map_id == nullptr || stride == nullptr || ptr == nullptr)
      return refuse_logged(a, VX_ERROR_INVALID_PARAMETERS, "vxMapArrayRange: map_id, stride or ptr is NULL");
    status = check_range("vxMapArrayRange", a, range_start, range_end);
    if (status != VX_SUCCESS) return status;
    if (a->mapped)
      return refuse_logged(a, VX_ERROR_NO_RESOURCES, "vxMapArrayRange: the array is mapped already; unmap it first");
    // The items themselves, back to back: writes land at once, and unmapping has nothing to commit.
    a->mapped = true;
    *map_id = single_map_id(a);
    *stride = a->item_size;
    *ptr = a->items.data() + range_start * a->item_size;
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxUnmapArrayRange(vx_array array, vx_map_id map_id) {
  return entry("vxUnmapArrayRange", [&]() -> vx_status {
    vx_array a = as<_vx_array>(array, VX_TYPE_ARRAY);
    if (a == nullptr) return refuse("vxUnmapArrayRange", VX_ERROR_INVALID_REFERENCE, "not an array");
    if (!a->mapped || map_id != single_map_id(a))
      return refuse_logged(a, VX_ERROR_INVALID_PARAMETERS,
                           "vxUnmapArrayRange: map id %#zx is no live map of this array", static_cast<size_t>(map_id));
    a->mapped = false;
    return VX_SUCCESS;
  });
}
