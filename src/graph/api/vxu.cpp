// The immediate-mode functions of vxu.h (libvxu.so). Each runs one node in a
// graph of its own: the graph is made, the node added by the matching
// vx*Node function and given the context's immediate border, the graph
// verified, processed and released; the first failing status is returned.
//
// libvxu links libopenvx as any application does, so this file uses the
// public API alone: what an immediate function does, a program could do
// itself with the same calls, and gets the same statuses and log lines.
#include <VX/vx.h>
#include <VX/vx_ext_ferry.h>
#include <VX/vxu.h>

#include <initializer_list>

namespace {

/// A scalar made from a plain value of a vxu function (vxuMultiply's scale,
/// vxuConvertDepth's shift, vxuMeanStdDev's results), released when the
/// function returns: the node it is given to holds its own reference.
class owned_scalar {
 public:
  template <class T>
  owned_scalar(vx_context context, vx_enum type, T value) : scalar_(vxCreateScalar(context, type, &value)) {}
  ~owned_scalar() {
    if (status() == VX_SUCCESS) vxReleaseScalar(&scalar_);
  }
  owned_scalar(const owned_scalar&) = delete;
  owned_scalar& operator=(const owned_scalar&) = delete;

  vx_scalar get() const { return scalar_; }
  vx_status status() const { return vxGetStatus(reinterpret_cast<vx_reference>(scalar_)); }

  /// Copies the value out into `*value` (the size of the scalar's type).
  template <class T>
  vx_status read(T* value) const {
    return vxCopyScalar(scalar_, value, VX_READ_ONLY, VX_MEMORY_TYPE_HOST);
  }

 private:
  vx_scalar scalar_;
};

/// VX_ERROR_INVALID_REFERENCE unless `context` is a live context.
vx_status check_context(vx_context context) {
  vx_enum type = VX_TYPE_INVALID;
  vx_status status = vxQueryReference(reinterpret_cast<vx_reference>(context), VX_REFERENCE_TYPE, &type, sizeof type);
  if (status != VX_SUCCESS) return status;
  return type == VX_TYPE_CONTEXT ? VX_SUCCESS : VX_ERROR_INVALID_REFERENCE;
}

/// Gives `node` the context's immediate border. The spec lets a node refuse a
/// border mode it does not support when the border is set or when its graph
/// is verified; VX_CONTEXT_IMMEDIATE_BORDER_POLICY says what to do then:
/// VX_BORDER_POLICY_DEFAULT_TO_UNDEFINED runs with VX_BORDER_UNDEFINED,
/// VX_BORDER_POLICY_RETURN_ERROR returns VX_ERROR_NOT_SUPPORTED.
vx_status set_border(const char* name, vx_context context, vx_node node, const vx_border_t& border, vx_enum policy) {
  vx_status status = vxSetNodeAttribute(node, VX_NODE_BORDER, &border, sizeof border);
  if (status != VX_ERROR_NOT_SUPPORTED || border.mode == VX_BORDER_UNDEFINED) return status;
  if (policy == VX_BORDER_POLICY_DEFAULT_TO_UNDEFINED) {
    // The node keeps its default, VX_BORDER_UNDEFINED, which every node supports.
    return VX_SUCCESS;
  }
  vxAddLogEntry(reinterpret_cast<vx_reference>(context), status,
                "%s: the kernel does not support the immediate border mode 0x%x, and "
                "VX_CONTEXT_IMMEDIATE_BORDER_POLICY is VX_BORDER_POLICY_RETURN_ERROR",
                name, border.mode);
  return status;
}

/// Runs the node `make_node(graph)` adds to a graph of its own. `values` are
/// the scalars the caller made from plain values, checked once the context is
/// known to be good.
template <class MakeNode>
vx_status run_immediate(const char* name, vx_context context, std::initializer_list<const owned_scalar*> values,
                        MakeNode&& make_node) {
  vx_status status = check_context(context);
  if (status != VX_SUCCESS) return status;
  vx_border_t border{};
  status = vxQueryContext(context, VX_CONTEXT_IMMEDIATE_BORDER, &border, sizeof border);
  if (status != VX_SUCCESS) return status;
  vx_enum policy = VX_BORDER_POLICY_DEFAULT_TO_UNDEFINED;
  status = vxQueryContext(context, VX_CONTEXT_IMMEDIATE_BORDER_POLICY, &policy, sizeof policy);
  if (status != VX_SUCCESS) return status;
  for (const owned_scalar* value : values) {
    status = value->status();
    if (status != VX_SUCCESS) return status;
  }

  vx_graph graph = vxCreateGraph(context);
  status = vxGetStatus(reinterpret_cast<vx_reference>(graph));
  if (status != VX_SUCCESS) return status;

  vx_node node = make_node(graph);
  status = vxGetStatus(reinterpret_cast<vx_reference>(node));
  const bool node_made = status == VX_SUCCESS;
  if (status == VX_SUCCESS) status = set_border(name, context, node, border, policy);
  if (status == VX_SUCCESS) {
    status = vxVerifyGraph(graph);
    if (status == VX_ERROR_NOT_SUPPORTED && border.mode != VX_BORDER_UNDEFINED &&
        policy == VX_BORDER_POLICY_DEFAULT_TO_UNDEFINED) {
      // The refusal may be the border's, found only at verification: try
      // again with the border every node supports. Were it something else,
      // the second verification fails the same way.
      vx_border_t undefined{};
      undefined.mode = VX_BORDER_UNDEFINED;
      status = vxSetNodeAttribute(node, VX_NODE_BORDER, &undefined, sizeof undefined);
      if (status == VX_SUCCESS) status = vxVerifyGraph(graph);
    }
  }
  if (status == VX_SUCCESS) status = vxProcessGraph(graph);

  if (node_made) vxReleaseNode(&node);
  vxReleaseGraph(&graph);
  return status;
}

template <class MakeNode>
vx_status run_immediate(const char* name, vx_context context, MakeNode&& make_node) {
  return run_immediate(name, context, {}, static_cast<MakeNode&&>(make_node));
}

}  // namespace

