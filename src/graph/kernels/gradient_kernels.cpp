// Gradients: Sobel3x3 and Ferry's Scharr3x3 (U8 in, optional S16 gradients
// out), and what is made of gradients: Magnitude (S16) and Phase (U8).
#include "graph/core/image.hpp"
#include "graph/core/node.hpp"
#include "graph/kernels/kernel_families.hpp"
#include "graph/kernels/node_check.hpp"

#include <VX/vx_ext_ferry.h>

#include <array>

namespace ferry::graph {
namespace {

vx_status validate_gradient(node_check& c) {
  vx_status status = c.require_format(0, u8_only);
  if (status != VX_SUCCESS) return status;
  if (c.image(1) == nullptr && c.image(2) == nullptr)
    return c.fail(VX_ERROR_NOT_SUFFICIENT, "neither gradient output is set");
  status = c.settle_like(1, 0, VX_DF_IMAGE_S16);
  return status == VX_SUCCESS ? c.settle_like(2, 0, VX_DF_IMAGE_S16) : status;
}

// Correlates the 3x3 neighbourhood with `kx` and `ky` (row by row) into the
// outputs that are set (|sum| <= 16 * 255: no S16 overflow).
void emit_gradient(pixel_emitter& e, const std::array<int, 9>& kx, const std::array<int, 9>& ky) {
  std::string w = e.temp();
  std::string init = "int " + w + "[9] = {";
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) init += e.read(0, dx, dy) + (dy == 1 && dx == 1 ? "" : ", ");
  e.line(init + "};");
  auto correlate = [&](const std::array<int, 9>& k) {
    std::string sum;
    for (int i = 0; i < 9; ++i)
      if (k[i] != 0) sum += (sum.empty() ? "" : " + ") + std::to_string(k[i]) + " * " + w + "[" + std::to_string(i) + "]";
    return sum;
  };
  if (e.node()->parameters[1] != nullptr) e.write(1, correlate(kx));
  if (e.node()->parameters[2] != nullptr) e.write(2, correlate(ky));
}

void emit_sobel(pixel_emitter& e) {
  emit_gradient(e, {-1, 0, 1, -2, 0, 2, -1, 0, 1}, {-1, -2, -1, 0, 0, 0, 1, 2, 1});
}
void emit_scharr(pixel_emitter& e) {
  emit_gradient(e, {-3, 0, 3, -10, 0, 10, -3, 0, 3}, {-3, -10, -3, 0, 0, 0, 3, 10, 3});
}

vx_status validate_gradient_pair(node_check& c, vx_df_image out) {
  vx_status status = c.require_format(0, s16_only);
  if (status == VX_SUCCESS) status = c.require_format(1, s16_only);
  if (status == VX_SUCCESS) status = c.require_same_size(0, 1);
  return status == VX_SUCCESS ? c.settle_like(2, 0, out) : status;
}
vx_status validate_magnitude(node_check& c) { return validate_gradient_pair(c, VX_DF_IMAGE_S16); }
vx_status validate_phase(node_check& c) { return validate_gradient_pair(c, VX_DF_IMAGE_U8); }

void emit_magnitude(pixel_emitter& e) {
  // sqrt(x^2 + y^2) rounded half up, in double: the sum needs 31 bits, more
  // than a float carries exactly.
  e.helper("fp64", "#pragma OPENCL EXTENSION cl_khr_fp64 : enable");
  std::string x = e.temp(), y = e.temp(), z = e.temp();
  e.line("int " + x + " = " + e.read(0, 0, 0) + ", " + y + " = " + e.read(1, 0, 0) + ";");
  e.line("uint " + z + " = (uint)(sqrt((double)((uint)(" + x + " * " + x + ") + (uint)(" + y + " * " + y +
         "))) + 0.5);");
  e.write(2, "min(" + z + ", 32767u)");
}

void emit_phase(pixel_emitter& e) {
  // atan2 in [-pi, pi] mapped to [0, 256) and rounded; 256 wraps to 0.
  e.helper("fp64", "#pragma OPENCL EXTENSION cl_khr_fp64 : enable");
  std::string v = e.temp(), q = e.temp();
  e.line("double " + v + " = atan2((double)" + e.read(1, 0, 0) + ", (double)" + e.read(0, 0, 0) +
         ") * (256.0 / (2.0 * M_PI));");
  e.line("if (" + v + " < 0.0) " + v + " += 256.0;");
  e.line("int " + q + " = (int)floor(" + v + " + 0.5);");
  e.write(2, q + " >= 256 ? " + q + " - 256 : " + q);
}

}  // namespace

void add_gradient_kernels(std::vector<kernel_definition>& t) {
  const auto image = VX_TYPE_IMAGE;
  t.push_back({VX_KERNEL_SOBEL_3x3, "org.khronos.openvx.sobel_3x3",
               {input(image), optional_output(image), optional_output(image)}, kernel_shape::stencil, 1,
               validate_gradient, emit_sobel, nullptr});
  t.push_back({VX_KERNEL_FERRY_SCHARR_3x3, "ferry.openvx.scharr_3x3",
               {input(image), optional_output(image), optional_output(image)}, kernel_shape::stencil, 1,
               validate_gradient, emit_scharr, nullptr});
  t.push_back({VX_KERNEL_MAGNITUDE, "org.khronos.openvx.magnitude", {input(image), input(image), output(image)},
               kernel_shape::point, 0, validate_magnitude, emit_magnitude, nullptr});
  t.push_back({VX_KERNEL_PHASE, "org.khronos.openvx.phase", {input(image), input(image), output(image)},
               kernel_shape::point, 0, validate_phase, emit_phase, nullptr});
}

}  // namespace ferry::graph
