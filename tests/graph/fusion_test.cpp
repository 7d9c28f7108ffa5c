// Fusion (docs/graph.md, "Fusion"): the paper's three pipelines, with their
// intermediates virtual, give the same bytes and valid regions fused and
// unfused (FERRY_VX_FUSION=0 at verification), and the composed reference's
// values, for every border mode and odd sizes; an intermediate that a node
// outside the fused group reads still reaches it.
#include "reference.hpp"
#include "vx_test_support.hpp"

#include <VX/vx.h>
#include <VX/vx_ext_ferry.h>
#include <CL/cl.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace ref = ferry::graph::reference;
using namespace ferry::graph::testing;

namespace {

enum class pipeline { edge_detect, filtering, box_closing };

const char* pipeline_name(pipeline p) {
  return p == pipeline::edge_detect ? "edge_detect" : p == pipeline::filtering ? "filtering" : "box_closing";
}

// The composed reference of a pipeline, with the region it defines.
ref::filtered reference_of(pipeline p, const ref::image& in, const ref::border& b) {
  switch (p) {
    case pipeline::edge_detect: {
      ref::filtered median = ref::median3x3(in, b);
      ref::gradients g = ref::scharr3x3(median.out, b);
      ref::rect valid = g.valid;
      if (b.mode == ref::border_mode::undefined)  // the second stencil's region inside the first's
        valid = {2, 2, in.width > 2 ? in.width - 2 : 0, in.height > 2 ? in.height - 2 : 0};
      if (valid.empty()) valid = {};
      return {ref::magnitude(g.gx, g.gy), valid};
    }
    case pipeline::filtering: {
      ref::gradients g = ref::sobel3x3(in, b);
      ref::image magnitude = ref::magnitude(g.gx, g.gy);
      ref::image u8 = ref::convert_depth(magnitude, ref::pixel_format::u8, ref::convert_policy::saturate, 0);
      ref::filtered eroded = ref::erode3x3(u8, b);
      ref::filtered dilated = ref::dilate3x3(eroded.out, b);
      ref::rect valid = dilated.valid;
      if (b.mode == ref::border_mode::undefined)
        valid = {3, 3, in.width > 3 ? in.width - 3 : 0, in.height > 3 ? in.height - 3 : 0};
      if (valid.empty()) valid = {};
      return {dilated.out, valid};
    }
    case pipeline::box_closing: {
      ref::convolution box{3, 3, std::vector<int16_t>(9, 1), 8};
      ref::filtered convolved = ref::convolve(in, box, ref::pixel_format::u8, b);
      ref::filtered eroded = ref::erode3x3(convolved.out, b);
      ref::rect valid = eroded.valid;
      if (b.mode == ref::border_mode::undefined)
        valid = {2, 2, in.width > 2 ? in.width - 2 : 0, in.height > 2 ? in.height - 2 : 0};
      if (valid.empty()) valid = {};
      return {ref::threshold_image(eroded.out, {ref::threshold::kind::binary, 100, 0, 0, 255, 0}), valid};
    }
  }
  return {};
}

ref::pixel_format output_format(pipeline p) {
  return p == pipeline::edge_detect ? ref::pixel_format::s16 : ref::pixel_format::u8;
}

class vx_fusion : public ::testing::Test {
 protected:
  void SetUp() override {
    // Fused whatever the devices (unset, CPU devices run unfused).
    setenv("FERRY_VX_FUSION", "1", 1);
    context_ = vxCreateContext();
    ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(context_)), VX_SUCCESS);
  }
  void TearDown() override {
    unsetenv("FERRY_VX_FUSION");
    EXPECT_EQ(vxReleaseContext(&context_), VX_SUCCESS);
  }

  // Builds pipeline `p` from `input` to `output` in a new graph, every node
  // with border `b`; the caller verifies and releases it.
  vx_graph build(pipeline p, vx_image input, vx_image output, const ref::border& b) {
    vx_graph graph = vxCreateGraph(context_);
    auto v = [&] { return vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT); };
    std::vector<vx_node> nodes;
    std::vector<vx_reference> held;
    switch (p) {
      case pipeline::edge_detect: {
        vx_image smooth = v(), gx = v(), gy = v();
        nodes = {vxMedian3x3Node(graph, input, smooth), vxFerryScharr3x3Node(graph, smooth, gx, gy),
                 vxMagnitudeNode(graph, gx, gy, output)};
        held = {(vx_reference)smooth, (vx_reference)gx, (vx_reference)gy};
        break;
      }
      case pipeline::filtering: {
        vx_image gx = v(), gy = v(), magnitude = v(), u8 = v(), eroded = v();
        vx_scalar shift = vxCreateScalar(context_, VX_TYPE_INT32, &zero_);
        nodes = {vxSobel3x3Node(graph, input, gx, gy), vxMagnitudeNode(graph, gx, gy, magnitude),
                 vxConvertDepthNode(graph, magnitude, u8, VX_CONVERT_POLICY_SATURATE, shift),
                 vxErode3x3Node(graph, u8, eroded), vxDilate3x3Node(graph, eroded, output)};
        held = {(vx_reference)gx, (vx_reference)gy, (vx_reference)magnitude, (vx_reference)u8, (vx_reference)eroded,
                (vx_reference)shift};
        break;
      }
      case pipeline::box_closing: {
        vx_image convolved = v(), eroded = v();
        vx_convolution box = vxCreateConvolution(context_, 3, 3);
        std::vector<vx_int16> ones(9, 1);
        vx_uint32 scale = 8;
        vxCopyConvolutionCoefficients(box, ones.data(), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST);
        vxSetConvolutionAttribute(box, VX_CONVOLUTION_SCALE, &scale, sizeof scale);
        vx_threshold t = vxCreateThresholdForImage(context_, VX_THRESHOLD_TYPE_BINARY, VX_DF_IMAGE_U8, VX_DF_IMAGE_U8);
        vx_pixel_value_t value{}, yes{}, no{};
        value.U8 = 100, yes.U8 = 255, no.U8 = 0;
        vxCopyThresholdValue(t, &value, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST);
        vxCopyThresholdOutput(t, &yes, &no, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST);
        nodes = {vxConvolveNode(graph, input, box, convolved), vxErode3x3Node(graph, convolved, eroded),
                 vxThresholdNode(graph, eroded, t, output)};
        held = {(vx_reference)convolved, (vx_reference)eroded, (vx_reference)box, (vx_reference)t};
        break;
      }
    }
    vx_border_t border = vx_border(b);
    for (vx_node node : nodes) {
      EXPECT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
      EXPECT_EQ(vxSetNodeAttribute(node, VX_NODE_BORDER, &border, sizeof border), VX_SUCCESS);
      vxReleaseNode(&node);
    }
    for (vx_reference ref : held) vxReleaseReference(&ref);
    return graph;
  }

  // Runs pipeline `p` fused or not and returns its output and valid region.
  ref::filtered run(pipeline p, const ref::image& in, const ref::border& b, bool fused) {
    setenv("FERRY_VX_FUSION", fused ? "1" : "0", 1);
    vx_image input = make_image(context_, in);
    vx_image output = vxCreateImage(context_, in.width, in.height, vx_format(output_format(p)));
    vx_graph graph = build(p, input, output, b);
    EXPECT_EQ(vxVerifyGraph(graph), VX_SUCCESS);
    EXPECT_EQ(vxProcessGraph(graph), VX_SUCCESS);
    ref::filtered result{read_image(output, output_format(p)), valid_region(output)};
    vxReleaseGraph(&graph);
    vxReleaseImage(&input);
    vxReleaseImage(&output);
    return result;
  }

  vx_context context_ = nullptr;
  vx_int32 zero_ = 0;
};

