/* OpenVX 1.3 core API: the functions of Ferry's libopenvx.
 * Written from the OpenVX 1.3 specification: every name, return type and
 * parameter type is the specification's, so programs built against the
 * Khronos headers build against these unchanged and link against Ferry. */
#ifndef _OPENVX_API_H_
#define _OPENVX_API_H_

#include <VX/vx_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Context ------------------------------------------------------------ */

/// Creates the top-level context that owns every other OpenVX object.
VX_API_ENTRY vx_context VX_API_CALL vxCreateContext(void);

/// Drops the application's reference to a context and zeroes *context.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseContext(vx_context *context);

/// Returns the context that a reference belongs to.
VX_API_ENTRY vx_context VX_API_CALL vxGetContext(vx_reference reference);

/// Reads a context attribute (vx_context_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryContext(vx_context context, vx_enum attribute, void *ptr, vx_size size);

/// Writes a settable context attribute from ptr.
VX_API_ENTRY vx_status VX_API_CALL vxSetContextAttribute(vx_context context, vx_enum attribute, const void *ptr, vx_size size);

/// Passes an implementation hint (vx_hint_e), with optional data, about a reference.
VX_API_ENTRY vx_status VX_API_CALL vxHint(vx_reference reference, vx_enum hint, const void *data, vx_size data_size);

/// Applies a directive (vx_directive_e) to a reference.
VX_API_ENTRY vx_status VX_API_CALL vxDirective(vx_reference reference, vx_enum directive);

/// Returns the error status a reference was created with (VX_SUCCESS when valid).
VX_API_ENTRY vx_status VX_API_CALL vxGetStatus(vx_reference reference);

/// Registers an application struct of the given size and returns its new type enum.
VX_API_ENTRY vx_enum VX_API_CALL vxRegisterUserStruct(vx_context context, vx_size size);

/// Registers an application struct under a name and returns its new type enum
/// (added by the later 1.3.x headers).
VX_API_ENTRY vx_enum VX_API_CALL vxRegisterUserStructWithName(vx_context context, vx_size size, const vx_char *type_name);

/// Copies the name registered for a user struct type into type_name
/// (added by the later 1.3.x headers).
VX_API_ENTRY vx_status VX_API_CALL vxGetUserStructNameByEnum(vx_context context, vx_enum user_struct_type, vx_char *type_name, vx_size name_size);

/// Looks up the type enum of a user struct registered under type_name
/// (added by the later 1.3.x headers).
VX_API_ENTRY vx_status VX_API_CALL vxGetUserStructEnumByName(vx_context context, const vx_char *type_name, vx_enum *user_struct_type);

/// Hands out a fresh kernel enum from the VX_ID_USER range.
VX_API_ENTRY vx_status VX_API_CALL vxAllocateUserKernelId(vx_context context, vx_enum *pKernelEnumId);

/// Hands out a fresh user kernel library id (1..255).
VX_API_ENTRY vx_status VX_API_CALL vxAllocateUserKernelLibraryId(vx_context context, vx_enum *pLibraryId);

/// Chooses the target that later immediate-mode (vxu) calls run on.
VX_API_ENTRY vx_status VX_API_CALL vxSetImmediateModeTarget(vx_context context, vx_enum target_enum, const char *target_string);

/* ---- Image -------------------------------------------------------------- */

/// Creates an image of the given size and format.
VX_API_ENTRY vx_image VX_API_CALL vxCreateImage(vx_context context, vx_uint32 width, vx_uint32 height, vx_df_image color);

/// Creates an image that views a rectangle of another image's pixels.
VX_API_ENTRY vx_image VX_API_CALL vxCreateImageFromROI(vx_image img, const vx_rectangle_t *rect);

/// Creates a read-only image whose pixels all hold one value.
VX_API_ENTRY vx_image VX_API_CALL vxCreateUniformImage(vx_context context, vx_uint32 width, vx_uint32 height, vx_df_image color, const vx_pixel_value_t *value);

/// Creates a graph-scoped image whose size or format may be left open.
VX_API_ENTRY vx_image VX_API_CALL vxCreateVirtualImage(vx_graph graph, vx_uint32 width, vx_uint32 height, vx_df_image color);

/// Creates an image over planes the application allocated itself.
VX_API_ENTRY vx_image VX_API_CALL vxCreateImageFromHandle(vx_context context, vx_df_image color, const vx_imagepatch_addressing_t addrs[], void *const ptrs[], vx_enum memory_type);

