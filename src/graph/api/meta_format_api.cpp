// What a user kernel's validator says its outputs will be.
#include "graph/api/attributes.hpp"
#include "graph/api/entry.hpp"
#include "graph/core/meta_format.hpp"

using namespace ferry::graph;

namespace {

// An attribute of another object type than the meta format describes.
vx_status wrong_type(vx_meta_format meta, vx_enum attribute) {
  add_log(meta, VX_ERROR_INVALID_TYPE, "meta format of a %s: attribute 0x%x is of another type",
          type_name(meta->object_type), attribute);
  return VX_ERROR_INVALID_TYPE;
}

}  // namespace

VX_API_ENTRY vx_status VX_API_CALL vxSetMetaFormatAttribute(vx_meta_format meta, vx_enum attribute, const void* ptr,
                                                            vx_size size) {
  return entry("vxSetMetaFormatAttribute", [&]() -> vx_status {
    vx_meta_format m = as<_vx_meta_format>(meta, VX_TYPE_META_FORMAT);
    if (m == nullptr) return VX_ERROR_INVALID_REFERENCE;
    switch (attribute) {
      case VX_IMAGE_FORMAT: return m->object_type == VX_TYPE_IMAGE ? take(ptr, size, m->format) : wrong_type(m, attribute);
      case VX_IMAGE_WIDTH: return m->object_type == VX_TYPE_IMAGE ? take(ptr, size, m->width) : wrong_type(m, attribute);
      case VX_IMAGE_HEIGHT: return m->object_type == VX_TYPE_IMAGE ? take(ptr, size, m->height) : wrong_type(m, attribute);
      case VX_SCALAR_TYPE:
        return m->object_type == VX_TYPE_SCALAR ? take(ptr, size, m->scalar_type) : wrong_type(m, attribute);
      case VX_ARRAY_ITEMTYPE:
        return m->object_type == VX_TYPE_ARRAY ? take(ptr, size, m->item_type) : wrong_type(m, attribute);
      case VX_ARRAY_CAPACITY:
        return m->object_type == VX_TYPE_ARRAY ? take(ptr, size, m->capacity) : wrong_type(m, attribute);
      default:
        return refuse("vxSetMetaFormatAttribute", VX_ERROR_NOT_SUPPORTED, "meta format attribute 0x%x", attribute);
    }
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxSetMetaFormatFromReference(vx_meta_format meta, vx_reference exemplar) {
  return entry("vxSetMetaFormatFromReference", [&]() -> vx_status {
    vx_meta_format m = as<_vx_meta_format>(meta, VX_TYPE_META_FORMAT);
    vx_reference e = find(exemplar, VX_TYPE_REFERENCE);
    if (m == nullptr || e == nullptr) return VX_ERROR_INVALID_REFERENCE;
    if (e->type != m->object_type) return wrong_type(m, VX_TYPE_REFERENCE);
    // Read when the validator returns; the exemplar lives at least that long.
    m->like = e;
    return VX_SUCCESS;
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryMetaFormatAttribute(vx_meta_format meta, vx_enum attribute, void* ptr,
                                                              vx_size size) {
  return entry("vxQueryMetaFormatAttribute", [&]() -> vx_status {
    vx_meta_format m = as<_vx_meta_format>(meta, VX_TYPE_META_FORMAT);
    if (m == nullptr) return VX_ERROR_INVALID_REFERENCE;
    switch (attribute) {
      case VX_IMAGE_FORMAT: return m->object_type == VX_TYPE_IMAGE ? answer(ptr, size, m->format) : wrong_type(m, attribute);
      case VX_IMAGE_WIDTH: return m->object_type == VX_TYPE_IMAGE ? answer(ptr, size, m->width) : wrong_type(m, attribute);
      case VX_IMAGE_HEIGHT: return m->object_type == VX_TYPE_IMAGE ? answer(ptr, size, m->height) : wrong_type(m, attribute);
      case VX_SCALAR_TYPE:
        return m->object_type == VX_TYPE_SCALAR ? answer(ptr, size, m->scalar_type) : wrong_type(m, attribute);
      case VX_ARRAY_ITEMTYPE:
        return m->object_type == VX_TYPE_ARRAY ? answer(ptr, size, m->item_type) : wrong_type(m, attribute);
      case VX_ARRAY_CAPACITY:
        return m->object_type == VX_TYPE_ARRAY ? answer(ptr, size, m->capacity) : wrong_type(m, attribute);
      default:
        return refuse("vxQueryMetaFormatAttribute", VX_ERROR_NOT_SUPPORTED, "meta format attribute 0x%x", attribute);
    }
  });
}
