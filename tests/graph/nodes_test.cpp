// The node-creation functions of vx_nodes.h, through the public API only: each
// node holds the application's references at the kernel's parameter indices
// the OpenVX 1.3 specification gives, plain values become scalars of the
// spec's type, and bad input gives an error object rather than a node.
//
// Reading a parameter back with VX_PARAMETER_REF counts a reference that the
// reader releases, as the Khronos conformance tests do.
#include <VX/vx.h>

#include <gtest/gtest.h>

#include <vector>

namespace {

/// The reference a node holds at `index` (null where unset), released at the
/// end of the scope.
class held_parameter {
 public:
  held_parameter(vx_node node, vx_uint32 index) {
    vx_parameter parameter = vxGetParameterByIndex(node, index);
    EXPECT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(parameter)), VX_SUCCESS) << "parameter " << index;
    EXPECT_EQ(vxQueryParameter(parameter, VX_PARAMETER_REF, &reference_, sizeof reference_), VX_SUCCESS);
    vxReleaseParameter(&parameter);
  }
  ~held_parameter() {
    if (reference_ != nullptr) vxReleaseReference(&reference_);
  }
  held_parameter(const held_parameter&) = delete;
  held_parameter& operator=(const held_parameter&) = delete;

  vx_reference get() const { return reference_; }

 private:
  vx_reference reference_ = nullptr;
};

template <class T>
void expect_scalar(vx_node node, vx_uint32 index, vx_enum type, T value) {
  held_parameter held(node, index);
  ASSERT_NE(held.get(), nullptr) << "parameter " << index << " is unset";
  vx_enum reference_type = VX_TYPE_INVALID;
  ASSERT_EQ(vxQueryReference(held.get(), VX_REFERENCE_TYPE, &reference_type, sizeof reference_type), VX_SUCCESS);
  ASSERT_EQ(reference_type, VX_TYPE_SCALAR) << "parameter " << index;
  auto* scalar = reinterpret_cast<vx_scalar>(held.get());
  vx_enum scalar_type = VX_TYPE_INVALID;
  ASSERT_EQ(vxQueryScalar(scalar, VX_SCALAR_TYPE, &scalar_type, sizeof scalar_type), VX_SUCCESS);
  EXPECT_EQ(scalar_type, type) << "parameter " << index;
  T held_value{};
  ASSERT_EQ(vxCopyScalar(scalar, &held_value, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(held_value, value) << "parameter " << index;
}

template <class Object>
void expect_reference(vx_node node, vx_uint32 index, Object* expected) {
  held_parameter held(node, index);
  EXPECT_EQ(held.get(), reinterpret_cast<vx_reference>(expected)) << "parameter " << index;
}

vx_uint32 node_count(vx_graph graph) {
  vx_uint32 count = 0;
  EXPECT_EQ(vxQueryGraph(graph, VX_GRAPH_NUMNODES, &count, sizeof count), VX_SUCCESS);
  return count;
}

class nodes : public ::testing::Test {
 protected:
  void SetUp() override {
    context_ = vxCreateContext();
    ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(context_)), VX_SUCCESS);
    graph_ = vxCreateGraph(context_);
    ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(graph_)), VX_SUCCESS);
  }
  void TearDown() override {
    for (vx_image& image : images_) vxReleaseImage(&image);
    if (graph_ != nullptr) vxReleaseGraph(&graph_);
    vxReleaseContext(&context_);
  }

  vx_image image(vx_df_image format) {
    vx_image made = vxCreateImage(context_, 16, 12, format);
    EXPECT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(made)), VX_SUCCESS);
    images_.push_back(made);
    return made;
  }

  /// Whether this implementation has kernel `kernel`: tests of a node's
  /// parameters skip where it does not (its node function then fails, which
  /// another test checks).
  bool has_kernel(vx_enum kernel) {
    vx_kernel found = vxGetKernelByEnum(context_, kernel);
    if (vxGetStatus(reinterpret_cast<vx_reference>(found)) != VX_SUCCESS) return false;
    vxReleaseKernel(&found);
    return true;
  }

  vx_context context_ = nullptr;
  vx_graph graph_ = nullptr;
  std::vector<vx_image> images_;
};

