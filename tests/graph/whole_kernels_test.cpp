// The whole kernels (ChannelExtract, ChannelCombine, ColorConvert,
// ScaleImage, WarpAffine, IntegralImage, Histogram, MeanStdDev, MinMaxLoc)
// through the public API, run by the OpenCL platform the process finds
// (PoCL here; FERRY_VX_DEVICES picks another), against the plain reference
// of tests/graph/reference.cpp at odd sizes where the formats allow them,
// within the tolerances reference.hpp gives (exact for all but the warps).
#include "reference.hpp"
#include "vx_test_support.hpp"

#include <VX/vx.h>
#include <VX/vxu.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <random>
#include <string>
#include <vector>

namespace ref = ferry::graph::reference;
using namespace ferry::graph::testing;

namespace {

struct size {
  uint32_t w, h;
};

std::string text(const size& s) { return std::to_string(s.w) + "x" + std::to_string(s.h); }

std::vector<std::string>& whole_kernel_log() {
  static std::vector<std::string> lines;
  return lines;
}

class whole_kernels : public ::testing::Test {
 protected:
  void SetUp() override {
    whole_kernel_log().clear();
    context_ = vxCreateContext();
    ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(context_)), VX_SUCCESS);
    vxRegisterLogCallback(
        context_,
        [](vx_context, vx_reference, vx_status, const vx_char* message) {
          whole_kernel_log().push_back(message);
          std::fprintf(stderr, "vx log: %s\n", message);
        },
        vx_false_e);
  }
  void TearDown() override { EXPECT_EQ(vxReleaseContext(&context_), VX_SUCCESS); }

  void immediate_border(const ref::border& b) {
    vx_border_t border = vx_border(b);
    ASSERT_EQ(vxSetContextAttribute(context_, VX_CONTEXT_IMMEDIATE_BORDER, &border, sizeof border), VX_SUCCESS);
  }

  bool logged(const std::string& part) {
    return std::any_of(whole_kernel_log().begin(), whole_kernel_log().end(),
                       [&](const std::string& line) { return line.find(part) != std::string::npos; });
  }

  vx_context context_ = nullptr;
};

// --- Color images through the public API ---------------------------------------

const ref::color_format color_formats[] = {ref::color_format::rgb,  ref::color_format::rgbx, ref::color_format::nv12,
                                           ref::color_format::nv21, ref::color_format::iyuv, ref::color_format::yuv4,
                                           ref::color_format::uyvy, ref::color_format::yuyv};

vx_df_image vx_color(ref::color_format f) {
  switch (f) {
    case ref::color_format::rgb: return VX_DF_IMAGE_RGB;
    case ref::color_format::rgbx: return VX_DF_IMAGE_RGBX;
    case ref::color_format::nv12: return VX_DF_IMAGE_NV12;
    case ref::color_format::nv21: return VX_DF_IMAGE_NV21;
    case ref::color_format::iyuv: return VX_DF_IMAGE_IYUV;
    case ref::color_format::yuv4: return VX_DF_IMAGE_YUV4;
    case ref::color_format::uyvy: return VX_DF_IMAGE_UYVY;
    case ref::color_format::yuyv: return VX_DF_IMAGE_YUYV;
  }
  return VX_DF_IMAGE_VIRT;
}

std::string name_of(ref::color_format f) {
  const char* names[] = {"RGB", "RGBX", "NV12", "NV21", "IYUV", "YUV4", "UYVY", "YUYV"};
  return names[static_cast<int>(f)];
}

/// The channels in VX_CHANNEL_R.. / VX_CHANNEL_Y.. terms, in channel order.
std::vector<vx_enum> channel_enums(ref::color_format f) {
  if (f == ref::color_format::rgb) return {VX_CHANNEL_R, VX_CHANNEL_G, VX_CHANNEL_B};
  if (f == ref::color_format::rgbx) return {VX_CHANNEL_R, VX_CHANNEL_G, VX_CHANNEL_B, VX_CHANNEL_A};
  return {VX_CHANNEL_Y, VX_CHANNEL_U, VX_CHANNEL_V};
}

/// Sizes a format allows: odd ones (1x1 and 3x5) where it has no
/// subsampling, the nearest allowed ones otherwise, and one near VGA.
std::vector<size> sizes_for(std::initializer_list<ref::color_format> formats) {
  std::vector<size> out;
  for (size s : {size{1, 1}, size{3, 5}, size{641, 479}, size{2, 2}, size{4, 6}, size{640, 480}, size{2, 1},
                 size{4, 5}, size{640, 479}}) {
    bool allowed = std::all_of(formats.begin(), formats.end(),
                               [&](ref::color_format f) { return ref::color_size_allowed(f, s.w, s.h); });
    bool small = s.w * s.h < 100;
    // Three sizes: the two smallest allowed and the large one allowed.
    auto count_small = std::count_if(out.begin(), out.end(), [](size o) { return o.w * o.h < 100; });
    auto count_large = out.size() - size_t(count_small);
    if (allowed && ((small && count_small < 2) || (!small && count_large < 1))) out.push_back(s);
  }
  return out;
}

ref::color_image random_color(uint32_t w, uint32_t h, ref::color_format f, uint32_t seed) {
  ref::color_image made = ref::color_image::make(w, h, f);
  for (auto& channel : made.channels) channel = random_image(channel.width, channel.height, ref::pixel_format::u8, seed++);
  return made;
}

/// One plane's bytes as vxCopyImagePatch exchanges them, rows packed.
struct packed_plane {
  int32_t stride_x;  // bytes per pixel (a 4:2:2 pair's 4 bytes hold 2 pixels)
  uint32_t row_bytes, rows;
  std::vector<uint8_t> bytes;
};

// The formats' layouts (spec, vx_df_image_e), written out format by format
// here rather than shared with the kernels' table, so that a mistake in one
// does not hide in the other.
std::vector<packed_plane> planes_of(ref::color_format f, uint32_t w, uint32_t h) {
  using cf = ref::color_format;
  auto plane = [](int32_t stride_x, uint32_t row_bytes, uint32_t rows) {
    return packed_plane{stride_x, row_bytes, rows, std::vector<uint8_t>(size_t{row_bytes} * rows)};
  };
  switch (f) {
    case cf::rgb: return {plane(3, 3 * w, h)};
    case cf::rgbx: return {plane(4, 4 * w, h)};
    case cf::nv12:
    case cf::nv21: return {plane(1, w, h), plane(2, w, h / 2)};
    case cf::iyuv: return {plane(1, w, h), plane(1, w / 2, h / 2), plane(1, w / 2, h / 2)};
    case cf::yuv4: return {plane(1, w, h), plane(1, w, h), plane(1, w, h)};
    case cf::uyvy:
    case cf::yuyv: return {plane(2, 2 * w, h)};
  }
  return {};
}

