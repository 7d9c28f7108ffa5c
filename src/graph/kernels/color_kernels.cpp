// Color kernels (the spec's "Channel Extract", "Channel Combine" and "Color
// Convert"): whole kernels over the planes of the multi-channel formats.
//
// Every channel of every format is described once, by where its samples lie
// (`channel_place`): the plane, the bytes from one sample to the next along a
// row, the byte of the first, and the channel's subsampling. Extraction and
// combination are one OpenCL kernel that copies a channel between two such
// places; color conversion is one kernel per pair of formats, generated from
// the same description.
#include "graph/core/image.hpp"
#include "graph/core/image_format.hpp"
#include "graph/core/node.hpp"
#include "graph/core/scalar.hpp"
#include "graph/kernels/kernel_families.hpp"
#include "graph/kernels/node_check.hpp"
#include "graph/runtime/whole_run.hpp"

#include <string>

namespace ferry::graph {
namespace {

enum class component { r, g, b, a, y, u, v };

/// Where the samples of one channel lie: in plane `plane`, sample (cx, cy) of
/// the channel (cx = x >> shift_x, cy = y >> shift_y for image pixel (x, y))
/// is byte `cy * pitch + cx * step + byte`.
struct channel_place {
  vx_uint32 plane = 0;
  vx_uint32 step = 1;
  vx_uint32 byte = 0;
  vx_uint32 shift_x = 0, shift_y = 0;
};

constexpr channel_place full(vx_uint32 plane, vx_uint32 step, vx_uint32 byte) { return {plane, step, byte, 0, 0}; }
constexpr channel_place half(vx_uint32 plane, vx_uint32 step, vx_uint32 byte, vx_uint32 shift_y) {
  return {plane, step, byte, 1, shift_y};
}

/// A multi-channel format: its channels in the order VX_CHANNEL_0..3 and
/// Channel Combine's planes number them, and where each lies.
struct color_format {
  vx_df_image code;
  int channels;
  component order[4];
  channel_place place[4];
};

using c = component;
// The spec's "Image Formats": RGB and RGBX interleaved; NV12 a Y plane and
// U V pairs at half the resolution each way (NV21: V U pairs); IYUV three
// planes, U and V at half the resolution each way; YUV4 three full planes;
// UYVY and YUYV one plane of pixel pairs, U0 Y0 V0 Y1 and Y0 U0 Y1 V0.
const color_format color_formats[] = {
    {VX_DF_IMAGE_RGB, 3, {c::r, c::g, c::b}, {full(0, 3, 0), full(0, 3, 1), full(0, 3, 2)}},
    {VX_DF_IMAGE_RGBX, 4, {c::r, c::g, c::b, c::a}, {full(0, 4, 0), full(0, 4, 1), full(0, 4, 2), full(0, 4, 3)}},
    {VX_DF_IMAGE_NV12, 3, {c::y, c::u, c::v}, {full(0, 1, 0), half(1, 2, 0, 1), half(1, 2, 1, 1)}},
    {VX_DF_IMAGE_NV21, 3, {c::y, c::u, c::v}, {full(0, 1, 0), half(1, 2, 1, 1), half(1, 2, 0, 1)}},
    {VX_DF_IMAGE_IYUV, 3, {c::y, c::u, c::v}, {full(0, 1, 0), half(1, 1, 0, 1), half(2, 1, 0, 1)}},
    {VX_DF_IMAGE_YUV4, 3, {c::y, c::u, c::v}, {full(0, 1, 0), full(1, 1, 0), full(2, 1, 0)}},
    {VX_DF_IMAGE_UYVY, 3, {c::y, c::u, c::v}, {full(0, 2, 1), half(0, 4, 0, 0), half(0, 4, 2, 0)}},
    {VX_DF_IMAGE_YUYV, 3, {c::y, c::u, c::v}, {full(0, 2, 0), half(0, 4, 1, 0), half(0, 4, 3, 0)}},
};

const color_format* find_color_format(vx_df_image code) {
  for (const color_format& f : color_formats)
    if (f.code == code) return &f;
  return nullptr;
}

bool is_rgb(const color_format& f) { return f.order[0] == component::r; }

const char* component_name(component k) {
  switch (k) {
    case component::r: return "R";
    case component::g: return "G";
    case component::b: return "B";
    case component::a: return "A";
    case component::y: return "Y";
    case component::u: return "U";
    case component::v: return "V";
  }
  return "?";
}

/// The index in `f`'s channels of vx_channel_e `channel`, or -1. VX_CHANNEL_0
/// to _3 ("used by formats with unknown channel types") number the channels
/// in the format's order: R G B A, or Y U V.
int channel_index(const color_format& f, vx_enum channel) {
  component wanted;
  switch (channel) {
    case VX_CHANNEL_0: return 0;
    case VX_CHANNEL_1: return 1;
    case VX_CHANNEL_2: return 2;
    case VX_CHANNEL_3: return f.channels > 3 ? 3 : -1;
    case VX_CHANNEL_R: wanted = component::r; break;
    case VX_CHANNEL_G: wanted = component::g; break;
    case VX_CHANNEL_B: wanted = component::b; break;
    case VX_CHANNEL_A: wanted = component::a; break;
    case VX_CHANNEL_Y: wanted = component::y; break;
    case VX_CHANNEL_U: wanted = component::u; break;
    case VX_CHANNEL_V: wanted = component::v; break;
    default: return -1;
  }
  for (int i = 0; i < f.channels; ++i)
    if (f.order[i] == wanted) return i;
  return -1;
}

// One channel between two places: extraction reads a strided channel into
// a U8 plane, combination the other way round.
const char* copy_channel_source = R"CLC(
__kernel void copy_channel(__global const uchar* src, int src_offset, int src_pitch, int src_step,
                           __global uchar* dst, int dst_offset, int dst_pitch, int dst_step,
                           int width, int height) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x < width && y < height)
    dst[dst_offset + y * dst_pitch + x * dst_step] = src[src_offset + y * src_pitch + x * src_step];
}
)CLC";