TEST_F(nodes, sobel3x3_node_holds_input_and_both_gradients_in_order) {
  if (!has_kernel(VX_KERNEL_SOBEL_3x3)) GTEST_SKIP() << "no Sobel3x3 kernel";
  vx_image input = image(VX_DF_IMAGE_U8);
  vx_image gx = image(VX_DF_IMAGE_S16);
  vx_image gy = image(VX_DF_IMAGE_S16);
  vx_node node = vxSobel3x3Node(graph_, input, gx, gy);
  ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
  expect_reference(node, 0, input);
  expect_reference(node, 1, gx);
  expect_reference(node, 2, gy);
  EXPECT_EQ(node_count(graph_), 1u);
  vxReleaseNode(&node);
}

TEST_F(nodes, sobel3x3_node_leaves_an_omitted_optional_output_unset) {
  if (!has_kernel(VX_KERNEL_SOBEL_3x3)) GTEST_SKIP() << "no Sobel3x3 kernel";
  vx_image input = image(VX_DF_IMAGE_U8);
  vx_image gx = image(VX_DF_IMAGE_S16);
  vx_node node = vxSobel3x3Node(graph_, input, gx, nullptr);
  ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
  expect_reference(node, 1, gx);
  expect_reference(node, 2, static_cast<vx_image>(nullptr));
  vxReleaseNode(&node);
}

TEST_F(nodes, add_node_turns_the_policy_into_an_enum_scalar_before_the_output) {
  if (!has_kernel(VX_KERNEL_ADD)) GTEST_SKIP() << "no Add kernel";
  vx_image in1 = image(VX_DF_IMAGE_U8);
  vx_image in2 = image(VX_DF_IMAGE_U8);
  vx_image out = image(VX_DF_IMAGE_S16);
  vx_node node = vxAddNode(graph_, in1, in2, VX_CONVERT_POLICY_SATURATE, out);
  ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
  expect_reference(node, 0, in1);
  expect_reference(node, 1, in2);
  expect_scalar<vx_enum>(node, 2, VX_TYPE_ENUM, VX_CONVERT_POLICY_SATURATE);
  expect_reference(node, 3, out);
  vxReleaseNode(&node);
}

TEST_F(nodes, channel_extract_node_holds_the_channel_as_an_enum_scalar) {
  vx_image input = image(VX_DF_IMAGE_RGB);
  vx_image output = image(VX_DF_IMAGE_U8);
  vx_node node = vxChannelExtractNode(graph_, input, VX_CHANNEL_G, output);
  ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
  expect_reference(node, 0, input);
  expect_scalar<vx_enum>(node, 1, VX_TYPE_ENUM, VX_CHANNEL_G);
  expect_reference(node, 2, output);
  vxReleaseNode(&node);
}

TEST_F(nodes, scale_image_node_holds_the_interpolation_type_last) {
  vx_image src = image(VX_DF_IMAGE_U8);
  vx_image dst = image(VX_DF_IMAGE_U8);
  vx_node node = vxScaleImageNode(graph_, src, dst, VX_INTERPOLATION_BILINEAR);
  ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
  expect_reference(node, 0, src);
  expect_reference(node, 1, dst);
  expect_scalar<vx_enum>(node, 2, VX_TYPE_ENUM, VX_INTERPOLATION_BILINEAR);
  vxReleaseNode(&node);
}

TEST_F(nodes, channel_combine_node_leaves_the_planes_it_is_not_given_unset) {
  vx_image y = image(VX_DF_IMAGE_U8);
  vx_image u = image(VX_DF_IMAGE_U8);
  vx_image v = image(VX_DF_IMAGE_U8);
  vx_image output = image(VX_DF_IMAGE_YUV4);
  vx_node node = vxChannelCombineNode(graph_, y, u, v, nullptr, output);
  ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
  expect_reference(node, 0, y);
  expect_reference(node, 1, u);
  expect_reference(node, 2, v);
  expect_reference(node, 3, static_cast<vx_image>(nullptr));
  expect_reference(node, 4, output);
  vxReleaseNode(&node);
}