/// Where channel c's sample (cx, cy) lies: plane and byte.
std::pair<uint32_t, size_t> byte_of(ref::color_format f, const std::vector<packed_plane>& planes, uint32_t c,
                                    uint32_t cx, uint32_t cy) {
  using cf = ref::color_format;
  switch (f) {
    case cf::rgb:
    case cf::rgbx: return {0, size_t(cy) * planes[0].row_bytes + size_t(cx) * planes[0].stride_x + c};
    case cf::nv12:
    case cf::nv21: {
      if (c == 0) return {0, size_t(cy) * planes[0].row_bytes + cx};
      // NV12: U then V in each pair; NV21: V then U.
      size_t second = (c == 2) == (f == cf::nv12) ? 1 : 0;
      return {1, size_t(cy) * planes[1].row_bytes + 2 * size_t(cx) + second};
    }
    case cf::iyuv:
    case cf::yuv4: return {c, size_t(cy) * planes[c].row_bytes + cx};
    case cf::uyvy: {
      // U0 Y0 V0 Y1: Y of pixel x at 2x + 1, U and V of pair k at 4k and 4k + 2.
      size_t row = size_t(cy) * planes[0].row_bytes;
      return {0, row + (c == 0 ? 2 * size_t(cx) + 1 : 4 * size_t(cx) + (c == 1 ? 0 : 2))};
    }
    case cf::yuyv: {
      // Y0 U0 Y1 V0: Y of pixel x at 2x, U and V of pair k at 4k + 1 and 4k + 3.
      size_t row = size_t(cy) * planes[0].row_bytes;
      return {0, row + (c == 0 ? 2 * size_t(cx) : 4 * size_t(cx) + (c == 1 ? 1 : 3))};
    }
  }
  return {0, 0};
}

vx_imagepatch_addressing_t addressing(const packed_plane& p, uint32_t w, uint32_t h) {
  vx_imagepatch_addressing_t address{};
  address.dim_x = w;
  address.dim_y = h;
  address.stride_x = p.stride_x;
  address.stride_y = static_cast<vx_int32>(p.row_bytes);
  return address;
}

void write_color(vx_image image, const ref::color_image& from) {
  std::vector<packed_plane> planes = planes_of(from.format, from.width, from.height);
  for (uint32_t c = 0; c < from.channels.size(); ++c) {
    const ref::image& channel = from.channels[c];
    for (uint32_t y = 0; y < channel.height; ++y)
      for (uint32_t x = 0; x < channel.width; ++x) {
        auto [p, at] = byte_of(from.format, planes, c, x, y);
        planes[p].bytes[at] = static_cast<uint8_t>(channel.at(x, y));
      }
  }
  vx_rectangle_t rect{0, 0, from.width, from.height};
  for (uint32_t p = 0; p < planes.size(); ++p) {
    vx_imagepatch_addressing_t address = addressing(planes[p], from.width, from.height);
    ASSERT_EQ(vxCopyImagePatch(image, &rect, p, &address, planes[p].bytes.data(), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST),
              VX_SUCCESS);
  }
}

vx_image make_color(vx_context context, const ref::color_image& from) {
  vx_image image = vxCreateImage(context, from.width, from.height, vx_color(from.format));
  EXPECT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(image)), VX_SUCCESS);
  write_color(image, from);
  return image;
}

