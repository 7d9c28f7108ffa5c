// The node-creation functions of vx_nodes.h. Each adds one node of a standard
// kernel to a graph, its arguments becoming the kernel's parameters in the
// order the OpenVX 1.3 specification gives for that kernel.
//
// They are made of the public API (vxGetKernelByEnum, vxCreateGenericNode,
// vxSetParameterByIndex), so a node made here is the node an application
// would get by building it by hand, and the checks are those functions'
// checks. A kernel this implementation does not have fails where
// vxGetKernelByEnum fails: the caller gets that status as an error object
// and one log line naming the node function.
//
// Plain values in a node function's signature (policies, interpolation types,
// sizes, the structures of HOG, Hough and tensor matrix multiply) become
// scalars of the context, made here and held by the node alone.
#include "graph/api/entry.hpp"

#include <VX/vx.h>
#include <VX/vx_ext_ferry.h>
#include <VX/vx_nodes.h>

#include <array>
#include <cstring>
#include <initializer_list>

using namespace ferry::graph;

namespace {

/// One argument of a node function: a reference the application passed (null
/// for an optional parameter left unset), a plain value the kernel takes as a
/// scalar, or a structure the kernel takes as a scalar of a struct type.
class argument {
 public:
  /// Any handle type: vxSetParameterByIndex checks that it is the type the
  /// kernel's parameter wants.
  template <class Object>
  argument(Object* reference) : reference_(reinterpret_cast<vx_reference>(reference)) {}

  template <class T>
  static argument value(vx_enum type, T value) {
    static_assert(sizeof(T) <= sizeof(value_bytes), "a scalar value larger than any scalar type");
    argument made(form::value, type);
    std::memcpy(made.value_.data(), &value, sizeof(T));
    return made;
  }

  /// `size` is what the application says the structure's size is; `expected`
  /// the size of the structure in this implementation's headers.
  static argument structure(vx_enum type, const void* data, vx_size size, vx_size expected) {
    argument made(form::structure, type);
    made.structure_ = data;
    made.structure_size_ = size;
    made.expected_size_ = expected;
    return made;
  }

  /// Sets parameter `index` of `node`; a failure is logged against `graph`,
  /// naming the node function `name`.
  vx_status bind(const char* name, vx_context context, vx_graph graph, vx_node node, vx_uint32 index) const {
    auto* graph_reference = reinterpret_cast<vx_reference>(graph);
    if (form_ == form::reference) {
      // An optional parameter left unset stays unset; a required one left
      // unset is vxVerifyGraph's to report.
      if (reference_ == nullptr) return VX_SUCCESS;
      vx_status status = vxSetParameterByIndex(node, index, reference_);
      if (status != VX_SUCCESS)
        add_log(graph_reference, status, "%s: parameter %u does not take the reference given", name, index);
      return status;
    }

    vx_scalar made = nullptr;
    if (form_ == form::value) {
      made = vxCreateScalar(context, type_, value_.data());
    } else {
      if (structure_ == nullptr) {
        add_log(graph_reference, VX_ERROR_INVALID_PARAMETERS, "%s: parameter %u: the structure pointer is NULL",
                name, index);
        return VX_ERROR_INVALID_PARAMETERS;
      }
      if (structure_size_ != expected_size_) {
        add_log(graph_reference, VX_ERROR_INVALID_PARAMETERS,
                "%s: parameter %u: a structure of %zu bytes where this implementation's is %zu bytes", name, index,
                static_cast<size_t>(structure_size_), static_cast<size_t>(expected_size_));
        return VX_ERROR_INVALID_PARAMETERS;
      }
      made = vxCreateScalarWithSize(context, type_, structure_, structure_size_);
    }
    vx_status status = vxGetStatus(reinterpret_cast<vx_reference>(made));
    if (status != VX_SUCCESS) {
      add_log(graph_reference, status, "%s: parameter %u: no scalar of type 0x%x could be made", name, index, type_);
      return status;
    }
    status = vxSetParameterByIndex(node, index, reinterpret_cast<vx_reference>(made));
    if (status != VX_SUCCESS)
      add_log(graph_reference, status, "%s: parameter %u does not take a scalar of type 0x%x", name, index, type_);
    // The node holds its own reference to the scalar; this one was only ours.
    vxReleaseScalar(&made);
    return status;
  }