/// Replaces the plane pointers of a handle image and returns the old ones.
VX_API_ENTRY vx_status VX_API_CALL vxSwapImageHandle(vx_image image, void *const new_ptrs[], void *prev_ptrs[], vx_size num_planes);

/// Reads an image attribute (vx_image_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryImage(vx_image image, vx_enum attribute, void *ptr, vx_size size);

/// Writes a settable image attribute from ptr.
VX_API_ENTRY vx_status VX_API_CALL vxSetImageAttribute(vx_image image, vx_enum attribute, const void *ptr, vx_size size);

/// Sets every pixel of an image to one value.
VX_API_ENTRY vx_status VX_API_CALL vxSetImagePixelValues(vx_image image, const vx_pixel_value_t *pixel_value);

/// Drops a reference to an image and zeroes *image.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseImage(vx_image *image);

/// Returns the address of the index-th pixel of a mapped patch.
VX_API_ENTRY void * VX_API_CALL vxFormatImagePatchAddress1d(void *ptr, vx_uint32 index, const vx_imagepatch_addressing_t *addr);

/// Returns the address of pixel (x, y) of a mapped patch.
VX_API_ENTRY void * VX_API_CALL vxFormatImagePatchAddress2d(void *ptr, vx_uint32 x, vx_uint32 y, const vx_imagepatch_addressing_t *addr);

/// Stores an image's valid region in rect.
VX_API_ENTRY vx_status VX_API_CALL vxGetValidRegionImage(vx_image image, vx_rectangle_t *rect);

/// Copies a rectangle of one image plane to or from application memory.
VX_API_ENTRY vx_status VX_API_CALL vxCopyImagePatch(vx_image image, const vx_rectangle_t *image_rect, vx_uint32 image_plane_index, const vx_imagepatch_addressing_t *user_addr, void *user_ptr, vx_enum usage, vx_enum user_mem_type);

/// Maps a rectangle of one image plane for direct access.
VX_API_ENTRY vx_status VX_API_CALL vxMapImagePatch(vx_image image, const vx_rectangle_t *rect, vx_uint32 plane_index, vx_map_id *map_id, vx_imagepatch_addressing_t *addr, void **ptr, vx_enum usage, vx_enum mem_type, vx_uint32 flags);

/// Ends a vxMapImagePatch mapping and commits any writes.
VX_API_ENTRY vx_status VX_API_CALL vxUnmapImagePatch(vx_image image, vx_map_id map_id);

/// Creates an image that views one whole-plane channel of a multi-planar image.
VX_API_ENTRY vx_image VX_API_CALL vxCreateImageFromChannel(vx_image img, vx_enum channel);

/// Sets an image's valid region (NULL: the whole image).
VX_API_ENTRY vx_status VX_API_CALL vxSetImageValidRectangle(vx_image image, const vx_rectangle_t *rect);

/* ---- Kernel loading and user kernels ------------------------------------ */

/// Registers publish/unpublish functions under a module name for vxLoadKernels.
VX_API_ENTRY vx_status VX_API_CALL vxRegisterKernelLibrary(vx_context context, const vx_char *module, vx_publish_kernels_f publish, vx_unpublish_kernels_f unpublish);

/// Loads a kernel module into a context and publishes its kernels.
VX_API_ENTRY vx_status VX_API_CALL vxLoadKernels(vx_context context, const vx_char *module);

/// Unpublishes the kernels a module added and unloads it.
VX_API_ENTRY vx_status VX_API_CALL vxUnloadKernels(vx_context context, const vx_char *module);

/// Finds a kernel by its dotted name, e.g. "org.khronos.openvx.sobel_3x3".
VX_API_ENTRY vx_kernel VX_API_CALL vxGetKernelByName(vx_context context, const vx_char *name);

/// Finds a kernel by its enum (vx_kernel_e or a vendor/user value).
VX_API_ENTRY vx_kernel VX_API_CALL vxGetKernelByEnum(vx_context context, vx_enum kernel);

/// Reads a kernel attribute (vx_kernel_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryKernel(vx_kernel kernel, vx_enum attribute, void *ptr, vx_size size);

/// Drops a reference to a kernel and zeroes *kernel.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseKernel(vx_kernel *kernel);

/// Adds an application-defined kernel to a context.
VX_API_ENTRY vx_kernel VX_API_CALL vxAddUserKernel(vx_context context, const vx_char *name, vx_enum enumeration, vx_kernel_f func_ptr, vx_uint32 numParams, vx_kernel_validate_f validate, vx_kernel_initialize_f init, vx_kernel_deinitialize_f deinit);