ref::color_image read_color(vx_image image, ref::color_format f) {
  vx_uint32 w = 0, h = 0;
  vxQueryImage(image, VX_IMAGE_WIDTH, &w, sizeof w);
  vxQueryImage(image, VX_IMAGE_HEIGHT, &h, sizeof h);
  std::vector<packed_plane> planes = planes_of(f, w, h);
  vx_rectangle_t rect{0, 0, w, h};
  for (uint32_t p = 0; p < planes.size(); ++p) {
    vx_imagepatch_addressing_t address = addressing(planes[p], w, h);
    EXPECT_EQ(vxCopyImagePatch(image, &rect, p, &address, planes[p].bytes.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
              VX_SUCCESS);
  }
  ref::color_image out = ref::color_image::make(w, h, f);
  for (uint32_t c = 0; c < out.channels.size(); ++c) {
    ref::image& channel = out.channels[c];
    for (uint32_t y = 0; y < channel.height; ++y)
      for (uint32_t x = 0; x < channel.width; ++x) {
        auto [p, at] = byte_of(f, planes, c, x, y);
        channel.at(x, y) = planes[p].bytes[at];
      }
  }
  return out;
}

void expect_same_color(const ref::color_image& got, const ref::color_image& want, int64_t tolerance,
                       const std::string& what) {
  ASSERT_EQ(got.channels.size(), want.channels.size()) << what;
  for (size_t c = 0; c < got.channels.size(); ++c) {
    const ref::image& g = got.channels[c];
    expect_near(g, want.channels[c], {0, 0, g.width, g.height}, tolerance, what + " channel " + std::to_string(c));
  }
}

// --- Color ------------------------------------------------------------------------

TEST_F(whole_kernels, the_color_reference_gives_hand_worked_bt709_values) {
  // A 2x2 image of one color (every format of the table allows 2x2).
  auto convert = [](std::vector<int64_t> in, ref::color_format from, ref::color_format to) {
    ref::color_image image = ref::color_image::make(2, 2, from);
    for (size_t c = 0; c < in.size(); ++c)
      std::fill(image.channels[c].pixels.begin(), image.channels[c].pixels.end(), in[c]);
    ref::color_image out = ref::color_convert(image, to);
    std::vector<int64_t> values;
    for (const auto& channel : out.channels) values.push_back(channel.pixels[0]);
    return values;
  };
  using cf = ref::color_format;
  // Y = floor(0.2126 R + 0.7152 G + 0.0722 B); U = floor(256 Pb + 128).
  EXPECT_EQ(convert({255, 255, 255}, cf::rgb, cf::yuv4), (std::vector<int64_t>{255, 128, 128}));
  // A grey pixel's Y is exactly its value (float arithmetic gives 99.99...).
  EXPECT_EQ(convert({100, 100, 100}, cf::rgb, cf::yuv4), (std::vector<int64_t>{100, 128, 128}));
  // Red: Y = floor(54.213), Pb*256 = -54.213 / 1.8556, V = floor(127.5 + 128).
  EXPECT_EQ(convert({255, 0, 0}, cf::rgb, cf::yuv4), (std::vector<int64_t>{54, 98, 255}));
  EXPECT_EQ(convert({0, 0, 255}, cf::rgb, cf::yuv4), (std::vector<int64_t>{18, 255, 116}));
  // R = Y + 1.5748 (V - 128), B = Y + 1.8556 (U - 128), each clamped.
  EXPECT_EQ(convert({100, 128, 128}, cf::iyuv, cf::rgb), (std::vector<int64_t>{100, 100, 100}));
  EXPECT_EQ(convert({128, 0, 255}, cf::nv12, cf::rgbx), (std::vector<int64_t>{255, 92, 0, 255}));
  EXPECT_EQ(convert({200, 50, 90}, cf::uyvy, cf::rgb), (std::vector<int64_t>{140, 232, 55}));
  // A 4:2:0 sample from four pixels of one color is that color's.
  EXPECT_EQ(convert({255, 0, 0}, cf::rgbx, cf::nv12), (std::vector<int64_t>{54, 98, 255}));
}

TEST_F(whole_kernels, channel_extract_takes_every_channel_of_every_format) {
  uint32_t seed = 1;
  for (ref::color_format f : color_formats)
    for (const size& s : sizes_for({f})) {
      ref::color_image in = random_color(s.w, s.h, f, seed += 10);
      vx_image input = make_color(context_, in);
      std::vector<vx_enum> channels = channel_enums(f);
      for (uint32_t c = 0; c < channels.size(); ++c) {
        std::string what = "extract " + name_of(f) + " " + text(s) + " channel " + std::to_string(c);
        const ref::image& want = in.channels[c];
        vx_image output = vxCreateImage(context_, want.width, want.height, VX_DF_IMAGE_U8);
        ASSERT_EQ(vxuChannelExtract(context_, input, channels[c], output), VX_SUCCESS) << what;
        expect_near(read_image(output, ref::pixel_format::u8), want, {0, 0, want.width, want.height}, 0, what);
        EXPECT_EQ(valid_region(output), (ref::rect{0, 0, want.width, want.height})) << what;
        // VX_CHANNEL_0.. number the same channels.
        ASSERT_EQ(vxuChannelExtract(context_, input, VX_CHANNEL_0 + static_cast<vx_enum>(c), output), VX_SUCCESS);
        expect_near(read_image(output, ref::pixel_format::u8), want, {0, 0, want.width, want.height}, 0,
                    what + " as VX_CHANNEL_" + std::to_string(c));
        vxReleaseImage(&output);
      }
      vxReleaseImage(&input);
    }
}

TEST_F(whole_kernels, channel_extract_refuses_a_channel_the_format_lacks_and_a_wrong_output) {
  vx_image rgb = make_color(context_, random_color(4, 6, ref::color_format::rgb, 3));
  vx_image nv12 = make_color(context_, random_color(4, 6, ref::color_format::nv12, 4));
  vx_image full = vxCreateImage(context_, 4, 6, VX_DF_IMAGE_U8);
  vx_image s16 = vxCreateImage(context_, 4, 6, VX_DF_IMAGE_S16);
  EXPECT_EQ(vxuChannelExtract(context_, rgb, VX_CHANNEL_A, full), VX_ERROR_INVALID_VALUE);
  EXPECT_EQ(vxuChannelExtract(context_, rgb, VX_CHANNEL_Y, full), VX_ERROR_INVALID_VALUE);
  // NV12's U is 2x3 here, not the image's 4x6.
  EXPECT_EQ(vxuChannelExtract(context_, nv12, VX_CHANNEL_U, full), VX_ERROR_INVALID_DIMENSION);
  EXPECT_EQ(vxuChannelExtract(context_, rgb, VX_CHANNEL_R, s16), VX_ERROR_INVALID_FORMAT);
  vx_image u8 = vxCreateImage(context_, 4, 6, VX_DF_IMAGE_U8);
  EXPECT_EQ(vxuChannelExtract(context_, u8, VX_CHANNEL_0, full), VX_ERROR_INVALID_FORMAT);
  EXPECT_TRUE(logged("org.khronos.openvx.channel_extract"));
  for (vx_image* image : {&rgb, &nv12, &full, &s16, &u8}) vxReleaseImage(image);
}

TEST_F(whole_kernels, channel_combine_builds_every_format_that_extract_takes_apart_again) {
  uint32_t seed = 100;
  for (ref::color_format f : color_formats)
    for (const size& s : sizes_for({f})) {
      std::string what = "combine " + name_of(f) + " " + text(s);
      ref::color_image want = random_color(s.w, s.h, f, seed += 10);
      std::vector<vx_image> planes(4, nullptr);
      for (size_t c = 0; c < want.channels.size(); ++c) planes[c] = make_image(context_, want.channels[c]);
      vx_image output = vxCreateImage(context_, s.w, s.h, vx_color(f));
      ASSERT_EQ(vxuChannelCombine(context_, planes[0], planes[1], planes[2], planes[3], output), VX_SUCCESS) << what;
      expect_same_color(read_color(output, f), want, 0, what);
      // And back: each channel extracted is the plane it was made of.
      std::vector<vx_enum> channels = channel_enums(f);
      for (size_t c = 0; c < channels.size(); ++c) {
        vx_image back = vxCreateImage(context_, want.channels[c].width, want.channels[c].height, VX_DF_IMAGE_U8);
        ASSERT_EQ(vxuChannelExtract(context_, output, channels[c], back), VX_SUCCESS) << what;
        expect_near(read_image(back, ref::pixel_format::u8), want.channels[c],
                    {0, 0, want.channels[c].width, want.channels[c].height}, 0, what + " extracted again");
        vxReleaseImage(&back);
      }
      for (vx_image& plane : planes)
        if (plane != nullptr) vxReleaseImage(&plane);
      vxReleaseImage(&output);
    }
}

TEST_F(whole_kernels, channel_combine_refuses_too_many_or_too_few_planes_and_wrong_sizes) {
  vx_image p[4];
  for (vx_image& plane : p) plane = vxCreateImage(context_, 4, 6, VX_DF_IMAGE_U8);
  vx_image half = vxCreateImage(context_, 2, 3, VX_DF_IMAGE_U8);
  vx_image rgb = vxCreateImage(context_, 4, 6, VX_DF_IMAGE_RGB);
  vx_image rgbx = vxCreateImage(context_, 4, 6, VX_DF_IMAGE_RGBX);
  vx_image nv12 = vxCreateImage(context_, 4, 6, VX_DF_IMAGE_NV12);
  // "If a user specifies more channels than necessary, the operation results in an error."
  EXPECT_EQ(vxuChannelCombine(context_, p[0], p[1], p[2], p[3], rgb), VX_ERROR_INVALID_PARAMETERS);
  EXPECT_EQ(vxuChannelCombine(context_, p[0], p[1], p[2], nullptr, rgbx), VX_ERROR_NOT_SUFFICIENT);
  // NV12's U and V are half the size each way.
  EXPECT_EQ(vxuChannelCombine(context_, p[0], p[1], p[2], nullptr, nv12), VX_ERROR_INVALID_DIMENSION);
  EXPECT_EQ(vxuChannelCombine(context_, p[0], half, half, nullptr, nv12), VX_SUCCESS);
  EXPECT_EQ(vxuChannelCombine(context_, p[0], p[1], half, nullptr, rgb), VX_ERROR_INVALID_DIMENSION);
  for (vx_image& plane : p) vxReleaseImage(&plane);
  for (vx_image* image : {&half, &rgb, &rgbx, &nv12}) vxReleaseImage(image);
}

TEST_F(whole_kernels, color_convert_matches_the_reference_for_every_conversion_of_the_table) {
  uint32_t seed = 1000;
  for (ref::color_format from : color_formats)
    for (ref::color_format to : color_formats) {
      if (!ref::color_conversion_defined(from, to)) continue;
      for (const size& s : sizes_for({from, to})) {
        std::string what = "convert " + name_of(from) + " to " + name_of(to) + " " + text(s);
        ref::color_image in = random_color(s.w, s.h, from, seed += 10);
        vx_image input = make_color(context_, in);
        vx_image output = vxCreateImage(context_, s.w, s.h, vx_color(to));
        ASSERT_EQ(vxuColorConvert(context_, input, output), VX_SUCCESS) << what;
        // Exact: the spec's formulas are ratios of integers, evaluated exactly
        // by both (the CTS allows color_convert_cts_tolerance where it rounds).
        expect_same_color(read_color(output, to), ref::color_convert(in, to), 0, what);
        vxReleaseImage(&input);
        vxReleaseImage(&output);
      }
    }
}

TEST_F(whole_kernels, color_convert_uses_bt601_weights_where_the_yuv_image_says_so) {
  const vx_enum space = VX_COLOR_SPACE_BT601_625;
  ref::color_image rgb = random_color(640, 480, ref::color_format::rgb, 7);
  vx_image input = make_color(context_, rgb);
  for (ref::color_format yuv_format : {ref::color_format::yuv4, ref::color_format::iyuv}) {
    std::string what = "RGB to " + name_of(yuv_format) + " in BT.601";
    vx_image yuv = vxCreateImage(context_, 640, 480, vx_color(yuv_format));
    ASSERT_EQ(vxSetImageAttribute(yuv, VX_IMAGE_SPACE, &space, sizeof space), VX_SUCCESS);
    ASSERT_EQ(vxuColorConvert(context_, input, yuv), VX_SUCCESS) << what;
    ref::color_image want = ref::color_convert(rgb, yuv_format, ref::color_space::bt601);
    expect_same_color(read_color(yuv, yuv_format), want, 0, what);
    if (yuv_format == ref::color_format::iyuv) {
      vx_image back = vxCreateImage(context_, 640, 480, VX_DF_IMAGE_RGB);
      ASSERT_EQ(vxuColorConvert(context_, yuv, back), VX_SUCCESS);
      expect_same_color(read_color(back, ref::color_format::rgb),
                        ref::color_convert(want, ref::color_format::rgb, ref::color_space::bt601), 0,
                        "IYUV to RGB in BT.601");
      vxReleaseImage(&back);
    }
    vxReleaseImage(&yuv);
  }
  vxReleaseImage(&input);
}

TEST_F(whole_kernels, color_conversions_that_lose_nothing_give_the_input_back) {
  using cf = ref::color_format;
  struct trip {
    cf from, via, back;
  } trips[] = {{cf::rgb, cf::rgbx, cf::rgb}, {cf::rgbx, cf::rgb, cf::rgbx}, {cf::nv12, cf::iyuv, cf::nv12},
               {cf::iyuv, cf::nv12, cf::iyuv}, {cf::nv21, cf::iyuv, cf::nv12}};
  uint32_t seed = 50;
  for (const trip& t : trips)
    for (const size& s : sizes_for({t.from, t.via, t.back})) {
      std::string what = name_of(t.from) + " to " + name_of(t.via) + " and back " + text(s);
      ref::color_image in = random_color(s.w, s.h, t.from, seed += 10);
      // RGBX's X comes back as 255.
      if (t.from == cf::rgbx) std::fill(in.channels[3].pixels.begin(), in.channels[3].pixels.end(), 255);
      vx_image input = make_color(context_, in);
      vx_image via = vxCreateImage(context_, s.w, s.h, vx_color(t.via));
      vx_image back = vxCreateImage(context_, s.w, s.h, vx_color(t.back));
      ASSERT_EQ(vxuColorConvert(context_, input, via), VX_SUCCESS) << what;
      ASSERT_EQ(vxuColorConvert(context_, via, back), VX_SUCCESS) << what;
      ref::color_image got = read_color(back, t.back);
      got.format = in.format;  // NV21 and NV12 hold the same channels
      expect_same_color(got, in, 0, what);
      for (vx_image* image : {&input, &via, &back}) vxReleaseImage(image);
    }
}

TEST_F(whole_kernels, color_convert_refuses_what_the_table_lacks_and_sizes_the_format_cannot_have) {
  vx_image rgb = vxCreateImage(context_, 4, 6, VX_DF_IMAGE_RGB);
  vx_image uyvy = vxCreateImage(context_, 4, 6, VX_DF_IMAGE_UYVY);
  vx_image yuv4 = vxCreateImage(context_, 4, 6, VX_DF_IMAGE_YUV4);
  vx_image small = vxCreateImage(context_, 2, 6, VX_DF_IMAGE_RGBX);
  EXPECT_EQ(vxuColorConvert(context_, rgb, uyvy), VX_ERROR_INVALID_FORMAT);
  EXPECT_EQ(vxuColorConvert(context_, yuv4, rgb), VX_ERROR_INVALID_FORMAT);
  EXPECT_EQ(vxuColorConvert(context_, rgb, small), VX_ERROR_INVALID_DIMENSION);
  // An odd RGB image cannot become NV12 (a virtual output would take its size).
  vx_image odd = vxCreateImage(context_, 3, 5, VX_DF_IMAGE_RGB);
  vx_graph graph = vxCreateGraph(context_);
  vx_image virtual_nv12 = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_NV12);
  vx_image y = vxCreateImage(context_, 3, 5, VX_DF_IMAGE_U8);
  vx_node convert = vxColorConvertNode(graph, odd, virtual_nv12);
  vx_node extract = vxChannelExtractNode(graph, virtual_nv12, VX_CHANNEL_Y, y);
  vxSetReferenceName(reinterpret_cast<vx_reference>(convert), "to_nv12");
  EXPECT_EQ(vxVerifyGraph(graph), VX_ERROR_INVALID_DIMENSION);
  EXPECT_TRUE(logged("to_nv12"));
  vxReleaseNode(&convert);
  vxReleaseNode(&extract);
  vxReleaseGraph(&graph);
  for (vx_image* image : {&rgb, &uyvy, &yuv4, &small, &odd, &virtual_nv12, &y}) vxReleaseImage(image);
}

