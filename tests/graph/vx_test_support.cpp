#include "vx_test_support.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace ferry::graph::testing {

vx_df_image vx_format(ref::pixel_format f) {
  switch (f) {
    case ref::pixel_format::u8: return VX_DF_IMAGE_U8;
    case ref::pixel_format::s16: return VX_DF_IMAGE_S16;
    case ref::pixel_format::u16: return VX_DF_IMAGE_U16;
    case ref::pixel_format::s32: return VX_DF_IMAGE_S32;
    case ref::pixel_format::u32: return VX_DF_IMAGE_U32;
  }
  return VX_DF_IMAGE_U8;
}

size_t bytes_of(ref::pixel_format f) {
  switch (f) {
    case ref::pixel_format::u8: return 1;
    case ref::pixel_format::s16:
    case ref::pixel_format::u16: return 2;
    default: return 4;
  }
}

ref::image random_image(uint32_t w, uint32_t h, ref::pixel_format f, uint32_t seed) {
  std::mt19937 random(seed);
  auto [lo, hi] = ref::format_range(f);
  // S16 gradients as Sobel makes them stay within +-4080; a wider range would
  // test only saturation.
  if (f == ref::pixel_format::s16) lo = -4080, hi = 4080;
  std::uniform_int_distribution<int64_t> value(lo, hi);
  ref::image image = ref::image::make(w, h, f);
  for (auto& p : image.pixels) p = value(random);
  return image;
}

vx_image make_image(vx_context context, const ref::image& from) {
  vx_image image = vxCreateImage(context, from.width, from.height, vx_format(from.format));
  EXPECT_EQ(vxGetStatus(reinterpret_cast<vx_reference>(image)), VX_SUCCESS);
  size_t bytes = bytes_of(from.format);
  std::vector<uint8_t> packed(from.pixels.size() * bytes);
  for (size_t i = 0; i < from.pixels.size(); ++i) {
    int64_t v = from.pixels[i];
    std::memcpy(&packed[i * bytes], &v, bytes);  // little-endian low bytes
  }
  vx_rectangle_t rect{0, 0, from.width, from.height};
  vx_imagepatch_addressing_t address{};
  address.dim_x = from.width;
  address.dim_y = from.height;
  address.stride_x = static_cast<vx_int32>(bytes);
  address.stride_y = static_cast<vx_int32>(bytes * from.width);
  EXPECT_EQ(vxCopyImagePatch(image, &rect, 0, &address, packed.data(), VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST),
            VX_SUCCESS);
  return image;
}

ref::image read_image(vx_image image, ref::pixel_format f) {
  vx_uint32 w = 0, h = 0;
  vxQueryImage(image, VX_IMAGE_WIDTH, &w, sizeof w);
  vxQueryImage(image, VX_IMAGE_HEIGHT, &h, sizeof h);
  ref::image out = ref::image::make(w, h, f);
  size_t bytes = bytes_of(f);
  std::vector<uint8_t> packed(size_t{w} * h * bytes);
  vx_rectangle_t rect{0, 0, w, h};
  vx_imagepatch_addressing_t address{};
  address.dim_x = w;
  address.dim_y = h;
  address.stride_x = static_cast<vx_int32>(bytes);
  address.stride_y = static_cast<vx_int32>(bytes * w);
  EXPECT_EQ(vxCopyImagePatch(image, &rect, 0, &address, packed.data(), VX_READ_ONLY, VX_MEMORY_TYPE_HOST), VX_SUCCESS);
  for (size_t i = 0; i < out.pixels.size(); ++i) {
    const uint8_t* p = &packed[i * bytes];
    switch (f) {
      case ref::pixel_format::u8: out.pixels[i] = p[0]; break;
      case ref::pixel_format::s16: { int16_t v; std::memcpy(&v, p, 2); out.pixels[i] = v; break; }
      case ref::pixel_format::u16: { uint16_t v; std::memcpy(&v, p, 2); out.pixels[i] = v; break; }
      case ref::pixel_format::s32: { int32_t v; std::memcpy(&v, p, 4); out.pixels[i] = v; break; }
      case ref::pixel_format::u32: { uint32_t v; std::memcpy(&v, p, 4); out.pixels[i] = v; break; }
    }
  }
  return out;
}

ref::rect valid_region(vx_image image) {
  vx_rectangle_t r{};
  EXPECT_EQ(vxGetValidRegionImage(image, &r), VX_SUCCESS);
  return {r.start_x, r.start_y, r.end_x, r.end_y};
}

void expect_near(const ref::image& got, const ref::image& want, const ref::rect& region, int64_t tolerance,
                 const std::string& what, const std::function<int64_t(int64_t, int64_t)>& distance) {
  ASSERT_EQ(got.width, want.width) << what;
  ASSERT_EQ(got.height, want.height) << what;
  int reported = 0;
  for (uint32_t y = region.start_y; y < region.end_y; ++y)
    for (uint32_t x = region.start_x; x < region.end_x; ++x)
      if (distance(got.at(x, y), want.at(x, y)) > tolerance && reported++ < 5)
        ADD_FAILURE() << what << ": pixel (" << x << ", " << y << ") is " << got.at(x, y) << ", the reference "
                      << want.at(x, y);
  EXPECT_EQ(reported, 0) << what << ": " << reported << " pixels differ";
}

vx_border_t vx_border(const ref::border& b) {
  vx_border_t border{};
  border.mode = b.mode == ref::border_mode::constant    ? VX_BORDER_CONSTANT
                : b.mode == ref::border_mode::replicate ? VX_BORDER_REPLICATE
                                                        : VX_BORDER_UNDEFINED;
  border.constant_value.U8 = static_cast<vx_uint8>(b.constant);
  return border;
}

std::string border_name(const ref::border& b) {
  return b.mode == ref::border_mode::constant ? "constant" : b.mode == ref::border_mode::replicate ? "replicate" : "undefined";
}

}  // namespace ferry::graph::testing
