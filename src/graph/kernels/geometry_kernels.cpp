// Geometry kernels (the spec's "Scale Image" and "Warp Affine"): whole
// kernels, since an output pixel reads the input at a place computed from
// its coordinates rather than at a fixed offset.
//
// Under VX_BORDER_UNDEFINED both read the nearest pixel inside for a sample
// outside the image (the spec leaves those output pixels open); the output's
// valid region is the whole image (docs/graph.md, "Generated kernels").
#include "graph/core/image.hpp"
#include "graph/core/matrix.hpp"
#include "graph/core/node.hpp"
#include "graph/core/scalar.hpp"
#include "graph/kernels/kernel_families.hpp"
#include "graph/kernels/node_check.hpp"
#include "graph/runtime/whole_run.hpp"

#include <cstring>

namespace ferry::graph {
namespace {

// The interpolation and border as the kernels take them.
cl_int interpolation_code(vx_enum type) {
  return type == VX_INTERPOLATION_NEAREST_NEIGHBOR ? 0 : type == VX_INTERPOLATION_BILINEAR ? 1 : 2;
}
cl_int constant_border(vx_node node) { return node->border.mode == VX_BORDER_CONSTANT ? 1 : 0; }
cl_int border_value(vx_node node) { return node->border.constant_value.U8; }

// --- Scale Image ----------------------------------------------------------
//
// Spec, Scale Image: "x_input = ((x_output + 0.5) * (width_input /
// width_output)) - 0.5" (y likewise). With the ratio kept as integers every
// sample point is an exact fraction, so all three methods are computed
// exactly (64-bit integers):
// - NEAREST_NEIGHBOR, "the pixel whose centre is closest to the sample
//   point": floor(x_input + 0.5) = floor((2 x + 1) w_in / (2 w_out)), a
//   sample midway between two centres taking the right (lower) one;
// - BILINEAR, "(1-s)(1-t) input(xl, yl) + s(1-t) input(xl+1, yl) + (1-s)t
//   input(xl, yl+1) + s t input(xl+1, yl+1)", with s and t exact fractions,
//   rounded half up;
// - AREA: "The details of this sampling method are implementation-defined"
//   (it need not be bilinear's): each source pixel weighs by the part of
//   its area inside the output pixel's projection [x w_in / w_out, (x + 1)
//   w_in / w_out), the scheme the spec's figure shows, rounded half up.
// A source pixel with the border: the constant outside the image, or the
// nearest pixel inside (both kernels' sources start with it).
const std::string source_pixel = R"CLC(
long source_pixel(__global const uchar* src, int so, int sp, int sw, int sh, long x, long y, int constant_border,
                  int fill) {
  if (x < 0 || y < 0 || x >= sw || y >= sh) {
    if (constant_border) return fill;
    x = clamp(x, 0L, (long)sw - 1);
    y = clamp(y, 0L, (long)sh - 1);
  }
  return src[so + (int)y * sp + (int)x];
}
)CLC";

const std::string scale_source = source_pixel + R"CLC(
long floor_div(long a, long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }  /* b > 0 */


__kernel void scale_image(__global const uchar* src, int so, int sp, int sw, int sh, __global uchar* dst, int doff,
                          int dp, int dw, int dh, int type, int constant_border, int fill) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= dw || y >= dh) return;
  long value;
  if (type == 0) {
    const long xi = ((2L * x + 1) * sw) / (2L * dw), yi = ((2L * y + 1) * sh) / (2L * dh);
    value = src[so + (int)yi * sp + (int)xi];
  } else if (type == 1) {
    /* x_input = nx / dx exactly; s = ax / dx. */
    const long dx = 2L * dw, dy = 2L * dh;
    const long nx = (2L * x + 1) * sw - dw, ny = (2L * y + 1) * sh - dh;
    const long xl = floor_div(nx, dx), yl = floor_div(ny, dy);
    const long ax = nx - xl * dx, ay = ny - yl * dy;
    long num = 0;
    for (int j = 0; j < 2; ++j) {
      for (int i = 0; i < 2; ++i) {
        const long w = (i ? ax : dx - ax) * (j ? ay : dy - ay);
        if (w != 0) num += w * source_pixel(src, so, sp, sw, sh, xl + i, yl + j, constant_border, fill);
      }
    }
    value = floor_div(2 * num + dx * dy, 2 * dx * dy);
  } else {
    /* In units of 1/dw: the output pixel covers [x sw, (x + 1) sw), source
       pixel i covers [i dw, (i + 1) dw); the whole covers sw * sh units. */
    const long x0 = (long)x * sw, x1 = (x + 1L) * sw, y0 = (long)y * sh, y1 = (y + 1L) * sh;
    long num = 0;
    for (long j = y0 / dh; j < sh && j * dh < y1; ++j) {
      const long oy = min(y1, (j + 1) * dh) - max(y0, j * dh);
      if (oy <= 0) continue;
      for (long i = x0 / dw; i < sw && i * dw < x1; ++i) {
        const long ox = min(x1, (i + 1) * dw) - max(x0, i * dw);
        if (ox > 0) num += ox * oy * src[so + (int)j * sp + (int)i];
      }
    }
    value = floor_div(2 * num + (long)sw * sh, 2L * sw * sh);
  }
  dst[doff + y * dp + x] = (uchar)value;
}
)CLC";

