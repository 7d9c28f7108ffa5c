// Every pixel kernel through the public API, run by the OpenCL platform the
// process finds (PoCL here; FERRY_VX_DEVICES picks another), against the
// plain reference of tests/graph/reference.cpp: odd sizes, every border mode,
// in graph mode and in immediate mode (vxu), compared within the tolerance
// the Khronos conformance tests allow (exact for most kernels).
#include "reference.hpp"
#include "vx_test_support.hpp"

#include <VX/vx.h>
#include <VX/vx_ext_ferry.h>
#include <VX/vxu.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace ref = ferry::graph::reference;
using namespace ferry::graph::testing;

namespace {

struct size {
  uint32_t w, h;
};
const size sizes[] = {{1, 1}, {3, 5}, {641, 479}};
const ref::border borders[] = {{ref::border_mode::undefined, 0}, {ref::border_mode::constant, 77},
                               {ref::border_mode::replicate, 0}};

class vx_kernels : public ::testing::Test {
 protected:
  void SetUp() override {
    context_ = vxCreateContext();
    ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(context_)), VX_SUCCESS);
    vxRegisterLogCallback(context_, [](vx_context, vx_reference, vx_status, const vx_char* message) {
      std::fprintf(stderr, "vx log: %s\n", message);
    }, vx_false_e);
  }
  void TearDown() override { EXPECT_EQ(vxReleaseContext(&context_), VX_SUCCESS); }

  // Sets the context's immediate border (what vxu functions use).
  void immediate_border(const ref::border& b) {
    vx_border_t border = vx_border(b);
    ASSERT_EQ(vxSetContextAttribute(context_, VX_CONTEXT_IMMEDIATE_BORDER, &border, sizeof border), VX_SUCCESS);
  }

  vx_scalar scalar_enum(vx_enum value) { return vxCreateScalar(context_, VX_TYPE_ENUM, &value); }

  vx_context context_ = nullptr;
};

using filter3x3 = ref::filtered (*)(const ref::image&, ref::border);
using vxu_filter = vx_status (*)(vx_context, vx_image, vx_image);

// The 3x3 filters in immediate mode, every size and border.
TEST_F(vx_kernels, filters_3x3_match_the_reference_at_every_size_and_border) {
  struct case_t {
    const char* name;
    filter3x3 reference;
    vxu_filter run;
    int64_t tolerance;
  } cases[] = {{"Box3x3", ref::box3x3, vxuBox3x3, 0},       {"Gaussian3x3", ref::gaussian3x3, vxuGaussian3x3, 0},
               {"Median3x3", ref::median3x3, vxuMedian3x3, 0}, {"Erode3x3", ref::erode3x3, vxuErode3x3, 0},
               {"Dilate3x3", ref::dilate3x3, vxuDilate3x3, 0}};
  uint32_t seed = 1;
  for (const auto& c : cases)
    for (const size& s : sizes)
      for (const ref::border& b : borders) {
        std::string what = std::string(c.name) + " " + std::to_string(s.w) + "x" + std::to_string(s.h) + " " +
                           border_name(b);
        ref::image in = random_image(s.w, s.h, ref::pixel_format::u8, seed++);
        ref::filtered want = c.reference(in, b);
        immediate_border(b);
        vx_image input = make_image(context_, in);
        vx_image output = vxCreateImage(context_, s.w, s.h, VX_DF_IMAGE_U8);
        ASSERT_EQ(c.run(context_, input, output), VX_SUCCESS) << what;
        EXPECT_EQ(valid_region(output), want.valid) << what;
        expect_near(read_image(output, ref::pixel_format::u8), want.out, want.valid, c.tolerance, what);
        vxReleaseImage(&input);
        vxReleaseImage(&output);
      }
}