// --- Geometry ------------------------------------------------------------------------

const ref::border borders[] = {{ref::border_mode::undefined, 0}, {ref::border_mode::constant, 77},
                               {ref::border_mode::replicate, 0}};

// Compares where the reference defines the output.
int64_t count_mismatches(const ref::image& got, const ref::resampled& want, int64_t tolerance, const std::string& what,
                         int64_t* defined = nullptr) {
  int64_t bad = 0, seen = 0;
  for (uint32_t y = 0; y < got.height; ++y)
    for (uint32_t x = 0; x < got.width; ++x) {
      if (!want.is_defined(x, y)) continue;
      ++seen;
      int64_t d = std::llabs(got.at(x, y) - want.out.at(x, y));
      if (d > tolerance && bad++ < 5)
        ADD_FAILURE() << what << ": pixel (" << x << ", " << y << ") is " << got.at(x, y) << ", the reference "
                      << want.out.at(x, y);
    }
  if (defined != nullptr) *defined = seen;
  return bad;
}

TEST_F(whole_kernels, scale_image_matches_the_reference_for_every_method_border_and_ratio) {
  struct ratio {
    size in, out;
  } ratios[] = {{{1, 1}, {3, 3}}, {{3, 5}, {7, 2}}, {{3, 5}, {1, 1}}, {{641, 479}, {320, 240}},
                {{641, 479}, {1000, 701}}, {{641, 479}, {213, 479}}};
  struct method {
    vx_enum vx;
    ref::interpolation r;
    const char* name;
  } methods[] = {{VX_INTERPOLATION_NEAREST_NEIGHBOR, ref::interpolation::nearest_neighbor, "nearest"},
                 {VX_INTERPOLATION_BILINEAR, ref::interpolation::bilinear, "bilinear"},
                 {VX_INTERPOLATION_AREA, ref::interpolation::area, "area"}};
  uint32_t seed = 300;
  for (const ratio& r : ratios) {
    ref::image in = random_image(r.in.w, r.in.h, ref::pixel_format::u8, seed++);
    vx_image input = make_image(context_, in);
    vx_image output = vxCreateImage(context_, r.out.w, r.out.h, VX_DF_IMAGE_U8);
    for (const method& m : methods)
      for (const ref::border& b : borders) {
        std::string what = std::string("scale ") + m.name + " " + text(r.in) + " to " + text(r.out) + " " +
                           border_name(b);
        immediate_border(b);
        ASSERT_EQ(vxuScaleImage(context_, input, output, m.vx), VX_SUCCESS) << what;
        ref::resampled want = ref::scale_image(in, r.out.w, r.out.h, m.r, b);
        // Exact: the sample points are exact fractions for kernel and
        // reference alike (the CTS tolerances are looser).
        EXPECT_EQ(count_mismatches(read_image(output, ref::pixel_format::u8), want, 0, what), 0) << what;
        EXPECT_EQ(valid_region(output), (ref::rect{0, 0, r.out.w, r.out.h})) << what;
      }
    vxReleaseImage(&input);
    vxReleaseImage(&output);
  }
}

