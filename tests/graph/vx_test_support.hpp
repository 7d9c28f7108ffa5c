// What the OpenVX tests share: images between the reference's form and
// OpenVX images (through the public API only), and comparisons within a
// tolerance over a region.
#pragma once

#include "reference.hpp"

#include <VX/vx.h>

#include <cstdint>
#include <functional>
#include <string>

namespace ferry::graph::testing {

namespace ref = ferry::graph::reference;

vx_df_image vx_format(ref::pixel_format f);
/// Bytes of one pixel.
size_t bytes_of(ref::pixel_format f);
/// A seeded random image (S16 within +-4080, the range of 3x3 gradients).
ref::image random_image(uint32_t w, uint32_t h, ref::pixel_format f, uint32_t seed);
/// A new OpenVX image holding `from`'s pixels.
vx_image make_image(vx_context context, const ref::image& from);
/// An OpenVX image's pixels.
ref::image read_image(vx_image image, ref::pixel_format f);
ref::rect valid_region(vx_image image);
/// Compares inside `region`; `distance` measures how far apart two values are.
void expect_near(const ref::image& got, const ref::image& want, const ref::rect& region, int64_t tolerance,
                 const std::string& what,
                 const std::function<int64_t(int64_t, int64_t)>& distance = [](int64_t a, int64_t b) {
                   return a > b ? a - b : b - a;
                 });
vx_border_t vx_border(const ref::border& b);
std::string border_name(const ref::border& b);

}  // namespace ferry::graph::testing