TEST_F(vx_fusion, the_papers_pipelines_give_the_same_bytes_fused_and_unfused_and_match_the_reference) {
  const ref::border borders[] = {{ref::border_mode::undefined, 0}, {ref::border_mode::constant, 201},
                                 {ref::border_mode::replicate, 0}};
  struct size {
    uint32_t w, h;
  } sizes[] = {{1, 1}, {3, 5}, {33, 9}, {641, 479}};
  uint32_t seed = 500;
  for (pipeline p : {pipeline::edge_detect, pipeline::filtering, pipeline::box_closing})
    for (const ref::border& b : borders)
      for (const size& s : sizes) {
        std::string what = std::string(pipeline_name(p)) + " " + border_name(b) + " " + std::to_string(s.w) + "x" +
                           std::to_string(s.h);
        ref::image in = random_image(s.w, s.h, ref::pixel_format::u8, seed++);
        ref::filtered fused = run(p, in, b, true);
        ref::filtered unfused = run(p, in, b, false);
        ref::filtered want = reference_of(p, in, b);
        EXPECT_EQ(fused.valid, want.valid) << what;
        EXPECT_EQ(unfused.valid, want.valid) << what;
        expect_near(fused.out, unfused.out, want.valid, 0, what + ": fused against unfused");
        int64_t tolerance = p == pipeline::edge_detect ? ref::magnitude_tolerance : 0;
        expect_near(fused.out, want.out, want.valid, tolerance, what + ": fused against the reference");
      }
}

