// Objects this implementation does not have: delays, pyramids, object arrays
// and tensors (none of the pipelines uses them; docs/graph.md says
// what is left out). Creating one fails with VX_ERROR_NOT_SUPPORTED (an
// error object vxGetStatus reads, and a log line naming the object); since
// none can exist, every handle given to the other functions is not a live
// object of that type: VX_ERROR_INVALID_REFERENCE, as for a released one.
#include "graph/api/entry.hpp"

using namespace ferry::graph;

namespace {

template <class T>
T not_supported(const char* entry_name, const void* owner, const char* object) {
  vx_context context = context_for_failure(owner);
  return entry_object<T>(entry_name, context, [&](vx_status& status) -> T {
    if (context == nullptr) {
      status = VX_ERROR_INVALID_REFERENCE;
      return nullptr;
    }
    add_log(context, VX_ERROR_NOT_SUPPORTED, "%s: Ferry's OpenVX has no %s", entry_name, object);
    status = VX_ERROR_NOT_SUPPORTED;
    return nullptr;
  });
}

}  // namespace

VX_API_ENTRY vx_delay VX_API_CALL vxCreateDelay(vx_context context, vx_reference exemplar, vx_size num_slots) {
  return not_supported<vx_delay>("vxCreateDelay", context, "delays");
}
VX_API_ENTRY vx_status VX_API_CALL vxAgeDelay(vx_delay delay) { return VX_ERROR_INVALID_REFERENCE; }
VX_API_ENTRY vx_reference VX_API_CALL vxGetReferenceFromDelay(vx_delay delay, vx_int32 index) { return nullptr; }
VX_API_ENTRY vx_status VX_API_CALL vxQueryDelay(vx_delay delay, vx_enum attribute, void* ptr, vx_size size) {
  return VX_ERROR_INVALID_REFERENCE;
}
VX_API_ENTRY vx_status VX_API_CALL vxReleaseDelay(vx_delay* delay) { return VX_ERROR_INVALID_REFERENCE; }
VX_API_ENTRY vx_status VX_API_CALL vxRegisterAutoAging(vx_graph graph, vx_delay delay) {
  return VX_ERROR_INVALID_REFERENCE;
}

VX_API_ENTRY vx_pyramid VX_API_CALL vxCreatePyramid(vx_context context, vx_size levels, vx_float32 scale,
                                                    vx_uint32 width, vx_uint32 height, vx_df_image format) {
  return not_supported<vx_pyramid>("vxCreatePyramid", context, "pyramids");
}
VX_API_ENTRY vx_pyramid VX_API_CALL vxCreateVirtualPyramid(vx_graph graph, vx_size levels, vx_float32 scale,
                                                           vx_uint32 width, vx_uint32 height, vx_df_image format) {
  return not_supported<vx_pyramid>("vxCreateVirtualPyramid", graph, "pyramids");
}
VX_API_ENTRY vx_image VX_API_CALL vxGetPyramidLevel(vx_pyramid pyr, vx_uint32 index) { return nullptr; }
VX_API_ENTRY vx_status VX_API_CALL vxQueryPyramid(vx_pyramid pyr, vx_enum attribute, void* ptr, vx_size size) {
  return VX_ERROR_INVALID_REFERENCE;
}
VX_API_ENTRY vx_status VX_API_CALL vxReleasePyramid(vx_pyramid* pyr) { return VX_ERROR_INVALID_REFERENCE; }

