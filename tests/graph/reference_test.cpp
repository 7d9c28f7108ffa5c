// The plain reference of reference.cpp checked against values worked out by
// hand from the OpenVX 1.3 specification's formulas (KhronosGroup/
// OpenVX-api-docs, docs/OpenVX_Specification.adoc). Every expected value
// below is a literal; where the arithmetic is not obvious a comment shows
// it. Images are tiny (3x3 to 7x5) so that each value can be checked with
// pencil and paper.
//
// Where the spec leaves a result loose (box/gaussian truncation, bilinear
// rounding, nearest-neighbour ties, even-count medians) the test pins the
// value the reference documents choosing, and says so; the tolerances of
// reference.hpp are what a kernel is then held to.
#include "reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ref = ferry::graph::reference;
using ref::border;
using ref::border_mode;
using ref::convert_policy;
using ref::pixel_format;
using ref::rect;
using ref::round_policy;

namespace {

using pixels = std::vector<int64_t>;

ref::image make(uint32_t w, uint32_t h, pixel_format f, pixels px) {
  EXPECT_EQ(px.size(), size_t(w) * h) << "test image literal has the wrong pixel count";
  ref::image img = ref::image::make(w, h, f);
  img.pixels = std::move(px);
  return img;
}

ref::image u8(uint32_t w, uint32_t h, pixels px) { return make(w, h, pixel_format::u8, std::move(px)); }
ref::image s16(uint32_t w, uint32_t h, pixels px) { return make(w, h, pixel_format::s16, std::move(px)); }

// The pixels of `img` inside `r`, raster order.
pixels crop(const ref::image& img, const rect& r) {
  pixels out;
  for (uint32_t y = r.start_y; y < r.end_y; ++y) {
    for (uint32_t x = r.start_x; x < r.end_x; ++x) out.push_back(img.at(x, y));
  }
  return out;
}

// Pixels outside the valid rectangle are documented to hold 0.
void expect_zero_outside(const ref::image& img, const rect& valid) {
  for (uint32_t y = 0; y < img.height; ++y) {
    for (uint32_t x = 0; x < img.width; ++x) {
      if (!valid.contains(x, y)) {
        EXPECT_EQ(img.at(x, y), 0) << "at (" << x << ", " << y << ")";
      }
    }
  }
}

const rect whole3x3{0, 0, 3, 3};
const border undefined{border_mode::undefined, 0};
const border replicate{border_mode::replicate, 0};
border constant(int64_t v) { return border{border_mode::constant, v}; }

// B: 4x4 with an outlier, for the UNDEFINED cases (valid rect {1,1,3,3}).
ref::image image_b() {
  return u8(4, 4, {1, 2, 3, 4,  //
                   5, 104, 7, 8,  //
                   9, 10, 11, 12,  //
                   13, 14, 15, 16});
}

// A: 3x3 for CONSTANT and REPLICATE (every pixel but the centre reads
// outside). Replicated it reads as the 5x5
//   10  10  20  30  30
//   10  10  20  30  30
//   40  40 200  60  60
//   70  70  80  90  90
//   70  70  80  90  90
ref::image image_a() {
  return u8(3, 3, {10, 20, 30,  //
                   40, 200, 60,  //
                   70, 80, 90});
}

// C: 3x3 increasing to the right and downwards.
ref::image image_c() {
  return u8(3, 3, {10, 20, 30,  //
                   40, 50, 60,  //
                   70, 80, 90});
}

}  // namespace

// A misuse is reported by reference.cpp's fail(): std::invalid_argument whose
// message starts "reference: ".
#define EXPECT_REFERENCE_FAILS(statement, fragment)                                              \
  do {                                                                                           \
    try {                                                                                        \
      (void)(statement);                                                                         \
      ADD_FAILURE() << #statement " did not throw";                                              \
    } catch (const std::invalid_argument& e) {                                                   \
      const std::string what = e.what();                                                         \
      EXPECT_EQ(what.rfind("reference: ", 0), 0u) << what;                                       \
      EXPECT_NE(what.find(fragment), std::string::npos) << what << " lacks \"" << (fragment) << "\""; \
    } catch (const std::exception& e) {                                                          \
      ADD_FAILURE() << #statement " threw something else: " << e.what();                         \
    }                                                                                            \
  } while (0)

// ===========================================================================
// Neighbourhood kernels, UNDEFINED border: only the valid rect is compared.

TEST(reference_neighbourhood, undefined_border_shrinks_valid_rect) {
  const ref::image b = image_b();
  const rect inner{1, 1, 3, 3};

  // Median: 5th of the 9 sorted values.
  // (1,1): 1 2 3 5 [7] 9 10 11 104; (2,1): 2 3 4 7 [8] 10 11 12 104;
  // (1,2): 5 7 9 10 [11] 13 14 15 104; (2,2): 7 8 10 11 [12] 14 15 16 104.
  auto median = ref::median3x3(b, undefined);
  EXPECT_EQ(median.valid, inner);
  EXPECT_EQ(crop(median.out, median.valid), (pixels{7, 8, 11, 12}));
  expect_zero_outside(median.out, median.valid);

  // Box: sum / 9 truncated (the reference's choice, box3x3_tolerance = 1).
  // 152/9 = 16.9 -> 16; 161/9 = 17.9 -> 17; 188/9 = 20.9 -> 20; 197/9 = 21.9 -> 21.
  auto box = ref::box3x3(b, undefined);
  EXPECT_EQ(box.valid, inner);
  EXPECT_EQ(crop(box.out, box.valid), (pixels{16, 17, 20, 21}));
  expect_zero_outside(box.out, box.valid);

  // Gaussian [1 2 1; 2 4 2; 1 2 1] / 16, truncated:
  // (1,1): corners 1+3+9+11=24, edges 2(2+5+7+10)=48, centre 4*104=416 -> 488/16 = 30.5 -> 30
  // (2,1): 2+4+10+12=28, 2(3+104+8+11)=252, 4*7=28 -> 308/16 = 19.25 -> 19
  // (1,2): 5+7+13+15=40, 2(104+9+11+14)=276, 4*10=40 -> 356/16 = 22.25 -> 22
  // (2,2): 104+8+14+16=142, 2(7+10+12+15)=88, 4*11=44 -> 274/16 = 17.125 -> 17
  auto gaussian = ref::gaussian3x3(b, undefined);
  EXPECT_EQ(gaussian.valid, inner);
  EXPECT_EQ(crop(gaussian.out, gaussian.valid), (pixels{30, 19, 22, 17}));
  expect_zero_outside(gaussian.out, gaussian.valid);

  auto erode = ref::erode3x3(b, undefined);
  EXPECT_EQ(erode.valid, inner);
  EXPECT_EQ(crop(erode.out, erode.valid), (pixels{1, 2, 5, 7}));
  expect_zero_outside(erode.out, erode.valid);

  auto dilate = ref::dilate3x3(b, undefined);
  EXPECT_EQ(dilate.valid, inner);
  EXPECT_EQ(crop(dilate.out, dilate.valid), (pixels{104, 104, 104, 104}));
  expect_zero_outside(dilate.out, dilate.valid);
}

TEST(reference_neighbourhood, undefined_border_on_image_smaller_than_kernel_defines_nothing) {
  const ref::image tiny = u8(2, 2, {1, 2, 3, 4});
  auto r = ref::median3x3(tiny, undefined);
  EXPECT_TRUE(r.valid.empty());
  EXPECT_EQ(r.valid, rect{});
  EXPECT_EQ(r.out.pixels, (pixels{0, 0, 0, 0}));
  // A 3x3 image keeps only its centre.
  EXPECT_EQ(ref::box3x3(image_a(), undefined).valid, (rect{1, 1, 2, 2}));
}

// ===========================================================================
// Neighbourhood kernels, CONSTANT and REPLICATE: the whole image is defined.

TEST(reference_neighbourhood, median_constant_and_replicate) {
  const ref::image a = image_a();
  // Replicate: e.g. (0,0) reads 10 10 20 / 10 10 20 / 40 40 200 ->
  // sorted 10 10 10 10 [20] 20 40 40 200; (2,2) reads 200 60 60 / 80 90 90 /
  // 80 90 90 -> 60 60 80 80 [90] 90 90 90 200.
  auto rep = ref::median3x3(a, replicate);
  EXPECT_EQ(rep.valid, whole3x3);
  EXPECT_EQ(rep.out.pixels, (pixels{20, 30, 30, 40, 60, 60, 70, 80, 90}));

  // Constant 100: (1,0) reads 100 100 100 / 10 20 30 / 40 200 60 ->
  // 10 20 30 40 [60] 100 100 100 200; (0,1) reads 100 10 20 / 100 40 200 /
  // 100 70 80 -> 10 20 40 70 [80] 100 100 100 200; corners hold five 100s.
  auto con = ref::median3x3(a, constant(100));
  EXPECT_EQ(con.valid, whole3x3);
  EXPECT_EQ(con.out.pixels, (pixels{100, 60, 100, 80, 60, 90, 100, 90, 100}));
}