// Sobel's x gradient feeds the fused Magnitude and also a second graph
// output: it must be written to global memory too, whole.
TEST_F(vx_fusion, an_intermediate_the_application_reads_is_complete_in_global_memory) {
  ref::image in = random_image(97, 45, ref::pixel_format::u8, 77);
  ref::border replicate{ref::border_mode::replicate, 0};
  vx_image input = make_image(context_, in);
  vx_graph graph = vxCreateGraph(context_);
  vx_image gx = vxCreateImage(context_, 97, 45, VX_DF_IMAGE_S16);  // not virtual: the application reads it
  vx_image gy = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
  vx_image magnitude = vxCreateImage(context_, 97, 45, VX_DF_IMAGE_S16);
  vx_node sobel = vxSobel3x3Node(graph, input, gx, gy);
  vx_node mag = vxMagnitudeNode(graph, gx, gy, magnitude);
  vx_border_t border = vx_border(replicate);
  vxSetNodeAttribute(sobel, VX_NODE_BORDER, &border, sizeof border);
  ASSERT_EQ(vxVerifyGraph(graph), VX_SUCCESS);
  ASSERT_EQ(vxProcessGraph(graph), VX_SUCCESS);
  ref::gradients g = ref::sobel3x3(in, replicate);
  ref::rect all{0, 0, 97, 45};
  expect_near(read_image(gx, ref::pixel_format::s16), g.gx, all, 0, "Sobel x, a graph output");
  expect_near(read_image(magnitude, ref::pixel_format::s16), ref::magnitude(g.gx, g.gy), all,
              ref::magnitude_tolerance, "Magnitude");
  vxReleaseNode(&sobel);
  vxReleaseNode(&mag);
  for (vx_image* image : {&input, &gx, &gy, &magnitude}) vxReleaseImage(image);
  vxReleaseGraph(&graph);
}

// A virtual intermediate of a fused group that a user kernel (on the host)
// reads too: the group writes it to global memory for the user kernel.
vx_status VX_CALLBACK sum_pixels(vx_node node, const vx_reference* parameters, vx_uint32 count) {
  auto* image = reinterpret_cast<vx_image>(parameters[0]);
  vx_uint32 w = 0, h = 0;
  vxQueryImage(image, VX_IMAGE_WIDTH, &w, sizeof w);
  vxQueryImage(image, VX_IMAGE_HEIGHT, &h, sizeof h);
  vx_rectangle_t rect{0, 0, w, h};
  vx_map_id id = 0;
  vx_imagepatch_addressing_t address{};
  void* base = nullptr;
  vx_status status = vxMapImagePatch(image, &rect, 0, &id, &address, &base, VX_READ_ONLY, VX_MEMORY_TYPE_HOST, 0);
  if (status != VX_SUCCESS) return status;
  vx_int64 sum = 0;
  for (vx_uint32 y = 0; y < h; ++y)
    for (vx_uint32 x = 0; x < w; ++x) sum += *static_cast<vx_uint8*>(vxFormatImagePatchAddress2d(base, x, y, &address));
  vxUnmapImagePatch(image, id);
  return vxCopyScalar(reinterpret_cast<vx_scalar>(parameters[1]), &sum, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST);
}