TEST_F(whole_kernels, scale_image_needs_a_destination_size_and_an_interpolation_it_knows) {
  vx_image input = vxCreateImage(context_, 8, 8, VX_DF_IMAGE_U8);
  vx_image s16 = vxCreateImage(context_, 4, 4, VX_DF_IMAGE_S16);
  EXPECT_EQ(vxuScaleImage(context_, input, s16, VX_INTERPOLATION_BILINEAR), VX_ERROR_INVALID_FORMAT);
  vx_image output = vxCreateImage(context_, 4, 4, VX_DF_IMAGE_U8);
  EXPECT_EQ(vxuScaleImage(context_, input, output, VX_INTERPOLATION_AREA + 7), VX_ERROR_INVALID_VALUE);
  vx_graph graph = vxCreateGraph(context_);
  vx_image unsized = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_U8);
  vx_image sum = vxCreateImage(context_, 8, 8, VX_DF_IMAGE_U32);
  vx_node scale = vxScaleImageNode(graph, input, unsized, VX_INTERPOLATION_BILINEAR);
  vx_node integral = vxIntegralImageNode(graph, unsized, sum);
  EXPECT_EQ(vxVerifyGraph(graph), VX_ERROR_INVALID_DIMENSION);
  vxReleaseNode(&scale);
  vxReleaseNode(&integral);
  vxReleaseGraph(&graph);
  for (vx_image* image : {&input, &s16, &output, &unsized, &sum}) vxReleaseImage(image);
}

// Whether `value` is what some source pixel within `radius` of the mapped
// point holds (the border's constant for one outside): the CTS's measure
// for nearest-neighbour warps.
bool near_some_source(const ref::image& in, double x0, double y0, double radius, const ref::border& b, int64_t value) {
  for (int64_t y = int64_t(std::floor(y0 - radius)); y <= int64_t(std::ceil(y0 + radius)); ++y)
    for (int64_t x = int64_t(std::floor(x0 - radius)); x <= int64_t(std::ceil(x0 + radius)); ++x) {
      if ((x - x0) * (x - x0) + (y - y0) * (y - y0) > radius * radius) continue;
      bool inside = x >= 0 && y >= 0 && x < int64_t(in.width) && y < int64_t(in.height);
      int64_t v = inside ? in.at(uint32_t(x), uint32_t(y)) : b.constant;
      if ((inside || b.mode == ref::border_mode::constant) && v == value) return true;
    }
  return false;
}