TEST(reference_neighbourhood, box_constant_and_replicate) {
  const ref::image a = image_a();
  // Replicate sums: 360 420 480 / 540 600 660 / 720 780 840, each / 9
  // truncated: 40, 46.7->46, 53.3->53, 60, 66.7->66, 73.3->73, 80, 86.7->86, 93.3->93.
  auto rep = ref::box3x3(a, replicate);
  EXPECT_EQ(rep.valid, whole3x3);
  EXPECT_EQ(rep.out.pixels, (pixels{40, 46, 53, 60, 66, 73, 80, 86, 93}));

  // Constant 100: corners add 5*100, edges 3*100:
  // (0,0) 500+10+20+40+200 = 770 -> 85.6 -> 85; (1,0) 300+360 = 660 -> 73;
  // (2,0) 500+20+30+200+60 = 810 -> 90; (0,1) 300+420 = 720 -> 80;
  // (1,1) 600 -> 66; (2,1) 300+480 = 780 -> 86; (0,2) 500+390 = 890 -> 98;
  // (1,2) 300+540 = 840 -> 93; (2,2) 500+430 = 930 -> 103.
  auto con = ref::box3x3(a, constant(100));
  EXPECT_EQ(con.out.pixels, (pixels{85, 73, 90, 80, 66, 86, 98, 93, 103}));
}

TEST(reference_neighbourhood, gaussian_constant_and_replicate) {
  const ref::image a = image_a();
  // Replicate, as corners + 2*edges + 4*centre:
  // (0,0) [10 10 20; 10 10 20; 40 40 200]: 270 + 2*80 + 4*10 = 470 -> 29.4 -> 29
  // (1,0) [10 20 30; 10 20 30; 40 200 60]: 140 + 2*260 + 4*20 = 740 -> 46.25 -> 46
  // (2,0) [20 30 30; 20 30 30; 200 60 60]: 310 + 2*140 + 4*30 = 710 -> 44.4 -> 44
  // (0,1) [10 10 20; 40 40 200; 70 70 80]: 180 + 2*320 + 4*40 = 980 -> 61.25 -> 61
  // (1,1) [10 20 30; 40 200 60; 70 80 90]: 200 + 2*200 + 4*200 = 1400 -> 87.5 -> 87
  // (2,1) [20 30 30; 200 60 60; 80 90 90]: 220 + 2*380 + 4*60 = 1220 -> 76.25 -> 76
  // (0,2) [40 40 200; 70 70 80; 70 70 80]: 390 + 2*260 + 4*70 = 1190 -> 74.4 -> 74
  // (1,2) [40 200 60; 70 80 90; 70 80 90]: 260 + 2*440 + 4*80 = 1460 -> 91.25 -> 91
  // (2,2) [200 60 60; 80 90 90; 80 90 90]: 430 + 2*320 + 4*90 = 1430 -> 89.4 -> 89
  auto rep = ref::gaussian3x3(a, replicate);
  EXPECT_EQ(rep.out.pixels, (pixels{29, 46, 44, 61, 87, 76, 74, 91, 89}));

  // Constant 100:
  // (0,0) [100 100 100; 100 10 20; 100 40 200]: 500 + 2*260 + 40 = 1060 -> 66.25 -> 66
  // (1,0) [100 100 100; 10 20 30; 40 200 60]: 300 + 2*340 + 80 = 1060 -> 66
  // (2,0) [100 100 100; 20 30 100; 200 60 100]: 500 + 2*280 + 120 = 1180 -> 73.75 -> 73
  // (0,1) [100 10 20; 100 40 200; 100 70 80]: 300 + 2*380 + 160 = 1220 -> 76
  // (2,1) [20 30 100; 200 60 100; 80 90 100]: 300 + 2*420 + 240 = 1380 -> 86.25 -> 86
  // (0,2) [100 40 200; 100 70 80; 100 100 100]: 500 + 2*320 + 280 = 1420 -> 88.75 -> 88
  // (1,2) [40 200 60; 70 80 90; 100 100 100]: 300 + 2*460 + 320 = 1540 -> 96.25 -> 96
  // (2,2) [200 60 100; 80 90 100; 100 100 100]: 500 + 2*340 + 360 = 1540 -> 96
  auto con = ref::gaussian3x3(a, constant(100));
  EXPECT_EQ(con.out.pixels, (pixels{66, 66, 73, 76, 87, 86, 88, 96, 96}));
}

TEST(reference_neighbourhood, erode_dilate_constant_and_replicate) {
  const ref::image c = image_c();
  // C increases right and down, so under REPLICATE the minimum of a window is
  // its clamped top-left pixel and the maximum its clamped bottom-right one.
  EXPECT_EQ(ref::erode3x3(c, replicate).out.pixels, (pixels{10, 10, 20, 10, 10, 20, 40, 40, 50}));
  EXPECT_EQ(ref::dilate3x3(c, replicate).out.pixels, (pixels{50, 60, 60, 80, 90, 90, 80, 90, 90}));
  // CONSTANT: the constant joins every window but the centre's:
  // erode min(15, top-left), dilate max(85, bottom-right).
  EXPECT_EQ(ref::erode3x3(c, constant(15)).out.pixels, (pixels{10, 10, 15, 10, 10, 15, 15, 15, 15}));
  EXPECT_EQ(ref::dilate3x3(c, constant(85)).out.pixels, (pixels{85, 85, 85, 85, 90, 90, 85, 90, 90}));
  // UNDEFINED keeps only the centre, which sees the whole image.
  auto e = ref::erode3x3(c, undefined);
  EXPECT_EQ(crop(e.out, e.valid), (pixels{10}));
  auto d = ref::dilate3x3(c, undefined);
  EXPECT_EQ(crop(d.out, d.valid), (pixels{90}));
}

// ===========================================================================
// Sobel and Scharr: x is the column axis, positive when the right side is
// brighter; y is the row axis, positive when the bottom is brighter.

namespace {
// F: brighter to the right, darker downwards.
ref::image image_f() {
  return u8(3, 3, {50, 64, 90,  //
                   30, 45, 70,  //
                   12, 20, 50});
}
}  // namespace

TEST(reference_gradients, sobel_signs_and_axes) {
  // Gx = [-1 0 1; -2 0 2; -1 0 1], Gy = [-1 -2 -1; 0 0 0; 1 2 1] laid over
  // the image as printed.
  // Centre: gx = (90-50) + 2(70-30) + (50-12) = 40 + 80 + 38 = 158
  //         gy = (12 + 2*20 + 50) - (50 + 2*64 + 90) = 102 - 268 = -166
  auto u = ref::sobel3x3(image_f(), undefined);
  EXPECT_EQ(u.valid, (rect{1, 1, 2, 2}));
  EXPECT_EQ(u.gx.format, pixel_format::s16);
  EXPECT_EQ(u.gy.format, pixel_format::s16);
  EXPECT_EQ(crop(u.gx, u.valid), (pixels{158}));
  EXPECT_EQ(crop(u.gy, u.valid), (pixels{-166}));
  expect_zero_outside(u.gx, u.valid);
  expect_zero_outside(u.gy, u.valid);

  // A pure horizontal ramp has gy = 0 and positive gx; a vertical one the
  // reverse. Centre of [0 10 20] rows: gx = 20 + 2*20 + 20 = 80.
  auto h = ref::sobel3x3(u8(3, 3, {0, 10, 20, 0, 10, 20, 0, 10, 20}), undefined);
  EXPECT_EQ(h.gx.at(1, 1), 80);
  EXPECT_EQ(h.gy.at(1, 1), 0);
  auto v = ref::sobel3x3(u8(3, 3, {0, 0, 0, 10, 10, 10, 20, 20, 20}), undefined);
  EXPECT_EQ(v.gx.at(1, 1), 0);
  EXPECT_EQ(v.gy.at(1, 1), 80);

  // Replicate at (0,0): window [50 50 64; 50 50 64; 30 30 45]
  //   gx = (64-50) + 2(64-50) + (45-30) = 14 + 28 + 15 = 57
  //   gy = (30 + 2*30 + 45) - (50 + 2*50 + 64) = 135 - 214 = -79
  auto r = ref::sobel3x3(image_f(), replicate);
  EXPECT_EQ(r.valid, whole3x3);
  EXPECT_EQ(r.gx.at(0, 0), 57);
  EXPECT_EQ(r.gy.at(0, 0), -79);
  EXPECT_EQ(r.gx.at(1, 1), 158);
  // Constant 0 at (2,2): window [45 70 0; 20 50 0; 0 0 0]
  //   gx = (0-45) + 2(0-20) + 0 = -85;  gy = 0 - (45 + 2*70 + 0) = -185
  auto c = ref::sobel3x3(image_f(), constant(0));
  EXPECT_EQ(c.gx.at(2, 2), -85);
  EXPECT_EQ(c.gy.at(2, 2), -185);
}