vx_status VX_CALLBACK accept_all(vx_node, const vx_reference*, vx_uint32, vx_meta_format*) { return VX_SUCCESS; }

TEST_F(vx_fusion, a_virtual_intermediate_a_user_kernel_reads_reaches_it_whole) {
  vx_enum id = 0;
  ASSERT_EQ(vxAllocateUserKernelId(context_, &id), VX_SUCCESS);
  vx_kernel kernel = vxAddUserKernel(context_, "test.sum_pixels", id, sum_pixels, 2, accept_all, nullptr, nullptr);
  ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(kernel)), VX_SUCCESS);
  ASSERT_EQ(vxAddParameterToKernel(kernel, 0, VX_INPUT, VX_TYPE_IMAGE, VX_PARAMETER_STATE_REQUIRED), VX_SUCCESS);
  ASSERT_EQ(vxAddParameterToKernel(kernel, 1, VX_OUTPUT, VX_TYPE_SCALAR, VX_PARAMETER_STATE_REQUIRED), VX_SUCCESS);
  ASSERT_EQ(vxFinalizeKernel(kernel), VX_SUCCESS);

  ref::image in = random_image(70, 33, ref::pixel_format::u8, 78);
  ref::border replicate{ref::border_mode::replicate, 0};
  vx_image input = make_image(context_, in);
  vx_image output = vxCreateImage(context_, 70, 33, VX_DF_IMAGE_U8);
  vx_graph graph = vxCreateGraph(context_);
  vx_image smooth = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
  vx_int64 zero = 0;
  vx_scalar sum = vxCreateScalar(context_, VX_TYPE_INT64, &zero);
  vx_node median = vxMedian3x3Node(graph, input, smooth);
  vx_node erode = vxErode3x3Node(graph, smooth, output);
  vx_node user = vxCreateGenericNode(graph, kernel);
  ASSERT_EQ(vxSetParameterByIndex(user, 0, reinterpret_cast<vx_reference>(smooth)), VX_SUCCESS);
  ASSERT_EQ(vxSetParameterByIndex(user, 1, reinterpret_cast<vx_reference>(sum)), VX_SUCCESS);
  vx_border_t border = vx_border(replicate);
  vxSetNodeAttribute(median, VX_NODE_BORDER, &border, sizeof border);
  vxSetNodeAttribute(erode, VX_NODE_BORDER, &border, sizeof border);
  ASSERT_EQ(vxVerifyGraph(graph), VX_SUCCESS);
  ASSERT_EQ(vxProcessGraph(graph), VX_SUCCESS);
  ref::filtered smoothed = ref::median3x3(in, replicate);
  vx_int64 want = 0;
  for (int64_t p : smoothed.out.pixels) want += p;
  vx_int64 got = -1;
  ASSERT_EQ(vxCopyScalar(sum, &got, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  EXPECT_EQ(got, want);
  expect_near(read_image(output, ref::pixel_format::u8), ref::erode3x3(smoothed.out, replicate).out, {0, 0, 70, 33}, 0,
              "Erode after the fused Median");
  for (vx_node* node : {&median, &erode, &user}) vxReleaseNode(node);
  for (vx_image* image : {&input, &output, &smooth}) vxReleaseImage(image);
  vxReleaseScalar(&sum);
  vxReleaseGraph(&graph);
  vxReleaseKernel(&kernel);
}

}  // namespace

namespace {

// The tiled runs of this suite (ctest's graph.two_devices: PoCL with two
// devices, POCL_DEVICES="pthread pthread") say how many devices they expect,
// so that a loader change that left one device does not pass them silently.
TEST(vx_tiling, the_devices_the_run_expects_are_there) {
  const char* expected = std::getenv("FERRY_VX_EXPECT_DEVICES");
  if (expected == nullptr) GTEST_SKIP() << "FERRY_VX_EXPECT_DEVICES is not set";
  cl_platform_id platform = nullptr;
  ASSERT_EQ(clGetPlatformIDs(1, &platform, nullptr), CL_SUCCESS);
  cl_uint devices = 0;
  ASSERT_EQ(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &devices), CL_SUCCESS);
  EXPECT_EQ(devices, static_cast<cl_uint>(std::atoi(expected)));
}

}  // namespace