vx_status copy_channel(whole_run& run, const whole_run::plane_view& src, const channel_place& from,
                       const whole_run::plane_view& dst, const channel_place& to, cl_int width, cl_int height) {
  cl_kernel kernel = run.kernel(copy_channel_source, "copy_channel");
  if (kernel == nullptr) return VX_FAILURE;
  vx_status status =
      run.arguments(kernel, src.buffer, cl_int(src.offset + from.byte), src.pitch, cl_int(from.step), dst.buffer,
                    cl_int(dst.offset + to.byte), dst.pitch, cl_int(to.step), width, height);
  size_t global[2] = {size_t(width), size_t(height)};
  return status == VX_SUCCESS ? run.enqueue(kernel, 2, global) : status;
}

// --- Channel Extract ------------------------------------------------------

// Parameters: input image, channel (enum scalar), output U8 image.
vx_status validate_channel_extract(node_check& check) {
  vx_image in = check.image(0);
  if (in == nullptr) return check.fail(VX_ERROR_INVALID_TYPE, "parameter 0 is not an image");
  // "Must be one of the defined vx_df_image_e multi-channel formats."
  const color_format* format = find_color_format(in->format);
  if (format == nullptr)
    return check.fail(VX_ERROR_INVALID_FORMAT, "input is %s, not a multi-channel format", format_name(in->format).text);
  vx_status status = check.require_scalar(1, VX_TYPE_ENUM);
  if (status != VX_SUCCESS) return status;
  vx_enum channel = check.scalar_enum(1);
  int index = channel_index(*format, channel);
  if (index < 0)
    return check.fail(VX_ERROR_INVALID_VALUE, "a %s image has no channel 0x%x", format_name(in->format).text, channel);
  // "Must be VX_DF_IMAGE_U8": of the channel's own resolution (a subsampled
  // U or V is smaller than the image, as the conformance tests expect).
  const channel_place& place = format->place[index];
  return check.settle_image(2, VX_DF_IMAGE_U8, in->width >> place.shift_x, in->height >> place.shift_y);
}

vx_status run_channel_extract(whole_run& run) {
  vx_image input = run.image(0);
  const color_format& format = *find_color_format(input->format);
  // The channel is read at each run: a scalar changed since verification
  // must still name a channel of the output's size.
  vx_enum channel = static_cast<vx_enum>(scalar_integer(run.scalar(1)));
  int index = channel_index(format, channel);
  if (index < 0) return run.fail(VX_ERROR_INVALID_VALUE, "the image has no channel 0x%x", channel);
  const channel_place& place = format.place[index];
  whole_run::plane_view in, out;
  vx_status status = run.input_plane(0, place.plane, in);
  if (status == VX_SUCCESS) status = run.output_plane(2, 0, out);
  if (status != VX_SUCCESS) return status;
  if (out.width != cl_int(input->width >> place.shift_x) || out.height != cl_int(input->height >> place.shift_y))
    return run.fail(VX_ERROR_INVALID_DIMENSION, "channel 0x%x is not the output's size", channel);
  return copy_channel(run, in, place, out, full(0, 1, 0), out.width, out.height);
}