vx_status check_interpolation(node_check& check, vx_uint32 index, bool area_allowed) {
  vx_status status = check.require_scalar(index, VX_TYPE_ENUM);
  if (status != VX_SUCCESS) return status;
  vx_enum type = check.scalar_enum(index);
  if (type == VX_INTERPOLATION_NEAREST_NEIGHBOR || type == VX_INTERPOLATION_BILINEAR) return VX_SUCCESS;
  if (type == VX_INTERPOLATION_AREA && area_allowed) return VX_SUCCESS;
  return check.fail(VX_ERROR_INVALID_VALUE, "0x%x is not an interpolation type the kernel takes%s", type,
                    type == VX_INTERPOLATION_AREA ? " (\"VX_INTERPOLATION_AREA is not supported\")" : "");
}

// Parameters: src (U8), dst (U8, its size set), type (enum scalar).
vx_status validate_scale_image(node_check& check) {
  vx_status status = check.require_format(0, u8_only);
  if (status == VX_SUCCESS) status = check_interpolation(check, 2, true);
  if (status != VX_SUCCESS) return status;
  vx_image out = check.image(1);
  if (out == nullptr) return check.fail(VX_ERROR_INVALID_TYPE, "parameter 1 is not an image");
  // "The destination image must have a defined size and format": the size
  // is what the node scales to. A virtual one may leave its format to the
  // node ("must be of the same type as the input image").
  if (out->width == 0 || out->height == 0)
    return check.fail(VX_ERROR_INVALID_DIMENSION, "the destination's size must be set: it is the size to scale to");
  return check.settle_image(1, VX_DF_IMAGE_U8, out->width, out->height);
}

vx_status run_scale_image(whole_run& run) {
  whole_run::plane_view in, out;
  vx_status status = run.input_plane(0, 0, in);
  if (status == VX_SUCCESS) status = run.output_plane(1, 0, out);
  if (status != VX_SUCCESS) return status;
  cl_kernel kernel = run.kernel(scale_source, "scale_image");
  if (kernel == nullptr) return VX_FAILURE;
  cl_int type = interpolation_code(static_cast<vx_enum>(scalar_integer(run.scalar(2))));
  status = run.arguments(kernel, in.buffer, in.offset, in.pitch, in.width, in.height, out.buffer, out.offset,
                         out.pitch, out.width, out.height, type, constant_border(run.node()), border_value(run.node()));
  size_t global[2] = {size_t(out.width), size_t(out.height)};
  return status == VX_SUCCESS ? run.enqueue(kernel, 2, global) : status;
}

// --- Warp Affine ------------------------------------------------------------
//
// Spec, Warp Affine: "x0 = M1,1 x + M1,2 y + M1,3, y0 = M2,1 x + M2,2 y +
// M2,3, output(x, y) = input(x0, y0)", the 2x3 VX_TYPE_FLOAT32 matrix held
// as the spec's vx_warps.c example lays it out: mat[3][2] = {{a, d}, {b, e},
// {c, f}} for x0 = a x + b y + c, y0 = d x + e y + f. Output pixels map
// directly (the identity copies the image). NEAREST_NEIGHBOR takes the pixel
// at floor(x0 + 0.5), BILINEAR weighs the four around (x0, y0) as Scale
// Image does, rounded half up. Coordinates are computed in double where the
// device has it (else float). "The border modes VX_BORDER_UNDEFINED and
// VX_BORDER_CONSTANT are supported": REPLICATE is refused at verification
// with VX_ERROR_NOT_SUPPORTED (immediate mode then falls back to UNDEFINED
// under VX_BORDER_POLICY_DEFAULT_TO_UNDEFINED).
const std::string warp_source = source_pixel + R"CLC(
#pragma OPENCL FP_CONTRACT OFF
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
#else
typedef float real;
#endif