TEST_F(nodes, warp_affine_node_holds_the_matrix_then_the_interpolation_type) {
  vx_image input = image(VX_DF_IMAGE_U8);
  vx_image output = image(VX_DF_IMAGE_U8);
  vx_matrix matrix = vxCreateMatrix(context_, VX_TYPE_FLOAT32, 2, 3);
  vx_node node = vxWarpAffineNode(graph_, input, matrix, VX_INTERPOLATION_NEAREST_NEIGHBOR, output);
  ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
  expect_reference(node, 0, input);
  expect_reference(node, 1, matrix);
  expect_scalar<vx_enum>(node, 2, VX_TYPE_ENUM, VX_INTERPOLATION_NEAREST_NEIGHBOR);
  expect_reference(node, 3, output);
  vxReleaseNode(&node);
  vxReleaseMatrix(&matrix);
}

TEST_F(nodes, min_max_loc_node_holds_its_optional_outputs_where_the_spec_puts_them) {
  vx_image input = image(VX_DF_IMAGE_U8);
  vx_uint8 zero = 0;
  vx_size none = 0;
  vx_scalar min_value = vxCreateScalar(context_, VX_TYPE_UINT8, &zero);
  vx_scalar max_value = vxCreateScalar(context_, VX_TYPE_UINT8, &zero);
  vx_array max_locations = vxCreateArray(context_, VX_TYPE_COORDINATES2D, 4);
  vx_scalar min_count = vxCreateScalar(context_, VX_TYPE_SIZE, &none);
  vx_node node = vxMinMaxLocNode(graph_, input, min_value, max_value, nullptr, max_locations, min_count, nullptr);
  ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
  expect_reference(node, 0, input);
  expect_reference(node, 1, min_value);
  expect_reference(node, 2, max_value);
  expect_reference(node, 3, static_cast<vx_array>(nullptr));
  expect_reference(node, 4, max_locations);
  expect_reference(node, 5, min_count);
  expect_reference(node, 6, static_cast<vx_scalar>(nullptr));
  vxReleaseNode(&node);
  for (vx_scalar* scalar : {&min_value, &max_value, &min_count}) vxReleaseScalar(scalar);
  vxReleaseArray(&max_locations);
}

TEST_F(nodes, mean_std_dev_node_may_leave_the_deviation_unset) {
  vx_image input = image(VX_DF_IMAGE_U8);
  vx_float32 zero = 0;
  vx_scalar mean = vxCreateScalar(context_, VX_TYPE_FLOAT32, &zero);
  vx_node node = vxMeanStdDevNode(graph_, input, mean, nullptr);
  ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
  expect_reference(node, 0, input);
  expect_reference(node, 1, mean);
  expect_reference(node, 2, static_cast<vx_scalar>(nullptr));
  vxReleaseNode(&node);
  vxReleaseScalar(&mean);
}

TEST_F(nodes, non_linear_filter_node_holds_the_function_first) {
  if (!has_kernel(VX_KERNEL_NON_LINEAR_FILTER)) GTEST_SKIP() << "no NonLinearFilter kernel";
  vx_image input = image(VX_DF_IMAGE_U8);
  vx_image output = image(VX_DF_IMAGE_U8);
  vx_matrix mask = vxCreateMatrixFromPattern(context_, VX_PATTERN_BOX, 3, 3);
  ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(mask)), VX_SUCCESS);
  vx_node node = vxNonLinearFilterNode(graph_, VX_NONLINEAR_FILTER_MEDIAN, input, mask, output);
  ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
  expect_scalar<vx_enum>(node, 0, VX_TYPE_ENUM, VX_NONLINEAR_FILTER_MEDIAN);
  expect_reference(node, 1, input);
  expect_reference(node, 2, mask);
  expect_reference(node, 3, output);
  vxReleaseNode(&node);
  vxReleaseMatrix(&mask);
}