// --- Channel Combine ------------------------------------------------------

// Parameters: plane0, plane1, [plane2], [plane3] (U8 images), output image.
vx_status validate_channel_combine(node_check& check) {
  vx_image out = check.image(4);
  if (out == nullptr) return check.fail(VX_ERROR_INVALID_TYPE, "parameter 4 is not an image");
  // "The format of the image must be defined, even if the image is virtual."
  const color_format* format = find_color_format(out->format);
  if (format == nullptr)
    return check.fail(VX_ERROR_INVALID_FORMAT, "the output is %s, not a multi-channel format",
                      format_name(out->format).text);
  // "The user must specify only the number of channels that are appropriate
  // for the combining operation. If a user specifies more channels than
  // necessary, the operation results in an error."
  for (int i = 0; i < 4; ++i) {
    bool given = check.parameter(static_cast<vx_uint32>(i)) != nullptr;
    if (i < format->channels && !given)
      return check.fail(VX_ERROR_NOT_SUFFICIENT, "a %s output needs plane %d (channel %s)",
                        format_name(out->format).text, i, component_name(format->order[i]));
    if (i >= format->channels && given)
      return check.fail(VX_ERROR_INVALID_PARAMETERS, "a %s output has %d channels; plane %d is one too many",
                        format_name(out->format).text, format->channels, i);
  }
  for (int i = 0; i < format->channels; ++i) {
    vx_status status = check.require_format(static_cast<vx_uint32>(i), u8_only);
    if (status != VX_SUCCESS) return status;
  }
  // The output has plane 0's size (channel 0 is never subsampled); each
  // plane is its channel's resolution of it.
  vx_uint32 width = out->width != 0 ? out->width : check.image(0)->width;
  vx_uint32 height = out->height != 0 ? out->height : check.image(0)->height;
  const image_format& layout = *find_image_format(format->code);
  if (width % layout.width_multiple != 0 || height % layout.height_multiple != 0)
    return check.fail(VX_ERROR_INVALID_DIMENSION, "a %s image cannot be %ux%u", format_name(format->code).text, width,
                      height);
  for (int i = 0; i < format->channels; ++i) {
    vx_image plane = check.image(static_cast<vx_uint32>(i));
    vx_uint32 w = width >> format->place[i].shift_x, h = height >> format->place[i].shift_y;
    if (plane->width != w || plane->height != h)
      return check.fail(VX_ERROR_INVALID_DIMENSION, "plane %d (channel %s) is %ux%u; a %ux%u %s output needs %ux%u", i,
                        component_name(format->order[i]), plane->width, plane->height, width, height,
                        format_name(format->code).text, w, h);
  }
  return check.settle_image(4, format->code, width, height);
}

vx_status run_channel_combine(whole_run& run) {
  const color_format& format = *find_color_format(run.image(4)->format);
  for (int i = 0; i < format.channels; ++i) {
    const channel_place& place = format.place[i];
    whole_run::plane_view in, out;
    vx_status status = run.input_plane(static_cast<vx_uint32>(i), 0, in);
    if (status == VX_SUCCESS) status = run.output_plane(4, place.plane, out);
    if (status == VX_SUCCESS) status = copy_channel(run, in, full(0, 1, 0), out, place, in.width, in.height);
    if (status != VX_SUCCESS) return status;
  }
  return VX_SUCCESS;
}

// --- Color Convert ----------------------------------------------------------
//
// Spec, Color Convert, full range: R, G, B and Y are value/256, U and V
// (value - 128)/256, and back "value = max(0, min(255, floor(real * 256)))"
// (U, V: + 128); "R' = Y' + 2(1 - Kr)Pr, B' = Y' + 2(1 - Kb)Pb, G' = Y' -
// 2(Kr(1 - Kr)Pr + Kb(1 - Kb)Pb) / (1 - Kr - Kb)", "Y' = Kr R' + Kb B' +
// (1 - Kr - Kb)G'", "Pb = B'/2 - (R'Kr + G'(1 - Kr - Kb)) / (2(1 - Kb))",
// "Pr = R'/2 - (B'Kb + G'(1 - Kr - Kb)) / (2(1 - Kr))"; BT.709: Kr = 0.2126,
// Kb = 0.0722 (BT.601: 0.299, 0.114). With Kr and Kb in units of 1/10000
// every formula is a ratio of integers, so the kernel evaluates it exactly
// (64-bit integers) and the floor is the spec's even where the real value is
// an integer (a grey pixel's Y), which float arithmetic would miss by one.
//
// The spec leaves chroma resampling to the implementation ("The means of
// reconstructing Pb and Pr values from chroma-downsampled formats is
// implementation-defined"). Here, as in the conformance tests' reference:
// a subsampled chroma sample serves every pixel it covers, and a 4:2:0
// sample made from finer chroma is the truncated mean of the four pixels'
// quantized values (of two rows of 4:2:2 samples).

