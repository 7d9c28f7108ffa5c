// Reference implementations of the OpenVX 1.3 vision kernels Ferry
// generates as OpenCL C. Each kernel quotes (or closely paraphrases) the
// clause of the OpenVX 1.3 specification that fixes its arithmetic; the
// quoted text is from KhronosGroup/OpenVX-api-docs,
// docs/OpenVX_Specification.adoc. Where the spec is loose, the comment says
// which value was chosen and why.
#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>
#include <stdexcept>
#include <string>

namespace ferry::graph::reference {

// ---------------------------------------------------------------------------
// image

int64_t& image::at(uint32_t x, uint32_t y) {
  // Checked on every access: a reference that reads past an edge must fail
  // loudly rather than return a neighbour's value.
  if (x >= width || y >= height || pixels.size() != size_t(width) * height) {
    throw std::out_of_range("reference::image::at(" + std::to_string(x) + ", " + std::to_string(y) +
                            ") outside " + std::to_string(width) + "x" + std::to_string(height));
  }
  return pixels[size_t(y) * width + x];
}

int64_t image::at(uint32_t x, uint32_t y) const {
  return const_cast<image&>(*this).at(x, y);
}

image image::make(uint32_t w, uint32_t h, pixel_format f, int64_t fill) {
  image img;
  img.width = w;
  img.height = h;
  img.format = f;
  img.pixels.assign(size_t(w) * h, fill);
  return img;
}

nonlinear_mask nonlinear_mask::centred(uint32_t columns, uint32_t rows, std::vector<uint8_t> values) {
  nonlinear_mask m;
  m.columns = columns;
  m.rows = rows;
  m.values = std::move(values);
  m.origin_x = columns / 2;
  m.origin_y = rows / 2;
  return m;
}

// ---------------------------------------------------------------------------
// helpers

std::pair<int64_t, int64_t> format_range(pixel_format f) {
  switch (f) {
    case pixel_format::u8: return {0, 255};
    case pixel_format::s16: return {-32768, 32767};
    case pixel_format::u16: return {0, 65535};
    case pixel_format::s32: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case pixel_format::u32: return {0, std::numeric_limits<uint32_t>::max()};
  }
  throw std::invalid_argument("unknown pixel_format");
}

int64_t phase_distance(int64_t a, int64_t b) {
  const int64_t d = ((a - b) % 256 + 256) % 256;
  return std::min(d, 256 - d);
}

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("reference: " + what);
}

const char* format_name(pixel_format f) {
  switch (f) {
    case pixel_format::u8: return "U8";
    case pixel_format::s16: return "S16";
    case pixel_format::u16: return "U16";
    case pixel_format::s32: return "S32";
    case pixel_format::u32: return "U32";
  }
  return "?";
}

// An input must be a consistent, non-empty image whose every pixel fits its
// format: otherwise the "expected" values a test derives are meaningless.
void check_image(const image& img, const char* name) {
  if (img.width == 0 || img.height == 0) fail(std::string(name) + " is empty");
  if (img.pixels.size() != size_t(img.width) * img.height) {
    fail(std::string(name) + " has " + std::to_string(img.pixels.size()) + " pixels for " +
         std::to_string(img.width) + "x" + std::to_string(img.height));
  }
  const auto [lo, hi] = format_range(img.format);
  for (int64_t v : img.pixels) {
    if (v < lo || v > hi) {
      fail(std::string(name) + " holds " + std::to_string(v) + ", outside " + format_name(img.format));
    }
  }
}

void require_format(const image& img, const char* name, std::initializer_list<pixel_format> allowed) {
  check_image(img, name);
  for (pixel_format f : allowed) {
    if (img.format == f) return;
  }
  fail(std::string(name) + " may not be " + format_name(img.format));
}

void require_same_size(const image& a, const image& b) {
  if (a.width != b.width || a.height != b.height) fail("input images differ in size");
}

void check_border(const border& b, pixel_format input_format) {
  if (b.mode == border_mode::constant) {
    // vx_border_t carries the constant in the input's pixel type.
    const auto [lo, hi] = format_range(input_format);
    if (b.constant < lo || b.constant > hi) fail("border constant does not fit the input format");
  }
}

// Clamp to the format's range: VX_CONVERT_POLICY_SATURATE, "Results are
// saturated to the bit depth of the output operand".
int64_t saturate(int64_t v, pixel_format f) {
  const auto [lo, hi] = format_range(f);
  return std::clamp(v, lo, hi);
}

// VX_CONVERT_POLICY_WRAP: "Results are the least significant bits of the
// output operand, as if stored in two's complement binary format in the size
// of its bit-depth."
int64_t wrap(int64_t v, pixel_format f) {
  const auto [lo, hi] = format_range(f);
  const int64_t span = hi - lo + 1;  // 2^bits
  int64_t r = (v - lo) % span;
  if (r < 0) r += span;
  return r + lo;
}

int64_t apply_policy(int64_t v, convert_policy p, pixel_format f) {
  return p == convert_policy::saturate ? saturate(v, f) : wrap(v, f);
}

// Pixel (x, y) of `in`, coordinates possibly outside, under a border mode
// (spec, vx_border_e): CONSTANT "a constant value is filled-in when accessing
// out-of-bounds pixels"; REPLICATE "a replication of the nearest edge pixels
// value is given for out-of-bounds pixels". UNDEFINED has no value: callers
// only read outside under UNDEFINED by mistake, so that is an error.
int64_t read(const image& in, int64_t x, int64_t y, const border& b) {
  const bool inside = x >= 0 && y >= 0 && x < int64_t(in.width) && y < int64_t(in.height);
  if (inside) return in.at(uint32_t(x), uint32_t(y));
  switch (b.mode) {
    case border_mode::constant: return b.constant;
    case border_mode::replicate:
      return in.at(uint32_t(std::clamp<int64_t>(x, 0, in.width - 1)),
                   uint32_t(std::clamp<int64_t>(y, 0, in.height - 1)));
    case border_mode::undefined: break;
  }
  throw std::logic_error("reference: read outside the image under border_mode::undefined");
}

// The pixels whose neighbourhood (left/top/right/bottom pixels beyond the
// centre) stays inside the image. Under UNDEFINED these are the only defined
// outputs (spec, Valid Image Region: an input pixel "is not valid ... [when
// it] is outside of the image border and the border mode in use is
// VX_BORDER_UNDEFINED", and an output depending on it is not valid).
rect valid_rect(const image& in, uint32_t left, uint32_t top, uint32_t right, uint32_t bottom,
                const border& b) {
  if (b.mode != border_mode::undefined) return rect{0, 0, in.width, in.height};
  if (uint64_t(in.width) <= uint64_t(left) + right || uint64_t(in.height) <= uint64_t(top) + bottom) {
    return rect{};  // the image is smaller than the neighbourhood: nothing is defined
  }
  return rect{left, top, in.width - right, in.height - bottom};
}