TEST_F(whole_kernels, warp_affine_matches_the_reference_within_the_conformance_tolerances) {
  const double angle = 30.0 * std::numbers::pi / 180.0;
  struct matrix_case {
    const char* name;
    ref::affine_matrix m;  // {a, d, b, e, c, f}: x0 = a x + b y + c, y0 = d x + e y + f
  } matrices[] = {
      {"identity", {1, 0, 0, 1, 0, 0}},
      {"half and shifted", {0.5f, 0, 0, 0.5f, 3.25f, -1.5f}},
      {"rotated and grown", {float(std::cos(angle) / 1.3), float(std::sin(angle) / 1.3),
                             float(-std::sin(angle) / 1.3), float(std::cos(angle) / 1.3), 40.5f, -20.25f}},
  };
  struct method {
    vx_enum vx;
    ref::interpolation r;
    const char* name;
  } methods[] = {{VX_INTERPOLATION_NEAREST_NEIGHBOR, ref::interpolation::nearest_neighbor, "nearest"},
                 {VX_INTERPOLATION_BILINEAR, ref::interpolation::bilinear, "bilinear"}};
  uint32_t seed = 500;
  for (const size& s : {size{1, 1}, size{3, 5}, size{641, 479}}) {
    ref::image in = random_image(s.w, s.h, ref::pixel_format::u8, seed++);
    vx_image input = make_image(context_, in);
    vx_image output = vxCreateImage(context_, s.w, s.h, VX_DF_IMAGE_U8);
    for (const matrix_case& mc : matrices) {
      vx_matrix matrix = vxCreateMatrix(context_, VX_TYPE_FLOAT32, 2, 3);
      ref::affine_matrix values = mc.m;
      ASSERT_EQ(vxCopyMatrix(matrix, values.data(), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
      for (const method& m : methods)
        for (const ref::border& b : {borders[0], borders[1]}) {
          std::string what = std::string("warp ") + mc.name + " " + m.name + " " + text(s) + " " + border_name(b);
          immediate_border(b);
          ASSERT_EQ(vxuWarpAffine(context_, input, matrix, m.vx, output), VX_SUCCESS) << what;
          ref::image got = read_image(output, ref::pixel_format::u8);
          ref::resampled want = ref::warp_affine(in, mc.m, m.r, b);
          if (m.r == ref::interpolation::bilinear) {
            // |out - ref| <= 1 on all but warp_max_mismatch_fraction of them.
            int64_t defined = 0;
            int64_t bad = count_mismatches(got, want, ref::warp_bilinear_tolerance, what, &defined);
            EXPECT_LE(double(bad), ref::warp_max_mismatch_fraction * double(defined)) << what;
          } else {
            int64_t bad = 0;
            for (uint32_t y = 0; y < s.h; ++y)
              for (uint32_t x = 0; x < s.w; ++x) {
                if (!want.is_defined(x, y) || got.at(x, y) == want.out.at(x, y)) continue;
                double x0 = double(mc.m[0]) * x + double(mc.m[2]) * y + double(mc.m[4]);
                double y0 = double(mc.m[1]) * x + double(mc.m[3]) * y + double(mc.m[5]);
                if (!near_some_source(in, x0, y0, ref::warp_nearest_search_radius, b, got.at(x, y)) && bad++ < 5)
                  ADD_FAILURE() << what << ": pixel (" << x << ", " << y << ") is " << got.at(x, y);
              }
            EXPECT_EQ(bad, 0) << what;
          }
          EXPECT_EQ(valid_region(output), (ref::rect{0, 0, s.w, s.h})) << what;
        }
      vxReleaseMatrix(&matrix);
    }
    vxReleaseImage(&input);
    vxReleaseImage(&output);
  }
}

TEST_F(whole_kernels, warp_affine_refuses_replicate_area_and_a_matrix_of_another_shape) {
  vx_image input = make_image(context_, random_image(16, 16, ref::pixel_format::u8, 9));
  vx_image output = vxCreateImage(context_, 16, 16, VX_DF_IMAGE_U8);
  vx_matrix matrix = vxCreateMatrix(context_, VX_TYPE_FLOAT32, 2, 3);
  vx_float32 identity[6] = {1, 0, 0, 1, 0, 0};
  ASSERT_EQ(vxCopyMatrix(matrix, identity, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  // "The border modes VX_BORDER_UNDEFINED and VX_BORDER_CONSTANT are supported."
  vx_graph graph = vxCreateGraph(context_);
  vx_node node = vxWarpAffineNode(graph, input, matrix, VX_INTERPOLATION_BILINEAR, output);
  vx_border_t replicate{VX_BORDER_REPLICATE, {}};
  ASSERT_EQ(vxSetNodeAttribute(node, VX_NODE_BORDER, &replicate, sizeof replicate), VX_SUCCESS);
  EXPECT_EQ(vxVerifyGraph(graph), VX_ERROR_NOT_SUPPORTED);
  vxReleaseNode(&node);
  vxReleaseGraph(&graph);
  // Immediate mode falls back to UNDEFINED under the default policy.
  immediate_border({ref::border_mode::replicate, 0});
  EXPECT_EQ(vxuWarpAffine(context_, input, matrix, VX_INTERPOLATION_BILINEAR, output), VX_SUCCESS);
  vx_enum policy = VX_BORDER_POLICY_RETURN_ERROR;
  ASSERT_EQ(vxSetContextAttribute(context_, VX_CONTEXT_IMMEDIATE_BORDER_POLICY, &policy, sizeof policy), VX_SUCCESS);
  EXPECT_EQ(vxuWarpAffine(context_, input, matrix, VX_INTERPOLATION_BILINEAR, output), VX_ERROR_NOT_SUPPORTED);
  immediate_border({ref::border_mode::undefined, 0});
  // "VX_INTERPOLATION_AREA is not supported."
  EXPECT_EQ(vxuWarpAffine(context_, input, matrix, VX_INTERPOLATION_AREA, output), VX_ERROR_INVALID_VALUE);
  vx_matrix square = vxCreateMatrix(context_, VX_TYPE_FLOAT32, 3, 3);
  EXPECT_EQ(vxuWarpAffine(context_, input, square, VX_INTERPOLATION_BILINEAR, output), VX_ERROR_INVALID_DIMENSION);
  vx_matrix integers = vxCreateMatrix(context_, VX_TYPE_INT32, 2, 3);
  EXPECT_EQ(vxuWarpAffine(context_, input, integers, VX_INTERPOLATION_BILINEAR, output), VX_ERROR_INVALID_TYPE);
  for (vx_matrix* m : {&matrix, &square, &integers}) vxReleaseMatrix(m);
  vxReleaseImage(&input);
  vxReleaseImage(&output);
}

// --- Statistics ------------------------------------------------------------------------

const size stat_sizes[] = {{1, 1}, {3, 5}, {641, 479}};

TEST_F(whole_kernels, integral_image_matches_the_reference) {
  uint32_t seed = 700;
  for (const size& s : stat_sizes) {
    std::string what = "integral " + text(s);
    ref::image in = random_image(s.w, s.h, ref::pixel_format::u8, seed++);
    vx_image input = make_image(context_, in);
    vx_image output = vxCreateImage(context_, s.w, s.h, VX_DF_IMAGE_U32);
    ASSERT_EQ(vxuIntegralImage(context_, input, output), VX_SUCCESS) << what;
    expect_near(read_image(output, ref::pixel_format::u32), ref::integral_image(in), {0, 0, s.w, s.h}, 0, what);
    vxReleaseImage(&input);
    vxReleaseImage(&output);
  }
}

TEST_F(whole_kernels, integral_image_wraps_modulo_2_to_the_32) {
  // 255 everywhere: sum(x, y) = 255 (x + 1)(y + 1), past 2^32 at the end.
  const uint32_t w = 4200, h = 4100;
  std::vector<uint8_t> bytes(size_t{w} * h, 255);
  vx_image input = vxCreateImage(context_, w, h, VX_DF_IMAGE_U8);
  vx_rectangle_t all{0, 0, w, h};
  vx_imagepatch_addressing_t address{};
  address.dim_x = w, address.dim_y = h, address.stride_x = 1, address.stride_y = static_cast<vx_int32>(w);
  ASSERT_EQ(vxCopyImagePatch(input, &all, 0, &address, bytes.data(), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  vx_image output = vxCreateImage(context_, w, h, VX_DF_IMAGE_U32);
  ASSERT_EQ(vxuIntegralImage(context_, input, output), VX_SUCCESS);
  vx_uint32 corner[2][2] = {};
  vx_rectangle_t last{w - 2, h - 2, w, h};
  vx_imagepatch_addressing_t small{};
  small.dim_x = 2, small.dim_y = 2, small.stride_x = 4, small.stride_y = 8;
  ASSERT_EQ(vxCopyImagePatch(output, &last, 0, &small, corner, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  for (uint32_t j = 0; j < 2; ++j)
    for (uint32_t i = 0; i < 2; ++i) {
      uint64_t exact = 255ull * (w - 1 + i) * (h - 1 + j);
      EXPECT_EQ(corner[j][i], static_cast<vx_uint32>(exact)) << "at (" << w - 2 + i << ", " << h - 2 + j << ")";
    }
  vxReleaseImage(&input);
  vxReleaseImage(&output);
}

TEST_F(whole_kernels, histogram_matches_the_reference_for_any_bins_offset_and_range) {
  struct shape {
    vx_size bins;
    vx_int32 offset;
    vx_uint32 range;
  } shapes[] = {{256, 0, 256}, {16, 10, 200}, {7, 3, 250}, {1, 0, 256}, {50, 200, 56}};
  uint32_t seed = 800;
  for (const size& s : stat_sizes) {
    ref::image in = random_image(s.w, s.h, ref::pixel_format::u8, seed++);
    vx_image input = make_image(context_, in);
    for (const shape& sh : shapes) {
      std::string what = "histogram " + text(s) + " bins " + std::to_string(sh.bins) + " offset " +
                         std::to_string(sh.offset) + " range " + std::to_string(sh.range);
      vx_distribution d = vxCreateDistribution(context_, sh.bins, sh.offset, sh.range);
      ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(d)), VX_SUCCESS) << what;
      ASSERT_EQ(vxuHistogram(context_, input, d), VX_SUCCESS) << what;
      std::vector<vx_int32> got(sh.bins);
      ASSERT_EQ(vxCopyDistribution(d, got.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
      std::vector<uint32_t> want = ref::histogram(in, uint32_t(sh.bins), sh.offset, sh.range);
      for (size_t i = 0; i < sh.bins; ++i) EXPECT_EQ(uint32_t(got[i]), want[i]) << what << " bin " << i;
      vxReleaseDistribution(&d);
    }
    vxReleaseImage(&input);
  }
}

TEST_F(whole_kernels, mean_and_standard_deviation_match_the_reference) {
  uint32_t seed = 900;
  for (const size& s : stat_sizes) {
    std::string what = "mean/stddev " + text(s);
    ref::image in = random_image(s.w, s.h, ref::pixel_format::u8, seed++);
    vx_image input = make_image(context_, in);
    vx_float32 mean = -1, stddev = -1;
    ASSERT_EQ(vxuMeanStdDev(context_, input, &mean, &stddev), VX_SUCCESS) << what;
    ref::mean_std_dev_result want = ref::mean_std_dev(in);
    EXPECT_NEAR(mean, want.mean, ref::mean_std_dev_tolerance) << what;
    EXPECT_NEAR(stddev, want.stddev, ref::mean_std_dev_tolerance) << what;
    // The standard deviation is optional.
    vx_float32 mean_alone = -1;
    ASSERT_EQ(vxuMeanStdDev(context_, input, &mean_alone, nullptr), VX_SUCCESS) << what;
    EXPECT_EQ(mean_alone, mean) << what;
    vxReleaseImage(&input);
  }
  // A flat image: exactly its value, and no deviation.
  vx_image flat = make_image(context_, ref::image::make(33, 17, ref::pixel_format::u8, 77));
  vx_float32 mean = 0, stddev = -1;
  ASSERT_EQ(vxuMeanStdDev(context_, flat, &mean, &stddev), VX_SUCCESS);
  EXPECT_EQ(mean, 77.0f);
  EXPECT_EQ(stddev, 0.0f);
  vxReleaseImage(&flat);
}

TEST_F(whole_kernels, mean_std_dev_refuses_scalars_of_another_type) {
  vx_image input = vxCreateImage(context_, 8, 8, VX_DF_IMAGE_U8);
  vx_uint8 zero = 0;
  vx_scalar wrong = vxCreateScalar(context_, VX_TYPE_UINT8, &zero);
  vx_graph graph = vxCreateGraph(context_);
  vx_node node = vxMeanStdDevNode(graph, input, wrong, nullptr);
  vxSetReferenceName(reinterpret_cast<vx_reference>(node), "average");
  EXPECT_EQ(vxVerifyGraph(graph), VX_ERROR_INVALID_TYPE);
  EXPECT_TRUE(logged("average"));
  vxReleaseNode(&node);
  vxReleaseGraph(&graph);
  vxReleaseScalar(&wrong);
  vxReleaseImage(&input);
}

std::vector<ref::coordinate> read_coordinates(vx_array array) {
  vx_size count = 0;
  EXPECT_EQ(vxQueryArray(array, VX_ARRAY_NUMITEMS, &count, sizeof count), VX_SUCCESS);
  std::vector<vx_coordinates2d_t> items(count);
  if (count > 0) {
    EXPECT_EQ(vxCopyArrayRange(array, 0, count, sizeof(vx_coordinates2d_t), items.data(), VX_READ_ONLY,
                               VX_MEMORY_TYPE_HOST),
              VX_SUCCESS);
  }
  std::vector<ref::coordinate> out;
  for (const auto& item : items) out.push_back({item.x, item.y});
  return out;
}

TEST_F(whole_kernels, min_max_loc_matches_the_reference_in_raster_order_up_to_the_capacity) {
  uint32_t seed = 1100;
  for (ref::pixel_format f : {ref::pixel_format::u8, ref::pixel_format::s16})
    for (const size& s : stat_sizes) {
      const bool u8 = f == ref::pixel_format::u8;
      std::string what = std::string("minmaxloc ") + (u8 ? "U8 " : "S16 ") + text(s);
      ref::image in = random_image(s.w, s.h, f, seed++);
      ref::min_max_location want = ref::min_max_loc(in);
      vx_image input = make_image(context_, in);
      const vx_enum value_type = u8 ? VX_TYPE_UINT8 : VX_TYPE_INT16;
      vx_int32 zero = 0;
      vx_scalar min_value = vxCreateScalar(context_, value_type, &zero);
      vx_scalar max_value = vxCreateScalar(context_, value_type, &zero);
      vx_size no_count = 0;
      vx_scalar min_count = vxCreateScalar(context_, VX_TYPE_SIZE, &no_count);
      vx_scalar max_count = vxCreateScalar(context_, VX_TYPE_SIZE, &no_count);
      for (vx_size capacity : {vx_size{s.w} * s.h, vx_size{3}}) {
        std::string with = what + " capacity " + std::to_string(capacity);
        vx_array min_locations = vxCreateArray(context_, VX_TYPE_COORDINATES2D, capacity);
        vx_array max_locations = vxCreateArray(context_, VX_TYPE_COORDINATES2D, capacity);
        ASSERT_EQ(vxuMinMaxLoc(context_, input, min_value, max_value, min_locations, max_locations, min_count,
                               max_count),
                  VX_SUCCESS)
            << with;
        int64_t got_min = 0, got_max = 0;
        if (u8) {
          vx_uint8 lo = 0, hi = 0;
          vxCopyScalar(min_value, &lo, VX_READ_ONLY, VX_MEMORY_TYPE_HOST);
          vxCopyScalar(max_value, &hi, VX_READ_ONLY, VX_MEMORY_TYPE_HOST);
          got_min = lo, got_max = hi;
        } else {
          vx_int16 lo = 0, hi = 0;
          vxCopyScalar(min_value, &lo, VX_READ_ONLY, VX_MEMORY_TYPE_HOST);
          vxCopyScalar(max_value, &hi, VX_READ_ONLY, VX_MEMORY_TYPE_HOST);
          got_min = lo, got_max = hi;
        }
        EXPECT_EQ(got_min, want.min) << with;
        EXPECT_EQ(got_max, want.max) << with;
        vx_size mins = 0, maxs = 0;
        vxCopyScalar(min_count, &mins, VX_READ_ONLY, VX_MEMORY_TYPE_HOST);
        vxCopyScalar(max_count, &maxs, VX_READ_ONLY, VX_MEMORY_TYPE_HOST);
        // The counts are all of them, whatever the arrays hold.
        EXPECT_EQ(mins, want.min_count) << with;
        EXPECT_EQ(maxs, want.max_count) << with;
        auto first = [&](const std::vector<ref::coordinate>& all) {
          return std::vector<ref::coordinate>(all.begin(), all.begin() + std::min<size_t>(all.size(), capacity));
        };
        EXPECT_EQ(read_coordinates(min_locations), first(want.min_locations)) << with;
        EXPECT_EQ(read_coordinates(max_locations), first(want.max_locations)) << with;
        vxReleaseArray(&min_locations);
        vxReleaseArray(&max_locations);
      }
      // Without the optional outputs.
      ASSERT_EQ(vxuMinMaxLoc(context_, input, min_value, max_value, nullptr, nullptr, nullptr, nullptr), VX_SUCCESS);
      for (vx_scalar* scalar : {&min_value, &max_value, &min_count, &max_count}) vxReleaseScalar(scalar);
      vxReleaseImage(&input);
    }
}

TEST_F(whole_kernels, min_max_loc_wants_values_of_the_input_type_and_size_counts) {
  vx_image input = vxCreateImage(context_, 8, 8, VX_DF_IMAGE_U8);
  vx_int32 zero = 0;
  vx_scalar int32 = vxCreateScalar(context_, VX_TYPE_INT32, &zero);
  vx_uint8 byte = 0;
  vx_scalar u8 = vxCreateScalar(context_, VX_TYPE_UINT8, &byte);
  EXPECT_EQ(vxuMinMaxLoc(context_, input, int32, u8, nullptr, nullptr, nullptr, nullptr), VX_ERROR_INVALID_TYPE);
  EXPECT_EQ(vxuMinMaxLoc(context_, input, u8, u8, nullptr, nullptr, int32, nullptr), VX_ERROR_INVALID_TYPE);
  vx_array keypoints = vxCreateArray(context_, VX_TYPE_KEYPOINT, 10);
  EXPECT_EQ(vxuMinMaxLoc(context_, input, u8, u8, keypoints, nullptr, nullptr, nullptr), VX_ERROR_INVALID_TYPE);
  vx_image s32 = vxCreateImage(context_, 8, 8, VX_DF_IMAGE_S32);
  EXPECT_EQ(vxuMinMaxLoc(context_, s32, u8, u8, nullptr, nullptr, nullptr, nullptr), VX_ERROR_INVALID_FORMAT);
  vxReleaseArray(&keypoints);
  vxReleaseScalar(&int32);
  vxReleaseScalar(&u8);
  vxReleaseImage(&input);
  vxReleaseImage(&s32);
}

// --- In graphs ---------------------------------------------------------------------------

// Whole kernels between pixel kernels, joined by virtual images and virtual
// results: RGB -> NV12 -> Y -> Not -> scaled; histogram, mean and extremes of
// the Y plane. Run twice (the second run reuses the verified plan).
TEST_F(whole_kernels, a_graph_of_whole_and_pixel_kernels_matches_the_composed_reference) {
  setenv("FERRY_VX_FUSION", "1", 1);
  ref::color_image rgb = random_color(641 - 1, 479 - 1, ref::color_format::rgb, 77);
  ref::color_image nv12 = ref::color_convert(rgb, ref::color_format::nv12);
  const ref::image& luma = nv12.channels[0];
  ref::image inverted = ref::not_(luma);
  ref::resampled scaled = ref::scale_image(inverted, 320, 240, ref::interpolation::bilinear,
                                           {ref::border_mode::replicate, 0});
  std::vector<uint32_t> histogram = ref::histogram(inverted, 32, 0, 256);
  ref::mean_std_dev_result stats = ref::mean_std_dev(luma);

  vx_graph graph = vxCreateGraph(context_);
  vx_image input = make_color(context_, rgb);
  vx_image yuv = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_NV12);
  vx_image y = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
  vx_image not_y = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
  vx_image small = vxCreateImage(context_, 320, 240, VX_DF_IMAGE_U8);
  vx_distribution distribution = vxCreateDistribution(context_, 32, 0, 256);
  vx_scalar mean = vxCreateVirtualScalar(graph, VX_TYPE_INVALID);
  vx_float32 zero = 0;
  vx_scalar stddev = vxCreateScalar(context_, VX_TYPE_FLOAT32, &zero);
  vx_node nodes[] = {vxColorConvertNode(graph, input, yuv), vxChannelExtractNode(graph, yuv, VX_CHANNEL_Y, y),
                     vxNotNode(graph, y, not_y), vxScaleImageNode(graph, not_y, small, VX_INTERPOLATION_BILINEAR),
                     vxHistogramNode(graph, not_y, distribution), vxMeanStdDevNode(graph, y, mean, stddev)};
  vx_border_t replicate{VX_BORDER_REPLICATE, {}};
  for (vx_node node : nodes) {
    ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(node)), VX_SUCCESS);
    ASSERT_EQ(vxSetNodeAttribute(node, VX_NODE_BORDER, &replicate, sizeof replicate), VX_SUCCESS);
  }
  ASSERT_EQ(vxVerifyGraph(graph), VX_SUCCESS);
  for (int run = 0; run < 2; ++run) {
    std::string what = "graph run " + std::to_string(run);
    ASSERT_EQ(vxProcessGraph(graph), VX_SUCCESS) << what;
    EXPECT_EQ(count_mismatches(read_image(small, ref::pixel_format::u8), scaled, 0, what), 0) << what;
    std::vector<vx_int32> counts(32);
    ASSERT_EQ(vxCopyDistribution(distribution, counts.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
    for (size_t i = 0; i < counts.size(); ++i) EXPECT_EQ(uint32_t(counts[i]), histogram[i]) << what << " bin " << i;
    vx_float32 deviation = -1;
    ASSERT_EQ(vxCopyScalar(stddev, &deviation, VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
    EXPECT_NEAR(deviation, stats.stddev, ref::mean_std_dev_tolerance) << what;
  }
  for (vx_node& node : nodes) vxReleaseNode(&node);
  for (vx_image* image : {&input, &yuv, &y, &not_y, &small}) vxReleaseImage(image);
  vxReleaseDistribution(&distribution);
  vxReleaseScalar(&mean);
  vxReleaseScalar(&stddev);
  EXPECT_EQ(vxReleaseGraph(&graph), VX_SUCCESS);
  unsetenv("FERRY_VX_FUSION");
}

// A whole kernel reads an ROI from its place in the parent, and writes an
// ROI without touching the parent's pixels around it.
TEST_F(whole_kernels, whole_kernels_read_and_write_regions_of_interest) {
  ref::image parent = random_image(64, 48, ref::pixel_format::u8, 61);
  vx_image input = make_image(context_, parent);
  vx_rectangle_t window{5, 3, 45, 33};
  vx_image roi = vxCreateImageFromROI(input, &window);
  ASSERT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(roi)), VX_SUCCESS);
  ref::image part = ref::image::make(40, 30, ref::pixel_format::u8);
  for (uint32_t y = 0; y < 30; ++y)
    for (uint32_t x = 0; x < 40; ++x) part.at(x, y) = parent.at(x + 5, y + 3);

  ref::image canvas = ref::image::make(50, 40, ref::pixel_format::u32, 7);
  vx_image sums = make_image(context_, canvas);
  vx_rectangle_t place{4, 6, 44, 36};
  vx_image sums_roi = vxCreateImageFromROI(sums, &place);
  ASSERT_EQ(vxuIntegralImage(context_, roi, sums_roi), VX_SUCCESS);
  ref::image want = canvas;
  ref::image integral = ref::integral_image(part);
  for (uint32_t y = 0; y < 30; ++y)
    for (uint32_t x = 0; x < 40; ++x) want.at(x + 4, y + 6) = integral.at(x, y);
  expect_near(read_image(sums, ref::pixel_format::u32), want, {0, 0, 50, 40}, 0, "integral of an ROI into an ROI");

  vx_float32 mean = 0;
  ASSERT_EQ(vxuMeanStdDev(context_, roi, &mean, nullptr), VX_SUCCESS);
  EXPECT_NEAR(mean, ref::mean_std_dev(part).mean, ref::mean_std_dev_tolerance);
  for (vx_image* image : {&roi, &input, &sums_roi, &sums}) vxReleaseImage(image);
}

}  // namespace
