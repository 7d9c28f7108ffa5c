// Plain C++ reference for the OpenVX 1.3 vision kernels that Ferry runs as
// generated OpenCL C. Tests compare every kernel's output against these
// functions, so they are written for clarity and for the exact arithmetic of
// the OpenVX 1.3 specification (KhronosGroup/OpenVX-api-docs,
// docs/OpenVX_Specification.adoc), not for speed.
//
// Where the specification leaves a result loose (rounding of a mapping, the
// sampling of an interpolation) the reference still computes one exact value
// and the tolerance the Khronos conformance tests (KhronosGroup/OpenVX-cts)
// allow is given as a constexpr below, so a test can apply the same slack.
//
// Every function validates its arguments (formats, pixel ranges, sizes) and
// throws std::invalid_argument on a misuse: a wrong reference must never be
// silently "right".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ferry::graph::reference {

enum class pixel_format { u8, s16, u16, s32, u32 };

/// One plane, row-major, one value per pixel wide enough for every format.
struct image {
  uint32_t width = 0, height = 0;
  pixel_format format = pixel_format::u8;
  std::vector<int64_t> pixels;  // width*height values
  int64_t& at(uint32_t x, uint32_t y);
  int64_t at(uint32_t x, uint32_t y) const;
  static image make(uint32_t w, uint32_t h, pixel_format f, int64_t fill = 0);
};

enum class border_mode { undefined, constant, replicate };
struct border {
  border_mode mode = border_mode::undefined;
  int64_t constant = 0;
};
enum class convert_policy { wrap, saturate };
enum class round_policy { to_zero, to_nearest_even };
enum class interpolation { nearest_neighbor, bilinear, area };
enum class nonlinear_function { median, min, max };
struct threshold {
  enum class kind { binary, range } type;
  int64_t value = 0, lower = 0, upper = 0;
  int64_t true_value = 255, false_value = 0;
};

/// A rectangle as vx_rectangle_t lays it out: start inclusive, end exclusive,
/// so its area is (end_x - start_x) * (end_y - start_y). An empty rectangle
/// is {0, 0, 0, 0}.
struct rect {
  uint32_t start_x = 0, start_y = 0, end_x = 0, end_y = 0;
  bool contains(uint32_t x, uint32_t y) const {
    return x >= start_x && x < end_x && y >= start_y && y < end_y;
  }
  bool empty() const { return end_x <= start_x || end_y <= start_y; }
  uint64_t area() const {
    return empty() ? 0 : uint64_t(end_x - start_x) * (end_y - start_y);
  }
  friend bool operator==(const rect&, const rect&) = default;
};

/// Output of a neighbourhood kernel. Under border_mode::undefined the spec
/// leaves every output pixel whose neighbourhood leaves the image
/// unspecified; `valid` is the rectangle of pixels the reference defines
/// (the image shrunk by the kernel's extent on each side). Pixels outside it
/// hold 0 in `out` and must not be compared. For constant and replicate
/// `valid` is the whole image.
struct filtered {
  image out;
  rect valid;
};

/// Sobel / Scharr: both gradient planes share one valid rectangle.
struct gradients {
  image gx, gy;
  rect valid;
};

/// Output of a resampling kernel (scale_image, warp_affine). Out-of-image
/// samples under border_mode::undefined make single, scattered pixels
/// unspecified, so a rectangle does not describe them: `defined` holds 1 for
/// each pixel the reference defines and 0 for the others (row-major, like
/// `out.pixels`). Undefined pixels hold 0 in `out`.
struct resampled {
  image out;
  std::vector<uint8_t> defined;
  bool is_defined(uint32_t x, uint32_t y) const {
    return defined[size_t(y) * out.width + x] != 0;
  }
};

/// A vx_convolution: `coefficients` is the row-major rows x columns array
/// that vxCopyConvolutionCoefficients takes (row 0 first), and `scale` the
/// VX_CONVOLUTION_SCALE attribute (a power of two).
struct convolution {
  uint32_t columns = 0, rows = 0;
  std::vector<int16_t> coefficients;
  uint32_t scale = 1;
};

/// A vx_matrix of VX_TYPE_UINT8 used as the mask of the non-linear filter:
/// row-major rows x columns, non-zero entries take part. The origin
/// (VX_MATRIX_ORIGIN) is the mask element placed on the output pixel.
struct nonlinear_mask {
  uint32_t columns = 0, rows = 0;
  std::vector<uint8_t> values;
  uint32_t origin_x = 0, origin_y = 0;
  /// The default of vxCreateMatrixFromPattern: origin at (columns/2, rows/2).
  static nonlinear_mask centred(uint32_t columns, uint32_t rows, std::vector<uint8_t> values);
};