// Runs `compute(x, y)` for every pixel the border mode defines. Pixels
// outside the valid rectangle stay 0.
template <class Compute>
filtered neighbourhood(const image& in, pixel_format out_format, uint32_t left, uint32_t top,
                       uint32_t right, uint32_t bottom, const border& b, Compute compute) {
  filtered result{image::make(in.width, in.height, out_format), valid_rect(in, left, top, right, bottom, b)};
  for (uint32_t y = result.valid.start_y; y < result.valid.end_y; ++y) {
    for (uint32_t x = result.valid.start_x; x < result.valid.end_x; ++x) {
      result.out.at(x, y) = compute(int64_t(x), int64_t(y));
    }
  }
  return result;
}

// The nine values of the 3x3 neighbourhood in raster order (row y-1 first).
std::array<int64_t, 9> window3x3(const image& in, int64_t x, int64_t y, const border& b) {
  std::array<int64_t, 9> w{};
  size_t i = 0;
  for (int64_t dy = -1; dy <= 1; ++dy) {
    for (int64_t dx = -1; dx <= 1; ++dx) w[i++] = read(in, x + dx, y + dy, b);
  }
  return w;
}

filtered filter3x3(const image& in, const border& b, pixel_format out_format,
                   int64_t (*combine)(const std::array<int64_t, 9>&)) {
  require_format(in, "input", {pixel_format::u8});
  check_border(b, in.format);
  return neighbourhood(in, out_format, 1, 1, 1, 1, b,
                       [&](int64_t x, int64_t y) { return combine(window3x3(in, x, y, b)); });
}

// Correlation of a 3x3 weight matrix (row-major, rows top to bottom) with
// the neighbourhood: the operator is laid over the image as printed, so
// Gx = [-1 0 1; ...] gives right minus left. The CTS reference
// (sobel_x_get) reads the spec's Sobel matrices the same way.
int64_t correlate3x3(const std::array<int64_t, 9>& w, const std::array<int64_t, 9>& k) {
  int64_t sum = 0;
  for (size_t i = 0; i < 9; ++i) sum += w[i] * k[i];
  return sum;
}

gradients gradient3x3(const image& in, const border& b, const std::array<int64_t, 9>& kx,
                      const std::array<int64_t, 9>& ky) {
  require_format(in, "input", {pixel_format::u8});
  check_border(b, in.format);
  gradients g{image::make(in.width, in.height, pixel_format::s16),
              image::make(in.width, in.height, pixel_format::s16), valid_rect(in, 1, 1, 1, 1, b)};
  for (uint32_t y = g.valid.start_y; y < g.valid.end_y; ++y) {
    for (uint32_t x = g.valid.start_x; x < g.valid.end_x; ++x) {
      const auto w = window3x3(in, x, y, b);
      // |sum| <= 16 * 255 for both operators here: no S16 overflow is possible.
      g.gx.at(x, y) = correlate3x3(w, kx);
      g.gy.at(x, y) = correlate3x3(w, ky);
    }
  }
  return g;
}

// floor(a / b) for b > 0, also for negative a (C++ '/' truncates).
int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b) != 0 && a < 0) --q;
  return q;
}

// Round-half-up of num/den for den > 0: floor(num/den + 1/2).
int64_t round_half_up(int64_t num, int64_t den) { return floor_div(2 * num + den, 2 * den); }

// IEEE binary32 arithmetic, emulated through double so that the compiler
// cannot fuse or widen it (-ffp-contract, x87): a product or sum of two
// floats is exact in double here (small magnitudes), and one cast rounds it
// to float exactly as a float operation would.
float f32_mul(float a, float b) { return static_cast<float>(double(a) * double(b)); }
float f32_add(float a, float b) { return static_cast<float>(double(a) + double(b)); }
float f32_sub(float a, float b) { return static_cast<float>(double(a) - double(b)); }

// Round to nearest, ties to even (VX_ROUND_POLICY_TO_NEAREST_EVEN).
double round_nearest_even(double v) {
  const double lower = std::floor(v);
  const double frac = v - lower;
  if (frac > 0.5) return lower + 1;
  if (frac < 0.5) return lower;
  return std::fmod(lower, 2.0) == 0 ? lower : lower + 1;
}

// Clamp a finite double to int64 for the wrap/saturate step; values beyond
// +-2^62 cannot come from valid inputs, so they are refused.
int64_t to_int64(double v) {
  if (!std::isfinite(v) || std::fabs(v) > 4.0e18) fail("intermediate value out of range");
  return static_cast<int64_t>(v);
}

}  // namespace

// ---------------------------------------------------------------------------
// Neighbourhood kernels

// Spec, Median Filter: "The median is the middle value over an odd-numbered,
// sorted range of values" - the 5th of the 9 sorted neighbours.
filtered median3x3(const image& in, border b) {
  return filter3x3(in, b, pixel_format::u8, [](const std::array<int64_t, 9>& w) {
    auto s = w;
    std::sort(s.begin(), s.end());
    return s[4];
  });
}

// Spec, Box Filter: "K_box = 1/9 x [1 1 1; 1 1 1; 1 1 1]". The spec does not
// say how sum/9 becomes an integer; the reference truncates (floor, the sum
// is non-negative) as the CTS reference does, and the CTS accepts +-1
// (box3x3_tolerance) so a multiply-and-shift approximation also passes.
filtered box3x3(const image& in, border b) {
  return filter3x3(in, b, pixel_format::u8, [](const std::array<int64_t, 9>& w) {
    int64_t sum = 0;
    for (int64_t v : w) sum += v;
    return sum / 9;
  });
}

// Spec, Gaussian Filter: "K_gaussian = 1/16 x [1 2 1; 2 4 2; 1 2 1]";
// sum/16 truncated (the CTS reference shifts right by 4 and compares
// exactly).
filtered gaussian3x3(const image& in, border b) {
  return filter3x3(in, b, pixel_format::u8, [](const std::array<int64_t, 9>& w) {
    static constexpr std::array<int64_t, 9> k{1, 2, 1, 2, 4, 2, 1, 2, 1};
    return correlate3x3(w, k) / 16;
  });
}

// Spec, Erode Image: "dst(x,y) = min over x-1<=x'<=x+1, y-1<=y'<=y+1 of
// src(x',y')".
filtered erode3x3(const image& in, border b) {
  return filter3x3(in, b, pixel_format::u8,
                   [](const std::array<int64_t, 9>& w) { return *std::min_element(w.begin(), w.end()); });
}

// Spec, Dilate Image: "dst(x,y) = max over x-1<=x'<=x+1, y-1<=y'<=y+1 of
// src(x',y')".
filtered dilate3x3(const image& in, border b) {
  return filter3x3(in, b, pixel_format::u8,
                   [](const std::array<int64_t, 9>& w) { return *std::max_element(w.begin(), w.end()); });
}

// Spec, Sobel 3x3: "G_x = [-1 0 +1; -2 0 +2; -1 0 +1], G_y = [-1 -2 -1;
// 0 0 0; +1 +2 +1]", outputs in S16.
gradients sobel3x3(const image& in, border b) {
  static constexpr std::array<int64_t, 9> kx{-1, 0, 1, -2, 0, 2, -1, 0, 1};
  static constexpr std::array<int64_t, 9> ky{-1, -2, -1, 0, 0, 0, 1, 2, 1};
  return gradient3x3(in, b, kx, ky);
}