TEST(reference_gradients, scharr_weights) {
  // Gx = [-3 0 3; -10 0 10; -3 0 3], Gy its transpose.
  // Centre of F: gx = 3(90-50) + 10(70-30) + 3(50-12) = 120 + 400 + 114 = 634
  //              gy = 3*12 + 10*20 + 3*50 - (3*50 + 10*64 + 3*90) = 386 - 1060 = -674
  auto u = ref::scharr3x3(image_f(), undefined);
  EXPECT_EQ(u.valid, (rect{1, 1, 2, 2}));
  EXPECT_EQ(crop(u.gx, u.valid), (pixels{634}));
  EXPECT_EQ(crop(u.gy, u.valid), (pixels{-674}));
  // Largest response: a 0 | 255 step gives (3 + 10 + 3) * 255 = 4080.
  auto step = ref::scharr3x3(u8(3, 3, {0, 0, 255, 0, 0, 255, 0, 0, 255}), undefined);
  EXPECT_EQ(step.gx.at(1, 1), 4080);
  EXPECT_EQ(step.gy.at(1, 1), 0);
}

// ===========================================================================
// Custom convolution: sum = sum_{k,l} input(x + k0 - k, y + l0 - l) * C(k,l),
// k over columns (x), l over rows (y), C row-major as
// vxCopyConvolutionCoefficients takes it: a true convolution (flipped).

TEST(reference_convolve, delta_reproduces_the_kernel_unflipped) {
  // With one non-zero input at (2,2), input(x+1-k, y+1-l) is non-zero only
  // for k = x-1, l = y-1, so output(x,y) = 10 * C[y-1][x-1]: the kernel
  // appears as written. A correlation would show it rotated by 180 degrees.
  pixels px(25, 0);
  px[2 * 5 + 2] = 10;
  const ref::image delta = u8(5, 5, px);
  const ref::convolution conv{3, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9}, 1};
  auto r = ref::convolve(delta, conv, pixel_format::s16, undefined);
  EXPECT_EQ(r.valid, (rect{1, 1, 4, 4}));
  EXPECT_EQ(r.out.format, pixel_format::s16);
  EXPECT_EQ(crop(r.out, r.valid), (pixels{10, 20, 30, 40, 50, 60, 70, 80, 90}));
}

TEST(reference_convolve, non_square_kernel_columns_are_x) {
  // 5 columns x 3 rows: k0 = 2, l0 = 1. Delta 2 at (3,2) of a 7x5 image:
  // x + 2 - k = 3 -> k = x - 1; y + 1 - l = 2 -> l = y - 1, so
  // output(x,y) = 2 * C[y-1][x-1] for x in 1..5, y in 1..3, else 0
  // (constant border 0 defines every pixel).
  pixels px(35, 0);
  px[2 * 7 + 3] = 2;
  const ref::image delta = u8(7, 5, px);
  const ref::convolution conv{5, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 1};
  auto r = ref::convolve(delta, conv, pixel_format::s16, constant(0));
  EXPECT_EQ(r.valid, (rect{0, 0, 7, 5}));
  EXPECT_EQ(r.out.pixels, (pixels{0, 0,  0,  0,  0,  0,  0,  //
                                  0, 2,  4,  6,  8,  10, 0,  //
                                  0, 12, 14, 16, 18, 20, 0,  //
                                  0, 22, 24, 26, 28, 30, 0,  //
                                  0, 0,  0,  0,  0,  0,  0}));
  // UNDEFINED shrinks by k0 = 2 columns and l0 = 1 row on each side.
  auto u = ref::convolve(delta, conv, pixel_format::s16, undefined);
  EXPECT_EQ(u.valid, (rect{2, 1, 5, 4}));
  EXPECT_EQ(crop(u.out, u.valid), (pixels{4, 6, 8, 14, 16, 18, 24, 26, 28}));
}

TEST(reference_convolve, flip_sign_scale_and_clamping) {
  const ref::image c = image_c();  // centre neighbourhood 10 20 30 / 40 50 60 / 70 80 90
  auto centre = [&](std::vector<int16_t> k, uint32_t scale, pixel_format out) {
    auto r = ref::convolve(c, ref::convolution{3, 3, std::move(k), scale}, out, undefined);
    EXPECT_EQ(r.valid, (rect{1, 1, 2, 2}));
    return r.out.at(1, 1);
  };
  // C[1] = {1, 0, -1}: input(x+1,y)*1 + input(x-1,y)*(-1) = 60 - 40 = 20
  // (a correlation would give 40 - 60 = -20).
  EXPECT_EQ(centre({0, 0, 0, 1, 0, -1, 0, 0, 0}, 1, pixel_format::s16), 20);
  EXPECT_EQ(centre({0, 0, 0, 1, 0, -1, 0, 0, 0}, 1, pixel_format::u8), 20);
  // C[0][1] = 1 (k=1, l=0): input(x, y+1) = 80, the pixel BELOW.
  EXPECT_EQ(centre({0, 1, 0, 0, 0, 0, 0, 0, 0}, 1, pixel_format::s16), 80);
  // Negated: sum = -20. U8: "0 if sum < 0". S16 with scale 8: -20/8 = -2.5,
  // C integer division truncates to -2 (convolve_tolerance covers -3).
  EXPECT_EQ(centre({0, 0, 0, -1, 0, 1, 0, 0, 0}, 1, pixel_format::u8), 0);
  EXPECT_EQ(centre({0, 0, 0, -1, 0, 1, 0, 0, 0}, 1, pixel_format::s16), -20);
  EXPECT_EQ(centre({0, 0, 0, -1, 0, 1, 0, 0, 0}, 8, pixel_format::s16), -2);
  // All ones, scale 4: 450 / 4 = 112.5 -> 112.
  EXPECT_EQ(centre({1, 1, 1, 1, 1, 1, 1, 1, 1}, 4, pixel_format::u8), 112);
  EXPECT_EQ(centre({1, 1, 1, 1, 1, 1, 1, 1, 1}, 4, pixel_format::s16), 112);
  // Centre weight 6: 300. U8: "255 if sum / scale > 255"; S16 keeps 300.
  EXPECT_EQ(centre({0, 0, 0, 0, 6, 0, 0, 0, 0}, 1, pixel_format::u8), 255);
  EXPECT_EQ(centre({0, 0, 0, 0, 6, 0, 0, 0, 0}, 1, pixel_format::s16), 300);
  // S16 saturates: +-100 * 450 = +-45000.
  EXPECT_EQ(centre(std::vector<int16_t>(9, 100), 1, pixel_format::s16), 32767);
  EXPECT_EQ(centre(std::vector<int16_t>(9, -100), 1, pixel_format::s16), -32768);
}

// ===========================================================================
// Non-linear filter with masks that are not full.

TEST(reference_nonlinear, cross_mask_median_min_max) {
  const ref::image b = image_b();
  const auto cross = ref::nonlinear_mask::centred(3, 3, {0, 1, 0, 1, 1, 1, 0, 1, 0});
  // The five pixels under the cross:
  // (1,1): 2 5 104 7 10 -> sorted 2 5 [7] 10 104
  // (2,1): 3 104 7 8 11 -> 3 7 [8] 11 104
  // (1,2): 104 9 10 11 14 -> 9 10 [11] 14 104
  // (2,2): 7 10 11 12 15 -> 7 10 [11] 12 15  (the full 3x3 median is 12)
  auto med = ref::nonlinear_filter(b, ref::nonlinear_function::median, cross, undefined);
  EXPECT_EQ(med.valid, (rect{1, 1, 3, 3}));
  EXPECT_EQ(crop(med.out, med.valid), (pixels{7, 8, 11, 11}));
  auto mn = ref::nonlinear_filter(b, ref::nonlinear_function::min, cross, undefined);
  EXPECT_EQ(crop(mn.out, mn.valid), (pixels{2, 3, 9, 7}));
  auto mx = ref::nonlinear_filter(b, ref::nonlinear_function::max, cross, undefined);
  EXPECT_EQ(crop(mx.out, mx.valid), (pixels{104, 104, 104, 15}));
  // Replicate at (0,0) of C: (0,-1)->10, (-1,0)->10, 10, 20, 40 -> median 10.
  auto rep = ref::nonlinear_filter(image_c(), ref::nonlinear_function::median, cross, replicate);
  EXPECT_EQ(rep.out.at(0, 0), 10);
}