 private:
  enum class form { reference, value, structure };
  using value_bytes = std::array<unsigned char, 8>;  // the largest scalar taken here: vx_size

  argument(form f, vx_enum type) : form_(f), type_(type) {}

  form form_ = form::reference;
  vx_reference reference_ = nullptr;
  vx_enum type_ = VX_TYPE_INVALID;
  value_bytes value_{};
  const void* structure_ = nullptr;
  vx_size structure_size_ = 0;
  vx_size expected_size_ = 0;
};

template <class T>
argument scalar(vx_enum type, T value) {
  return argument::value(type, value);
}

/// Adds a node of kernel `kernel_enumeration` to `graph` and sets its
/// parameters from `arguments`, index 0 first. On any failure the node is
/// removed again and the caller gets the context's error object for the
/// status (null when `graph` is no reference of a context).
vx_node make_node(const char* name, vx_graph graph, vx_enum kernel_enumeration,
                  std::initializer_list<argument> arguments) {
  vx_context context = context_of(graph);
  return entry_object<vx_node>(name, context, [&](vx_status& status) -> vx_node {
    // VX_ERROR_INVALID_REFERENCE if graph is not a valid vx_graph.
    if (find(graph, VX_TYPE_GRAPH) == nullptr) {
      status = VX_ERROR_INVALID_REFERENCE;
      // Another object of a context passed as the graph: its context's log hears of it.
      if (vx_reference owner = find(context, VX_TYPE_CONTEXT); owner != nullptr)
        add_log(owner, status, "%s: the graph argument is not a graph", name);
      else
        refuse(name, status, "the graph argument is not a graph");
      return nullptr;
    }
    auto* graph_reference = reinterpret_cast<vx_reference>(graph);

    // A kernel this implementation lacks makes node creation fail with the
    // status of the kernel lookup.
    vx_kernel kernel = vxGetKernelByEnum(context, kernel_enumeration);
    status = vxGetStatus(reinterpret_cast<vx_reference>(kernel));
    if (status != VX_SUCCESS) {
      add_log(graph_reference, status, "%s: this implementation has no kernel 0x%x, so it cannot make the node", name,
              kernel_enumeration);
      return nullptr;
    }
    vx_node node = vxCreateGenericNode(graph, kernel);
    vxReleaseKernel(&kernel);  // the node holds the kernel itself
    status = vxGetStatus(reinterpret_cast<vx_reference>(node));
    if (status != VX_SUCCESS) {
      add_log(graph_reference, status, "%s: the node could not be made", name);
      return nullptr;
    }

    vx_uint32 index = 0;
    for (const argument& given : arguments) {
      status = given.bind(name, context, graph, node, index++);
      if (status != VX_SUCCESS) {
        // The graph must not keep a half-made node the application has no handle to.
        vxRemoveNode(&node);
        return nullptr;
      }
    }
    return node;
  });
}

}  // namespace