// Ferry vendor kernel (not in the spec): Sobel 3x3's contract with
// G_x = [-3 0 3; -10 0 10; -3 0 3] and G_y its transpose, S16 out.
gradients scharr3x3(const image& in, border b) {
  static constexpr std::array<int64_t, 9> kx{-3, 0, 3, -10, 0, 10, -3, 0, 3};
  static constexpr std::array<int64_t, 9> ky{-3, -10, -3, 0, 0, 0, 3, 10, 3};
  return gradient3x3(in, b, kx, ky);
}

// Spec, Custom Convolution: "k0 = m/2, l0 = n/2, sum = sum over k,l of
// input(x + k0 - k, y + l0 - l) C(k,l)" - a true convolution, the matrix
// flipped in both directions ("different than ... OpenCV Filter2D"); then
// for U8 "0 if sum < 0, 255 if sum/scale > 255, else sum/scale", for S16
// "output(x,y) = sum / scale" with VX_CONVERT_POLICY_SATURATE. k runs over
// columns (x) and l over rows (y) of the row-major coefficient array, as
// the spec's Scharr example (vx_convolution.c, gx = {3,0,-3; ...}) and the
// CTS reference (data[cols*rows-1-i]) both read it. '/' is C integer
// division, truncating toward zero.
filtered convolve(const image& in, const convolution& conv, pixel_format out_format, border b) {
  require_format(in, "input", {pixel_format::u8});
  check_border(b, in.format);
  if (out_format != pixel_format::u8 && out_format != pixel_format::s16) fail("convolve output must be U8 or S16");
  // vx_types.h, VX_CONTEXT_CONVOLUTION_MAX_DIMENSION: "w and h are odd
  // numbers, 3 <= w <= n and 3 <= h <= n".
  if (conv.columns < 3 || conv.rows < 3 || conv.columns % 2 == 0 || conv.rows % 2 == 0) {
    fail("convolution sizes must be odd and at least 3");
  }
  if (conv.coefficients.size() != size_t(conv.columns) * conv.rows) fail("convolution coefficient count");
  // VX_CONVOLUTION_SCALE must be a power of two.
  if (conv.scale == 0 || (conv.scale & (conv.scale - 1)) != 0) fail("convolution scale must be a power of two");

  const int64_t k0 = conv.columns / 2, l0 = conv.rows / 2;
  return neighbourhood(
      in, out_format, uint32_t(k0), uint32_t(l0), uint32_t(k0), uint32_t(l0), b, [&](int64_t x, int64_t y) {
        int64_t sum = 0;
        for (int64_t l = 0; l < int64_t(conv.rows); ++l) {
          for (int64_t k = 0; k < int64_t(conv.columns); ++k) {
            sum += read(in, x + k0 - k, y + l0 - l, b) * conv.coefficients[size_t(l * conv.columns + k)];
          }
        }
        const int64_t scaled = sum / int64_t(conv.scale);
        if (out_format == pixel_format::u8) {
          if (sum < 0) return int64_t{0};
          return std::min<int64_t>(scaled, 255);
        }
        return saturate(scaled, pixel_format::s16);
      });
}

// Spec, Non Linear Filter: the function (median, min "Nonlinear Erode", max
// "Nonlinear Dilate") over the input pixels under the non-zero mask
// entries, "VX_MATRIX_ORIGIN attribute is used to place the mask". The mask
// is laid over the image as stored (no flip): entry (i, j) covers input
// (x - origin_x + i, y - origin_y + j). The spec defines the median only for
// an odd count; for an even count the reference takes sorted[n/2], the
// upper median, as the CTS reference (filter_calculate) does. Under
// UNDEFINED the valid rectangle shrinks by the whole mask extent around the
// origin (as the CTS adjusts its ROI), zero entries included.
filtered nonlinear_filter(const image& in, nonlinear_function function, const nonlinear_mask& mask, border b) {
  require_format(in, "input", {pixel_format::u8});
  check_border(b, in.format);
  if (mask.columns == 0 || mask.rows == 0) fail("mask is empty");
  if (mask.values.size() != size_t(mask.columns) * mask.rows) fail("mask value count");
  if (mask.origin_x >= mask.columns || mask.origin_y >= mask.rows) fail("mask origin outside the mask");
  if (std::all_of(mask.values.begin(), mask.values.end(), [](uint8_t v) { return v == 0; })) {
    fail("mask has no non-zero entry");
  }
  const uint32_t left = mask.origin_x, top = mask.origin_y;
  const uint32_t right = mask.columns - 1 - mask.origin_x, bottom = mask.rows - 1 - mask.origin_y;
  return neighbourhood(in, pixel_format::u8, left, top, right, bottom, b, [&](int64_t x, int64_t y) {
    std::vector<int64_t> values;
    for (uint32_t j = 0; j < mask.rows; ++j) {
      for (uint32_t i = 0; i < mask.columns; ++i) {
        if (mask.values[size_t(j) * mask.columns + i] == 0) continue;
        values.push_back(read(in, x - left + i, y - top + j, b));
      }
    }
    std::sort(values.begin(), values.end());
    switch (function) {
      case nonlinear_function::min: return values.front();
      case nonlinear_function::max: return values.back();
      case nonlinear_function::median: return values[values.size() / 2];
    }
    fail("unknown nonlinear_function");
  });
}

// ---------------------------------------------------------------------------
// Pixel-wise kernels

// Spec, Magnitude: "uint16 z = uint16( sqrt( double( uint32( int32(x) *
// int32(x) ) + uint32( int32(y) * int32(y) ) ) ) + 0.5); int16 mag = z >
// 32767 ? 32767 : z;"
image magnitude(const image& grad_x, const image& grad_y) {
  require_format(grad_x, "grad_x", {pixel_format::s16});
  require_format(grad_y, "grad_y", {pixel_format::s16});
  require_same_size(grad_x, grad_y);
  image out = image::make(grad_x.width, grad_x.height, pixel_format::s16);
  for (size_t i = 0; i < out.pixels.size(); ++i) {
    const int64_t x = grad_x.pixels[i], y = grad_y.pixels[i];
    // Each square is at most 2^30, their sum at most 2^31: it fits uint32
    // as the conceptual definition assumes.
    const uint32_t sum = uint32_t(x * x) + uint32_t(y * y);
    const auto z = static_cast<uint16_t>(std::sqrt(double(sum)) + 0.5);
    out.pixels[i] = std::min<int64_t>(z, 32767);
  }
  return out;
}

// Spec, Phase: "phi = tan^-1(grad_y(x,y) / grad_x(x,y)) ... translated to
// 0 <= phi < 2 pi. Each phi value is then mapped to the range 0 to 255
// inclusive." The spec does not say how the mapping rounds; the reference
// takes round-half-up of phi * 256 / (2 pi), wrapping 256 to 0 (angles just
// below 2 pi are nearest to 0), as the CTS reference does, and the CTS
// accepts +-1 modulo 256 (phase_tolerance). atan2 resolves the quadrant and
// gives 0 for grad_x = grad_y = 0.
image phase(const image& grad_x, const image& grad_y) {
  require_format(grad_x, "grad_x", {pixel_format::s16});
  require_format(grad_y, "grad_y", {pixel_format::s16});
  require_same_size(grad_x, grad_y);
  image out = image::make(grad_x.width, grad_x.height, pixel_format::u8);
  for (size_t i = 0; i < out.pixels.size(); ++i) {
    double v = std::atan2(double(grad_y.pixels[i]), double(grad_x.pixels[i])) * 256.0 / (2.0 * std::numbers::pi);
    if (v < 0) v += 256.0;
    int64_t q = static_cast<int64_t>(std::floor(v + 0.5));
    if (q >= 256) q -= 256;
    out.pixels[i] = q;
  }
  return out;
}