/// The 2x3 VX_TYPE_FLOAT32 affine matrix exactly as vxCopyMatrix takes it:
/// a matrix of 2 columns and 3 rows, i.e. {a, d, b, e, c, f} for
/// x0 = a*x + b*y + c, y0 = d*x + e*y + f (the spec's vx_warps.c example).
using affine_matrix = std::array<float, 6>;

struct coordinate {
  uint32_t x = 0, y = 0;
  friend bool operator==(const coordinate&, const coordinate&) = default;
};

struct min_max_location {
  int64_t min = 0, max = 0;
  uint64_t min_count = 0, max_count = 0;
  std::vector<coordinate> min_locations, max_locations;  // raster order
};

struct mean_std_dev_result {
  float mean = 0, stddev = 0;
};

// ---------------------------------------------------------------------------
// Tolerances the Khronos conformance tests (KhronosGroup/OpenVX-cts,
// test_conformance/) allow where the spec's wording is loose. The reference
// itself is exact; these say how far a conforming kernel may be from it.

/// Box3x3: |out - floor(sum/9)| <= 1 (test_box3x3.c, EXPECT_CTIMAGE_NEAR 1).
constexpr int64_t box3x3_tolerance = 1;
/// Gaussian3x3, median, erode, dilate, sobel, integral, histogram, LUT,
/// threshold, bitwise, add/subtract, absdiff, convert_depth, nonlinear
/// filter, weighted average: the CTS compares exactly.
constexpr int64_t exact_tolerance = 0;
/// Magnitude: |out - ref| <= 1 (test_magnitude.c, EXPECT_CTIMAGE_NEAR 1).
constexpr int64_t magnitude_tolerance = 1;
/// Phase: |out - ref| <= 1 counted modulo 256, i.e. 255 and 0 are neighbours
/// (test_phase.c, ASSERT_CTIMAGE_NEARWRAP(.., 1, 0)).
constexpr int64_t phase_tolerance = 1;
/// Custom convolution: |out - ref| <= 1 (test_convolve.c).
constexpr int64_t convolve_tolerance = 1;
/// Multiply: for scale != 1 the CTS accepts floor(p*scale) or
/// floor(p*scale) + 1 (each after the overflow policy), i.e. both rounding
/// policies pass within one unit; for scale == 1 it compares exactly
/// (test_multiply.c).
constexpr int64_t multiply_tolerance = 1;
/// ColorConvert: the CTS allows one unit where a conversion computes
/// (RGB <-> YUV: its reference rounds where the spec floors) and none where
/// it only moves or resamples chroma (test_convertcolor.c). The reference
/// here is exact, and so is Ferry's kernel: tests compare exactly.
constexpr int64_t color_convert_cts_tolerance = 1;
/// Mean and standard deviation: absolute error <= 1e-4 * 256 on each for U8
/// input (test_meanstddev.c: 1e-4 scaled by the value range).
constexpr double mean_std_dev_tolerance = 1e-4 * 256;
/// ScaleImage bilinear: |out - ref| <= 1, and up to 2 % of the pixels may
/// fail even that (test_scale.c: "98% should be valid").
constexpr int64_t scale_bilinear_tolerance = 1;
constexpr double scale_bilinear_max_mismatch_fraction = 0.02;
/// ScaleImage nearest neighbour: exact for integer up-scales and odd integer
/// down-scales; for other ratios the CTS accepts any source pixel within one
/// pixel of floor(sample point) in each direction (test_scale.c).
constexpr int64_t scale_nearest_search_radius = 1;
/// ScaleImage area: the spec leaves the averaging implementation-defined;
/// the CTS only checks the output lies between the min and max of the 5x5
/// source pixels around floor(sample point) (test_scale.c), and exactly for
/// integer up-scales.
constexpr int64_t scale_area_search_radius = 2;
/// WarpAffine bilinear: |out - ref| <= 1 (the CTS reference truncates
/// where this one rounds; the one unit covers both), and up to 10 % of the
/// pixels may fail (test_warpaffine.c, VX_BILINEAR_TOLERANCE, 10*err > n).
constexpr int64_t warp_bilinear_tolerance = 1;
constexpr double warp_max_mismatch_fraction = 0.10;
/// WarpAffine nearest neighbour: any source pixel within 1.5 pixels of the
/// mapped point passes (test_warpaffine.c, VX_NN_AREA_SIZE).
constexpr double warp_nearest_search_radius = 1.5;
/// The smallest VX_CONTEXT_CONVOLUTION_MAX_DIMENSION / NONLINEAR_MAX_DIMENSION
/// an implementation may report (vx_types.h: "should not be smaller than 9";
/// spec, Non Linear Filter: "The lowest value ... is 9"). The reference
/// accepts larger odd sizes too.
constexpr uint32_t min_max_kernel_dimension = 9;