/// Marks a user kernel complete so nodes can be made from it.
VX_API_ENTRY vx_status VX_API_CALL vxFinalizeKernel(vx_kernel kernel);

/// Declares one parameter (direction, type, state) of a user kernel.
VX_API_ENTRY vx_status VX_API_CALL vxAddParameterToKernel(vx_kernel kernel, vx_uint32 index, vx_enum dir, vx_enum data_type, vx_enum state);

/// Removes a user kernel from its context and releases it.
VX_API_ENTRY vx_status VX_API_CALL vxRemoveKernel(vx_kernel kernel);

/// Writes a kernel attribute from ptr (before vxFinalizeKernel).
VX_API_ENTRY vx_status VX_API_CALL vxSetKernelAttribute(vx_kernel kernel, vx_enum attribute, const void *ptr, vx_size size);

/// Returns the parameter object of a kernel at an index.
VX_API_ENTRY vx_parameter VX_API_CALL vxGetKernelParameterByIndex(vx_kernel kernel, vx_uint32 index);

/* ---- Graph -------------------------------------------------------------- */

/// Creates an empty graph.
VX_API_ENTRY vx_graph VX_API_CALL vxCreateGraph(vx_context context);

/// Drops a reference to a graph and zeroes *graph.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseGraph(vx_graph *graph);

/// Checks a graph and prepares it for execution.
VX_API_ENTRY vx_status VX_API_CALL vxVerifyGraph(vx_graph graph);

/// Runs a graph (verifying it first if needed) and waits for it to finish.
VX_API_ENTRY vx_status VX_API_CALL vxProcessGraph(vx_graph graph);

/// Starts a graph (verifying it first if needed) without waiting.
VX_API_ENTRY vx_status VX_API_CALL vxScheduleGraph(vx_graph graph);

/// Waits for the last scheduled run of a graph to finish.
VX_API_ENTRY vx_status VX_API_CALL vxWaitGraph(vx_graph graph);

/// Reads a graph attribute (vx_graph_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryGraph(vx_graph graph, vx_enum attribute, void *ptr, vx_size size);

/// Writes a settable graph attribute from ptr.
VX_API_ENTRY vx_status VX_API_CALL vxSetGraphAttribute(vx_graph graph, vx_enum attribute, const void *ptr, vx_size size);

/// Exposes a node parameter as the graph's next parameter.
VX_API_ENTRY vx_status VX_API_CALL vxAddParameterToGraph(vx_graph graph, vx_parameter parameter);

/// Sets the object bound to a graph parameter (and to its node parameter).
VX_API_ENTRY vx_status VX_API_CALL vxSetGraphParameterByIndex(vx_graph graph, vx_uint32 index, vx_reference value);

/// Returns the graph parameter at an index.
VX_API_ENTRY vx_parameter VX_API_CALL vxGetGraphParameterByIndex(vx_graph graph, vx_uint32 index);

/// Tells whether a graph is verified and ready to run as it is.
VX_API_ENTRY vx_bool VX_API_CALL vxIsGraphVerified(vx_graph graph);

/* ---- Node --------------------------------------------------------------- */

/// Creates a node for a kernel with no parameters set yet.
VX_API_ENTRY vx_node VX_API_CALL vxCreateGenericNode(vx_graph graph, vx_kernel kernel);

/// Reads a node attribute (vx_node_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryNode(vx_node node, vx_enum attribute, void *ptr, vx_size size);

/// Writes a settable node attribute from ptr.
VX_API_ENTRY vx_status VX_API_CALL vxSetNodeAttribute(vx_node node, vx_enum attribute, const void *ptr, vx_size size);

/// Drops a reference to a node and zeroes *node.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseNode(vx_node *node);

/// Takes a node out of its graph, releases it and zeroes *node.
VX_API_ENTRY vx_status VX_API_CALL vxRemoveNode(vx_node *node);

/// Sets (or, with NULL, clears) the callback run when a node completes.
VX_API_ENTRY vx_status VX_API_CALL vxAssignNodeCallback(vx_node node, vx_nodecomplete_f callback);

/// Returns the completion callback set on a node, or NULL.
VX_API_ENTRY vx_nodecomplete_f VX_API_CALL vxRetrieveNodeCallback(vx_node node);