TEST_F(nodes, value_scalars_die_with_their_node) {
  if (!has_kernel(VX_KERNEL_ADD)) GTEST_SKIP() << "no Add kernel";
  vx_image in1 = image(VX_DF_IMAGE_U8);
  vx_image in2 = image(VX_DF_IMAGE_U8);
  vx_image out = image(VX_DF_IMAGE_S16);
  vx_uint32 before = 0;
  ASSERT_EQ(vxQueryContext(context_, VX_CONTEXT_REFERENCES, &before, sizeof before), VX_SUCCESS);
  vx_graph graph = vxCreateGraph(context_);
  vx_node node = vxAddNode(graph, in1, in2, VX_CONVERT_POLICY_WRAP, out);
  ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
  vxReleaseNode(&node);
  vxReleaseGraph(&graph);
  vx_uint32 after = 0;
  ASSERT_EQ(vxQueryContext(context_, VX_CONTEXT_REFERENCES, &after, sizeof after), VX_SUCCESS);
  EXPECT_EQ(after, before) << "the policy scalar outlived its node and graph";
}

TEST_F(nodes, null_graph_gives_no_node) {
  vx_image input = image(VX_DF_IMAGE_U8);
  vx_image output = image(VX_DF_IMAGE_U8);
  vx_node node = vxMedian3x3Node(nullptr, input, output);
  EXPECT_NE(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
}

TEST_F(nodes, a_reference_that_is_no_graph_gives_an_invalid_reference_error) {
  vx_image input = image(VX_DF_IMAGE_U8);
  vx_image output = image(VX_DF_IMAGE_U8);
  vx_node node = vxMedian3x3Node(reinterpret_cast<vx_graph>(input), input, output);
  EXPECT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_ERROR_INVALID_REFERENCE);
}

TEST_F(nodes, a_wrong_parameter_type_fails_and_leaves_no_node_in_the_graph) {
  if (!has_kernel(VX_KERNEL_MEDIAN_3x3)) GTEST_SKIP() << "no Median3x3 kernel";
  vx_image input = image(VX_DF_IMAGE_U8);
  vx_matrix not_an_image = vxCreateMatrixFromPattern(context_, VX_PATTERN_BOX, 3, 3);
  vx_node node = vxMedian3x3Node(graph_, input, reinterpret_cast<vx_image>(not_an_image));
  EXPECT_NE(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
  EXPECT_EQ(node_count(graph_), 0u);
  vxReleaseMatrix(&not_an_image);
}

TEST_F(nodes, a_kernel_this_implementation_lacks_fails_with_the_kernel_lookup_status) {
  // HOG cells is not among the kernels Ferry implements first; where it is
  // implemented there is nothing to check here.
  vx_kernel kernel = vxGetKernelByEnum(context_, VX_KERNEL_HOG_CELLS);
  vx_status lookup = vxGetStatus(reinterpret_cast<vx_reference>(kernel));
  if (lookup == VX_SUCCESS) {
    vxReleaseKernel(&kernel);
    GTEST_SKIP() << "the HOG cells kernel is implemented";
  }
  vx_image input = image(VX_DF_IMAGE_U8);
  vx_node node = vxHOGCellsNode(graph_, input, 8, 8, 9, nullptr, nullptr);
  EXPECT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), lookup);
  EXPECT_EQ(node_count(graph_), 0u);
}

TEST_F(nodes, hog_features_node_refuses_a_structure_size_that_is_not_vx_hog_t) {
  if (!has_kernel(VX_KERNEL_HOG_FEATURES)) GTEST_SKIP() << "no HOG features kernel";
  vx_image input = image(VX_DF_IMAGE_U8);
  vx_hog_t params{};
  vx_node node = vxHOGFeaturesNode(graph_, input, nullptr, nullptr, &params, sizeof params + 1, nullptr);
  EXPECT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(node_count(graph_), 0u);
}

}  // namespace