TEST(reference_nonlinear, asymmetric_mask_is_not_flipped) {
  // Mask entries (0,0) and (1,1) around origin (1,1): output(x,y) looks at
  // (x-1, y-1) and (x, y). With min on C (increasing) and constant 0:
  // top row and left column see the constant 0, others C(x-1, y-1).
  // A flipped mask would look at (x+1, y+1) instead.
  const auto diag = ref::nonlinear_mask::centred(3, 3, {1, 0, 0, 0, 1, 0, 0, 0, 0});
  auto r = ref::nonlinear_filter(image_c(), ref::nonlinear_function::min, diag, constant(0));
  EXPECT_EQ(r.valid, whole3x3);
  EXPECT_EQ(r.out.pixels, (pixels{0, 0, 0, 0, 10, 20, 0, 40, 50}));
  // UNDEFINED shrinks by the whole mask extent, zero entries included.
  EXPECT_EQ(ref::nonlinear_filter(image_c(), ref::nonlinear_function::min, diag, undefined).valid,
            (rect{1, 1, 2, 2}));
}

TEST(reference_nonlinear, origin_at_corner_of_2x2_mask) {
  // 2x2 mask, origin (0,0): covers (x..x+1, y..y+1); UNDEFINED valid rect
  // loses only the last column and row.
  ref::nonlinear_mask m;
  m.columns = 2;
  m.rows = 2;
  m.values = {1, 1, 1, 1};
  m.origin_x = 0;
  m.origin_y = 0;
  auto mx = ref::nonlinear_filter(image_c(), ref::nonlinear_function::max, m, undefined);
  EXPECT_EQ(mx.valid, (rect{0, 0, 2, 2}));
  EXPECT_EQ(crop(mx.out, mx.valid), (pixels{50, 60, 80, 90}));
  auto mn = ref::nonlinear_filter(image_c(), ref::nonlinear_function::min, m, undefined);
  EXPECT_EQ(crop(mn.out, mn.valid), (pixels{10, 20, 40, 50}));
  // Four values: the spec defines the median for odd counts only; the
  // reference takes sorted[n/2], the upper median (10 20 [40] 50).
  auto med = ref::nonlinear_filter(image_c(), ref::nonlinear_function::median, m, undefined);
  EXPECT_EQ(crop(med.out, med.valid), (pixels{40, 50, 70, 80}));
}

// ===========================================================================
// Magnitude and phase.

TEST(reference_pixelwise, magnitude_rounding_and_saturation) {
  // z = uint16(sqrt(double(x*x + y*y)) + 0.5); mag = min(z, 32767)
  //   (3,4) -> 5;  (-3,-4) -> 5;  (1,1) -> 1.414+.5 -> 1;  (3,3) -> 4.243+.5 -> 4;
  //   (4,4) -> 5.657+.5 -> 6;  (0,0) -> 0;  (32767,0) -> 32767;
  //   (-32768,0) -> 32768 -> saturated 32767;
  //   (32767,32767) -> 46339.5 -> 32767;  (-32768,-32768) -> sqrt(2^31) = 46341 -> 32767.
  const ref::image gx = s16(5, 2, {3, -3, 1, 3, 4, 0, 32767, -32768, 32767, -32768});
  const ref::image gy = s16(5, 2, {4, -4, 1, 3, 4, 0, 0, 0, 32767, -32768});
  const ref::image m = ref::magnitude(gx, gy);
  EXPECT_EQ(m.format, pixel_format::s16);
  EXPECT_EQ(m.pixels, (pixels{5, 5, 1, 4, 6, 0, 32767, 32767, 32767, 32767}));
}

TEST(reference_pixelwise, phase_axes_diagonals_and_wrap) {
  // phi = atan2(gy, gx) in [0, 2 pi), mapped to 0..255 as
  // round(phi * 256 / (2 pi)): +x 0, +y 64, -x 128, -y 192 (-90 deg + 360);
  // 45 deg 32, -135 deg 224 - 64 = 160. (0,0) -> atan2 = 0.
  // (1000,-1): -0.001 rad -> 255.96 -> 256 wraps to 0.
  // (10,-1): -0.0997 rad * 40.74 = -4.06 -> 251.94 -> 252.
  // (-1000,-1): -pi + 0.001 -> -127.96 + 256 = 128.04 -> 128.
  const ref::image gx = s16(5, 2, {1, 0, -1, 0, 0, 1, -1, 1000, 10, -1000});
  const ref::image gy = s16(5, 2, {0, 1, 0, -1, 0, 1, -1, -1, -1, -1});
  const ref::image p = ref::phase(gx, gy);
  EXPECT_EQ(p.format, pixel_format::u8);
  EXPECT_EQ(p.pixels, (pixels{0, 64, 128, 192, 0, 32, 160, 0, 252, 128}));
}

TEST(reference_pixelwise, phase_distance_and_format_range_helpers) {
  EXPECT_EQ(ref::phase_distance(255, 0), 1);
  EXPECT_EQ(ref::phase_distance(0, 255), 1);
  EXPECT_EQ(ref::phase_distance(0, 128), 128);
  EXPECT_EQ(ref::phase_distance(10, 250), 16);
  EXPECT_EQ(ref::format_range(pixel_format::u8), (std::pair<int64_t, int64_t>{0, 255}));
  EXPECT_EQ(ref::format_range(pixel_format::s16), (std::pair<int64_t, int64_t>{-32768, 32767}));
  EXPECT_EQ(ref::format_range(pixel_format::u16), (std::pair<int64_t, int64_t>{0, 65535}));
  EXPECT_EQ(ref::format_range(pixel_format::s32), (std::pair<int64_t, int64_t>{-2147483648LL, 2147483647}));
  EXPECT_EQ(ref::format_range(pixel_format::u32), (std::pair<int64_t, int64_t>{0, 4294967295LL}));
}

// ===========================================================================
// Threshold: BINARY is strict (>), RANGE is inclusive at both ends.

TEST(reference_pixelwise, threshold_binary_is_strict) {
  const ref::image in = u8(5, 1, {99, 100, 101, 0, 255});
  const ref::threshold t{.type = ref::threshold::kind::binary, .value = 100};
  EXPECT_EQ(ref::threshold_image(in, t).pixels, (pixels{0, 0, 255, 0, 255}));
  // True/false values from the threshold object.
  const ref::threshold tf{.type = ref::threshold::kind::binary, .value = 100, .true_value = 200, .false_value = 10};
  EXPECT_EQ(ref::threshold_image(in, tf).pixels, (pixels{10, 10, 200, 10, 200}));
  // S16 input, negative threshold.
  const ref::threshold neg{.type = ref::threshold::kind::binary, .value = -5};
  const ref::image out = ref::threshold_image(s16(3, 1, {-6, -5, -4}), neg);
  EXPECT_EQ(out.format, pixel_format::u8);
  EXPECT_EQ(out.pixels, (pixels{0, 0, 255}));
}

TEST(reference_pixelwise, threshold_range_is_inclusive) {
  // false if v > upper, false if v < lower, true otherwise.
  const ref::image in = u8(5, 1, {49, 50, 75, 100, 101});
  const ref::threshold t{.type = ref::threshold::kind::range, .lower = 50, .upper = 100};
  EXPECT_EQ(ref::threshold_image(in, t).pixels, (pixels{0, 255, 255, 255, 0}));
  const ref::threshold s{.type = ref::threshold::kind::range, .lower = -10, .upper = 10};
  EXPECT_EQ(ref::threshold_image(s16(4, 1, {-11, -10, 10, 11}), s).pixels, (pixels{0, 255, 255, 0}));
}

// ===========================================================================
// Arithmetic: wrap vs saturate at the format boundaries.

TEST(reference_pixelwise, absdiff) {
  const ref::image a = u8(4, 1, {0, 255, 10, 200});
  const ref::image b = u8(4, 1, {255, 0, 200, 10});
  EXPECT_EQ(ref::absdiff(a, b, pixel_format::u8).pixels, (pixels{255, 255, 190, 190}));
  EXPECT_EQ(ref::absdiff(a, b, pixel_format::s16).pixels, (pixels{255, 255, 190, 190}));
  // S16: |(int32)a - (int32)b| saturated to int16: 65535 -> 32767.
  const ref::image c = s16(4, 1, {-32768, 32767, -100, 5});
  const ref::image d = s16(4, 1, {32767, -32768, 100, 5});
  EXPECT_EQ(ref::absdiff(c, d, pixel_format::s16).pixels, (pixels{32767, 32767, 200, 0}));
  // Mixed U8/S16: |0 + 32768| = 32768 -> 32767; |255 - 32767| = 32512.
  EXPECT_EQ(ref::absdiff(u8(2, 1, {0, 255}), s16(2, 1, {-32768, 32767}), pixel_format::s16).pixels,
            (pixels{32767, 32512}));
}