/// Chooses the target a node runs on.
VX_API_ENTRY vx_status VX_API_CALL vxSetNodeTarget(vx_node node, vx_enum target_enum, const char *target_string);

/// Replicates a node over the items of pyramids or object arrays.
VX_API_ENTRY vx_status VX_API_CALL vxReplicateNode(vx_graph graph, vx_node first_node, vx_bool replicate[], vx_uint32 number_of_parameters);

/* ---- Parameter ---------------------------------------------------------- */

/// Returns the parameter of a node at an index.
VX_API_ENTRY vx_parameter VX_API_CALL vxGetParameterByIndex(vx_node node, vx_uint32 index);

/// Drops a reference to a parameter and zeroes *param.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseParameter(vx_parameter *param);

/// Binds an object to a node parameter by index.
VX_API_ENTRY vx_status VX_API_CALL vxSetParameterByIndex(vx_node node, vx_uint32 index, vx_reference value);

/// Binds an object to the node parameter a parameter object stands for.
VX_API_ENTRY vx_status VX_API_CALL vxSetParameterByReference(vx_parameter parameter, vx_reference value);

/// Reads a parameter attribute (vx_parameter_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryParameter(vx_parameter parameter, vx_enum attribute, void *ptr, vx_size size);

/* ---- Scalar ------------------------------------------------------------- */

/// Creates a scalar of a type, initialised from ptr when it is not NULL.
VX_API_ENTRY vx_scalar VX_API_CALL vxCreateScalar(vx_context context, vx_enum data_type, const void *ptr);

/// Creates a scalar of a type from size bytes at ptr.
VX_API_ENTRY vx_scalar VX_API_CALL vxCreateScalarWithSize(vx_context context, vx_enum data_type, const void *ptr, vx_size size);

/// Creates a graph-scoped scalar with no application access.
VX_API_ENTRY vx_scalar VX_API_CALL vxCreateVirtualScalar(vx_graph graph, vx_enum data_type);

/// Drops a reference to a scalar and zeroes *scalar.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseScalar(vx_scalar *scalar);

/// Reads a scalar attribute (vx_scalar_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryScalar(vx_scalar scalar, vx_enum attribute, void *ptr, vx_size size);

/// Copies a scalar's value to or from application memory.
VX_API_ENTRY vx_status VX_API_CALL vxCopyScalar(vx_scalar scalar, void *user_ptr, vx_enum usage, vx_enum user_mem_type);

/// Copies a scalar's value to or from application memory of a stated size.
VX_API_ENTRY vx_status VX_API_CALL vxCopyScalarWithSize(vx_scalar scalar, vx_size size, void *user_ptr, vx_enum usage, vx_enum user_mem_type);

/* ---- Reference ---------------------------------------------------------- */

/// Reads a reference attribute (vx_reference_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryReference(vx_reference ref, vx_enum attribute, void *ptr, vx_size size);

/// Drops a reference to an object of any type and zeroes *ref_ptr.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseReference(vx_reference *ref_ptr);

/// Adds one to the application's count of references to an object.
VX_API_ENTRY vx_status VX_API_CALL vxRetainReference(vx_reference ref);

/// Gives a reference a name for logs and reports (NULL clears it).
VX_API_ENTRY vx_status VX_API_CALL vxSetReferenceName(vx_reference ref, const vx_char *name);

/* ---- Delay -------------------------------------------------------------- */

/// Reads a delay attribute (vx_delay_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryDelay(vx_delay delay, vx_enum attribute, void *ptr, vx_size size);

/// Drops a reference to a delay and zeroes *delay.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseDelay(vx_delay *delay);

/// Creates a delay of num_slots objects shaped like the exemplar.
VX_API_ENTRY vx_delay VX_API_CALL vxCreateDelay(vx_context context, vx_reference exemplar, vx_size num_slots);

/// Returns the object in a delay slot (0 is current, negative is older).
VX_API_ENTRY vx_reference VX_API_CALL vxGetReferenceFromDelay(vx_delay delay, vx_int32 index);

/// Rotates a delay's slots by one.
VX_API_ENTRY vx_status VX_API_CALL vxAgeDelay(vx_delay delay);

/// Makes a graph age a delay after each successful run.
VX_API_ENTRY vx_status VX_API_CALL vxRegisterAutoAging(vx_graph graph, vx_delay delay);

/* ---- Log ---------------------------------------------------------------- */