VX_API_ENTRY vx_status VX_API_CALL vxuColorConvert(vx_context context, vx_image input, vx_image output) {
  return run_immediate("vxuColorConvert", context,
                       [&](vx_graph graph) { return vxColorConvertNode(graph, input, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuChannelExtract(vx_context context, vx_image input, vx_enum channel,
                                                     vx_image output) {
  return run_immediate("vxuChannelExtract", context,
                       [&](vx_graph graph) { return vxChannelExtractNode(graph, input, channel, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuChannelCombine(vx_context context, vx_image plane0, vx_image plane1,
                                                     vx_image plane2, vx_image plane3, vx_image output) {
  return run_immediate("vxuChannelCombine", context, [&](vx_graph graph) {
    return vxChannelCombineNode(graph, plane0, plane1, plane2, plane3, output);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuSobel3x3(vx_context context, vx_image input, vx_image output_x,
                                               vx_image output_y) {
  return run_immediate("vxuSobel3x3", context,
                       [&](vx_graph graph) { return vxSobel3x3Node(graph, input, output_x, output_y); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuMagnitude(vx_context context, vx_image grad_x, vx_image grad_y, vx_image mag) {
  return run_immediate("vxuMagnitude", context,
                       [&](vx_graph graph) { return vxMagnitudeNode(graph, grad_x, grad_y, mag); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuPhase(vx_context context, vx_image grad_x, vx_image grad_y,
                                            vx_image orientation) {
  return run_immediate("vxuPhase", context,
                       [&](vx_graph graph) { return vxPhaseNode(graph, grad_x, grad_y, orientation); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuScaleImage(vx_context context, vx_image src, vx_image dst, vx_enum type) {
  return run_immediate("vxuScaleImage", context,
                       [&](vx_graph graph) { return vxScaleImageNode(graph, src, dst, type); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuTableLookup(vx_context context, vx_image input, vx_lut lut, vx_image output) {
  return run_immediate("vxuTableLookup", context,
                       [&](vx_graph graph) { return vxTableLookupNode(graph, input, lut, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuHistogram(vx_context context, vx_image input, vx_distribution distribution) {
  return run_immediate("vxuHistogram", context,
                       [&](vx_graph graph) { return vxHistogramNode(graph, input, distribution); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuEqualizeHist(vx_context context, vx_image input, vx_image output) {
  return run_immediate("vxuEqualizeHist", context,
                       [&](vx_graph graph) { return vxEqualizeHistNode(graph, input, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuAbsDiff(vx_context context, vx_image in1, vx_image in2, vx_image out) {
  return run_immediate("vxuAbsDiff", context, [&](vx_graph graph) { return vxAbsDiffNode(graph, in1, in2, out); });
}

// The node writes float32 scalars; this function copies them out to the
// caller's floats once the graph has run.
VX_API_ENTRY vx_status VX_API_CALL vxuMeanStdDev(vx_context context, vx_image input, vx_float32* mean,
                                                 vx_float32* stddev) {
  vx_status status = check_context(context);
  if (status != VX_SUCCESS) return status;
  // mean is a required output; stddev is optional.
  if (mean == nullptr) {
    vxAddLogEntry(reinterpret_cast<vx_reference>(context), VX_ERROR_INVALID_PARAMETERS,
                  "vxuMeanStdDev: mean is NULL (it is a required output)");
    return VX_ERROR_INVALID_PARAMETERS;
  }
  owned_scalar mean_value(context, VX_TYPE_FLOAT32, vx_float32{0});
  owned_scalar stddev_value(context, VX_TYPE_FLOAT32, vx_float32{0});
  status = run_immediate("vxuMeanStdDev", context, {&mean_value, &stddev_value}, [&](vx_graph graph) {
    return vxMeanStdDevNode(graph, input, mean_value.get(), stddev == nullptr ? nullptr : stddev_value.get());
  });
  if (status != VX_SUCCESS) return status;
  status = mean_value.read(mean);
  if (status == VX_SUCCESS && stddev != nullptr) status = stddev_value.read(stddev);
  return status;
}

VX_API_ENTRY vx_status VX_API_CALL vxuThreshold(vx_context context, vx_image input, vx_threshold thresh,
                                                vx_image output) {
  return run_immediate("vxuThreshold", context,
                       [&](vx_graph graph) { return vxThresholdNode(graph, input, thresh, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuNonMaxSuppression(vx_context context, vx_image input, vx_image mask,
                                                        vx_int32 win_size, vx_image output) {
  return run_immediate("vxuNonMaxSuppression", context,
                       [&](vx_graph graph) { return vxNonMaxSuppressionNode(graph, input, mask, win_size, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuIntegralImage(vx_context context, vx_image input, vx_image output) {
  return run_immediate("vxuIntegralImage", context,
                       [&](vx_graph graph) { return vxIntegralImageNode(graph, input, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuErode3x3(vx_context context, vx_image input, vx_image output) {
  return run_immediate("vxuErode3x3", context, [&](vx_graph graph) { return vxErode3x3Node(graph, input, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuDilate3x3(vx_context context, vx_image input, vx_image output) {
  return run_immediate("vxuDilate3x3", context, [&](vx_graph graph) { return vxDilate3x3Node(graph, input, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuMedian3x3(vx_context context, vx_image input, vx_image output) {
  return run_immediate("vxuMedian3x3", context, [&](vx_graph graph) { return vxMedian3x3Node(graph, input, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuBox3x3(vx_context context, vx_image input, vx_image output) {
  return run_immediate("vxuBox3x3", context, [&](vx_graph graph) { return vxBox3x3Node(graph, input, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuGaussian3x3(vx_context context, vx_image input, vx_image output) {
  return run_immediate("vxuGaussian3x3", context,
                       [&](vx_graph graph) { return vxGaussian3x3Node(graph, input, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuNonLinearFilter(vx_context context, vx_enum function, vx_image input,
                                                      vx_matrix mask, vx_image output) {
  return run_immediate("vxuNonLinearFilter", context,
                       [&](vx_graph graph) { return vxNonLinearFilterNode(graph, function, input, mask, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuConvolve(vx_context context, vx_image input, vx_convolution conv,
                                               vx_image output) {
  return run_immediate("vxuConvolve", context,
                       [&](vx_graph graph) { return vxConvolveNode(graph, input, conv, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuGaussianPyramid(vx_context context, vx_image input, vx_pyramid gaussian) {
  return run_immediate("vxuGaussianPyramid", context,
                       [&](vx_graph graph) { return vxGaussianPyramidNode(graph, input, gaussian); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuLaplacianPyramid(vx_context context, vx_image input, vx_pyramid laplacian,
                                                       vx_image output) {
  return run_immediate("vxuLaplacianPyramid", context,
                       [&](vx_graph graph) { return vxLaplacianPyramidNode(graph, input, laplacian, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuLaplacianReconstruct(vx_context context, vx_pyramid laplacian, vx_image input,
                                                           vx_image output) {
  return run_immediate("vxuLaplacianReconstruct", context,
                       [&](vx_graph graph) { return vxLaplacianReconstructNode(graph, laplacian, input, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuWeightedAverage(vx_context context, vx_image img1, vx_scalar alpha,
                                                      vx_image img2, vx_image output) {
  return run_immediate("vxuWeightedAverage", context,
                       [&](vx_graph graph) { return vxWeightedAverageNode(graph, img1, alpha, img2, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuMinMaxLoc(vx_context context, vx_image input, vx_scalar minVal,
                                                vx_scalar maxVal, vx_array minLoc, vx_array maxLoc,
                                                vx_scalar minCount, vx_scalar maxCount) {
  return run_immediate("vxuMinMaxLoc", context, [&](vx_graph graph) {
    return vxMinMaxLocNode(graph, input, minVal, maxVal, minLoc, maxLoc, minCount, maxCount);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuMin(vx_context context, vx_image in1, vx_image in2, vx_image out) {
  return run_immediate("vxuMin", context, [&](vx_graph graph) { return vxMinNode(graph, in1, in2, out); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuMax(vx_context context, vx_image in1, vx_image in2, vx_image out) {
  return run_immediate("vxuMax", context, [&](vx_graph graph) { return vxMaxNode(graph, in1, in2, out); });
}

// The node takes the shift as a VX_TYPE_INT32 scalar.
VX_API_ENTRY vx_status VX_API_CALL vxuConvertDepth(vx_context context, vx_image input, vx_image output,
                                                   vx_enum policy, vx_int32 shift) {
  owned_scalar shift_value(context, VX_TYPE_INT32, shift);
  return run_immediate("vxuConvertDepth", context, {&shift_value}, [&](vx_graph graph) {
    return vxConvertDepthNode(graph, input, output, policy, shift_value.get());
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuCannyEdgeDetector(vx_context context, vx_image input, vx_threshold hyst,
                                                        vx_int32 gradient_size, vx_enum norm_type, vx_image output) {
  return run_immediate("vxuCannyEdgeDetector", context, [&](vx_graph graph) {
    return vxCannyEdgeDetectorNode(graph, input, hyst, gradient_size, norm_type, output);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuHalfScaleGaussian(vx_context context, vx_image input, vx_image output,
                                                        vx_int32 kernel_size) {
  return run_immediate("vxuHalfScaleGaussian", context,
                       [&](vx_graph graph) { return vxHalfScaleGaussianNode(graph, input, output, kernel_size); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuAnd(vx_context context, vx_image in1, vx_image in2, vx_image out) {
  return run_immediate("vxuAnd", context, [&](vx_graph graph) { return vxAndNode(graph, in1, in2, out); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuOr(vx_context context, vx_image in1, vx_image in2, vx_image out) {
  return run_immediate("vxuOr", context, [&](vx_graph graph) { return vxOrNode(graph, in1, in2, out); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuXor(vx_context context, vx_image in1, vx_image in2, vx_image out) {
  return run_immediate("vxuXor", context, [&](vx_graph graph) { return vxXorNode(graph, in1, in2, out); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuNot(vx_context context, vx_image input, vx_image output) {
  return run_immediate("vxuNot", context, [&](vx_graph graph) { return vxNotNode(graph, input, output); });
}

// The node takes the scale as a VX_TYPE_FLOAT32 scalar.
VX_API_ENTRY vx_status VX_API_CALL vxuMultiply(vx_context context, vx_image in1, vx_image in2, vx_float32 scale,
                                               vx_enum overflow_policy, vx_enum rounding_policy, vx_image out) {
  owned_scalar scale_value(context, VX_TYPE_FLOAT32, scale);
  return run_immediate("vxuMultiply", context, {&scale_value}, [&](vx_graph graph) {
    return vxMultiplyNode(graph, in1, in2, scale_value.get(), overflow_policy, rounding_policy, out);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuAdd(vx_context context, vx_image in1, vx_image in2, vx_enum policy,
                                          vx_image out) {
  return run_immediate("vxuAdd", context, [&](vx_graph graph) { return vxAddNode(graph, in1, in2, policy, out); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuSubtract(vx_context context, vx_image in1, vx_image in2, vx_enum policy,
                                               vx_image out) {
  return run_immediate("vxuSubtract", context,
                       [&](vx_graph graph) { return vxSubtractNode(graph, in1, in2, policy, out); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuWarpAffine(vx_context context, vx_image input, vx_matrix matrix, vx_enum type,
                                                 vx_image output) {
  return run_immediate("vxuWarpAffine", context,
                       [&](vx_graph graph) { return vxWarpAffineNode(graph, input, matrix, type, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuWarpPerspective(vx_context context, vx_image input, vx_matrix matrix,
                                                      vx_enum type, vx_image output) {
  return run_immediate("vxuWarpPerspective", context,
                       [&](vx_graph graph) { return vxWarpPerspectiveNode(graph, input, matrix, type, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuHarrisCorners(vx_context context, vx_image input, vx_scalar strength_thresh,
                                                    vx_scalar min_distance, vx_scalar sensitivity,
                                                    vx_int32 gradient_size, vx_int32 block_size, vx_array corners,
                                                    vx_scalar num_corners) {
  return run_immediate("vxuHarrisCorners", context, [&](vx_graph graph) {
    return vxHarrisCornersNode(graph, input, strength_thresh, min_distance, sensitivity, gradient_size, block_size,
                               corners, num_corners);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuFastCorners(vx_context context, vx_image input, vx_scalar strength_thresh,
                                                  vx_bool nonmax_suppression, vx_array corners,
                                                  vx_scalar num_corners) {
  return run_immediate("vxuFastCorners", context, [&](vx_graph graph) {
    return vxFastCornersNode(graph, input, strength_thresh, nonmax_suppression, corners, num_corners);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuOpticalFlowPyrLK(vx_context context, vx_pyramid old_images,
                                                       vx_pyramid new_images, vx_array old_points,
                                                       vx_array new_points_estimates, vx_array new_points,
                                                       vx_enum termination, vx_scalar epsilon,
                                                       vx_scalar num_iterations, vx_scalar use_initial_estimate,
                                                       vx_size window_dimension) {
  return run_immediate("vxuOpticalFlowPyrLK", context, [&](vx_graph graph) {
    return vxOpticalFlowPyrLKNode(graph, old_images, new_images, old_points, new_points_estimates, new_points,
                                  termination, epsilon, num_iterations, use_initial_estimate, window_dimension);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuMatchTemplate(vx_context context, vx_image src, vx_image templateImage,
                                                    vx_enum matchingMethod, vx_image output) {
  return run_immediate("vxuMatchTemplate", context, [&](vx_graph graph) {
    return vxMatchTemplateNode(graph, src, templateImage, matchingMethod, output);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuLBP(vx_context context, vx_image in, vx_enum format, vx_int8 kernel_size,
                                          vx_image out) {
  return run_immediate("vxuLBP", context,
                       [&](vx_graph graph) { return vxLBPNode(graph, in, format, kernel_size, out); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuHOGCells(vx_context context, vx_image input, vx_int32 cell_width,
                                               vx_int32 cell_height, vx_int32 num_bins, vx_tensor magnitudes,
                                               vx_tensor bins) {
  return run_immediate("vxuHOGCells", context, [&](vx_graph graph) {
    return vxHOGCellsNode(graph, input, cell_width, cell_height, num_bins, magnitudes, bins);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuHOGFeatures(vx_context context, vx_image input, vx_tensor magnitudes,
                                                  vx_tensor bins, const vx_hog_t* params, vx_size hog_param_size,
                                                  vx_tensor features) {
  return run_immediate("vxuHOGFeatures", context, [&](vx_graph graph) {
    return vxHOGFeaturesNode(graph, input, magnitudes, bins, params, hog_param_size, features);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuHoughLinesP(vx_context context, vx_image input, const vx_hough_lines_p_t* params,
                                                  vx_array lines_array, vx_scalar num_lines) {
  return run_immediate("vxuHoughLinesP", context,
                       [&](vx_graph graph) { return vxHoughLinesPNode(graph, input, params, lines_array, num_lines); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuRemap(vx_context context, vx_image input, vx_remap table, vx_enum policy,
                                            vx_image output) {
  return run_immediate("vxuRemap", context,
                       [&](vx_graph graph) { return vxRemapNode(graph, input, table, policy, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuBilateralFilter(vx_context context, vx_tensor src, vx_int32 diameter,
                                                      vx_float32 sigmaSpace, vx_float32 sigmaValues, vx_tensor dst) {
  return run_immediate("vxuBilateralFilter", context, [&](vx_graph graph) {
    return vxBilateralFilterNode(graph, src, diameter, sigmaSpace, sigmaValues, dst);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuTensorMultiply(vx_context context, vx_tensor input1, vx_tensor input2,
                                                     vx_scalar scale, vx_enum overflow_policy,
                                                     vx_enum rounding_policy, vx_tensor output) {
  return run_immediate("vxuTensorMultiply", context, [&](vx_graph graph) {
    return vxTensorMultiplyNode(graph, input1, input2, scale, overflow_policy, rounding_policy, output);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuTensorAdd(vx_context context, vx_tensor input1, vx_tensor input2,
                                                vx_enum policy, vx_tensor output) {
  return run_immediate("vxuTensorAdd", context,
                       [&](vx_graph graph) { return vxTensorAddNode(graph, input1, input2, policy, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuTensorSubtract(vx_context context, vx_tensor input1, vx_tensor input2,
                                                     vx_enum policy, vx_tensor output) {
  return run_immediate("vxuTensorSubtract", context,
                       [&](vx_graph graph) { return vxTensorSubtractNode(graph, input1, input2, policy, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuTensorTableLookup(vx_context context, vx_tensor input1, vx_lut lut,
                                                        vx_tensor output) {
  return run_immediate("vxuTensorTableLookup", context,
                       [&](vx_graph graph) { return vxTensorTableLookupNode(graph, input1, lut, output); });
}

VX_API_ENTRY vx_status VX_API_CALL vxuTensorTranspose(vx_context context, vx_tensor input, vx_tensor output,
                                                      vx_size dimension1, vx_size dimension2) {
  return run_immediate("vxuTensorTranspose", context, [&](vx_graph graph) {
    return vxTensorTransposeNode(graph, input, output, dimension1, dimension2);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuTensorConvertDepth(vx_context context, vx_tensor input, vx_enum policy,
                                                         vx_scalar norm, vx_scalar offset, vx_tensor output) {
  return run_immediate("vxuTensorConvertDepth", context, [&](vx_graph graph) {
    return vxTensorConvertDepthNode(graph, input, policy, norm, offset, output);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuTensorMatrixMultiply(
    vx_context context, vx_tensor input1, vx_tensor input2, vx_tensor input3,
    const vx_tensor_matrix_multiply_params_t* matrix_multiply_params, vx_tensor output) {
  return run_immediate("vxuTensorMatrixMultiply", context, [&](vx_graph graph) {
    return vxTensorMatrixMultiplyNode(graph, input1, input2, input3, matrix_multiply_params, output);
  });
}

VX_API_ENTRY vx_status VX_API_CALL vxuCopy(vx_context context, vx_reference input, vx_reference output) {
  return run_immediate("vxuCopy", context, [&](vx_graph graph) { return vxCopyNode(graph, input, output); });
}

// Ferry's own kernels (vx_ext_ferry.h).

VX_API_ENTRY vx_status VX_API_CALL vxuFerryScharr3x3(vx_context context, vx_image input, vx_image output_x,
                                                     vx_image output_y) {
  return run_immediate("vxuFerryScharr3x3", context,
                       [&](vx_graph graph) { return vxFerryScharr3x3Node(graph, input, output_x, output_y); });
}