// The spec's table of conversions (rows: input; columns: output).
bool converts(vx_df_image from, vx_df_image to) {
  switch (from) {
    case VX_DF_IMAGE_RGB:
      return to == VX_DF_IMAGE_RGBX || to == VX_DF_IMAGE_NV12 || to == VX_DF_IMAGE_IYUV || to == VX_DF_IMAGE_YUV4;
    case VX_DF_IMAGE_RGBX:
      return to == VX_DF_IMAGE_RGB || to == VX_DF_IMAGE_NV12 || to == VX_DF_IMAGE_IYUV || to == VX_DF_IMAGE_YUV4;
    case VX_DF_IMAGE_NV12:
    case VX_DF_IMAGE_NV21:
      return to == VX_DF_IMAGE_RGB || to == VX_DF_IMAGE_RGBX || to == VX_DF_IMAGE_IYUV || to == VX_DF_IMAGE_YUV4;
    case VX_DF_IMAGE_UYVY:
    case VX_DF_IMAGE_YUYV:
      return to == VX_DF_IMAGE_RGB || to == VX_DF_IMAGE_RGBX || to == VX_DF_IMAGE_NV12 || to == VX_DF_IMAGE_IYUV;
    case VX_DF_IMAGE_IYUV:
      return to == VX_DF_IMAGE_RGB || to == VX_DF_IMAGE_RGBX || to == VX_DF_IMAGE_NV12 || to == VX_DF_IMAGE_YUV4;
    default: return false;
  }
}

/// Kr and Kb of a color space in units of 1/10000 (false: not one the
/// formulas cover). VX_COLOR_SPACE_NONE on a YUV image reads as BT.709,
/// the space new YUV images get.
bool color_weights(vx_enum space, cl_int& kr, cl_int& kb) {
  switch (space) {
    case VX_COLOR_SPACE_NONE:
    case VX_COLOR_SPACE_BT709: kr = 2126, kb = 722; return true;
    case VX_COLOR_SPACE_BT601_525:
    case VX_COLOR_SPACE_BT601_625: kr = 2990, kb = 1140; return true;
    default: return false;
  }
}

vx_status check_color_space(node_check& check, vx_uint32 index) {
  vx_image image = check.image(index);
  if (is_rgb(*find_color_format(image->format))) return VX_SUCCESS;
  // "Implementations are required only to support images of
  // VX_COLOR_SPACE_BT709 and VX_CHANNEL_RANGE_FULL."
  cl_int kr, kb;
  if (!color_weights(image->space, kr, kb))
    return check.fail(VX_ERROR_NOT_SUPPORTED, "image parameter %u has color space 0x%x (BT.709 and BT.601 only)", index,
                      image->space);
  if (image->range != VX_CHANNEL_RANGE_FULL)
    return check.fail(VX_ERROR_NOT_SUPPORTED, "image parameter %u has a restricted channel range (full range only)",
                      index);
  return VX_SUCCESS;
}