// Spec, Thresholding: BINARY "true value if src(x,y) > threshold, false value
// otherwise"; RANGE "false value if src(x,y) > upper, false value if
// src(x,y) < lower, true value otherwise". In 1.3 the true/false values come
// from the threshold object (vxCopyThresholdOutput), defaulting to 255 and 0
// for a U8 output.
image threshold_image(const image& in, const threshold& t) {
  require_format(in, "input", {pixel_format::u8, pixel_format::s16});
  if (t.true_value < 0 || t.true_value > 255 || t.false_value < 0 || t.false_value > 255) {
    fail("threshold true/false values must fit the U8 output");
  }
  image out = image::make(in.width, in.height, pixel_format::u8);
  for (size_t i = 0; i < out.pixels.size(); ++i) {
    const int64_t v = in.pixels[i];
    bool is_true = false;
    if (t.type == threshold::kind::binary) {
      is_true = v > t.value;
    } else {
      is_true = !(v > t.upper) && !(v < t.lower);
    }
    out.pixels[i] = is_true ? t.true_value : t.false_value;
  }
  return out;
}

namespace {

// Spec, Arithmetic Addition / Subtraction / Multiplication / AbsDiff: "The
// output image can be VX_DF_IMAGE_U8 only if both source images are
// VX_DF_IMAGE_U8 and the output image is explicitly set to VX_DF_IMAGE_U8.
// It is otherwise VX_DF_IMAGE_S16."
void check_arithmetic_formats(const image& in1, const image& in2, pixel_format out_format) {
  require_format(in1, "in1", {pixel_format::u8, pixel_format::s16});
  require_format(in2, "in2", {pixel_format::u8, pixel_format::s16});
  require_same_size(in1, in2);
  if (out_format == pixel_format::u8) {
    if (in1.format != pixel_format::u8 || in2.format != pixel_format::u8) fail("U8 output needs two U8 inputs");
  } else if (out_format != pixel_format::s16) {
    fail("arithmetic output must be U8 or S16");
  }
}

template <class Op>
image pixelwise(const image& in1, const image& in2, pixel_format out_format, Op op) {
  image out = image::make(in1.width, in1.height, out_format);
  for (size_t i = 0; i < out.pixels.size(); ++i) out.pixels[i] = op(in1.pixels[i], in2.pixels[i]);
  return out;
}

}  // namespace

// Spec, Absolute Difference: "out(x,y) = |in1(x,y) - in2(x,y)|"; "If one of
// the input images is of type VX_DF_IMAGE_S16, all values are converted to
// vx_int32 and the overflow policy VX_CONVERT_POLICY_SATURATE is used:
// out = saturate_int16(|(int32)in1 - (int32)in2|)". For two U8 inputs the
// difference fits either output.
image absdiff(const image& in1, const image& in2, pixel_format out_format) {
  check_arithmetic_formats(in1, in2, out_format);
  return pixelwise(in1, in2, out_format,
                   [&](int64_t a, int64_t b) { return saturate(a > b ? a - b : b - a, out_format); });
}

// Spec, Arithmetic Addition: "out(x,y) = in1(x,y) + in2(x,y)", "The overflow
// handling is controlled by an overflow-policy parameter".
image add(const image& in1, const image& in2, convert_policy policy, pixel_format out_format) {
  check_arithmetic_formats(in1, in2, out_format);
  return pixelwise(in1, in2, out_format,
                   [&](int64_t a, int64_t b) { return apply_policy(a + b, policy, out_format); });
}

// Spec, Arithmetic Subtraction: "out(x,y) = in1(x,y) - in2(x,y)" (in1 the
// minuend), overflow by the policy parameter.
image subtract(const image& in1, const image& in2, convert_policy policy, pixel_format out_format) {
  check_arithmetic_formats(in1, in2, out_format);
  return pixelwise(in1, in2, out_format,
                   [&](int64_t a, int64_t b) { return apply_policy(a - b, policy, out_format); });
}

// Spec, Pixel-wise Multiplication: TO_ZERO "reference = truncate(
// ((int32_t)in1) x ((int32_t)in2) x (double)scale)", TO_NEAREST_EVEN
// "round_to_nearest_even( ... )", then the overflow policy; scale is "A
// non-negative VX_TYPE_FLOAT32". The float scale is widened to double
// before the multiply, as written. The CTS accepts +-1 for scale != 1
// (multiply_tolerance).
image multiply(const image& in1, const image& in2, float scale, convert_policy overflow, round_policy rounding,
               pixel_format out_format) {
  check_arithmetic_formats(in1, in2, out_format);
  if (!std::isfinite(scale) || scale < 0) fail("multiply scale must be finite and non-negative");
  return pixelwise(in1, in2, out_format, [&](int64_t a, int64_t b) {
    // |a*b| <= 2^30: the int32 product of the spec cannot overflow.
    const double exact = double(int32_t(a) * int32_t(b)) * double(scale);
    const double rounded = rounding == round_policy::to_zero ? std::trunc(exact) : round_nearest_even(exact);
    return apply_policy(to_int64(rounded), overflow, out_format);
  });
}

// Spec, Bitwise AND: "out(x,y) = in_1(x,y) & in_2(x,y)" (U8 here).
image and_(const image& in1, const image& in2) {
  require_format(in1, "in1", {pixel_format::u8});
  require_format(in2, "in2", {pixel_format::u8});
  require_same_size(in1, in2);
  return pixelwise(in1, in2, pixel_format::u8, [](int64_t a, int64_t b) { return a & b; });
}

// Spec, Bitwise INCLUSIVE OR: "out(x,y) = in_1(x,y) | in_2(x,y)".
image or_(const image& in1, const image& in2) {
  require_format(in1, "in1", {pixel_format::u8});
  require_format(in2, "in2", {pixel_format::u8});
  require_same_size(in1, in2);
  return pixelwise(in1, in2, pixel_format::u8, [](int64_t a, int64_t b) { return a | b; });
}

// Spec, Bitwise EXCLUSIVE OR: "out(x,y) = in_1(x,y) ^ in_2(x,y)".
image xor_(const image& in1, const image& in2) {
  require_format(in1, "in1", {pixel_format::u8});
  require_format(in2, "in2", {pixel_format::u8});
  require_same_size(in1, in2);
  return pixelwise(in1, in2, pixel_format::u8, [](int64_t a, int64_t b) { return a ^ b; });
}

// Spec, Bitwise NOT: "out(x,y) = ~in_1(x,y)", for each bit of the 8-bit
// pixel.
image not_(const image& in) {
  require_format(in, "input", {pixel_format::u8});
  image out = image::make(in.width, in.height, pixel_format::u8);
  for (size_t i = 0; i < out.pixels.size(); ++i) out.pixels[i] = (~in.pixels[i]) & 0xFF;
  return out;
}