__kernel void warp_affine(__global const uchar* src, int so, int sp, int sw, int sh, __global uchar* dst, int doff,
                          int dp, int dw, int dh, float a, float d, float b, float e, float c, float f, int type,
                          int constant_border, int fill) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= dw || y >= dh) return;
  real fx = (real)a * x + (real)b * y + (real)c;
  real fy = (real)d * x + (real)e * y + (real)f;
  /* A point far outside reads only the border: keep it where the conversion
     to an integer is defined (NaN goes to -2 too). */
  fx = fmin(fmax(fx, (real)-2), (real)sw + 1);
  fy = fmin(fmax(fy, (real)-2), (real)sh + 1);
  long value;
  if (type == 0) {
    value = source_pixel(src, so, sp, sw, sh, (long)floor(fx + (real)0.5), (long)floor(fy + (real)0.5),
                         constant_border, fill);
  } else {
    const real xl = floor(fx), yl = floor(fy);
    const real s = fx - xl, t = fy - yl;
    const real wx[2] = {1 - s, s}, wy[2] = {1 - t, t};
    real sum = 0;
    for (int j = 0; j < 2; ++j) {
      for (int i = 0; i < 2; ++i) {
        const real w = wx[i] * wy[j];
        if (w != 0)
          sum += w * (real)source_pixel(src, so, sp, sw, sh, (long)xl + i, (long)yl + j, constant_border, fill);
      }
    }
    value = (long)floor(sum + (real)0.5);
  }
  dst[doff + y * dp + x] = (uchar)clamp(value, 0L, 255L);
}
)CLC";

// Parameters: input (U8), matrix (2x3 FLOAT32), type (enum scalar), output (U8).
vx_status validate_warp_affine(node_check& check) {
  vx_status status = check.require_format(0, u8_only);
  if (status != VX_SUCCESS) return status;
  vx_matrix m = check.matrix(1);
  if (m == nullptr) return check.fail(VX_ERROR_INVALID_TYPE, "parameter 1 is not a matrix");
  // "Must be 2x3 of type VX_TYPE_FLOAT32": 2 columns, 3 rows.
  if (m->data_type != VX_TYPE_FLOAT32)
    return check.fail(VX_ERROR_INVALID_TYPE, "the matrix has type 0x%x; it must be VX_TYPE_FLOAT32", m->data_type);
  if (m->columns != 2 || m->rows != 3)
    return check.fail(VX_ERROR_INVALID_DIMENSION, "the matrix is %zux%zu (columns x rows); it must be 2x3",
                      static_cast<size_t>(m->columns), static_cast<size_t>(m->rows));
  status = check_interpolation(check, 2, false);
  if (status != VX_SUCCESS) return status;
  vx_enum border = check.node()->border.mode;
  if (border != VX_BORDER_UNDEFINED && border != VX_BORDER_CONSTANT)
    return check.fail(VX_ERROR_NOT_SUPPORTED, "border mode 0x%x: a warp supports UNDEFINED and CONSTANT only", border);
  // The output has the input's size unless it says otherwise (the mapping
  // is defined for any output size).
  vx_image in = check.image(0), out = check.image(3);
  if (out == nullptr) return check.fail(VX_ERROR_INVALID_TYPE, "parameter 3 is not an image");
  bool sized = out->width != 0 && out->height != 0;
  return check.settle_image(3, VX_DF_IMAGE_U8, sized ? out->width : in->width, sized ? out->height : in->height);
}

vx_status run_warp_affine(whole_run& run) {
  whole_run::plane_view in, out;
  vx_status status = run.input_plane(0, 0, in);
  if (status == VX_SUCCESS) status = run.output_plane(3, 0, out);
  if (status != VX_SUCCESS) return status;
  cl_kernel kernel = run.kernel(warp_source, "warp_affine");
  if (kernel == nullptr) return VX_FAILURE;
  // {a, d, b, e, c, f}, read at each run: the matrix may change between runs.
  cl_float m[6] = {};
  vx_matrix matrix = run.matrix(1);
  if (matrix->data.size() < sizeof m) return run.fail(VX_FAILURE, "the matrix holds no 2x3 values");
  std::memcpy(m, matrix->data.data(), sizeof m);
  cl_int type = interpolation_code(static_cast<vx_enum>(scalar_integer(run.scalar(2))));
  status = run.arguments(kernel, in.buffer, in.offset, in.pitch, in.width, in.height, out.buffer, out.offset,
                         out.pitch, out.width, out.height, m[0], m[1], m[2], m[3], m[4], m[5], type,
                         constant_border(run.node()), border_value(run.node()));
  size_t global[2] = {size_t(out.width), size_t(out.height)};
  return status == VX_SUCCESS ? run.enqueue(kernel, 2, global) : status;
}

}  // namespace

void add_geometry_kernels(std::vector<kernel_definition>& t) {
  const auto image = VX_TYPE_IMAGE, scalar = VX_TYPE_SCALAR;
  t.push_back({VX_KERNEL_SCALE_IMAGE, "org.khronos.openvx.scale_image", {input(image), output(image), input(scalar)},
               kernel_shape::whole, 0, validate_scale_image, nullptr, run_scale_image});
  t.push_back({VX_KERNEL_WARP_AFFINE, "org.khronos.openvx.warp_affine",
               {input(image), input(VX_TYPE_MATRIX), input(scalar), output(image)}, kernel_shape::whole, 0,
               validate_warp_affine, nullptr, run_warp_affine});
}

}  // namespace ferry::graph