// Parameters: input image, output image (its format says what to make).
vx_status validate_color_convert(node_check& check) {
  vx_image in = check.image(0), out = check.image(1);
  if (in == nullptr || out == nullptr) return check.fail(VX_ERROR_INVALID_TYPE, "both parameters must be images");
  if (out->format == VX_DF_IMAGE_VIRT)
    return check.fail(VX_ERROR_INVALID_FORMAT, "the output's format must be set: it says what to convert to");
  if (!converts(in->format, out->format))
    return check.fail(VX_ERROR_INVALID_FORMAT, "no conversion from %s to %s (the spec's table)",
                      format_name(in->format).text, format_name(out->format).text);
  // "The output image to which to convert, which must have the same
  // dimensions as the input image."
  const image_format& layout = *find_image_format(out->format);
  if (in->width % layout.width_multiple != 0 || in->height % layout.height_multiple != 0)
    return check.fail(VX_ERROR_INVALID_DIMENSION, "a %ux%u input cannot become a %s image", in->width, in->height,
                      format_name(out->format).text);
  vx_status status = check_color_space(check, 0);
  if (status == VX_SUCCESS) status = check_color_space(check, 1);
  if (status != VX_SUCCESS) return status;
  bool both_yuv = !is_rgb(*find_color_format(in->format)) && !is_rgb(*find_color_format(out->format));
  cl_int in_kr = 0, in_kb = 0, out_kr = 0, out_kb = 0;
  color_weights(in->space, in_kr, in_kb);
  color_weights(out->space, out_kr, out_kb);
  if (both_yuv && (in_kr != out_kr || in_kb != out_kb))
    return check.fail(VX_ERROR_NOT_SUPPORTED, "conversion between YUV color spaces is not supported");
  return check.settle_like(1, 0, out->format);
}

// The convert kernel's body; the including source defines IN_RGB, OUT_RGB,
// OUT_ALPHA, OUT_SUBSAMPLED and READ_x / WRITE_x for the formats' channels.
const char* color_convert_body = R"CLC(
long floor_div(long a, long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }  /* b > 0 */
long to_u8(long v) { return clamp(v, 0L, 255L); }

/* One work-item per 2x2 block of pixels: a 4:2:0 output's chroma sample is
   made from the block's four pixels. */
__kernel void color_convert(__global const uchar* in0, int io0, int ip0, __global const uchar* in1, int io1,
                            int ip1, __global const uchar* in2, int io2, int ip2, __global uchar* out0, int oo0,
                            int op0, __global uchar* out1, int oo1, int op1, __global uchar* out2, int oo2, int op2,
                            int width, int height, int kr_, int kb_) {
  const int x0 = 2 * (int)get_global_id(0), y0 = 2 * (int)get_global_id(1);
  if (x0 >= width || y0 >= height) return;
  const long D = 10000, kr = kr_, kb = kb_, kg = D - kr - kb;
  long u_sum = 0, v_sum = 0;
  for (int j = 0; j < 2; ++j) {
    for (int i = 0; i < 2; ++i) {
      const int x = x0 + i, y = y0 + j;
      if (x >= width || y >= height) continue;
#if IN_RGB
      long r = READ_R(x, y), g = READ_G(x, y), b = READ_B(x, y);
#else
      long yy = READ_Y(x, y), u = READ_U(x, y), v = READ_V(x, y);
#endif
#if OUT_RGB
#if !IN_RGB
      /* Y' = Y/256, Pb = (U - 128)/256, Pr = (V - 128)/256; R = floor(256 R'). */
      const long r = to_u8(floor_div(D * yy + 2 * (D - kr) * (v - 128), D));
      const long b = to_u8(floor_div(D * yy + 2 * (D - kb) * (u - 128), D));
      const long g = to_u8(floor_div(D * kg * yy - 2 * kr * (D - kr) * (v - 128) - 2 * kb * (D - kb) * (u - 128),
                                     D * kg));
#endif
      WRITE_R(x, y, r);
      WRITE_G(x, y, g);
      WRITE_B(x, y, b);
#if OUT_ALPHA
      WRITE_A(x, y, 255);
#endif
#else
#if IN_RGB
      /* Y = floor(Kr R + Kg G + Kb B); U = floor(256 Pb + 128); V likewise. */
      const long yy = to_u8(floor_div(kr * r + kg * g + kb * b, D));
      const long u = to_u8(floor_div((D - kb) * b - kr * r - kg * g + 256 * (D - kb), 2 * (D - kb)));
      const long v = to_u8(floor_div((D - kr) * r - kg * g - kb * b + 256 * (D - kr), 2 * (D - kr)));
#endif
      WRITE_Y(x, y, yy);
#if OUT_SUBSAMPLED
      u_sum += u;
      v_sum += v;
#else
      WRITE_U(x, y, u);
      WRITE_V(x, y, v);
#endif
#endif
    }
  }
#if OUT_SUBSAMPLED
  WRITE_U(x0, y0, u_sum >> 2);
  WRITE_V(x0, y0, v_sum >> 2);
#endif
}
)CLC";