TEST(reference_pixelwise, add_wrap_and_saturate) {
  const ref::image a = u8(4, 1, {200, 255, 0, 100});
  const ref::image b = u8(4, 1, {100, 1, 0, 155});
  // Sums 300 256 0 255: wrap mod 256 -> 44 0 0 255; saturate -> 255 255 0 255.
  EXPECT_EQ(ref::add(a, b, convert_policy::wrap, pixel_format::u8).pixels, (pixels{44, 0, 0, 255}));
  EXPECT_EQ(ref::add(a, b, convert_policy::saturate, pixel_format::u8).pixels, (pixels{255, 255, 0, 255}));
  EXPECT_EQ(ref::add(a, b, convert_policy::wrap, pixel_format::s16).pixels, (pixels{300, 256, 0, 255}));
  // S16: 32768 wraps to -32768, -32769 to 32767.
  const ref::image c = s16(3, 1, {32767, -32768, 1000});
  const ref::image d = s16(3, 1, {1, -1, -1000});
  EXPECT_EQ(ref::add(c, d, convert_policy::wrap, pixel_format::s16).pixels, (pixels{-32768, 32767, 0}));
  EXPECT_EQ(ref::add(c, d, convert_policy::saturate, pixel_format::s16).pixels, (pixels{32767, -32768, 0}));
}

TEST(reference_pixelwise, subtract_wrap_and_saturate) {
  // in1 - in2 (in1 the minuend): -1 0 255 -245; -245 mod 256 = 11.
  const ref::image a = u8(4, 1, {0, 10, 255, 5});
  const ref::image b = u8(4, 1, {1, 10, 0, 250});
  EXPECT_EQ(ref::subtract(a, b, convert_policy::wrap, pixel_format::u8).pixels, (pixels{255, 0, 255, 11}));
  EXPECT_EQ(ref::subtract(a, b, convert_policy::saturate, pixel_format::u8).pixels, (pixels{0, 0, 255, 0}));
  EXPECT_EQ(ref::subtract(a, b, convert_policy::saturate, pixel_format::s16).pixels, (pixels{-1, 0, 255, -245}));
  const ref::image c = s16(2, 1, {-32768, 32767});
  const ref::image d = s16(2, 1, {1, -1});
  EXPECT_EQ(ref::subtract(c, d, convert_policy::wrap, pixel_format::s16).pixels, (pixels{32767, -32768}));
  EXPECT_EQ(ref::subtract(c, d, convert_policy::saturate, pixel_format::s16).pixels, (pixels{-32768, 32767}));
  // Mixed: 0 - 32767 = -32767; 255 + 32768 = 33023 -> wrap 33023 - 65536 = -32513.
  const ref::image e = u8(2, 1, {0, 255});
  const ref::image f = s16(2, 1, {32767, -32768});
  EXPECT_EQ(ref::subtract(e, f, convert_policy::saturate, pixel_format::s16).pixels, (pixels{-32767, 32767}));
  EXPECT_EQ(ref::subtract(e, f, convert_policy::wrap, pixel_format::s16).pixels, (pixels{-32767, -32513}));
}

TEST(reference_pixelwise, multiply_rounding_policies) {
  // scale 1/2: products 1 3 5 7 -> 0.5 1.5 2.5 3.5.
  // TO_ZERO truncates: 0 1 2 3. TO_NEAREST_EVEN: 0 2 2 4.
  const ref::image a = u8(4, 1, {1, 3, 5, 7});
  const ref::image one = u8(4, 1, {1, 1, 1, 1});
  EXPECT_EQ(ref::multiply(a, one, 0.5f, convert_policy::saturate, round_policy::to_zero, pixel_format::u8).pixels,
            (pixels{0, 1, 2, 3}));
  EXPECT_EQ(
      ref::multiply(a, one, 0.5f, convert_policy::saturate, round_policy::to_nearest_even, pixel_format::u8).pixels,
      (pixels{0, 2, 2, 4}));
  // Negative products: -0.5 -1.5 -2.5 -> to zero 0 -1 -2, nearest even 0 -2 -2.
  const ref::image n = s16(3, 1, {-1, -3, -5});
  const ref::image n1 = s16(3, 1, {1, 1, 1});
  EXPECT_EQ(ref::multiply(n, n1, 0.5f, convert_policy::saturate, round_policy::to_zero, pixel_format::s16).pixels,
            (pixels{0, -1, -2}));
  EXPECT_EQ(
      ref::multiply(n, n1, 0.5f, convert_policy::saturate, round_policy::to_nearest_even, pixel_format::s16).pixels,
      (pixels{0, -2, -2}));
  // scale = float(1/255) = 0x1.010102p-8, slightly above 1/255:
  // 255*255*s = 255.000015 -> 255 either way; 128*s = 0.50196 -> 0 / 1;
  // 127*s = 0.49804 -> 0 / 0.
  const float s = 1.0f / 255.0f;
  const ref::image p = u8(3, 1, {255, 128, 127});
  const ref::image q = u8(3, 1, {255, 1, 1});
  EXPECT_EQ(ref::multiply(p, q, s, convert_policy::saturate, round_policy::to_zero, pixel_format::u8).pixels,
            (pixels{255, 0, 0}));
  EXPECT_EQ(ref::multiply(p, q, s, convert_policy::saturate, round_policy::to_nearest_even, pixel_format::u8).pixels,
            (pixels{255, 1, 0}));
}

TEST(reference_pixelwise, multiply_overflow_policies) {
  // U8: 200*2 = 400 -> saturate 255, wrap 400 - 256 = 144; 16*16 = 256 -> 255 / 0.
  const ref::image a = u8(2, 1, {200, 16});
  const ref::image b = u8(2, 1, {2, 16});
  EXPECT_EQ(ref::multiply(a, b, 1.0f, convert_policy::saturate, round_policy::to_zero, pixel_format::u8).pixels,
            (pixels{255, 255}));
  EXPECT_EQ(ref::multiply(a, b, 1.0f, convert_policy::wrap, round_policy::to_zero, pixel_format::u8).pixels,
            (pixels{144, 0}));
  // S16: 255*255 = 65025 -> saturate 32767, wrap 65025 - 65536 = -511.
  EXPECT_EQ(ref::multiply(u8(1, 1, {255}), u8(1, 1, {255}), 1.0f, convert_policy::wrap, round_policy::to_zero,
                          pixel_format::s16)
                .pixels,
            (pixels{-511}));
  // 300*200 = 60000 -> 32767 / -5536; -300*200 = -60000 -> -32768 / 5536.
  const ref::image c = s16(2, 1, {300, -300});
  const ref::image d = s16(2, 1, {200, 200});
  EXPECT_EQ(ref::multiply(c, d, 1.0f, convert_policy::saturate, round_policy::to_zero, pixel_format::s16).pixels,
            (pixels{32767, -32768}));
  EXPECT_EQ(ref::multiply(c, d, 1.0f, convert_policy::wrap, round_policy::to_zero, pixel_format::s16).pixels,
            (pixels{-5536, 5536}));
}

TEST(reference_pixelwise, bitwise) {
  const ref::image a = u8(3, 1, {0xF0, 0xAA, 0x00});
  const ref::image b = u8(3, 1, {0x3C, 0x55, 0xFF});
  EXPECT_EQ(ref::and_(a, b).pixels, (pixels{0x30, 0x00, 0x00}));
  EXPECT_EQ(ref::or_(a, b).pixels, (pixels{0xFC, 0xFF, 0xFF}));
  EXPECT_EQ(ref::xor_(a, b).pixels, (pixels{0xCC, 0xFF, 0xFF}));
  EXPECT_EQ(ref::not_(a).pixels, (pixels{0x0F, 0x55, 0xFF}));
}

// ===========================================================================
// Convert depth, table lookup, weighted average.