/// Adds a printf-style message with a status to the log, against a reference.
VX_API_ENTRY void VX_API_CALL vxAddLogEntry(vx_reference ref, vx_status status, const char *message, ...);

/// Installs (or, with NULL, removes) the callback that receives log entries.
VX_API_ENTRY void VX_API_CALL vxRegisterLogCallback(vx_context context, vx_log_callback_f callback, vx_bool reentrant);

/* ---- LUT ---------------------------------------------------------------- */

/// Creates a lookup table of count entries of a type.
VX_API_ENTRY vx_lut VX_API_CALL vxCreateLUT(vx_context context, vx_enum data_type, vx_size count);

/// Creates a graph-scoped lookup table with no application access.
VX_API_ENTRY vx_lut VX_API_CALL vxCreateVirtualLUT(vx_graph graph, vx_enum data_type, vx_size count);

/// Drops a reference to a lookup table and zeroes *lut.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseLUT(vx_lut *lut);

/// Reads a lookup table attribute (vx_lut_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryLUT(vx_lut lut, vx_enum attribute, void *ptr, vx_size size);

/// Copies a whole lookup table to or from application memory.
VX_API_ENTRY vx_status VX_API_CALL vxCopyLUT(vx_lut lut, void *user_ptr, vx_enum usage, vx_enum user_mem_type);

/// Maps a lookup table for direct access.
VX_API_ENTRY vx_status VX_API_CALL vxMapLUT(vx_lut lut, vx_map_id *map_id, void **ptr, vx_enum usage, vx_enum mem_type, vx_bitfield flags);

/// Ends a vxMapLUT mapping and commits any writes.
VX_API_ENTRY vx_status VX_API_CALL vxUnmapLUT(vx_lut lut, vx_map_id map_id);

/* ---- Distribution ------------------------------------------------------- */

/// Creates a histogram of numBins bins over [offset, offset + range).
VX_API_ENTRY vx_distribution VX_API_CALL vxCreateDistribution(vx_context context, vx_size numBins, vx_int32 offset, vx_uint32 range);

/// Creates a graph-scoped distribution with no application access.
VX_API_ENTRY vx_distribution VX_API_CALL vxCreateVirtualDistribution(vx_graph graph, vx_size numBins, vx_int32 offset, vx_uint32 range);

/// Drops a reference to a distribution and zeroes *distribution.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseDistribution(vx_distribution *distribution);

/// Reads a distribution attribute (vx_distribution_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryDistribution(vx_distribution distribution, vx_enum attribute, void *ptr, vx_size size);

/// Copies a distribution's bins to or from application memory.
VX_API_ENTRY vx_status VX_API_CALL vxCopyDistribution(vx_distribution distribution, void *user_ptr, vx_enum usage, vx_enum user_mem_type);

/// Maps a distribution's bins for direct access.
VX_API_ENTRY vx_status VX_API_CALL vxMapDistribution(vx_distribution distribution, vx_map_id *map_id, void **ptr, vx_enum usage, vx_enum mem_type, vx_bitfield flags);

/// Ends a vxMapDistribution mapping and commits any writes.
VX_API_ENTRY vx_status VX_API_CALL vxUnmapDistribution(vx_distribution distribution, vx_map_id map_id);

/* ---- Threshold ---------------------------------------------------------- */

/// Creates a binary or range threshold for given input and output image formats.
VX_API_ENTRY vx_threshold VX_API_CALL vxCreateThresholdForImage(vx_context context, vx_enum thresh_type, vx_df_image input_format, vx_df_image output_format);

/// Creates a graph-scoped threshold with no application access.
VX_API_ENTRY vx_threshold VX_API_CALL vxCreateVirtualThresholdForImage(vx_graph graph, vx_enum thresh_type, vx_df_image input_format, vx_df_image output_format);

/// Copies the value of a binary threshold to or from application memory.
VX_API_ENTRY vx_status VX_API_CALL vxCopyThresholdValue(vx_threshold thresh, vx_pixel_value_t *value_ptr, vx_enum usage, vx_enum user_mem_type);

/// Copies the bounds of a range threshold to or from application memory.
VX_API_ENTRY vx_status VX_API_CALL vxCopyThresholdRange(vx_threshold thresh, vx_pixel_value_t *lower_value_ptr, vx_pixel_value_t *upper_value_ptr, vx_enum usage, vx_enum user_mem_type);