TEST_F(vx_kernels, sobel_and_scharr_match_the_reference_with_either_output_alone) {
  for (int scharr = 0; scharr < 2; ++scharr)
    for (const ref::border& b : borders) {
      std::string what = std::string(scharr ? "Scharr3x3 " : "Sobel3x3 ") + border_name(b);
      ref::image in = random_image(641, 479, ref::pixel_format::u8, 40 + scharr);
      ref::gradients want = scharr ? ref::scharr3x3(in, b) : ref::sobel3x3(in, b);
      immediate_border(b);
      vx_image input = make_image(context_, in);
      vx_image gx = vxCreateImage(context_, 641, 479, VX_DF_IMAGE_S16);
      vx_image gy = vxCreateImage(context_, 641, 479, VX_DF_IMAGE_S16);
      auto run = scharr ? vxuFerryScharr3x3 : vxuSobel3x3;
      ASSERT_EQ(run(context_, input, gx, gy), VX_SUCCESS) << what;
      expect_near(read_image(gx, ref::pixel_format::s16), want.gx, want.valid, 0, what + " x");
      expect_near(read_image(gy, ref::pixel_format::s16), want.gy, want.valid, 0, what + " y");
      // Only the y gradient: the x image is left as it was.
      vx_image only_y = vxCreateImage(context_, 641, 479, VX_DF_IMAGE_S16);
      ASSERT_EQ(run(context_, input, nullptr, only_y), VX_SUCCESS) << what;
      expect_near(read_image(only_y, ref::pixel_format::s16), want.gy, want.valid, 0, what + " y alone");
      EXPECT_EQ(run(context_, input, nullptr, nullptr), VX_ERROR_NOT_SUFFICIENT) << what;
      for (vx_image* image : {&input, &gx, &gy, &only_y}) vxReleaseImage(image);
    }
}

TEST_F(vx_kernels, magnitude_and_phase_match_the_reference) {
  ref::image x = random_image(641, 479, ref::pixel_format::s16, 7);
  ref::image y = random_image(641, 479, ref::pixel_format::s16, 8);
  // The extremes, where saturation and the wrap of the phase show.
  x.pixels[0] = -32768, y.pixels[0] = -32768;
  x.pixels[1] = 32767, y.pixels[1] = 32767;
  x.pixels[2] = -5, y.pixels[2] = -1;
  vx_image gx = make_image(context_, x), gy = make_image(context_, y);
  vx_image magnitude = vxCreateImage(context_, 641, 479, VX_DF_IMAGE_S16);
  vx_image phase = vxCreateImage(context_, 641, 479, VX_DF_IMAGE_U8);
  ASSERT_EQ(vxuMagnitude(context_, gx, gy, magnitude), VX_SUCCESS);
  ASSERT_EQ(vxuPhase(context_, gx, gy, phase), VX_SUCCESS);
  ref::rect all{0, 0, 641, 479};
  expect_near(read_image(magnitude, ref::pixel_format::s16), ref::magnitude(x, y), all, ref::magnitude_tolerance,
              "Magnitude");
  expect_near(read_image(phase, ref::pixel_format::u8), ref::phase(x, y), all, ref::phase_tolerance, "Phase",
              ref::phase_distance);
  for (vx_image* image : {&gx, &gy, &magnitude, &phase}) vxReleaseImage(image);
}

TEST_F(vx_kernels, arithmetic_and_bitwise_match_the_reference_for_every_format_and_policy) {
  using ref::pixel_format;
  for (const size& s : sizes)
    for (pixel_format f1 : {pixel_format::u8, pixel_format::s16})
      for (pixel_format f2 : {pixel_format::u8, pixel_format::s16})
        for (pixel_format out : {pixel_format::u8, pixel_format::s16}) {
          if (out == pixel_format::u8 && (f1 != pixel_format::u8 || f2 != pixel_format::u8)) continue;
          std::string what = std::to_string(s.w) + "x" + std::to_string(s.h) + " in " + std::to_string(int(f1)) +
                             "," + std::to_string(int(f2)) + " out " + std::to_string(int(out));
          ref::image a = random_image(s.w, s.h, f1, 100 + s.w), b = random_image(s.w, s.h, f2, 200 + s.h);
          vx_image ia = make_image(context_, a), ib = make_image(context_, b);
          vx_image o = vxCreateImage(context_, s.w, s.h, vx_format(out));
          ASSERT_EQ(vxuAbsDiff(context_, ia, ib, o), VX_SUCCESS) << what;
          ref::rect all{0, 0, s.w, s.h};
          expect_near(read_image(o, out), ref::absdiff(a, b, out), all, 0, "AbsDiff " + what);
          for (auto policy : {ref::convert_policy::wrap, ref::convert_policy::saturate}) {
            vx_enum p = policy == ref::convert_policy::wrap ? VX_CONVERT_POLICY_WRAP : VX_CONVERT_POLICY_SATURATE;
            ASSERT_EQ(vxuAdd(context_, ia, ib, p, o), VX_SUCCESS) << what;
            expect_near(read_image(o, out), ref::add(a, b, policy, out), all, 0, "Add " + what);
            ASSERT_EQ(vxuSubtract(context_, ia, ib, p, o), VX_SUCCESS) << what;
            expect_near(read_image(o, out), ref::subtract(a, b, policy, out), all, 0, "Subtract " + what);
            for (auto rounding : {ref::round_policy::to_zero, ref::round_policy::to_nearest_even})
              for (float scale : {1.0f, 1.0f / 255, 0.37f}) {
                vx_enum r = rounding == ref::round_policy::to_zero ? VX_ROUND_POLICY_TO_ZERO
                                                                   : VX_ROUND_POLICY_TO_NEAREST_EVEN;
                ASSERT_EQ(vxuMultiply(context_, ia, ib, scale, p, r, o), VX_SUCCESS) << what;
                // Exact: the reference rounds the same double-precision product.
                expect_near(read_image(o, out), ref::multiply(a, b, scale, policy, rounding, out), all, 0,
                            "Multiply " + what + " scale " + std::to_string(scale));
              }
          }
          if (f1 == pixel_format::u8 && f2 == pixel_format::u8 && out == pixel_format::u8) {
            ASSERT_EQ(vxuAnd(context_, ia, ib, o), VX_SUCCESS);
            expect_near(read_image(o, out), ref::and_(a, b), all, 0, "And " + what);
            ASSERT_EQ(vxuOr(context_, ia, ib, o), VX_SUCCESS);
            expect_near(read_image(o, out), ref::or_(a, b), all, 0, "Or " + what);
            ASSERT_EQ(vxuXor(context_, ia, ib, o), VX_SUCCESS);
            expect_near(read_image(o, out), ref::xor_(a, b), all, 0, "Xor " + what);
            ASSERT_EQ(vxuNot(context_, ia, o), VX_SUCCESS);
            expect_near(read_image(o, out), ref::not_(a), all, 0, "Not " + what);
          }
          for (vx_image* image : {&ia, &ib, &o}) vxReleaseImage(image);
        }
}