VX_API_ENTRY vx_object_array VX_API_CALL vxCreateObjectArray(vx_context context, vx_reference exemplar,
                                                             vx_size count) {
  return not_supported<vx_object_array>("vxCreateObjectArray", context, "object arrays");
}
VX_API_ENTRY vx_object_array VX_API_CALL vxCreateVirtualObjectArray(vx_graph graph, vx_reference exemplar,
                                                                    vx_size count) {
  return not_supported<vx_object_array>("vxCreateVirtualObjectArray", graph, "object arrays");
}
VX_API_ENTRY vx_object_array VX_API_CALL vxCreateImageObjectArrayFromTensor(vx_tensor tensor, const vx_rectangle_t* rect,
                                                                            vx_size array_size, vx_size jump,
                                                                            vx_df_image image_format) {
  return nullptr;  // no tensor can be live
}
VX_API_ENTRY vx_reference VX_API_CALL vxGetObjectArrayItem(vx_object_array arr, vx_uint32 index) { return nullptr; }
VX_API_ENTRY vx_status VX_API_CALL vxQueryObjectArray(vx_object_array arr, vx_enum attribute, void* ptr,
                                                      vx_size size) {
  return VX_ERROR_INVALID_REFERENCE;
}
VX_API_ENTRY vx_status VX_API_CALL vxReleaseObjectArray(vx_object_array* arr) { return VX_ERROR_INVALID_REFERENCE; }

VX_API_ENTRY vx_tensor VX_API_CALL vxCreateTensor(vx_context context, vx_size number_of_dims, const vx_size* dims,
                                                  vx_enum data_type, vx_int8 fixed_point_position) {
  return not_supported<vx_tensor>("vxCreateTensor", context, "tensors");
}
VX_API_ENTRY vx_tensor VX_API_CALL vxCreateTensorFromHandle(vx_context context, vx_size number_of_dims,
                                                            const vx_size* dims, vx_enum data_type,
                                                            vx_int8 fixed_point_position, size_t stride[], void* ptr,
                                                            vx_enum memory_type) {
  return not_supported<vx_tensor>("vxCreateTensorFromHandle", context, "tensors");
}
VX_API_ENTRY vx_tensor VX_API_CALL vxCreateTensorFromView(vx_tensor tensor, vx_size number_of_dims,
                                                          const vx_size* view_start, const vx_size* view_end) {
  return nullptr;  // no tensor can be live
}
VX_API_ENTRY vx_tensor VX_API_CALL vxCreateVirtualTensor(vx_graph graph, vx_size number_of_dims, const vx_size* dims,
                                                         vx_enum data_type, vx_int8 fixed_point_position) {
  return not_supported<vx_tensor>("vxCreateVirtualTensor", graph, "tensors");
}
VX_API_ENTRY vx_status VX_API_CALL vxCopyTensorPatch(vx_tensor tensor, vx_size number_of_dims, const vx_size* view_start,
                                                     const vx_size* view_end, const vx_size* user_stride,
                                                     void* user_ptr, vx_enum usage, vx_enum user_memory_type) {
  return VX_ERROR_INVALID_REFERENCE;
}
VX_API_ENTRY vx_status VX_API_CALL vxMapTensorPatch(vx_tensor tensor, vx_size number_of_dims, const vx_size* view_start,
                                                    const vx_size* view_end, vx_map_id* map_id, vx_size* stride,
                                                    void** ptr, vx_enum usage, vx_enum mem_type) {
  return VX_ERROR_INVALID_REFERENCE;
}
VX_API_ENTRY vx_status VX_API_CALL vxUnmapTensorPatch(vx_tensor tensor, vx_map_id map_id) {
  return VX_ERROR_INVALID_REFERENCE;
}
VX_API_ENTRY vx_status VX_API_CALL vxQueryTensor(vx_tensor tensor, vx_enum attribute, void* ptr, vx_size size) {
  return VX_ERROR_INVALID_REFERENCE;
}
VX_API_ENTRY vx_status VX_API_CALL vxSwapTensorHandle(vx_tensor tensor, void* new_ptr, void** prev_ptr) {
  return VX_ERROR_INVALID_REFERENCE;
}
VX_API_ENTRY vx_status VX_API_CALL vxReleaseTensor(vx_tensor* tensor) { return VX_ERROR_INVALID_REFERENCE; }