// Spec, Convert Bit Depth: up-conversion U8 -> S16 "ignore[s] the policy:
// output(x,y) = ((int16)input(x,y)) << shift"; down-conversion S16 -> U8 with
// WRAP "output(x,y) = ((uint8)(input(x,y) >> shift))", with SATURATE "value =
// input(x,y) >> shift; clamped to 0..255"; "If the input value is signed,
// the shift used must be an arithmetic shift"; "0 <= shift < 8", other
// shifts are implementation-defined and refused here.
image convert_depth(const image& in, pixel_format out_format, convert_policy policy, int32_t shift) {
  require_format(in, "input", {pixel_format::u8, pixel_format::s16});
  if (shift < 0 || shift >= 8) fail("convert_depth shift must be in [0, 8)");
  image out = image::make(in.width, in.height, out_format);
  if (in.format == pixel_format::u8 && out_format == pixel_format::s16) {
    for (size_t i = 0; i < out.pixels.size(); ++i) out.pixels[i] = in.pixels[i] << shift;  // <= 255 << 7
  } else if (in.format == pixel_format::s16 && out_format == pixel_format::u8) {
    for (size_t i = 0; i < out.pixels.size(); ++i) {
      // >> on a negative int64 is arithmetic (C++20), as the spec requires.
      out.pixels[i] = apply_policy(in.pixels[i] >> shift, policy, pixel_format::u8);
    }
  } else {
    fail("convert_depth supports U8 -> S16 and S16 -> U8 only");
  }
  return out;
}

// Spec, TableLookup: "uses each pixel in an image to index into a LUT and put
// the indexed LUT value into the output image", U8 or S16. The index of
// input value 0 is VX_LUT_OFFSET, which vxCreateLUT sets to "0 for
// data_type = VX_TYPE_UINT8, and (vx_uint32)(count/2) for VX_TYPE_INT16".
// "If a value from the input image is not present in the lookup table, the
// result is implementation-defined": refused here.
image table_lookup(const image& in, const std::vector<int64_t>& lut) {
  require_format(in, "input", {pixel_format::u8, pixel_format::s16});
  const size_t max_count = in.format == pixel_format::u8 ? 256 : 65536;
  if (lut.empty() || lut.size() > max_count) fail("LUT size does not fit the input format");
  const auto [lo, hi] = format_range(in.format);
  for (int64_t v : lut) {
    if (v < lo || v > hi) fail("LUT entry does not fit the output format");
  }
  const int64_t offset = in.format == pixel_format::u8 ? 0 : int64_t(lut.size() / 2);
  image out = image::make(in.width, in.height, in.format);
  for (size_t i = 0; i < out.pixels.size(); ++i) {
    const int64_t index = offset + in.pixels[i];
    if (index < 0 || index >= int64_t(lut.size())) fail("pixel value not present in the LUT");
    out.pixels[i] = lut[size_t(index)];
  }
  return out;
}

