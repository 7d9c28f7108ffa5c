// Neighbourhood kernels over U8 images: Box3x3, Gaussian3x3, Median3x3,
// Erode3x3, Dilate3x3 (radius 1), Convolve and NonLinearFilter (radius from
// their convolution or mask). Reads outside the image follow the node's
// border mode (pixel_program.hpp); under an undefined border the output's
// valid region shrinks by the radius.
#include "graph/core/convolution.hpp"
#include "graph/core/image.hpp"
#include "graph/core/matrix.hpp"
#include "graph/core/node.hpp"
#include "graph/kernels/kernel_families.hpp"
#include "graph/kernels/node_check.hpp"

#include <algorithm>
#include <cstring>

namespace ferry::graph {
namespace {

vx_status validate_u8_filter(node_check& c) {
  vx_status status = c.require_format(0, u8_only);
  return status == VX_SUCCESS ? c.settle_like(1, 0, VX_DF_IMAGE_U8) : status;
}

// Declares `int NAME[9]` holding the 3x3 neighbourhood of input 0, row by row.
std::string window3x3(pixel_emitter& e) {
  std::string w = e.temp();
  std::string init = "int " + w + "[9] = {";
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) init += e.read(0, dx, dy) + (dy == 1 && dx == 1 ? "" : ", ");
  e.line(init + "};");
  return w;
}

void emit_box(pixel_emitter& e) {
  std::string w = window3x3(e);
  e.write(1, "(" + w + "[0] + " + w + "[1] + " + w + "[2] + " + w + "[3] + " + w + "[4] + " + w + "[5] + " + w +
                 "[6] + " + w + "[7] + " + w + "[8]) / 9");
}

void emit_gaussian(pixel_emitter& e) {
  std::string w = window3x3(e);
  e.write(1, "(" + w + "[0] + 2 * " + w + "[1] + " + w + "[2] + 2 * " + w + "[3] + 4 * " + w + "[4] + 2 * " + w +
                 "[5] + " + w + "[6] + 2 * " + w + "[7] + " + w + "[8]) >> 4");
}

// min / max of the nine as one expression tree (branch-free, so that the
// compiler vectorizes across work-items).
std::string reduce9(const std::string& w, const char* op) {
  auto at = [&](int i) { return w + "[" + std::to_string(i) + "]"; };
  auto pair = [&](const std::string& a, const std::string& b) { return std::string(op) + "(" + a + ", " + b + ")"; };
  return pair(pair(pair(at(0), at(1)), pair(at(2), at(3))), pair(pair(at(4), at(5)), pair(pair(at(6), at(7)), at(8))));
}

void emit_erode(pixel_emitter& e) {
  std::string w = window3x3(e);
  e.write(1, reduce9(w, "min"));
}

void emit_dilate(pixel_emitter& e) {
  std::string w = window3x3(e);
  e.write(1, reduce9(w, "max"));
}

// Sorts the first `count` ints of a private array (insertion sort: the
// windows are at most 81 values and mostly 9).
const char* sort_helper =
    "static inline void vx_sort(int* v, int count) {\n"
    "  for (int i = 1; i < count; ++i) {\n"
    "    int x = v[i], j = i - 1;\n"
    "    while (j >= 0 && v[j] > x) { v[j + 1] = v[j]; --j; }\n"
    "    v[j + 1] = x;\n"
    "  }\n"
    "}";

// The median of nine by a fixed network of 19 compare-exchanges (each puts
// the smaller of two in the first): no branches and no loops, where a sort
// of the window made the median the slowest kernel by far.
void emit_median(pixel_emitter& e) {
  e.helper("vx_order", "#define VX_ORDER(a, b) { const int vx_lo = min(a, b); b = max(a, b); a = vx_lo; }");
  std::string w = window3x3(e);
  static const int network[19][2] = {{1, 2}, {4, 5}, {7, 8}, {0, 1}, {3, 4}, {6, 7}, {1, 2}, {4, 5}, {7, 8}, {0, 3},
                                     {5, 8}, {4, 7}, {3, 6}, {1, 4}, {2, 5}, {4, 7}, {4, 2}, {6, 4}, {4, 2}};
  std::string steps;
  for (const auto& [a, b] : network)
    steps += "VX_ORDER(" + w + "[" + std::to_string(a) + "], " + w + "[" + std::to_string(b) + "]) ";
  e.line(steps);
  e.write(1, w + "[4]");
}

// --- Convolve -------------------------------------------------------------

constexpr vx_size largest_convolution = max_convolution_dimension;

vx_status validate_convolve(node_check& c) {
  vx_status status = c.require_format(0, u8_only);
  if (status != VX_SUCCESS) return status;
  vx_convolution conv = c.convolution(1);
  if (conv == nullptr) return c.fail(VX_ERROR_INVALID_TYPE, "parameter 1 is not a convolution");
  if (conv->columns > largest_convolution || conv->rows > largest_convolution)
    return c.fail(VX_ERROR_INVALID_DIMENSION, "the convolution is %zux%zu; at most %zux%zu runs", conv->columns,
                  conv->rows, largest_convolution, largest_convolution);
  vx_df_image out = c.output_format(2);
  if (out == VX_DF_IMAGE_VIRT) out = VX_DF_IMAGE_U8;  // the input's format, as filters chain
  if (out != VX_DF_IMAGE_U8 && out != VX_DF_IMAGE_S16)
    return c.fail(VX_ERROR_INVALID_FORMAT, "the output must be U8 or S16");
  return c.settle_like(2, 0, out);
}

int convolve_radius(vx_node node) {
  auto* conv = reinterpret_cast<vx_convolution>(node->parameters[1]);
  return static_cast<int>(std::max(conv->columns, conv->rows) / 2);
}

void emit_convolve(pixel_emitter& e) {
  vx_node node = e.node();
  auto* conv = reinterpret_cast<vx_convolution>(node->parameters[1]);
  // The coefficients and scale are read when the node runs (they may change
  // between runs); the size is the convolution's for good.
  std::string coefficients = e.buffer("short", [node] {
    auto* c = reinterpret_cast<vx_convolution>(node->parameters[1]);
    std::vector<uint8_t> bytes(c->coefficients.size() * sizeof(vx_int16));
    std::memcpy(bytes.data(), c->coefficients.data(), bytes.size());
    return bytes;
  });
  std::string scale = e.argument("int", [node] {
    return value_bytes(static_cast<cl_int>(reinterpret_cast<vx_convolution>(node->parameters[1])->scale));
  });
  int columns = static_cast<int>(conv->columns), rows = static_cast<int>(conv->rows);
  int k0 = columns / 2, l0 = rows / 2;
  std::string sum = e.temp();
  e.line("int " + sum + " = 0;");
  // The spec's convolution flips the matrix: coefficient (k, l) meets the
  // pixel at (x + k0 - k, y + l0 - l).
  for (int l = 0; l < rows; ++l)
    for (int k = 0; k < columns; ++k)
      e.line(sum + " += " + e.read(0, k0 - k, l0 - l) + " * " + coefficients + "[" + std::to_string(l * columns + k) +
             "];");
  e.write(2, saturate_to(e, 2, sum + " / " + scale));
}

// --- NonLinearFilter ----------------------------------------------------------

vx_status validate_nonlinear(node_check& c) {
  vx_status status = c.require_scalar(0, VX_TYPE_ENUM);
  if (status == VX_SUCCESS) status = c.require_format(1, u8_only);
  if (status != VX_SUCCESS) return status;
  vx_enum function = c.scalar_enum(0);
  if (function != VX_NONLINEAR_FILTER_MEDIAN && function != VX_NONLINEAR_FILTER_MIN &&
      function != VX_NONLINEAR_FILTER_MAX)
    return c.fail(VX_ERROR_INVALID_VALUE, "0x%x is no non-linear filter function", function);
  vx_matrix mask = c.matrix(2);
  if (mask == nullptr) return c.fail(VX_ERROR_INVALID_TYPE, "parameter 2 is not a matrix");
  if (mask->data_type != VX_TYPE_UINT8) return c.fail(VX_ERROR_INVALID_TYPE, "the mask must be of VX_TYPE_UINT8");
  if (mask->columns > largest_convolution || mask->rows > largest_convolution || mask->columns == 0 || mask->rows == 0)
    return c.fail(VX_ERROR_INVALID_DIMENSION, "the mask is %zux%zu; 1x1 to 9x9 runs", mask->columns, mask->rows);
  return c.settle_like(3, 1, VX_DF_IMAGE_U8);
}

int nonlinear_radius(vx_node node) {
  auto* mask = reinterpret_cast<vx_matrix>(node->parameters[2]);
  auto ox = static_cast<int>(mask->origin.x), oy = static_cast<int>(mask->origin.y);
  auto columns = static_cast<int>(mask->columns), rows = static_cast<int>(mask->rows);
  return std::max({ox, oy, columns - 1 - ox, rows - 1 - oy});
}

void emit_nonlinear(pixel_emitter& e) {
  e.helper("vx_sort", sort_helper);
  vx_node node = e.node();
  auto* mask = reinterpret_cast<vx_matrix>(node->parameters[2]);
  std::string function = scalar_int_argument(e, 0);
  std::string values = e.buffer("uchar", [node] { return reinterpret_cast<vx_matrix>(node->parameters[2])->data; });
  int columns = static_cast<int>(mask->columns), rows = static_cast<int>(mask->rows);
  int ox = static_cast<int>(mask->origin.x), oy = static_cast<int>(mask->origin.y);
  std::string v = e.temp(), n = e.temp();
  e.line("int " + v + "[" + std::to_string(columns * rows) + "]; int " + n + " = 0;");
  for (int j = 0; j < rows; ++j)
    for (int i = 0; i < columns; ++i)
      e.line("if (" + values + "[" + std::to_string(j * columns + i) + "] != 0) " + v + "[" + n + "++] = " +
             e.read(1, i - ox, j - oy) + ";");
  e.line("vx_sort(" + v + ", " + n + ");");
  e.write(3, function + " == " + std::to_string(VX_NONLINEAR_FILTER_MIN) + " ? " + v + "[0] : " + function +
                 " == " + std::to_string(VX_NONLINEAR_FILTER_MAX) + " ? " + v + "[max(" + n + " - 1, 0)] : " + v +
                 "[" + n + " / 2]");
}

}  // namespace