// ---------------------------------------------------------------------------
// Neighbourhood kernels (3x3 unless stated).

filtered median3x3(const image& in, border b);
filtered box3x3(const image& in, border b);
filtered gaussian3x3(const image& in, border b);
filtered erode3x3(const image& in, border b);
filtered dilate3x3(const image& in, border b);
gradients sobel3x3(const image& in, border b);
/// Ferry vendor kernel, not in the spec: Sobel's contract with the Scharr
/// weights.
gradients scharr3x3(const image& in, border b);
filtered convolve(const image& in, const convolution& conv, pixel_format out_format, border b);
filtered nonlinear_filter(const image& in, nonlinear_function function, const nonlinear_mask& mask,
                          border b);

// Pixel-wise kernels.

image magnitude(const image& grad_x, const image& grad_y);
image phase(const image& grad_x, const image& grad_y);
image threshold_image(const image& in, const threshold& t);
image absdiff(const image& in1, const image& in2, pixel_format out_format);
image add(const image& in1, const image& in2, convert_policy policy, pixel_format out_format);
image subtract(const image& in1, const image& in2, convert_policy policy, pixel_format out_format);
image multiply(const image& in1, const image& in2, float scale, convert_policy overflow,
               round_policy rounding, pixel_format out_format);
image and_(const image& in1, const image& in2);
image or_(const image& in1, const image& in2);
image xor_(const image& in1, const image& in2);
image not_(const image& in);
image convert_depth(const image& in, pixel_format out_format, convert_policy policy, int32_t shift);
/// U8 with up to 256 entries, or S16 with up to 65536 entries; the index of
/// input value 0 is VX_LUT_OFFSET: 0 for U8 and lut.size()/2 for S16.
image table_lookup(const image& in, const std::vector<int64_t>& lut);
image weighted_average(const image& img1, float alpha, const image& img2);

// Resampling.

resampled scale_image(const image& in, uint32_t out_width, uint32_t out_height, interpolation type,
                      border b);
/// Output size 0 means "same as the input".
resampled warp_affine(const image& in, const affine_matrix& m, interpolation type, border b,
                      uint32_t out_width = 0, uint32_t out_height = 0);

// Statistics.

image integral_image(const image& in);
std::vector<uint32_t> histogram(const image& in, uint32_t bins, int32_t offset, uint32_t range);
mean_std_dev_result mean_std_dev(const image& in);
min_max_location min_max_loc(const image& in);

// Color (ChannelExtract, ChannelCombine, ColorConvert).

enum class color_format { rgb, rgbx, nv12, nv21, iyuv, yuv4, uyvy, yuyv };
/// VX_IMAGE_SPACE of the YUV side (BT.601_525 and _625 share their weights).
enum class color_space { bt709, bt601 };

/// A multi-channel image as its channels, each a U8 image at the channel's
/// own resolution, in the order VX_CHANNEL_0.. and Channel Combine number
/// them: R, G, B (, X) for RGB and RGBX; Y, U, V for the YUV formats, where
/// U and V are half the width and height for NV12, NV21 and IYUV, half the
/// width for UYVY and YUYV and full size for YUV4 (spec, vx_df_image_e). How
/// channels lie in memory (planes, interleaving, NV21's V before U) is not
/// the reference's business: channel extraction and combination are exactly
/// this representation, and the tests write and read it by the formats'
/// layouts.
struct color_image {
  color_format format = color_format::rgb;
  uint32_t width = 0, height = 0;
  std::vector<image> channels;
  /// Zero-filled; throws for a size the format cannot have (4:2:0 needs an
  /// even width and height, 4:2:2 an even width).
  static color_image make(uint32_t w, uint32_t h, color_format f);
};

uint32_t channel_count(color_format f);
/// log2 of channel `c`'s subsampling along x and y (0 or 1).
std::pair<uint32_t, uint32_t> channel_shift(color_format f, uint32_t c);
bool color_size_allowed(color_format f, uint32_t w, uint32_t h);
bool is_rgb(color_format f);

/// Spec, Color Convert, for the conversions of its table, full range (the
/// only one required), BT.709 or BT.601 weights: exact. The spec leaves
/// chroma resampling implementation-defined; see reference.cpp for the
/// choice (that of the Khronos conformance tests' reference).
color_image color_convert(const color_image& in, color_format out, color_space space = color_space::bt709);
/// Whether the spec's table has the conversion.
bool color_conversion_defined(color_format from, color_format to);

// Helpers shared with tests.

/// The inclusive range of values a pixel of `f` can hold.
std::pair<int64_t, int64_t> format_range(pixel_format f);
/// Phase distance modulo 256, the measure phase_tolerance applies to.
int64_t phase_distance(int64_t a, int64_t b);

}  // namespace ferry::graph::reference