VX_API_ENTRY vx_node VX_API_CALL vxColorConvertNode(vx_graph graph, vx_image input, vx_image output) {
  return make_node("vxColorConvertNode", graph, VX_KERNEL_COLOR_CONVERT, {input, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxChannelExtractNode(vx_graph graph, vx_image input, vx_enum channel,
                                                      vx_image output) {
  return make_node("vxChannelExtractNode", graph, VX_KERNEL_CHANNEL_EXTRACT,
                   {input, scalar(VX_TYPE_ENUM, channel), output});
}

VX_API_ENTRY vx_node VX_API_CALL vxChannelCombineNode(vx_graph graph, vx_image plane0, vx_image plane1,
                                                      vx_image plane2, vx_image plane3, vx_image output) {
  return make_node("vxChannelCombineNode", graph, VX_KERNEL_CHANNEL_COMBINE, {plane0, plane1, plane2, plane3, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxPhaseNode(vx_graph graph, vx_image grad_x, vx_image grad_y, vx_image orientation) {
  return make_node("vxPhaseNode", graph, VX_KERNEL_PHASE, {grad_x, grad_y, orientation});
}

VX_API_ENTRY vx_node VX_API_CALL vxSobel3x3Node(vx_graph graph, vx_image input, vx_image output_x,
                                                vx_image output_y) {
  return make_node("vxSobel3x3Node", graph, VX_KERNEL_SOBEL_3x3, {input, output_x, output_y});
}

VX_API_ENTRY vx_node VX_API_CALL vxMagnitudeNode(vx_graph graph, vx_image grad_x, vx_image grad_y, vx_image mag) {
  return make_node("vxMagnitudeNode", graph, VX_KERNEL_MAGNITUDE, {grad_x, grad_y, mag});
}

VX_API_ENTRY vx_node VX_API_CALL vxScaleImageNode(vx_graph graph, vx_image src, vx_image dst, vx_enum type) {
  return make_node("vxScaleImageNode", graph, VX_KERNEL_SCALE_IMAGE, {src, dst, scalar(VX_TYPE_ENUM, type)});
}

VX_API_ENTRY vx_node VX_API_CALL vxTableLookupNode(vx_graph graph, vx_image input, vx_lut lut, vx_image output) {
  return make_node("vxTableLookupNode", graph, VX_KERNEL_TABLE_LOOKUP, {input, lut, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxHistogramNode(vx_graph graph, vx_image input, vx_distribution distribution) {
  return make_node("vxHistogramNode", graph, VX_KERNEL_HISTOGRAM, {input, distribution});
}

VX_API_ENTRY vx_node VX_API_CALL vxEqualizeHistNode(vx_graph graph, vx_image input, vx_image output) {
  return make_node("vxEqualizeHistNode", graph, VX_KERNEL_EQUALIZE_HISTOGRAM, {input, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxAbsDiffNode(vx_graph graph, vx_image in1, vx_image in2, vx_image out) {
  return make_node("vxAbsDiffNode", graph, VX_KERNEL_ABSDIFF, {in1, in2, out});
}

VX_API_ENTRY vx_node VX_API_CALL vxMeanStdDevNode(vx_graph graph, vx_image input, vx_scalar mean, vx_scalar stddev) {
  return make_node("vxMeanStdDevNode", graph, VX_KERNEL_MEAN_STDDEV, {input, mean, stddev});
}

VX_API_ENTRY vx_node VX_API_CALL vxThresholdNode(vx_graph graph, vx_image input, vx_threshold thresh,
                                                 vx_image output) {
  return make_node("vxThresholdNode", graph, VX_KERNEL_THRESHOLD, {input, thresh, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxNonMaxSuppressionNode(vx_graph graph, vx_image input, vx_image mask,
                                                         vx_int32 win_size, vx_image output) {
  return make_node("vxNonMaxSuppressionNode", graph, VX_KERNEL_NON_MAX_SUPPRESSION,
                   {input, mask, scalar(VX_TYPE_INT32, win_size), output});
}

VX_API_ENTRY vx_node VX_API_CALL vxIntegralImageNode(vx_graph graph, vx_image input, vx_image output) {
  return make_node("vxIntegralImageNode", graph, VX_KERNEL_INTEGRAL_IMAGE, {input, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxErode3x3Node(vx_graph graph, vx_image input, vx_image output) {
  return make_node("vxErode3x3Node", graph, VX_KERNEL_ERODE_3x3, {input, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxDilate3x3Node(vx_graph graph, vx_image input, vx_image output) {
  return make_node("vxDilate3x3Node", graph, VX_KERNEL_DILATE_3x3, {input, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxMedian3x3Node(vx_graph graph, vx_image input, vx_image output) {
  return make_node("vxMedian3x3Node", graph, VX_KERNEL_MEDIAN_3x3, {input, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxBox3x3Node(vx_graph graph, vx_image input, vx_image output) {
  return make_node("vxBox3x3Node", graph, VX_KERNEL_BOX_3x3, {input, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxGaussian3x3Node(vx_graph graph, vx_image input, vx_image output) {
  return make_node("vxGaussian3x3Node", graph, VX_KERNEL_GAUSSIAN_3x3, {input, output});
}

// The kernel takes the function first, before the image (spec, Non Linear Filter).
VX_API_ENTRY vx_node VX_API_CALL vxNonLinearFilterNode(vx_graph graph, vx_enum function, vx_image input,
                                                       vx_matrix mask, vx_image output) {
  return make_node("vxNonLinearFilterNode", graph, VX_KERNEL_NON_LINEAR_FILTER,
                   {scalar(VX_TYPE_ENUM, function), input, mask, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxConvolveNode(vx_graph graph, vx_image input, vx_convolution conv,
                                                vx_image output) {
  return make_node("vxConvolveNode", graph, VX_KERNEL_CUSTOM_CONVOLUTION, {input, conv, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxGaussianPyramidNode(vx_graph graph, vx_image input, vx_pyramid gaussian) {
  return make_node("vxGaussianPyramidNode", graph, VX_KERNEL_GAUSSIAN_PYRAMID, {input, gaussian});
}

VX_API_ENTRY vx_node VX_API_CALL vxLaplacianPyramidNode(vx_graph graph, vx_image input, vx_pyramid laplacian,
                                                        vx_image output) {
  return make_node("vxLaplacianPyramidNode", graph, VX_KERNEL_LAPLACIAN_PYRAMID, {input, laplacian, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxLaplacianReconstructNode(vx_graph graph, vx_pyramid laplacian, vx_image input,
                                                            vx_image output) {
  return make_node("vxLaplacianReconstructNode", graph, VX_KERNEL_LAPLACIAN_RECONSTRUCT, {laplacian, input, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxWeightedAverageNode(vx_graph graph, vx_image img1, vx_scalar alpha, vx_image img2,
                                                       vx_image output) {
  return make_node("vxWeightedAverageNode", graph, VX_KERNEL_WEIGHTED_AVERAGE, {img1, alpha, img2, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxMinMaxLocNode(vx_graph graph, vx_image input, vx_scalar minVal, vx_scalar maxVal,
                                                 vx_array minLoc, vx_array maxLoc, vx_scalar minCount,
                                                 vx_scalar maxCount) {
  return make_node("vxMinMaxLocNode", graph, VX_KERNEL_MINMAXLOC,
                   {input, minVal, maxVal, minLoc, maxLoc, minCount, maxCount});
}

VX_API_ENTRY vx_node VX_API_CALL vxMinNode(vx_graph graph, vx_image in1, vx_image in2, vx_image out) {
  return make_node("vxMinNode", graph, VX_KERNEL_MIN, {in1, in2, out});
}

VX_API_ENTRY vx_node VX_API_CALL vxMaxNode(vx_graph graph, vx_image in1, vx_image in2, vx_image out) {
  return make_node("vxMaxNode", graph, VX_KERNEL_MAX, {in1, in2, out});
}

VX_API_ENTRY vx_node VX_API_CALL vxAndNode(vx_graph graph, vx_image in1, vx_image in2, vx_image out) {
  return make_node("vxAndNode", graph, VX_KERNEL_AND, {in1, in2, out});
}

VX_API_ENTRY vx_node VX_API_CALL vxOrNode(vx_graph graph, vx_image in1, vx_image in2, vx_image out) {
  return make_node("vxOrNode", graph, VX_KERNEL_OR, {in1, in2, out});
}

VX_API_ENTRY vx_node VX_API_CALL vxXorNode(vx_graph graph, vx_image in1, vx_image in2, vx_image out) {
  return make_node("vxXorNode", graph, VX_KERNEL_XOR, {in1, in2, out});
}

VX_API_ENTRY vx_node VX_API_CALL vxNotNode(vx_graph graph, vx_image input, vx_image output) {
  return make_node("vxNotNode", graph, VX_KERNEL_NOT, {input, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxScalarOperationNode(vx_graph graph, vx_enum scalar_operation, vx_scalar a,
                                                       vx_scalar b, vx_scalar output) {
  return make_node("vxScalarOperationNode", graph, VX_KERNEL_SCALAR_OPERATION,
                   {scalar(VX_TYPE_ENUM, scalar_operation), a, b, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxSelectNode(vx_graph graph, vx_scalar condition, vx_reference true_value,
                                              vx_reference false_value, vx_reference output) {
  return make_node("vxSelectNode", graph, VX_KERNEL_SELECT, {condition, true_value, false_value, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxMultiplyNode(vx_graph graph, vx_image in1, vx_image in2, vx_scalar scale,
                                                vx_enum overflow_policy, vx_enum rounding_policy, vx_image out) {
  return make_node("vxMultiplyNode", graph, VX_KERNEL_MULTIPLY,
                   {in1, in2, scale, scalar(VX_TYPE_ENUM, overflow_policy), scalar(VX_TYPE_ENUM, rounding_policy),
                    out});
}

VX_API_ENTRY vx_node VX_API_CALL vxAddNode(vx_graph graph, vx_image in1, vx_image in2, vx_enum policy, vx_image out) {
  return make_node("vxAddNode", graph, VX_KERNEL_ADD, {in1, in2, scalar(VX_TYPE_ENUM, policy), out});
}

VX_API_ENTRY vx_node VX_API_CALL vxSubtractNode(vx_graph graph, vx_image in1, vx_image in2, vx_enum policy,
                                                vx_image out) {
  return make_node("vxSubtractNode", graph, VX_KERNEL_SUBTRACT, {in1, in2, scalar(VX_TYPE_ENUM, policy), out});
}

VX_API_ENTRY vx_node VX_API_CALL vxConvertDepthNode(vx_graph graph, vx_image input, vx_image output, vx_enum policy,
                                                    vx_scalar shift) {
  return make_node("vxConvertDepthNode", graph, VX_KERNEL_CONVERTDEPTH,
                   {input, output, scalar(VX_TYPE_ENUM, policy), shift});
}

VX_API_ENTRY vx_node VX_API_CALL vxCannyEdgeDetectorNode(vx_graph graph, vx_image input, vx_threshold hyst,
                                                         vx_int32 gradient_size, vx_enum norm_type, vx_image output) {
  return make_node("vxCannyEdgeDetectorNode", graph, VX_KERNEL_CANNY_EDGE_DETECTOR,
                   {input, hyst, scalar(VX_TYPE_INT32, gradient_size), scalar(VX_TYPE_ENUM, norm_type), output});
}

VX_API_ENTRY vx_node VX_API_CALL vxWarpAffineNode(vx_graph graph, vx_image input, vx_matrix matrix, vx_enum type,
                                                  vx_image output) {
  return make_node("vxWarpAffineNode", graph, VX_KERNEL_WARP_AFFINE,
                   {input, matrix, scalar(VX_TYPE_ENUM, type), output});
}

VX_API_ENTRY vx_node VX_API_CALL vxWarpPerspectiveNode(vx_graph graph, vx_image input, vx_matrix matrix, vx_enum type,
                                                       vx_image output) {
  return make_node("vxWarpPerspectiveNode", graph, VX_KERNEL_WARP_PERSPECTIVE,
                   {input, matrix, scalar(VX_TYPE_ENUM, type), output});
}

VX_API_ENTRY vx_node VX_API_CALL vxHarrisCornersNode(vx_graph graph, vx_image input, vx_scalar strength_thresh,
                                                     vx_scalar min_distance, vx_scalar sensitivity,
                                                     vx_int32 gradient_size, vx_int32 block_size, vx_array corners,
                                                     vx_scalar num_corners) {
  return make_node("vxHarrisCornersNode", graph, VX_KERNEL_HARRIS_CORNERS,
                   {input, strength_thresh, min_distance, sensitivity, scalar(VX_TYPE_INT32, gradient_size),
                    scalar(VX_TYPE_INT32, block_size), corners, num_corners});
}

VX_API_ENTRY vx_node VX_API_CALL vxFastCornersNode(vx_graph graph, vx_image input, vx_scalar strength_thresh,
                                                   vx_bool nonmax_suppression, vx_array corners,
                                                   vx_scalar num_corners) {
  return make_node("vxFastCornersNode", graph, VX_KERNEL_FAST_CORNERS,
                   {input, strength_thresh, scalar(VX_TYPE_BOOL, nonmax_suppression), corners, num_corners});
}

VX_API_ENTRY vx_node VX_API_CALL vxOpticalFlowPyrLKNode(vx_graph graph, vx_pyramid old_images, vx_pyramid new_images,
                                                        vx_array old_points, vx_array new_points_estimates,
                                                        vx_array new_points, vx_enum termination, vx_scalar epsilon,
                                                        vx_scalar num_iterations, vx_scalar use_initial_estimate,
                                                        vx_size window_dimension) {
  return make_node("vxOpticalFlowPyrLKNode", graph, VX_KERNEL_OPTICAL_FLOW_PYR_LK,
                   {old_images, new_images, old_points, new_points_estimates, new_points,
                    scalar(VX_TYPE_ENUM, termination), epsilon, num_iterations, use_initial_estimate,
                    scalar(VX_TYPE_SIZE, window_dimension)});
}

VX_API_ENTRY vx_node VX_API_CALL vxRemapNode(vx_graph graph, vx_image input, vx_remap table, vx_enum policy,
                                             vx_image output) {
  return make_node("vxRemapNode", graph, VX_KERNEL_REMAP, {input, table, scalar(VX_TYPE_ENUM, policy), output});
}

VX_API_ENTRY vx_node VX_API_CALL vxHalfScaleGaussianNode(vx_graph graph, vx_image input, vx_image output,
                                                         vx_int32 kernel_size) {
  return make_node("vxHalfScaleGaussianNode", graph, VX_KERNEL_HALFSCALE_GAUSSIAN,
                   {input, output, scalar(VX_TYPE_INT32, kernel_size)});
}

VX_API_ENTRY vx_node VX_API_CALL vxMatchTemplateNode(vx_graph graph, vx_image src, vx_image templateImage,
                                                     vx_enum matchingMethod, vx_image output) {
  return make_node("vxMatchTemplateNode", graph, VX_KERNEL_MATCH_TEMPLATE,
                   {src, templateImage, scalar(VX_TYPE_ENUM, matchingMethod), output});
}

VX_API_ENTRY vx_node VX_API_CALL vxLBPNode(vx_graph graph, vx_image in, vx_enum format, vx_int8 kernel_size,
                                           vx_image out) {
  return make_node("vxLBPNode", graph, VX_KERNEL_LBP,
                   {in, scalar(VX_TYPE_ENUM, format), scalar(VX_TYPE_INT8, kernel_size), out});
}

VX_API_ENTRY vx_node VX_API_CALL vxHOGCellsNode(vx_graph graph, vx_image input, vx_int32 cell_width,
                                                vx_int32 cell_height, vx_int32 num_bins, vx_tensor magnitudes,
                                                vx_tensor bins) {
  return make_node("vxHOGCellsNode", graph, VX_KERNEL_HOG_CELLS,
                   {input, scalar(VX_TYPE_INT32, cell_width), scalar(VX_TYPE_INT32, cell_height),
                    scalar(VX_TYPE_INT32, num_bins), magnitudes, bins});
}

// hog_param_size is no kernel parameter: it only says how large *params is.
VX_API_ENTRY vx_node VX_API_CALL vxHOGFeaturesNode(vx_graph graph, vx_image input, vx_tensor magnitudes,
                                                   vx_tensor bins, const vx_hog_t* params, vx_size hog_param_size,
                                                   vx_tensor features) {
  return make_node("vxHOGFeaturesNode", graph, VX_KERNEL_HOG_FEATURES,
                   {input, magnitudes, bins,
                    argument::structure(VX_TYPE_HOG_PARAMS, params, hog_param_size, sizeof(vx_hog_t)), features});
}

VX_API_ENTRY vx_node VX_API_CALL vxHoughLinesPNode(vx_graph graph, vx_image input, const vx_hough_lines_p_t* params,
                                                   vx_array lines_array, vx_scalar num_lines) {
  return make_node("vxHoughLinesPNode", graph, VX_KERNEL_HOUGH_LINES_P,
                   {input,
                    argument::structure(VX_TYPE_HOUGH_LINES_PARAMS, params, sizeof(vx_hough_lines_p_t),
                                        sizeof(vx_hough_lines_p_t)),
                    lines_array, num_lines});
}

VX_API_ENTRY vx_node VX_API_CALL vxBilateralFilterNode(vx_graph graph, vx_tensor src, vx_int32 diameter,
                                                       vx_float32 sigmaSpace, vx_float32 sigmaValues, vx_tensor dst) {
  return make_node("vxBilateralFilterNode", graph, VX_KERNEL_BILATERAL_FILTER,
                   {src, scalar(VX_TYPE_INT32, diameter), scalar(VX_TYPE_FLOAT32, sigmaSpace),
                    scalar(VX_TYPE_FLOAT32, sigmaValues), dst});
}

VX_API_ENTRY vx_node VX_API_CALL vxTensorMultiplyNode(vx_graph graph, vx_tensor input1, vx_tensor input2,
                                                      vx_scalar scale, vx_enum overflow_policy,
                                                      vx_enum rounding_policy, vx_tensor output) {
  return make_node("vxTensorMultiplyNode", graph, VX_KERNEL_TENSOR_MULTIPLY,
                   {input1, input2, scale, scalar(VX_TYPE_ENUM, overflow_policy),
                    scalar(VX_TYPE_ENUM, rounding_policy), output});
}

VX_API_ENTRY vx_node VX_API_CALL vxTensorAddNode(vx_graph graph, vx_tensor input1, vx_tensor input2, vx_enum policy,
                                                 vx_tensor output) {
  return make_node("vxTensorAddNode", graph, VX_KERNEL_TENSOR_ADD,
                   {input1, input2, scalar(VX_TYPE_ENUM, policy), output});
}

VX_API_ENTRY vx_node VX_API_CALL vxTensorSubtractNode(vx_graph graph, vx_tensor input1, vx_tensor input2,
                                                      vx_enum policy, vx_tensor output) {
  return make_node("vxTensorSubtractNode", graph, VX_KERNEL_TENSOR_SUBTRACT,
                   {input1, input2, scalar(VX_TYPE_ENUM, policy), output});
}

VX_API_ENTRY vx_node VX_API_CALL vxTensorTableLookupNode(vx_graph graph, vx_tensor input1, vx_lut lut,
                                                         vx_tensor output) {
  return make_node("vxTensorTableLookupNode", graph, VX_KERNEL_TENSOR_TABLE_LOOKUP, {input1, lut, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxTensorTransposeNode(vx_graph graph, vx_tensor input, vx_tensor output,
                                                       vx_size dimension1, vx_size dimension2) {
  return make_node("vxTensorTransposeNode", graph, VX_KERNEL_TENSOR_TRANSPOSE,
                   {input, output, scalar(VX_TYPE_SIZE, dimension1), scalar(VX_TYPE_SIZE, dimension2)});
}

VX_API_ENTRY vx_node VX_API_CALL vxTensorConvertDepthNode(vx_graph graph, vx_tensor input, vx_enum policy,
                                                          vx_scalar norm, vx_scalar offset, vx_tensor output) {
  return make_node("vxTensorConvertDepthNode", graph, VX_KERNEL_TENSOR_CONVERT_DEPTH,
                   {input, scalar(VX_TYPE_ENUM, policy), norm, offset, output});
}

VX_API_ENTRY vx_node VX_API_CALL vxTensorMatrixMultiplyNode(
    vx_graph graph, vx_tensor input1, vx_tensor input2, vx_tensor input3,
    const vx_tensor_matrix_multiply_params_t* matrix_multiply_params, vx_tensor output) {
  return make_node("vxTensorMatrixMultiplyNode", graph, VX_KERNEL_TENSOR_MATRIX_MULTIPLY,
                   {input1, input2, input3,
                    argument::structure(VX_TYPE_TENSOR_MATRIX_MULTIPLY_PARAMS, matrix_multiply_params,
                                        sizeof(vx_tensor_matrix_multiply_params_t),
                                        sizeof(vx_tensor_matrix_multiply_params_t)),
                    output});
}

VX_API_ENTRY vx_node VX_API_CALL vxCopyNode(vx_graph graph, vx_reference input, vx_reference output) {
  return make_node("vxCopyNode", graph, VX_KERNEL_COPY, {input, output});
}

// Ferry's own kernels (vx_ext_ferry.h).

VX_API_ENTRY vx_node VX_API_CALL vxFerryScharr3x3Node(vx_graph graph, vx_image input, vx_image output_x,
                                                      vx_image output_y) {
  return make_node("vxFerryScharr3x3Node", graph, VX_KERNEL_FERRY_SCHARR_3x3, {input, output_x, output_y});
}