TEST(reference_pixelwise, convert_depth_shifts) {
  // Up: ((int16)in) << shift, policy ignored. 255 << 7 = 32640.
  const ref::image up = u8(3, 1, {0, 1, 255});
  EXPECT_EQ(ref::convert_depth(up, pixel_format::s16, convert_policy::wrap, 7).pixels, (pixels{0, 128, 32640}));
  EXPECT_EQ(ref::convert_depth(up, pixel_format::s16, convert_policy::saturate, 3).pixels, (pixels{0, 8, 2040}));
  // Down, arithmetic shift: -1 >> 2 = -1, 1023 >> 2 = 255, 1024 >> 2 = 256,
  // -1024 >> 2 = -256, 7 >> 2 = 1. WRAP keeps the low 8 bits: 255 255 0 0 1;
  // SATURATE clamps: 0 255 255 0 1.
  const ref::image down = s16(5, 1, {-1, 1023, 1024, -1024, 7});
  EXPECT_EQ(ref::convert_depth(down, pixel_format::u8, convert_policy::wrap, 2).pixels,
            (pixels{255, 255, 0, 0, 1}));
  EXPECT_EQ(ref::convert_depth(down, pixel_format::u8, convert_policy::saturate, 2).pixels,
            (pixels{0, 255, 255, 0, 1}));
  // -5 >> 1 = -3 (rounds toward minus infinity, not -2): wrap 253.
  const ref::image odd = s16(4, 1, {-5, 5, 511, 513});
  EXPECT_EQ(ref::convert_depth(odd, pixel_format::u8, convert_policy::wrap, 1).pixels, (pixels{253, 2, 255, 0}));
  EXPECT_EQ(ref::convert_depth(odd, pixel_format::u8, convert_policy::saturate, 1).pixels,
            (pixels{0, 2, 255, 255}));
  // Shift 0 down-conversion.
  EXPECT_EQ(ref::convert_depth(s16(3, 1, {-1, 256, 300}), pixel_format::u8, convert_policy::wrap, 0).pixels,
            (pixels{255, 0, 44}));
}

TEST(reference_pixelwise, table_lookup_u8_and_s16_offset) {
  // U8: offset 0, lut[i] = 255 - i.
  std::vector<int64_t> inv(256);
  for (int i = 0; i < 256; ++i) inv[i] = 255 - i;
  EXPECT_EQ(ref::table_lookup(u8(4, 1, {0, 1, 128, 255}), inv).pixels, (pixels{255, 254, 127, 0}));
  // S16, count 5: VX_LUT_OFFSET = 5/2 = 2, so input v reads lut[2 + v].
  const std::vector<int64_t> five{-200, -100, 0, 100, 200};
  EXPECT_EQ(ref::table_lookup(s16(5, 1, {-2, -1, 0, 1, 2}), five).pixels, (pixels{-200, -100, 0, 100, 200}));
  // Even count 4: offset 2 covers -2..1.
  const std::vector<int64_t> four{10, 20, 30, 40};
  EXPECT_EQ(ref::table_lookup(s16(4, 1, {-2, -1, 0, 1}), four).pixels, (pixels{10, 20, 30, 40}));
  // Full S16 table, offset 32768: lut[i] = 32767 - i, i.e. out = ~v.
  std::vector<int64_t> full(65536);
  for (int i = 0; i < 65536; ++i) full[i] = 32767 - i;
  EXPECT_EQ(ref::table_lookup(s16(3, 1, {-32768, 0, 32767}), full).pixels, (pixels{32767, -1, -32768}));
}

TEST(reference_pixelwise, weighted_average_truncates) {
  // out = uint8((1 - alpha) * img2 + alpha * img1), alpha = 0.25:
  //   0.75*0 + 0.25*100 = 25;  0.75*100 + 0 = 75;  0.75*255 + 0.25*255 = 255;
  //   0.25*3 = 0.75 -> 0 (truncation, not rounding).
  const ref::image img1 = u8(4, 1, {100, 0, 255, 3});
  const ref::image img2 = u8(4, 1, {0, 100, 255, 0});
  EXPECT_EQ(ref::weighted_average(img1, 0.25f, img2).pixels, (pixels{25, 75, 255, 0}));
  // alpha 0.5: (1 + 2) / 2 = 1.5 -> 1.
  EXPECT_EQ(ref::weighted_average(u8(1, 1, {1}), 0.5f, u8(1, 1, {2})).pixels, (pixels{1}));
  EXPECT_EQ(ref::weighted_average(img1, 0.0f, img2).pixels, img2.pixels);
  EXPECT_EQ(ref::weighted_average(img1, 1.0f, img2).pixels, img1.pixels);
}

// ===========================================================================
// Scale image: x_in = (x_out + 0.5) * w_in / w_out - 0.5.

TEST(reference_resampling, scale_up_2x2_to_4x4_nearest) {
  // x_in = 0.5 x - 0.25 = -0.25 0.25 0.75 1.25 -> nearest centres 0 0 1 1.
  const ref::image in = u8(2, 2, {10, 20, 30, 40});
  for (border b : {undefined, replicate, constant(7)}) {
    auto r = ref::scale_image(in, 4, 4, ref::interpolation::nearest_neighbor, b);
    EXPECT_EQ(r.out.pixels, (pixels{10, 10, 20, 20,  //
                                    10, 10, 20, 20,  //
                                    30, 30, 40, 40,  //
                                    30, 30, 40, 40}));
    EXPECT_EQ(r.defined, std::vector<uint8_t>(16, 1));
  }
}