/// Copies a threshold's true and false output values to or from application memory.
VX_API_ENTRY vx_status VX_API_CALL vxCopyThresholdOutput(vx_threshold thresh, vx_pixel_value_t *true_value_ptr, vx_pixel_value_t *false_value_ptr, vx_enum usage, vx_enum user_mem_type);

/// Drops a reference to a threshold and zeroes *thresh.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseThreshold(vx_threshold *thresh);

/// Writes a settable threshold attribute from ptr.
VX_API_ENTRY vx_status VX_API_CALL vxSetThresholdAttribute(vx_threshold thresh, vx_enum attribute, const void *ptr, vx_size size);

/// Reads a threshold attribute (vx_threshold_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryThreshold(vx_threshold thresh, vx_enum attribute, void *ptr, vx_size size);

/* ---- Matrix ------------------------------------------------------------- */

/// Creates a columns x rows matrix of an element type.
VX_API_ENTRY vx_matrix VX_API_CALL vxCreateMatrix(vx_context c, vx_enum data_type, vx_size columns, vx_size rows);

/// Creates a graph-scoped matrix with no application access.
VX_API_ENTRY vx_matrix VX_API_CALL vxCreateVirtualMatrix(vx_graph graph, vx_enum data_type, vx_size columns, vx_size rows);

/// Drops a reference to a matrix and zeroes *mat.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseMatrix(vx_matrix *mat);

/// Reads a matrix attribute (vx_matrix_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryMatrix(vx_matrix mat, vx_enum attribute, void *ptr, vx_size size);

/// Copies a matrix's elements (row-major) to or from application memory.
VX_API_ENTRY vx_status VX_API_CALL vxCopyMatrix(vx_matrix matrix, void *user_ptr, vx_enum usage, vx_enum user_mem_type);

/// Creates a read-only VX_TYPE_UINT8 matrix filled with a pattern (vx_pattern_e).
VX_API_ENTRY vx_matrix VX_API_CALL vxCreateMatrixFromPattern(vx_context context, vx_enum pattern, vx_size columns, vx_size rows);

/// Creates a read-only pattern matrix with an explicit origin.
VX_API_ENTRY vx_matrix VX_API_CALL vxCreateMatrixFromPatternAndOrigin(vx_context context, vx_enum pattern, vx_size columns, vx_size rows, vx_size origin_col, vx_size origin_row);

/* ---- Convolution -------------------------------------------------------- */

/// Creates a columns x rows convolution (odd sizes, at least 3).
VX_API_ENTRY vx_convolution VX_API_CALL vxCreateConvolution(vx_context context, vx_size columns, vx_size rows);

/// Creates a graph-scoped convolution with no application access.
VX_API_ENTRY vx_convolution VX_API_CALL vxCreateVirtualConvolution(vx_graph graph, vx_size columns, vx_size rows);

/// Drops a reference to a convolution and zeroes *conv.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseConvolution(vx_convolution *conv);

/// Reads a convolution attribute (vx_convolution_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryConvolution(vx_convolution conv, vx_enum attribute, void *ptr, vx_size size);

/// Writes a settable convolution attribute (such as its scale) from ptr.
VX_API_ENTRY vx_status VX_API_CALL vxSetConvolutionAttribute(vx_convolution conv, vx_enum attribute, const void *ptr, vx_size size);

/// Copies a convolution's coefficients to or from application memory.
VX_API_ENTRY vx_status VX_API_CALL vxCopyConvolutionCoefficients(vx_convolution conv, void *user_ptr, vx_enum usage, vx_enum user_mem_type);

/* ---- Pyramid ------------------------------------------------------------ */

/// Creates an image pyramid of a number of levels and a scale between them.
VX_API_ENTRY vx_pyramid VX_API_CALL vxCreatePyramid(vx_context context, vx_size levels, vx_float32 scale, vx_uint32 width, vx_uint32 height, vx_df_image format);

/// Creates a graph-scoped pyramid whose size or format may be left open.
VX_API_ENTRY vx_pyramid VX_API_CALL vxCreateVirtualPyramid(vx_graph graph, vx_size levels, vx_float32 scale, vx_uint32 width, vx_uint32 height, vx_df_image format);

/// Drops a reference to a pyramid and zeroes *pyr.
VX_API_ENTRY vx_status VX_API_CALL vxReleasePyramid(vx_pyramid *pyr);

/// Reads a pyramid attribute (vx_pyramid_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryPyramid(vx_pyramid pyr, vx_enum attribute, void *ptr, vx_size size);