std::string convert_source(const color_format& from, const color_format& to) {
  std::string source;
  auto define = [&](const std::string& name, int value) {
    source += "#define " + name + " " + std::to_string(value) + "\n";
  };
  // A channel's sample for pixel (x, y) in plane P: base P + offset P + row
  // (y >> shift_y) * pitch P + (x >> shift_x) * step + byte.
  auto address = [](const char* side, const channel_place& p) {
    std::string n = std::to_string(p.plane);
    std::string s = side[0] == 'i' ? "i" : "o";
    return std::string(side) + n + "[" + s + "o" + n + " + ((y) >> " + std::to_string(p.shift_y) + ") * " + s + "p" +
           n + " + ((x) >> " + std::to_string(p.shift_x) + ") * " + std::to_string(p.step) + " + " +
           std::to_string(p.byte) + "]";
  };
  define("IN_RGB", is_rgb(from) ? 1 : 0);
  define("OUT_RGB", is_rgb(to) ? 1 : 0);
  define("OUT_ALPHA", to.channels == 4 ? 1 : 0);
  define("OUT_SUBSAMPLED", to.place[1].shift_x != 0 ? 1 : 0);
  for (int i = 0; i < from.channels; ++i)
    source += std::string("#define READ_") + component_name(from.order[i]) + "(x, y) ((long)" +
              address("in", from.place[i]) + ")\n";
  for (int i = 0; i < to.channels; ++i)
    source += std::string("#define WRITE_") + component_name(to.order[i]) + "(x, y, value) (" +
              address("out", to.place[i]) + " = (uchar)(value))\n";
  return source + color_convert_body;
}

vx_status run_color_convert(whole_run& run) {
  vx_image input = run.image(0), output = run.image(1);
  const color_format& from = *find_color_format(input->format);
  const color_format& to = *find_color_format(output->format);
  cl_kernel kernel = run.kernel(convert_source(from, to), "color_convert");
  if (kernel == nullptr) return VX_FAILURE;
  // Three planes a side; a format with fewer passes its first again (unread).
  whole_run::plane_view in[3], out[3];
  const vx_uint32 in_planes = find_image_format(from.code)->planes, out_planes = find_image_format(to.code)->planes;
  for (vx_uint32 p = 0; p < 3; ++p) {
    vx_status status = run.input_plane(0, p < in_planes ? p : 0, in[p]);
    if (status == VX_SUCCESS) status = run.output_plane(1, p < out_planes ? p : 0, out[p]);
    if (status != VX_SUCCESS) return status;
  }
  // The YUV side's color space says which weights (both sides agree when
  // both are YUV: verification saw to it).
  cl_int kr = 2126, kb = 722;
  color_weights(is_rgb(from) ? output->space : input->space, kr, kb);
  cl_int width = static_cast<cl_int>(input->width), height = static_cast<cl_int>(input->height);
  vx_status status = run.arguments(kernel, in[0].buffer, in[0].offset, in[0].pitch, in[1].buffer, in[1].offset,
                                   in[1].pitch, in[2].buffer, in[2].offset, in[2].pitch, out[0].buffer, out[0].offset,
                                   out[0].pitch, out[1].buffer, out[1].offset, out[1].pitch, out[2].buffer,
                                   out[2].offset, out[2].pitch, width, height, kr, kb);
  size_t global[2] = {(size_t(width) + 1) / 2, (size_t(height) + 1) / 2};
  return status == VX_SUCCESS ? run.enqueue(kernel, 2, global) : status;
}

}  // namespace

void add_color_kernels(std::vector<kernel_definition>& t) {
  const auto image = VX_TYPE_IMAGE;
  auto whole = [&](vx_enum e, const char* name, std::vector<_vx_kernel::parameter_info> p, vx_status (*v)(node_check&),
                   vx_status (*run)(whole_run&)) {
    t.push_back({e, name, std::move(p), kernel_shape::whole, 0, v, nullptr, run});
  };
  whole(VX_KERNEL_CHANNEL_EXTRACT, "org.khronos.openvx.channel_extract",
        {input(image), input(VX_TYPE_SCALAR), output(image)}, validate_channel_extract, run_channel_extract);
  whole(VX_KERNEL_CHANNEL_COMBINE, "org.khronos.openvx.channel_combine",
        {input(image), input(image), optional_input(image), optional_input(image), output(image)},
        validate_channel_combine, run_channel_combine);
  whole(VX_KERNEL_COLOR_CONVERT, "org.khronos.openvx.color_convert", {input(image), output(image)},
        validate_color_convert, run_color_convert);
}

}  // namespace ferry::graph