TEST_F(vx_kernels, a_u8_output_of_an_s16_input_is_refused_with_the_node_named) {
  ref::image a = random_image(16, 16, ref::pixel_format::s16, 3);
  vx_image ia = make_image(context_, a);
  vx_image o = vxCreateImage(context_, 16, 16, VX_DF_IMAGE_U8);
  EXPECT_EQ(vxuAdd(context_, ia, ia, VX_CONVERT_POLICY_WRAP, o), VX_ERROR_INVALID_FORMAT);
  vx_image small = vxCreateImage(context_, 15, 16, VX_DF_IMAGE_S16);
  EXPECT_EQ(vxuAdd(context_, ia, small, VX_CONVERT_POLICY_WRAP, o), VX_ERROR_INVALID_DIMENSION);
  // The context stays usable.
  vx_image s = vxCreateImage(context_, 16, 16, VX_DF_IMAGE_S16);
  EXPECT_EQ(vxuAdd(context_, ia, ia, VX_CONVERT_POLICY_SATURATE, s), VX_SUCCESS);
  for (vx_image* image : {&ia, &o, &small, &s}) vxReleaseImage(image);
}

TEST_F(vx_kernels, convert_depth_table_lookup_weighted_average_and_threshold_match_the_reference) {
  ref::rect all{0, 0, 641, 479};
  ref::image u8 = random_image(641, 479, ref::pixel_format::u8, 11);
  ref::image u8b = random_image(641, 479, ref::pixel_format::u8, 12);
  ref::image s16 = random_image(641, 479, ref::pixel_format::s16, 13);
  vx_image iu8 = make_image(context_, u8), iu8b = make_image(context_, u8b), is16 = make_image(context_, s16);
  vx_image ou8 = vxCreateImage(context_, 641, 479, VX_DF_IMAGE_U8);
  vx_image os16 = vxCreateImage(context_, 641, 479, VX_DF_IMAGE_S16);
  for (int32_t shift : {0, 3, 7}) {
    vx_scalar sh = vxCreateScalar(context_, VX_TYPE_INT32, &shift);
    ASSERT_EQ(vxuConvertDepth(context_, iu8, os16, VX_CONVERT_POLICY_SATURATE, shift), VX_SUCCESS);
    expect_near(read_image(os16, ref::pixel_format::s16),
                ref::convert_depth(u8, ref::pixel_format::s16, ref::convert_policy::saturate, shift), all, 0,
                "ConvertDepth U8->S16 shift " + std::to_string(shift));
    for (auto policy : {ref::convert_policy::wrap, ref::convert_policy::saturate}) {
      vx_enum p = policy == ref::convert_policy::wrap ? VX_CONVERT_POLICY_WRAP : VX_CONVERT_POLICY_SATURATE;
      ASSERT_EQ(vxuConvertDepth(context_, is16, ou8, p, shift), VX_SUCCESS);
      expect_near(read_image(ou8, ref::pixel_format::u8), ref::convert_depth(s16, ref::pixel_format::u8, policy, shift),
                  all, 0, "ConvertDepth S16->U8 shift " + std::to_string(shift));
    }
    vxReleaseScalar(&sh);
  }
  // A U8 table: the reverse ramp.
  std::vector<int64_t> table(256);
  std::vector<vx_uint8> bytes(256);
  for (int i = 0; i < 256; ++i) table[i] = bytes[i] = static_cast<vx_uint8>(255 - (i * 7) % 256);
  vx_lut lut = vxCreateLUT(context_, VX_TYPE_UINT8, 256);
  ASSERT_EQ(vxCopyLUT(lut, bytes.data(), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  ASSERT_EQ(vxuTableLookup(context_, iu8, lut, ou8), VX_SUCCESS);
  expect_near(read_image(ou8, ref::pixel_format::u8), ref::table_lookup(u8, table), all, 0, "TableLookup U8");
  vxReleaseLUT(&lut);
  for (float alpha : {0.0f, 0.25f, 0.7f, 1.0f}) {
    ASSERT_EQ(vxuWeightedAverage(context_, iu8, vxCreateScalar(context_, VX_TYPE_FLOAT32, &alpha), iu8b, ou8),
              VX_SUCCESS);
    expect_near(read_image(ou8, ref::pixel_format::u8), ref::weighted_average(u8, alpha, u8b), all, 0,
                "WeightedAverage " + std::to_string(alpha));
  }
  // Binary and range thresholds on U8 and S16.
  for (vx_image input : {iu8, is16}) {
    bool s = input == is16;
    vx_df_image format = s ? VX_DF_IMAGE_S16 : VX_DF_IMAGE_U8;
    for (vx_enum type : {VX_THRESHOLD_TYPE_BINARY, VX_THRESHOLD_TYPE_RANGE}) {
      vx_threshold t = vxCreateThresholdForImage(context_, type, format, VX_DF_IMAGE_U8);
      vx_pixel_value_t value{}, lower{}, upper{}, yes{}, no{};
      if (s) value.S16 = 100, lower.S16 = -1000, upper.S16 = 2000;
      else value.U8 = 100, lower.U8 = 50, upper.U8 = 180;
      yes.U8 = 200, no.U8 = 9;
      if (type == VX_THRESHOLD_TYPE_BINARY)
        ASSERT_EQ(vxCopyThresholdValue(t, &value, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
      else
        ASSERT_EQ(vxCopyThresholdRange(t, &lower, &upper, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
      ASSERT_EQ(vxCopyThresholdOutput(t, &yes, &no, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
      ASSERT_EQ(vxuThreshold(context_, input, t, ou8), VX_SUCCESS);
      ref::threshold rt{type == VX_THRESHOLD_TYPE_BINARY ? ref::threshold::kind::binary : ref::threshold::kind::range,
                        s ? value.S16 : value.U8, s ? lower.S16 : lower.U8, s ? upper.S16 : upper.U8, 200, 9};
      expect_near(read_image(ou8, ref::pixel_format::u8), ref::threshold_image(s ? s16 : u8, rt), all, 0,
                  std::string("Threshold ") + (s ? "S16 " : "U8 ") + (type == VX_THRESHOLD_TYPE_BINARY ? "binary" : "range"));
      vxReleaseThreshold(&t);
    }
  }
  for (vx_image* image : {&iu8, &iu8b, &is16, &ou8, &os16}) vxReleaseImage(image);
}

TEST_F(vx_kernels, convolve_and_nonlinear_filter_match_the_reference) {
  ref::image in = random_image(641, 479, ref::pixel_format::u8, 21);
  ref::image small = random_image(131, 97, ref::pixel_format::u8, 22);
  vx_image input = make_image(context_, in);
  vx_image small_input = make_image(context_, small);
  for (const ref::border& b : borders) {
    immediate_border(b);
    // A 5x3 convolution that is not symmetric, so a missing flip shows.
    ref::convolution conv{5, 3, {1, 2, 3, 4, 5, -1, -2, 0, 2, 7, 0, 0, 3, -4, 1}, 8};
    vx_convolution c = vxCreateConvolution(context_, 5, 3);
    ASSERT_EQ(vxCopyConvolutionCoefficients(c, conv.coefficients.data(), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST),
              VX_SUCCESS);
    ASSERT_EQ(vxSetConvolutionAttribute(c, VX_CONVOLUTION_SCALE, &conv.scale, sizeof conv.scale), VX_SUCCESS);
    for (auto out : {ref::pixel_format::u8, ref::pixel_format::s16}) {
      vx_image output = vxCreateImage(context_, 641, 479, vx_format(out));
      ASSERT_EQ(vxuConvolve(context_, input, c, output), VX_SUCCESS);
      ref::filtered want = ref::convolve(in, conv, out, b);
      expect_near(read_image(output, out), want.out, want.valid, 0, "Convolve 5x3 " + border_name(b));
      vxReleaseImage(&output);
    }
    vxReleaseConvolution(&c);
    // Non-linear filters over a 5x5 box mask, on a smaller image: the
    // reference sorts every window (slow under the sanitizers).
    vx_matrix mask = vxCreateMatrixFromPattern(context_, VX_PATTERN_BOX, 5, 5);
    ref::nonlinear_mask rmask = ref::nonlinear_mask::centred(5, 5, std::vector<uint8_t>(25, 255));
    for (auto [function, rf] : {std::pair{VX_NONLINEAR_FILTER_MEDIAN, ref::nonlinear_function::median},
                                std::pair{VX_NONLINEAR_FILTER_MIN, ref::nonlinear_function::min},
                                std::pair{VX_NONLINEAR_FILTER_MAX, ref::nonlinear_function::max}}) {
      vx_image output = vxCreateImage(context_, 131, 97, VX_DF_IMAGE_U8);
      ASSERT_EQ(vxuNonLinearFilter(context_, function, small_input, mask, output), VX_SUCCESS);
      ref::filtered want = ref::nonlinear_filter(small, rf, rmask, b);
      expect_near(read_image(output, ref::pixel_format::u8), want.out, want.valid, 0,
                  "NonLinearFilter " + border_name(b));
      vxReleaseImage(&output);
    }
    vxReleaseMatrix(&mask);
  }
  vxReleaseImage(&input);
  vxReleaseImage(&small_input);
}

// The paper's edge pipeline as one graph with virtual intermediates, run
// twice (the second run reuses the verified plan), against the reference
// composed of the same steps.
TEST_F(vx_kernels, the_edge_pipeline_with_virtual_images_matches_the_composed_reference) {
  setenv("FERRY_VX_FUSION", "1", 1);  // fused on any device
  ref::image in = random_image(641, 479, ref::pixel_format::u8, 31);
  ref::border replicate{ref::border_mode::replicate, 0};
  ref::filtered median = ref::median3x3(in, replicate);
  ref::gradients g = ref::scharr3x3(median.out, replicate);
  ref::image want = ref::magnitude(g.gx, g.gy);

  vx_graph graph = vxCreateGraph(context_);
  vx_image input = make_image(context_, in);
  vx_image output = vxCreateImage(context_, 641, 479, VX_DF_IMAGE_S16);
  vx_image smooth = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
  vx_image gx = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
  vx_image gy = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
  vx_node nodes[] = {vxMedian3x3Node(graph, input, smooth), vxFerryScharr3x3Node(graph, smooth, gx, gy),
                     vxMagnitudeNode(graph, gx, gy, output)};
  vx_border_t border{VX_BORDER_REPLICATE, {}};
  for (vx_node node : nodes) {
    ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
    ASSERT_EQ(vxSetNodeAttribute(node, VX_NODE_BORDER, &border, sizeof border), VX_SUCCESS);
  }
  ASSERT_EQ(vxVerifyGraph(graph), VX_SUCCESS);
  for (int run = 0; run < 2; ++run) {
    ASSERT_EQ(vxProcessGraph(graph), VX_SUCCESS);
    expect_near(read_image(output, ref::pixel_format::s16), want, {0, 0, 641, 479}, ref::magnitude_tolerance,
                "edge pipeline run " + std::to_string(run));
  }
  vx_perf_t perf{};
  ASSERT_EQ(vxQueryGraph(graph, VX_GRAPH_PERFORMANCE, &perf, sizeof perf), VX_SUCCESS);
  EXPECT_EQ(perf.num, 2u);
  for (vx_node& node : nodes) vxReleaseNode(&node);
  for (vx_image* image : {&input, &output, &smooth, &gx, &gy}) vxReleaseImage(image);
  EXPECT_EQ(vxReleaseGraph(&graph), VX_SUCCESS);
  unsetenv("FERRY_VX_FUSION");
}

}  // namespace