TEST(reference_resampling, scale_up_2x2_to_4x4_bilinear) {
  // a=0 b=100 / c=200 d=40. Sample points -0.25 0.25 0.75 1.25 in each axis:
  // horizontal weights per column: a | .75a+.25b | .25a+.75b | b (replicate).
  // Rows: top 0 25 75 100; bottom 200 160 80 40.
  // y=1: .75 top + .25 bottom = 50 58.75 76.25 85 -> 50 59 76 85 (round half up)
  // y=2: .25 top + .75 bottom = 150 126.25 78.75 55 -> 150 126 79 55
  const ref::image in = u8(2, 2, {0, 100, 200, 40});
  auto rep = ref::scale_image(in, 4, 4, ref::interpolation::bilinear, replicate);
  EXPECT_EQ(rep.out.pixels, (pixels{0,   25,  75, 100,  //
                                    50,  59,  76, 85,   //
                                    150, 126, 79, 55,   //
                                    200, 160, 80, 40}));
  EXPECT_EQ(rep.defined, std::vector<uint8_t>(16, 1));
  // UNDEFINED: the outer ring needs pixel -1 or 2 with weight .25: undefined.
  auto und = ref::scale_image(in, 4, 4, ref::interpolation::bilinear, undefined);
  EXPECT_EQ(und.defined, (std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(crop(und.out, rect{1, 1, 3, 3}), (pixels{59, 76, 126, 79}));
  // CONSTANT 0: (3,3) = .75*.75*d = 22.5 -> 23; (3,0) = .5625*b = 56.25 -> 56;
  // (1,0) = .75 * (.75a + .25b) = 18.75 -> 19.
  auto con = ref::scale_image(in, 4, 4, ref::interpolation::bilinear, constant(0));
  EXPECT_EQ(con.out.at(3, 3), 23);
  EXPECT_EQ(con.out.at(3, 0), 56);
  EXPECT_EQ(con.out.at(1, 0), 19);
  EXPECT_EQ(con.out.at(1, 1), 59);
}

TEST(reference_resampling, scale_down_4x4_to_2x2) {
  const ref::image in = u8(4, 4, {0, 10, 20, 30,  //
                                  40, 50, 60, 70,  //
                                  80, 90, 100, 110,  //
                                  120, 130, 140, 151});
  // x_in = (x + 0.5) * 2 - 0.5 = 0.5, 2.5: exactly between two centres. The
  // reference takes the right/lower one (floor(x_in + 0.5) = 1, 3): the
  // spec's "closest centre" leaves the tie open (scale_nearest_search_radius).
  auto nn = ref::scale_image(in, 2, 2, ref::interpolation::nearest_neighbor, undefined);
  EXPECT_EQ(nn.out.pixels, (pixels{50, 70, 130, 151}));
  // Bilinear at (0.5, 0.5) etc.: the mean of each 2x2 block, all taps inside
  // so UNDEFINED defines everything. (100+110+140+151)/4 = 125.25 -> 125.
  auto bl = ref::scale_image(in, 2, 2, ref::interpolation::bilinear, undefined);
  EXPECT_EQ(bl.out.pixels, (pixels{25, 45, 105, 125}));
  EXPECT_EQ(bl.defined, std::vector<uint8_t>(4, 1));
}

// ===========================================================================
// Warp affine: x0 = a x + b y + c, y0 = d x + e y + f, matrix passed as
// {a, d, b, e, c, f}; output(x,y) = input(x0, y0).

TEST(reference_resampling, warp_affine_identity) {
  const ref::image in = image_a();
  const ref::affine_matrix id{1, 0, 0, 1, 0, 0};
  for (auto type : {ref::interpolation::nearest_neighbor, ref::interpolation::bilinear}) {
    auto r = ref::warp_affine(in, id, type, undefined);
    EXPECT_EQ(r.out.pixels, in.pixels);
    EXPECT_EQ(r.defined, std::vector<uint8_t>(9, 1));
  }
}

TEST(reference_resampling, warp_affine_translation) {
  const ref::image in = u8(3, 2, {1, 2, 3, 4, 5, 6});
  // c = 1: output(x,y) = input(x+1, y); the last column reads outside.
  const ref::affine_matrix right{1, 0, 0, 1, 1, 0};
  auto con = ref::warp_affine(in, right, ref::interpolation::nearest_neighbor, constant(9));
  EXPECT_EQ(con.out.pixels, (pixels{2, 3, 9, 5, 6, 9}));
  EXPECT_EQ(con.defined, std::vector<uint8_t>(6, 1));
  auto und = ref::warp_affine(in, right, ref::interpolation::nearest_neighbor, undefined);
  EXPECT_EQ(und.defined, (std::vector<uint8_t>{1, 1, 0, 1, 1, 0}));
  EXPECT_EQ(und.out.at(0, 0), 2);
  EXPECT_EQ(und.out.at(1, 1), 6);
  // f = 1: output(x,y) = input(x, y+1).
  const ref::affine_matrix down{1, 0, 0, 1, 0, 1};
  auto dn = ref::warp_affine(in, down, ref::interpolation::nearest_neighbor, constant(9));
  EXPECT_EQ(dn.out.pixels, (pixels{4, 5, 6, 9, 9, 9}));
  // Nearest neighbour away from ties: c = 0.4 keeps x, c = 0.6 takes x + 1.
  EXPECT_EQ(ref::warp_affine(in, {1, 0, 0, 1, 0.4f, 0}, ref::interpolation::nearest_neighbor, constant(9)).out.pixels,
            in.pixels);
  EXPECT_EQ(ref::warp_affine(in, {1, 0, 0, 1, 0.6f, 0}, ref::interpolation::nearest_neighbor, constant(9)).out.pixels,
            (pixels{2, 3, 9, 5, 6, 9}));
  // Bilinear, c = 0.5: mean of input(x) and input(x+1), rounded half up:
  // 1.5 -> 2, 2.5 -> 3, (3 + 9)/2 = 6; 4.5 -> 5, 5.5 -> 6, (6 + 9)/2 = 7.5 -> 8.
  const ref::affine_matrix half{1, 0, 0, 1, 0.5f, 0};
  auto bl = ref::warp_affine(in, half, ref::interpolation::bilinear, constant(9));
  EXPECT_EQ(bl.out.pixels, (pixels{2, 3, 6, 5, 6, 8}));
  auto blu = ref::warp_affine(in, half, ref::interpolation::bilinear, undefined);
  EXPECT_EQ(blu.defined, (std::vector<uint8_t>{1, 1, 0, 1, 1, 0}));
  EXPECT_EQ(blu.out.at(1, 1), 6);
}

TEST(reference_resampling, warp_affine_matrix_layout) {
  // Rotation: x0 = 2 - y (a=0, b=-1, c=2), y0 = x (d=1, e=0, f=0), passed
  // as {a, d, b, e, c, f} = {0, 1, -1, 0, 2, 0}, into a 2x3 output:
  // output(x,y) = input(2 - y, x).
  const ref::image in = u8(3, 2, {1, 2, 3, 4, 5, 6});
  auto r = ref::warp_affine(in, {0, 1, -1, 0, 2, 0}, ref::interpolation::nearest_neighbor, undefined, 2, 3);
  EXPECT_EQ(r.out.width, 2u);
  EXPECT_EQ(r.out.height, 3u);
  EXPECT_EQ(r.out.pixels, (pixels{3, 6, 2, 5, 1, 4}));
  EXPECT_EQ(r.defined, std::vector<uint8_t>(6, 1));
}

// ===========================================================================
// Statistics.

TEST(reference_statistics, integral_image) {
  // sum(x,y) = sum of input over [0..x] x [0..y]:
  //   1  3  6
  //   5 12 21    (1+4, 1+2+4+5, 1+..+6)
  //  12 27 45
  const ref::image out = ref::integral_image(u8(3, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(out.format, pixel_format::u32);
  EXPECT_EQ(out.pixels, (pixels{1, 3, 6, 5, 12, 21, 12, 27, 45}));
  EXPECT_EQ(ref::integral_image(u8(4, 1, {255, 255, 255, 255})).pixels, (pixels{255, 510, 765, 1020}));
}

TEST(reference_statistics, histogram_offset_and_range) {
  // offset 10, range 20, 4 bins: i = (I - 10) * 4 / 20 for 10 <= I < 30.
  //   9 -> out; 10 -> 0; 14 -> 16/20 -> 0; 15 -> 1; 19 -> 36/20 -> 1;
  //   20 -> 2; 29 -> 76/20 -> 3; 30 -> out (I < offset + range); 255 -> out.
  const ref::image in = u8(3, 3, {9, 10, 14, 15, 19, 20, 29, 30, 255});
  EXPECT_EQ(ref::histogram(in, 4, 10, 20), (std::vector<uint32_t>{2, 2, 1, 1}));
  // Range not a multiple of the bins: i = I * 3 / 10 exactly, so 3 -> 0,
  // 4 -> 1, 6 -> 1, 7 -> 2 (a rounded window of 3 would put 3 in bin 1).
  EXPECT_EQ(ref::histogram(u8(3, 2, {0, 3, 4, 6, 7, 9}), 3, 0, 10), (std::vector<uint32_t>{2, 2, 2}));
  // Negative offset: [-5, 5) in 2 bins; 0 -> 5*2/10 = 1, 4 -> 1, 5 out.
  EXPECT_EQ(ref::histogram(u8(3, 1, {0, 4, 5}), 2, -5, 10), (std::vector<uint32_t>{0, 2}));
  // Full U8 range in 256 bins: one per value.
  auto all = ref::histogram(u8(4, 1, {0, 0, 128, 255}), 256, 0, 256);
  EXPECT_EQ(all[0], 2u);
  EXPECT_EQ(all[128], 1u);
  EXPECT_EQ(all[255], 1u);
}

TEST(reference_statistics, mean_std_dev_population) {
  // 2 4 4 4 5 5 7 9: mean 40/8 = 5; squared deviations 9 1 1 1 0 0 4 16 = 32,
  // / 8 = 4 -> sigma = 2 (the sample deviation would be sqrt(32/7)).
  auto r = ref::mean_std_dev(u8(4, 2, {2, 4, 4, 4, 5, 5, 7, 9}));
  EXPECT_FLOAT_EQ(r.mean, 5.0f);
  EXPECT_FLOAT_EQ(r.stddev, 2.0f);
  // 1 2 3 4: mean 2.5, variance (2.25 + .25 + .25 + 2.25) / 4 = 1.25.
  auto s = ref::mean_std_dev(u8(2, 2, {1, 2, 3, 4}));
  EXPECT_FLOAT_EQ(s.mean, 2.5f);
  EXPECT_FLOAT_EQ(s.stddev, std::sqrt(1.25f));
  auto flat = ref::mean_std_dev(u8(3, 1, {7, 7, 7}));
  EXPECT_FLOAT_EQ(flat.mean, 7.0f);
  EXPECT_FLOAT_EQ(flat.stddev, 0.0f);
}

TEST(reference_statistics, min_max_loc_with_ties) {
  // 5 1 9 / 1 7 9 / 3 9 1: three minima and three maxima, raster order.
  auto r = ref::min_max_loc(u8(3, 3, {5, 1, 9, 1, 7, 9, 3, 9, 1}));
  EXPECT_EQ(r.min, 1);
  EXPECT_EQ(r.max, 9);
  EXPECT_EQ(r.min_count, 3u);
  EXPECT_EQ(r.max_count, 3u);
  EXPECT_EQ(r.min_locations, (std::vector<ref::coordinate>{{1, 0}, {0, 1}, {2, 2}}));
  EXPECT_EQ(r.max_locations, (std::vector<ref::coordinate>{{2, 0}, {2, 1}, {1, 2}}));
  // S16 with negative values.
  auto s = ref::min_max_loc(s16(2, 2, {-5, 100, -5, 100}));
  EXPECT_EQ(s.min, -5);
  EXPECT_EQ(s.max, 100);
  EXPECT_EQ(s.min_locations, (std::vector<ref::coordinate>{{0, 0}, {0, 1}}));
  EXPECT_EQ(s.max_locations, (std::vector<ref::coordinate>{{1, 0}, {1, 1}}));
  // A flat image: every pixel is both the minimum and the maximum.
  auto f = ref::min_max_loc(u8(2, 1, {4, 4}));
  EXPECT_EQ(f.min, 4);
  EXPECT_EQ(f.max, 4);
  EXPECT_EQ(f.min_count, 2u);
  EXPECT_EQ(f.max_count, 2u);
}

// ===========================================================================
// Misuse: every function refuses bad input through fail().

TEST(reference_misuse, bad_images) {
  ref::image wrong_count = u8(2, 2, {1, 2, 3, 4});
  wrong_count.pixels.pop_back();
  EXPECT_REFERENCE_FAILS(ref::median3x3(wrong_count, replicate), "has 3 pixels for 2x2");
  EXPECT_REFERENCE_FAILS(ref::box3x3(ref::image::make(0, 3, pixel_format::u8), replicate), "is empty");
  // A value outside its format.
  ref::image too_big = u8(2, 1, {0, 0});
  too_big.pixels[1] = 256;
  EXPECT_REFERENCE_FAILS(ref::dilate3x3(too_big, replicate), "outside U8");
  ref::image too_small = s16(1, 1, {0});
  too_small.pixels[0] = -32769;
  EXPECT_REFERENCE_FAILS(ref::magnitude(too_small, s16(1, 1, {0})), "outside S16");
  // image::at checks its bounds with std::out_of_range.
  EXPECT_THROW((void)image_a().at(3, 0), std::out_of_range);
}

TEST(reference_misuse, wrong_formats) {
  const ref::image s = s16(3, 3, pixels(9, 0));
  const ref::image u = u8(3, 3, pixels(9, 0));
  EXPECT_REFERENCE_FAILS(ref::median3x3(s, replicate), "may not be S16");
  EXPECT_REFERENCE_FAILS(ref::sobel3x3(s, replicate), "may not be S16");
  EXPECT_REFERENCE_FAILS(ref::magnitude(u, s), "grad_x may not be U8");
  EXPECT_REFERENCE_FAILS(ref::phase(s, u), "grad_y may not be U8");
  EXPECT_REFERENCE_FAILS(ref::add(u, s, convert_policy::wrap, pixel_format::u8), "U8 output needs two U8 inputs");
  EXPECT_REFERENCE_FAILS(ref::absdiff(u, u, pixel_format::u16), "output must be U8 or S16");
  EXPECT_REFERENCE_FAILS(ref::and_(s, u), "may not be S16");
  EXPECT_REFERENCE_FAILS(ref::convert_depth(u, pixel_format::u8, convert_policy::wrap, 0), "U8 -> S16 and S16 -> U8");
  EXPECT_REFERENCE_FAILS(ref::integral_image(s), "may not be S16");
  EXPECT_REFERENCE_FAILS(ref::histogram(s, 4, 0, 256), "may not be S16");
  EXPECT_REFERENCE_FAILS(ref::mean_std_dev(s), "may not be S16");
  EXPECT_REFERENCE_FAILS(ref::min_max_loc(make(1, 1, pixel_format::u32, {0})), "may not be U32");
  EXPECT_REFERENCE_FAILS(ref::scale_image(s, 2, 2, ref::interpolation::bilinear, replicate), "may not be S16");
  EXPECT_REFERENCE_FAILS(ref::convolve(u, ref::convolution{3, 3, std::vector<int16_t>(9, 1), 1}, pixel_format::u16,
                                       replicate),
                         "convolve output must be U8 or S16");
}

TEST(reference_misuse, mismatched_sizes) {
  const ref::image a = u8(2, 2, {1, 2, 3, 4});
  const ref::image b = u8(3, 2, {1, 2, 3, 4, 5, 6});
  EXPECT_REFERENCE_FAILS(ref::add(a, b, convert_policy::wrap, pixel_format::u8), "differ in size");
  EXPECT_REFERENCE_FAILS(ref::subtract(a, b, convert_policy::wrap, pixel_format::s16), "differ in size");
  EXPECT_REFERENCE_FAILS(ref::absdiff(a, b, pixel_format::u8), "differ in size");
  EXPECT_REFERENCE_FAILS(
      ref::multiply(a, b, 1.0f, convert_policy::wrap, round_policy::to_zero, pixel_format::u8), "differ in size");
  EXPECT_REFERENCE_FAILS(ref::xor_(a, b), "differ in size");
  EXPECT_REFERENCE_FAILS(ref::weighted_average(a, 0.5f, b), "differ in size");
  EXPECT_REFERENCE_FAILS(ref::magnitude(s16(2, 1, {0, 0}), s16(1, 2, {0, 0})), "differ in size");
}

TEST(reference_misuse, bad_parameters) {
  const ref::image u = image_c();
  EXPECT_REFERENCE_FAILS(ref::box3x3(u, constant(256)), "border constant");
  EXPECT_REFERENCE_FAILS(ref::erode3x3(u, constant(-1)), "border constant");
  // Convolution: odd sizes >= 3, coefficient count, power-of-two scale.
  EXPECT_REFERENCE_FAILS(
      ref::convolve(u, ref::convolution{2, 3, std::vector<int16_t>(6, 1), 1}, pixel_format::s16, replicate),
      "odd and at least 3");
  EXPECT_REFERENCE_FAILS(
      ref::convolve(u, ref::convolution{3, 3, std::vector<int16_t>(8, 1), 1}, pixel_format::s16, replicate),
      "coefficient count");
  EXPECT_REFERENCE_FAILS(
      ref::convolve(u, ref::convolution{3, 3, std::vector<int16_t>(9, 1), 3}, pixel_format::s16, replicate),
      "power of two");
  EXPECT_REFERENCE_FAILS(
      ref::convolve(u, ref::convolution{3, 3, std::vector<int16_t>(9, 1), 0}, pixel_format::s16, replicate),
      "power of two");
  // Non-linear mask.
  EXPECT_REFERENCE_FAILS(ref::nonlinear_filter(u, ref::nonlinear_function::median,
                                               ref::nonlinear_mask::centred(3, 3, std::vector<uint8_t>(9, 0)),
                                               replicate),
                         "no non-zero entry");
  ref::nonlinear_mask off = ref::nonlinear_mask::centred(3, 3, std::vector<uint8_t>(9, 1));
  off.origin_x = 3;
  EXPECT_REFERENCE_FAILS(ref::nonlinear_filter(u, ref::nonlinear_function::max, off, replicate),
                         "origin outside the mask");
  EXPECT_REFERENCE_FAILS(ref::nonlinear_filter(u, ref::nonlinear_function::max,
                                               ref::nonlinear_mask::centred(3, 3, std::vector<uint8_t>(8, 1)),
                                               replicate),
                         "mask value count");
  // Threshold output values must fit U8.
  EXPECT_REFERENCE_FAILS(ref::threshold_image(u, {.type = ref::threshold::kind::binary, .true_value = 256}),
                         "true/false values");
  // Multiply scale, weighted-average alpha, convert-depth shift.
  EXPECT_REFERENCE_FAILS(
      ref::multiply(u, u, -1.0f, convert_policy::wrap, round_policy::to_zero, pixel_format::u8), "non-negative");
  EXPECT_REFERENCE_FAILS(ref::weighted_average(u, 1.5f, u), "alpha");
  EXPECT_REFERENCE_FAILS(ref::weighted_average(u, -0.1f, u), "alpha");
  EXPECT_REFERENCE_FAILS(ref::convert_depth(s16(1, 1, {0}), pixel_format::u8, convert_policy::wrap, 8), "shift");
  EXPECT_REFERENCE_FAILS(ref::convert_depth(u, pixel_format::s16, convert_policy::wrap, -1), "shift");
  // LUT: value not present, too many entries, entry out of range.
  EXPECT_REFERENCE_FAILS(ref::table_lookup(u8(1, 1, {4}), {1, 2, 3, 4}), "not present in the LUT");
  EXPECT_REFERENCE_FAILS(ref::table_lookup(s16(1, 1, {-3}), {1, 2, 3, 4, 5}), "not present in the LUT");
  EXPECT_REFERENCE_FAILS(ref::table_lookup(u, std::vector<int64_t>(257, 0)), "LUT size");
  EXPECT_REFERENCE_FAILS(ref::table_lookup(u, std::vector<int64_t>(256, 256)), "LUT entry");
  // Resampling.
  EXPECT_REFERENCE_FAILS(ref::scale_image(u, 0, 2, ref::interpolation::bilinear, replicate), "output is empty");
  EXPECT_REFERENCE_FAILS(
      ref::warp_affine(u, {1, 0, 0, 1, 0, 0}, ref::interpolation::nearest_neighbor, replicate), "UNDEFINED and CONSTANT");
  EXPECT_REFERENCE_FAILS(ref::warp_affine(u, {1, 0, 0, 1, 0, 0}, ref::interpolation::area, undefined), "AREA");
  EXPECT_REFERENCE_FAILS(
      ref::warp_affine(u, {1, 0, 0, 1, std::nanf(""), 0}, ref::interpolation::bilinear, undefined), "finite");
  // Histogram.
  EXPECT_REFERENCE_FAILS(ref::histogram(u, 0, 0, 256), "bins > 0");
  EXPECT_REFERENCE_FAILS(ref::histogram(u, 4, 0, 0), "range > 0");
}