/// Returns one level of a pyramid as an image (release it when done).
VX_API_ENTRY vx_image VX_API_CALL vxGetPyramidLevel(vx_pyramid pyr, vx_uint32 index);

/* ---- Remap -------------------------------------------------------------- */

/// Creates a remap table from source to destination dimensions.
VX_API_ENTRY vx_remap VX_API_CALL vxCreateRemap(vx_context context, vx_uint32 src_width, vx_uint32 src_height, vx_uint32 dst_width, vx_uint32 dst_height);

/// Creates a graph-scoped remap table with no application access.
VX_API_ENTRY vx_remap VX_API_CALL vxCreateVirtualRemap(vx_graph graph, vx_uint32 src_width, vx_uint32 src_height, vx_uint32 dst_width, vx_uint32 dst_height);

/// Drops a reference to a remap table and zeroes *table.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseRemap(vx_remap *table);

/// Maps a rectangle of a remap table for direct access.
VX_API_ENTRY vx_status VX_API_CALL vxMapRemapPatch(vx_remap remap, const vx_rectangle_t *rect, vx_map_id *map_id, vx_size *stride_y, void **ptr, vx_enum coordinate_type, vx_enum usage, vx_enum mem_type);

/// Ends a vxMapRemapPatch mapping and commits any writes.
VX_API_ENTRY vx_status VX_API_CALL vxUnmapRemapPatch(vx_remap remap, vx_map_id map_id);

/// Copies a rectangle of a remap table to or from application memory.
VX_API_ENTRY vx_status VX_API_CALL vxCopyRemapPatch(vx_remap remap, const vx_rectangle_t *rect, vx_size user_stride_y, void *user_ptr, vx_enum user_coordinate_type, vx_enum usage, vx_enum user_mem_type);

/// Reads a remap attribute (vx_remap_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryRemap(vx_remap table, vx_enum attribute, void *ptr, vx_size size);

/* ---- Array -------------------------------------------------------------- */

/// Creates an array that holds up to capacity items of a type.
VX_API_ENTRY vx_array VX_API_CALL vxCreateArray(vx_context context, vx_enum item_type, vx_size capacity);

/// Creates a graph-scoped array whose item type or capacity may be left open.
VX_API_ENTRY vx_array VX_API_CALL vxCreateVirtualArray(vx_graph graph, vx_enum item_type, vx_size capacity);

/// Drops a reference to an array and zeroes *arr.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseArray(vx_array *arr);

/// Reads an array attribute (vx_array_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryArray(vx_array arr, vx_enum attribute, void *ptr, vx_size size);

/// Appends count items, stride bytes apart, to an array.
VX_API_ENTRY vx_status VX_API_CALL vxAddArrayItems(vx_array arr, vx_size count, const void *ptr, vx_size stride);

/// Shortens an array to new_num_items items.
VX_API_ENTRY vx_status VX_API_CALL vxTruncateArray(vx_array arr, vx_size new_num_items);

/// Copies items [range_start, range_end) to or from application memory.
VX_API_ENTRY vx_status VX_API_CALL vxCopyArrayRange(vx_array array, vx_size range_start, vx_size range_end, vx_size user_stride, void *user_ptr, vx_enum usage, vx_enum user_mem_type);

/// Maps items [range_start, range_end) for direct access.
VX_API_ENTRY vx_status VX_API_CALL vxMapArrayRange(vx_array array, vx_size range_start, vx_size range_end, vx_map_id *map_id, vx_size *stride, void **ptr, vx_enum usage, vx_enum mem_type, vx_uint32 flags);

/// Ends a vxMapArrayRange mapping and commits any writes.
VX_API_ENTRY vx_status VX_API_CALL vxUnmapArrayRange(vx_array array, vx_map_id map_id);

/// The address (as vx_uint8 *) of the index-th item of a mapped range whose
/// items lie stride bytes apart.
#define vxFormatArrayPointer(ptr, index, stride) \
    ((vx_uint8 *)(ptr) + (index) * (stride))

/// The index-th item of a mapped range, as an lvalue of the given type.
#define vxArrayItem(type, ptr, index, stride) \
    (*(type *)(vxFormatArrayPointer((ptr), (index), (stride))))

/* ---- Object array ------------------------------------------------------- */

/// Creates an object array of count objects shaped like the exemplar.
VX_API_ENTRY vx_object_array VX_API_CALL vxCreateObjectArray(vx_context context, vx_reference exemplar, vx_size count);