void add_filter_kernels(std::vector<kernel_definition>& t) {
  const auto image = VX_TYPE_IMAGE;
  auto filter = [&](vx_enum e, const char* name, void (*emit)(pixel_emitter&)) {
    t.push_back({e, name, {input(image), output(image)}, kernel_shape::stencil, 1, validate_u8_filter, emit, nullptr});
  };
  filter(VX_KERNEL_BOX_3x3, "org.khronos.openvx.box_3x3", emit_box);
  filter(VX_KERNEL_GAUSSIAN_3x3, "org.khronos.openvx.gaussian_3x3", emit_gaussian);
  filter(VX_KERNEL_MEDIAN_3x3, "org.khronos.openvx.median_3x3", emit_median);
  filter(VX_KERNEL_ERODE_3x3, "org.khronos.openvx.erode_3x3", emit_erode);
  filter(VX_KERNEL_DILATE_3x3, "org.khronos.openvx.dilate_3x3", emit_dilate);
  t.push_back({VX_KERNEL_CUSTOM_CONVOLUTION, "org.khronos.openvx.custom_convolution",
               {input(image), input(VX_TYPE_CONVOLUTION), output(image)}, kernel_shape::stencil,
               static_cast<int>(largest_convolution / 2), validate_convolve, emit_convolve, nullptr, convolve_radius});
  t.push_back({VX_KERNEL_NON_LINEAR_FILTER, "org.khronos.openvx.non_linear_filter",
               {input(VX_TYPE_SCALAR), input(image), input(VX_TYPE_MATRIX), output(image)}, kernel_shape::stencil,
               static_cast<int>(largest_convolution - 1), validate_nonlinear, emit_nonlinear, nullptr,
               nonlinear_radius});
}

}  // namespace ferry::graph