// Spec, Weighted Average: "output(x,y) = uint8( (1 - alpha) float32( int32(
// img2(x,y) ) ) + alpha float32( int32( img1(x,y) ) ) )" with
// 0 <= alpha <= 1: every step in binary32, and the final conversion
// truncates (C float-to-integer). The CTS compares exactly against the same
// expression.
image weighted_average(const image& img1, float alpha, const image& img2) {
  require_format(img1, "img1", {pixel_format::u8});
  require_format(img2, "img2", {pixel_format::u8});
  require_same_size(img1, img2);
  if (!(alpha >= 0.0f && alpha <= 1.0f)) fail("alpha must be in [0, 1]");
  const float one_minus_alpha = f32_sub(1.0f, alpha);
  image out = image::make(img1.width, img1.height, pixel_format::u8);
  for (size_t i = 0; i < out.pixels.size(); ++i) {
    const float v = f32_add(f32_mul(one_minus_alpha, float(img2.pixels[i])), f32_mul(alpha, float(img1.pixels[i])));
    out.pixels[i] = std::clamp<int64_t>(static_cast<int64_t>(v), 0, 255);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Resampling

namespace {

// The four bilinear taps around floor(sample) with their weights; a tap of
// weight 0 does not make the output depend on its pixel, so an out-of-image
// tap of weight 0 leaves the output defined under UNDEFINED.
struct bilinear_taps {
  int64_t x_lower, y_lower;
  double s, t;  // fractional parts, in [0, 1)
};

// Spec, Scale Image, bilinear: "output = (1-s)(1-t) input(xl,yl) + s(1-t)
// input(xl+1,yl) + (1-s)t input(xl,yl+1) + s t input(xl+1,yl+1)". The spec
// does not say how the weighted average becomes an integer; the reference
// rounds half up (the CTS scale reference adds 0.5, and both CTS tests
// allow one unit).
bool bilinear_sample(const image& in, const bilinear_taps& p, const border& b, int64_t& value) {
  const int64_t xs[2] = {p.x_lower, p.x_lower + 1}, ys[2] = {p.y_lower, p.y_lower + 1};
  const double wx[2] = {1.0 - p.s, p.s}, wy[2] = {1.0 - p.t, p.t};
  double sum = 0;
  for (int j = 0; j < 2; ++j) {
    for (int i = 0; i < 2; ++i) {
      const double w = wx[i] * wy[j];
      if (w == 0) continue;
      const bool inside = xs[i] >= 0 && ys[j] >= 0 && xs[i] < int64_t(in.width) && ys[j] < int64_t(in.height);
      if (!inside && b.mode == border_mode::undefined) return false;
      sum += w * double(read(in, xs[i], ys[j], b));
    }
  }
  value = static_cast<int64_t>(std::floor(sum + 0.5));
  return true;
}

resampled make_resampled(uint32_t w, uint32_t h) {
  return resampled{image::make(w, h, pixel_format::u8), std::vector<uint8_t>(size_t(w) * h, 0)};
}

}  // namespace

// Spec, Scale Image: "x_input = ((x_output + 0.5) x (width_input /
// width_output)) - 0.5" (likewise y): pixel edges are aligned and samples
// taken at pixel centres. NEAREST_NEIGHBOR: "the pixel whose centre is
// closest to the sample point"; a sample exactly between two centres takes
// the right/lower one (floor(x + 0.5)), as the CTS exact check does. That
// pixel is always inside the image. BILINEAR: see bilinear_sample; the
// sample coordinates are exact rationals ((2 x + 1) w_in - w_out) /
// (2 w_out), so the taps and weights carry no float error. AREA: the spec
// leaves the averaging implementation-defined ("The details of this
// sampling method are implementation-defined"); the reference weights each
// source pixel by the part of its area inside the destination pixel's
// projection, the scheme the spec's figure shows, computed exactly and
// rounded half up. Tests of AREA must use the range check the CTS uses
// (scale_area_search_radius), not equality.
resampled scale_image(const image& in, uint32_t out_width, uint32_t out_height, interpolation type, border b) {
  require_format(in, "input", {pixel_format::u8});
  check_border(b, in.format);
  if (out_width == 0 || out_height == 0) fail("scale_image output is empty");
  const int64_t sw = in.width, sh = in.height, dw = out_width, dh = out_height;
  resampled r = make_resampled(out_width, out_height);
  for (uint32_t y = 0; y < out_height; ++y) {
    for (uint32_t x = 0; x < out_width; ++x) {
      int64_t value = 0;
      bool defined = true;
      if (type == interpolation::nearest_neighbor) {
        // floor(x_in + 0.5) = floor((2x + 1) sw / (2 dw)), in [0, sw - 1].
        const int64_t xi = floor_div((2 * int64_t(x) + 1) * sw, 2 * dw);
        const int64_t yi = floor_div((2 * int64_t(y) + 1) * sh, 2 * dh);
        value = in.at(uint32_t(xi), uint32_t(yi));
      } else if (type == interpolation::bilinear) {
        const int64_t nx = (2 * int64_t(x) + 1) * sw - dw, dx = 2 * dw;
        const int64_t ny = (2 * int64_t(y) + 1) * sh - dh, dy = 2 * dh;
        bilinear_taps p{floor_div(nx, dx), floor_div(ny, dy), 0, 0};
        const int64_t ax = nx - p.x_lower * dx, ay = ny - p.y_lower * dy;
        p.s = double(ax) / double(dx);
        p.t = double(ay) / double(dy);
        // The weights are exact rationals: evaluate the average exactly
        // rather than in double, so ties round the same way every time.
        const int64_t xs[2] = {p.x_lower, p.x_lower + 1}, ys[2] = {p.y_lower, p.y_lower + 1};
        const int64_t wx[2] = {dx - ax, ax}, wy[2] = {dy - ay, ay};
        int64_t num = 0;
        for (int j = 0; j < 2 && defined; ++j) {
          for (int i = 0; i < 2; ++i) {
            const int64_t w = wx[i] * wy[j];
            if (w == 0) continue;
            const bool inside = xs[i] >= 0 && ys[j] >= 0 && xs[i] < sw && ys[j] < sh;
            if (!inside && b.mode == border_mode::undefined) {
              defined = false;
              break;
            }
            num += w * read(in, xs[i], ys[j], b);
          }
        }
        if (defined) value = round_half_up(num, dx * dy);
      } else {
        // Destination pixel x covers source edges [x sw/dw, (x+1) sw/dw);
        // in units of 1/dw, [x sw, (x+1) sw), and source pixel i covers
        // [i dw, (i+1) dw).
        const int64_t x0 = int64_t(x) * sw, x1 = (int64_t(x) + 1) * sw;
        const int64_t y0 = int64_t(y) * sh, y1 = (int64_t(y) + 1) * sh;
        int64_t num = 0;
        for (int64_t j = y0 / dh; j < sh && j * dh < y1; ++j) {
          const int64_t oy = std::min(y1, (j + 1) * dh) - std::max(y0, j * dh);
          if (oy <= 0) continue;
          for (int64_t i = x0 / dw; i < sw && i * dw < x1; ++i) {
            const int64_t ox = std::min(x1, (i + 1) * dw) - std::max(x0, i * dw);
            if (ox <= 0) continue;
            num += ox * oy * in.at(uint32_t(i), uint32_t(j));
          }
        }
        value = round_half_up(num, sw * sh);  // the covered area is sw * sh units
      }
      if (defined) {
        r.out.at(x, y) = value;
        r.defined[size_t(y) * out_width + x] = 1;
      }
    }
  }
  return r;
}

// Spec, Warp Affine: "x0 = M_1,1*x + M_1,2*y + M_1,3; y0 = M_2,1*x +
// M_2,2*y + M_2,3; output(x,y) = input(x0,y0)", the matrix stored as
// vx_warps.c shows: mat[3][2] = {{a, d}, {b, e}, {c, f}} for x0 = a x + b y
// + c, y0 = d x + e y + f. Output pixel (x, y) maps directly (no half-pixel
// shift: the identity matrix copies the image). "The border modes
// VX_BORDER_UNDEFINED and VX_BORDER_CONSTANT are supported"; REPLICATE is
// refused. NEAREST_NEIGHBOR takes the pixel whose centre (integer
// coordinates) is closest, ties to the right/lower one (floor(v + 0.5)).
// BILINEAR as for Scale Image, rounded half up. Under UNDEFINED an output
// that needs an outside pixel is marked undefined (the spec resets the
// valid region of a warp to the whole image, so the pixels themselves
// carry no guarantee). Mapping is evaluated in double from the float
// matrix, as the CTS does.
resampled warp_affine(const image& in, const affine_matrix& m, interpolation type, border b, uint32_t out_width,
                      uint32_t out_height) {
  require_format(in, "input", {pixel_format::u8});
  check_border(b, in.format);
  if (b.mode == border_mode::replicate) fail("warp_affine supports UNDEFINED and CONSTANT borders only");
  if (type == interpolation::area) fail("warp_affine does not support AREA interpolation");
  for (float v : m) {
    if (!std::isfinite(v)) fail("affine matrix must be finite");
  }
  if (out_width == 0) out_width = in.width;
  if (out_height == 0) out_height = in.height;
  resampled r = make_resampled(out_width, out_height);
  const double limit = 1.0e15;  // beyond this a sample is far outside any image
  for (uint32_t y = 0; y < out_height; ++y) {
    for (uint32_t x = 0; x < out_width; ++x) {
      const double x0 = double(m[0]) * x + double(m[2]) * y + double(m[4]);
      const double y0 = double(m[1]) * x + double(m[3]) * y + double(m[5]);
      int64_t value = 0;
      bool defined = true;
      const bool far = std::fabs(x0) > limit || std::fabs(y0) > limit;
      if (type == interpolation::nearest_neighbor) {
        const int64_t xi = far ? -1 : static_cast<int64_t>(std::floor(x0 + 0.5));
        const int64_t yi = far ? -1 : static_cast<int64_t>(std::floor(y0 + 0.5));
        const bool inside = xi >= 0 && yi >= 0 && xi < int64_t(in.width) && yi < int64_t(in.height);
        if (inside || b.mode == border_mode::constant) {
          value = read(in, xi, yi, b);
        } else {
          defined = false;
        }
      } else if (far) {
        if (b.mode == border_mode::constant) {
          value = b.constant;
        } else {
          defined = false;
        }
      } else {
        const double xl = std::floor(x0), yl = std::floor(y0);
        const bilinear_taps p{static_cast<int64_t>(xl), static_cast<int64_t>(yl), x0 - xl, y0 - yl};
        defined = bilinear_sample(in, p, b, value);
      }
      if (defined) {
        r.out.at(x, y) = value;
        r.defined[size_t(y) * out_width + x] = 1;
      }
    }
  }
  return r;
}

// ---------------------------------------------------------------------------
// Statistics

// Spec, Integral Image: "sum(x,y) = src(x,y) + sum(x-1,y) + sum(x,y-1) -
// sum(x-1,y-1)", 0 outside; "The overflow policy used is
// VX_CONVERT_POLICY_WRAP" (modulo 2^32 in the U32 output).
image integral_image(const image& in) {
  require_format(in, "input", {pixel_format::u8});
  image out = image::make(in.width, in.height, pixel_format::u32);
  auto sum = [&](int64_t x, int64_t y) -> int64_t { return x < 0 || y < 0 ? 0 : out.at(uint32_t(x), uint32_t(y)); };
  for (uint32_t y = 0; y < in.height; ++y) {
    for (uint32_t x = 0; x < in.width; ++x) {
      const int64_t v = in.at(x, y) + sum(int64_t(x) - 1, y) + sum(x, int64_t(y) - 1) -
                        sum(int64_t(x) - 1, int64_t(y) - 1);
      out.at(x, y) = wrap(v, pixel_format::u32);
    }
  }
  return out;
}

// Spec, Histogram: "A pixel with intensity I will result in incrementing
// histogram bin i where i = (I - offset) x (numBins / range), I >= offset,
// I < offset + range. Pixels with intensities that don't meet these
// conditions will have no effect". Computed exactly as
// floor((I - offset) * numBins / range), not with a rounded window width
// range/numBins (older CTS versions used that; it differs when numBins does
// not divide range).
std::vector<uint32_t> histogram(const image& in, uint32_t bins, int32_t offset, uint32_t range) {
  require_format(in, "input", {pixel_format::u8});
  if (bins == 0 || range == 0) fail("histogram needs bins > 0 and range > 0");
  std::vector<uint32_t> hist(bins, 0);
  for (int64_t v : in.pixels) {
    if (v < offset || v >= int64_t(offset) + int64_t(range)) continue;
    const int64_t i = (v - offset) * int64_t(bins) / int64_t(range);
    ++hist[size_t(i)];
  }
  return hist;
}

// Spec, Mean and Standard Deviation: "mu = (sum src(x,y)) / (width x
// height)", "sigma = sqrt( (sum (mu - src(x,y))^2) / (width x height) )" -
// the population deviation (divide by N, not N - 1). The outputs are
// VX_TYPE_FLOAT32; the reference evaluates in double and rounds once.
mean_std_dev_result mean_std_dev(const image& in) {
  require_format(in, "input", {pixel_format::u8});
  const double n = double(in.pixels.size());
  double sum = 0;
  for (int64_t v : in.pixels) sum += double(v);  // exact: an integer below 2^53
  const double mean = sum / n;
  double squares = 0;
  for (int64_t v : in.pixels) squares += (mean - double(v)) * (mean - double(v));
  return {static_cast<float>(mean), static_cast<float>(std::sqrt(squares / n))};
}

// Spec, Min, Max Location: "minVal = min src(x',y'), maxVal = max
// src(x',y')"; "If the input image has several minimums/maximums, the kernel
// returns all of them". The spec does not order the locations; the
// reference lists them in raster order (row by row, left to right), so a
// test must compare them as sets unless the kernel promises that order.
min_max_location min_max_loc(const image& in) {
  require_format(in, "input", {pixel_format::u8, pixel_format::s16});
  min_max_location r;
  r.min = *std::min_element(in.pixels.begin(), in.pixels.end());
  r.max = *std::max_element(in.pixels.begin(), in.pixels.end());
  for (uint32_t y = 0; y < in.height; ++y) {
    for (uint32_t x = 0; x < in.width; ++x) {
      const int64_t v = in.at(x, y);
      if (v == r.min) r.min_locations.push_back({x, y});
      if (v == r.max) r.max_locations.push_back({x, y});
    }
  }
  r.min_count = r.min_locations.size();
  r.max_count = r.max_locations.size();
  return r;
}


// ---------------------------------------------------------------------------
// Color

namespace {

// An exact rational, so that the spec's floor(real x 256) is taken of the
// real value: a grey pixel's Y' = (Kr + Kg + Kb) v / 256 is exactly v / 256,
// which binary floating point may land just below.
struct fraction {
  __int128 num = 0, den = 1;  // den > 0, lowest terms
  fraction(int64_t n = 0, int64_t d = 1) : num(n), den(d) { reduce(); }
  static fraction of(__int128 n, __int128 d) {
    fraction f;
    f.num = n, f.den = d;
    f.reduce();
    return f;
  }
  void reduce() {
    if (den < 0) num = -num, den = -den;
    __int128 a = num < 0 ? -num : num, b = den;
    while (b != 0) {
      __int128 t = a % b;
      a = b, b = t;
    }
    if (a > 1) num /= a, den /= a;
  }
  friend fraction operator+(fraction a, fraction b) { return of(a.num * b.den + b.num * a.den, a.den * b.den); }
  friend fraction operator-(fraction a, fraction b) { return of(a.num * b.den - b.num * a.den, a.den * b.den); }
  friend fraction operator*(fraction a, fraction b) { return of(a.num * b.num, a.den * b.den); }
  friend fraction operator/(fraction a, fraction b) { return of(a.num * b.den, a.den * b.num); }
  int64_t floor() const {
    __int128 q = num / den;
    if (num % den != 0 && num < 0) --q;
    return int64_t(q);
  }
};

// A number of either kind from a ratio of integers.
template <class T>
T ratio(int64_t n, int64_t d = 1) {
  if constexpr (std::is_same_v<T, fraction>) {
    return fraction(n, d);
  } else {
    return T(n) / T(d);
  }
}

// Spec: "In VX_COLOR_SPACE_BT601_525 or VX_COLOR_SPACE_BT601_625: Kr =
// 0.299, Kb = 0.114"; "In VX_COLOR_SPACE_BT709: Kr = 0.2126, Kb = 0.0722".
template <class T>
T kr_of(color_space space) {
  return space == color_space::bt709 ? ratio<T>(2126, 10000) : ratio<T>(299, 1000);
}
template <class T>
T kb_of(color_space space) {
  return space == color_space::bt709 ? ratio<T>(722, 10000) : ratio<T>(114, 1000);
}

struct yuv {
  int64_t y, u, v;
};
struct rgb {
  int64_t r, g, b;
};

// Spec, full range: "value_real = value_integer / 256.0" for R, G, B and Y,
// "(value_integer - 128.0) / 256.0" for U and V; back, "value_integer =
// max(0, min(255, floor(value_real x 256.0)))" (U, V: "+ 128").
// "Y' = (Kr R') + (Kb B') + (1 - Kr - Kb)G'", "Pb = B'/2 - ((R' Kr) +
// G'(1 - Kr - Kb)) / (2 (1 - Kb))", "Pr = R'/2 - ((B' Kb) + G'(1 - Kr -
// Kb)) / (2 (1 - Kr))". Channel `which` (0: Y, 1: U, 2: V), times 256,
// plus 128 for U and V: the value whose floor is the integer.
template <class T>
T rgb_to_yuv_channel(const rgb& c, color_space space, int which) {
  const T one = ratio<T>(1), two = ratio<T>(2), kr = kr_of<T>(space), kb = kb_of<T>(space);
  const T r = ratio<T>(c.r, 256), g = ratio<T>(c.g, 256), b = ratio<T>(c.b, 256);
  const T kg = one - kr - kb;
  if (which == 0) return (kr * r + kb * b + kg * g) * ratio<T>(256);
  if (which == 1) return (b / two - (r * kr + g * kg) / (two * (one - kb))) * ratio<T>(256) + ratio<T>(128);
  return (r / two - (b * kb + g * kg) / (two * (one - kr))) * ratio<T>(256) + ratio<T>(128);
}

// "R' = Y' + 2(1 - Kr)Pr", "B' = Y' + 2(1 - Kb)Pb", "G' = Y' - (2(Kr(1 -
// Kr)Pr + Kb(1 - Kb)Pb)) / (1 - Kr - Kb)"; channel `which` (0: R, 1: G,
// 2: B) times 256.
template <class T>
T yuv_to_rgb_channel(const yuv& c, color_space space, int which) {
  const T one = ratio<T>(1), two = ratio<T>(2), kr = kr_of<T>(space), kb = kb_of<T>(space);
  const T y = ratio<T>(c.y, 256), pb = ratio<T>(c.u - 128, 256), pr = ratio<T>(c.v - 128, 256);
  const T kg = one - kr - kb;
  if (which == 0) return (y + two * (one - kr) * pr) * ratio<T>(256);
  if (which == 2) return (y + two * (one - kb) * pb) * ratio<T>(256);
  return (y - two * (kr * (one - kr) * pr + kb * (one - kb) * pb) / kg) * ratio<T>(256);
}

// max(0, min(255, floor(v))) of the exact v. Double precision decides the
// floor unless v is within a hair of an integer (a grey pixel's Y' is
// exactly v / 256, which binary floating point may land just below); then
// the exact rational does.
template <class Formula>
int64_t quantize(Formula formula) {
  const double approx = formula(double{});
  const double nearest = std::round(approx);
  const int64_t floor = std::fabs(approx - nearest) > 1e-6 ? int64_t(std::floor(approx)) : formula(fraction{}).floor();
  return std::clamp<int64_t>(floor, 0, 255);
}

yuv rgb_to_yuv(const rgb& c, color_space space) {
  auto channel = [&](int which) {
    return quantize([&](auto kind) { return rgb_to_yuv_channel<decltype(kind)>(c, space, which); });
  };
  return {channel(0), channel(1), channel(2)};
}

rgb yuv_to_rgb(const yuv& c, color_space space) {
  auto channel = [&](int which) {
    return quantize([&](auto kind) { return yuv_to_rgb_channel<decltype(kind)>(c, space, which); });
  };
  return {channel(0), channel(1), channel(2)};
}

}  // namespace

bool is_rgb(color_format f) { return f == color_format::rgb || f == color_format::rgbx; }

uint32_t channel_count(color_format f) { return f == color_format::rgbx ? 4 : 3; }

std::pair<uint32_t, uint32_t> channel_shift(color_format f, uint32_t c) {
  if (c >= channel_count(f)) fail("no such channel");
  if (c == 0 || is_rgb(f) || f == color_format::yuv4) return {0, 0};
  if (f == color_format::uyvy || f == color_format::yuyv) return {1, 0};
  return {1, 1};
}

bool color_size_allowed(color_format f, uint32_t w, uint32_t h) {
  if (w == 0 || h == 0) return false;
  auto [sx, sy] = channel_shift(f, channel_count(f) - 1);
  return w % (1u << sx) == 0 && h % (1u << sy) == 0;
}

color_image color_image::make(uint32_t w, uint32_t h, color_format f) {
  if (!color_size_allowed(f, w, h)) fail("a color image of this format cannot have this size");
  color_image made;
  made.format = f;
  made.width = w;
  made.height = h;
  for (uint32_t c = 0; c < channel_count(f); ++c) {
    auto [sx, sy] = channel_shift(f, c);
    made.channels.push_back(image::make(w >> sx, h >> sy, pixel_format::u8));
  }
  return made;
}

// Spec, Color Convert's table: rows are inputs, columns outputs.
bool color_conversion_defined(color_format from, color_format to) {
  using f = color_format;
  switch (from) {
    case f::rgb: return to == f::rgbx || to == f::nv12 || to == f::iyuv || to == f::yuv4;
    case f::rgbx: return to == f::rgb || to == f::nv12 || to == f::iyuv || to == f::yuv4;
    case f::nv12:
    case f::nv21: return to == f::rgb || to == f::rgbx || to == f::iyuv || to == f::yuv4;
    case f::uyvy:
    case f::yuyv: return to == f::rgb || to == f::rgbx || to == f::nv12 || to == f::iyuv;
    case f::iyuv: return to == f::rgb || to == f::rgbx || to == f::nv12 || to == f::yuv4;
    case f::yuv4: return false;
  }
  return false;
}

// Chroma resampling, which the spec leaves open ("The means of
// reconstructing Pb and Pr values from chroma-downsampled formats is
// implementation-defined"), as the conformance tests' reference does it:
// a subsampled chroma sample serves every pixel it covers; a coarser
// sample is the floor of the mean of the quantized chroma of the pixels it
// covers (a 4:2:0 sample from four pixels: RGB converted per pixel, or two
// rows of 4:2:2). RGB to RGBX sets X to 255; RGBX to RGB drops it.
color_image color_convert(const color_image& in, color_format out_format, color_space space) {
  if (!color_conversion_defined(in.format, out_format)) fail("the spec's table has no such conversion");
  if (in.channels.size() != channel_count(in.format)) fail("the input's channels do not match its format");
  for (uint32_t c = 0; c < in.channels.size(); ++c) {
    auto [sx, sy] = channel_shift(in.format, c);
    const image& channel = in.channels[c];
    check_image(channel, "input channel");
    if (channel.format != pixel_format::u8 || channel.width != in.width >> sx || channel.height != in.height >> sy)
      fail("an input channel has the wrong size or format");
  }
  color_image out = color_image::make(in.width, in.height, out_format);
  // Per pixel: the output's full-resolution channels directly, its chroma
  // as sums over each chroma sample's pixels.
  std::vector<int64_t> u_sum(out.channels.size() > 1 ? out.channels[1].pixels.size() : 0, 0), v_sum = u_sum;
  for (uint32_t y = 0; y < in.height; ++y) {
    for (uint32_t x = 0; x < in.width; ++x) {
      auto sample = [&](uint32_t c) {
        auto [sx, sy] = channel_shift(in.format, c);
        return in.channels[c].at(x >> sx, y >> sy);
      };
      if (is_rgb(out_format)) {
        rgb p = is_rgb(in.format) ? rgb{sample(0), sample(1), sample(2)}
                                  : yuv_to_rgb(yuv{sample(0), sample(1), sample(2)}, space);
        out.channels[0].at(x, y) = p.r;
        out.channels[1].at(x, y) = p.g;
        out.channels[2].at(x, y) = p.b;
        if (out_format == color_format::rgbx) out.channels[3].at(x, y) = 255;
      } else {
        yuv p = is_rgb(in.format) ? rgb_to_yuv(rgb{sample(0), sample(1), sample(2)}, space)
                                  : yuv{sample(0), sample(1), sample(2)};
        out.channels[0].at(x, y) = p.y;
        auto [sx, sy] = channel_shift(out_format, 1);
        const size_t at = size_t(y >> sy) * out.channels[1].width + (x >> sx);
        u_sum[at] += p.u;
        v_sum[at] += p.v;
      }
    }
  }
  if (!is_rgb(out_format)) {
    auto [sx, sy] = channel_shift(out_format, 1);
    const int64_t covered = int64_t(1) << (sx + sy);
    for (size_t i = 0; i < u_sum.size(); ++i) {
      out.channels[1].pixels[i] = u_sum[i] / covered;  // non-negative: the floor
      out.channels[2].pixels[i] = v_sum[i] / covered;
    }
  }
  return out;
}

}  // namespace ferry::graph::reference