/// Creates a graph-scoped object array of virtual objects.
VX_API_ENTRY vx_object_array VX_API_CALL vxCreateVirtualObjectArray(vx_graph graph, vx_reference exemplar, vx_size count);

/// Returns the object at an index of an object array (release it when done).
VX_API_ENTRY vx_reference VX_API_CALL vxGetObjectArrayItem(vx_object_array arr, vx_uint32 index);

/// Drops a reference to an object array and zeroes *arr.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseObjectArray(vx_object_array *arr);

/// Reads an object array attribute (vx_object_array_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryObjectArray(vx_object_array arr, vx_enum attribute, void *ptr, vx_size size);

/* ---- Meta format -------------------------------------------------------- */

/// Sets one attribute of the meta format a kernel validator fills in.
VX_API_ENTRY vx_status VX_API_CALL vxSetMetaFormatAttribute(vx_meta_format meta, vx_enum attribute, const void *ptr, vx_size size);

/// Sets a meta format from the metadata of an exemplar object.
VX_API_ENTRY vx_status VX_API_CALL vxSetMetaFormatFromReference(vx_meta_format meta, vx_reference exemplar);

/// Reads one attribute of a meta format into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryMetaFormatAttribute(vx_meta_format meta, vx_enum attribute, void *ptr, vx_size size);

/* ---- Tensor ------------------------------------------------------------- */

/// Creates a tensor of number_of_dims dimensions of an element type.
VX_API_ENTRY vx_tensor VX_API_CALL vxCreateTensor(vx_context context, vx_size number_of_dims, const vx_size *dims, vx_enum data_type, vx_int8 fixed_point_position);

/// Creates an object array of images that view slices of a 3-D tensor.
VX_API_ENTRY vx_object_array VX_API_CALL vxCreateImageObjectArrayFromTensor(vx_tensor tensor, const vx_rectangle_t *rect, vx_size array_size, vx_size jump, vx_df_image image_format);

/// Creates a tensor that views a sub-range of another tensor.
VX_API_ENTRY vx_tensor VX_API_CALL vxCreateTensorFromView(vx_tensor tensor, vx_size number_of_dims, const vx_size *view_start, const vx_size *view_end);

/// Creates a graph-scoped tensor with no application access.
VX_API_ENTRY vx_tensor VX_API_CALL vxCreateVirtualTensor(vx_graph graph, vx_size number_of_dims, const vx_size *dims, vx_enum data_type, vx_int8 fixed_point_position);

/// Creates a tensor over memory the application allocated itself.
VX_API_ENTRY vx_tensor VX_API_CALL vxCreateTensorFromHandle(vx_context context, vx_size number_of_dims, const vx_size *dims, vx_enum data_type, vx_int8 fixed_point_position, size_t stride[], void *ptr, vx_enum memory_type);

/// Replaces the memory of a handle tensor and returns the old pointer.
VX_API_ENTRY vx_status VX_API_CALL vxSwapTensorHandle(vx_tensor tensor, void *new_ptr, void **prev_ptr);

/// Copies a sub-range of a tensor to or from application memory.
VX_API_ENTRY vx_status VX_API_CALL vxCopyTensorPatch(vx_tensor tensor, vx_size number_of_dims, const vx_size *view_start, const vx_size *view_end, const vx_size *user_stride, void *user_ptr, vx_enum usage, vx_enum user_memory_type);

/// Maps a sub-range of a tensor for direct access.
VX_API_ENTRY vx_status VX_API_CALL vxMapTensorPatch(vx_tensor tensor, vx_size number_of_dims, const vx_size *view_start, const vx_size *view_end, vx_map_id *map_id, vx_size *stride, void **ptr, vx_enum usage, vx_enum mem_type);

/// Ends a vxMapTensorPatch mapping and commits any writes.
VX_API_ENTRY vx_status VX_API_CALL vxUnmapTensorPatch(vx_tensor tensor, vx_map_id map_id);

/// Reads a tensor attribute (vx_tensor_attribute_e) into ptr.
VX_API_ENTRY vx_status VX_API_CALL vxQueryTensor(vx_tensor tensor, vx_enum attribute, void *ptr, vx_size size);

/// Drops a reference to a tensor and zeroes *tensor.
VX_API_ENTRY vx_status VX_API_CALL vxReleaseTensor(vx_tensor *tensor);

#ifdef __cplusplus
}
#endif

#endif /* _OPENVX_API_H_ */
