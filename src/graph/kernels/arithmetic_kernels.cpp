// Point kernels: each output pixel from the input pixels at the same place
// (the spec's "Arithmetic", "Bitwise", "Convert Bit Depth", "Table Lookup",
// "Weighted Average" and "Thresholding" functions), bit-exact where the spec
// defines the result.
#include "graph/core/image.hpp"
#include "graph/core/lut.hpp"
#include "graph/core/node.hpp"
#include "graph/core/scalar.hpp"
#include "graph/core/threshold.hpp"
#include "graph/kernels/kernel_families.hpp"
#include "graph/kernels/node_check.hpp"

#include <cmath>
#include <cstring>

namespace ferry::graph {
namespace {

std::string number(vx_enum value) { return std::to_string(value); }

// An int argument computed when the node runs.
template <class Read>
std::string int_argument(pixel_emitter& e, Read read) {
  vx_node node = e.node();
  return e.argument("int", [node, read] { return value_bytes(static_cast<cl_int>(read(node))); });
}

vx_status check_policy(node_check& c, vx_uint32 index) {
  vx_status status = c.require_scalar(index, VX_TYPE_ENUM);
  if (status != VX_SUCCESS) return status;
  vx_enum policy = c.scalar_enum(index);
  if (policy != VX_CONVERT_POLICY_WRAP && policy != VX_CONVERT_POLICY_SATURATE)
    return c.fail(VX_ERROR_INVALID_VALUE, "parameter %u: 0x%x is no overflow policy", index, policy);
  return VX_SUCCESS;
}

// Two inputs of U8 or S16 and one size; the output U8 only for two U8
// inputs, else S16; a virtual output takes U8 for two U8 inputs, S16 otherwise.
vx_status check_two_inputs(node_check& c, vx_uint32 output) {
  vx_status status = c.require_format(0, u8_or_s16);
  if (status == VX_SUCCESS) status = c.require_format(1, u8_or_s16);
  if (status == VX_SUCCESS) status = c.require_same_size(0, 1);
  if (status != VX_SUCCESS) return status;
  bool both_u8 = c.image(0)->format == VX_DF_IMAGE_U8 && c.image(1)->format == VX_DF_IMAGE_U8;
  vx_df_image format = c.output_format(output);
  if (format == VX_DF_IMAGE_VIRT) format = both_u8 ? VX_DF_IMAGE_U8 : VX_DF_IMAGE_S16;
  if (format == VX_DF_IMAGE_U8 && !both_u8)
    return c.fail(VX_ERROR_INVALID_FORMAT, "a U8 output needs two U8 inputs");
  if (format != VX_DF_IMAGE_U8 && format != VX_DF_IMAGE_S16)
    return c.fail(VX_ERROR_INVALID_FORMAT, "the output must be U8 or S16");
  return c.settle_like(output, 0, format);
}

// Writes `value` (an int expression) to `output` under the overflow policy
// held in the int argument `policy`.
void write_with_policy(pixel_emitter& e, vx_uint32 output, const std::string& value, const std::string& policy) {
  std::string v = e.temp();
  e.line("int " + v + " = " + value + ";");
  e.write(output, "(" + policy + " == " + number(VX_CONVERT_POLICY_SATURATE) + ") ? " + saturate_to(e, output, v) +
                      " : " + v);
}

// --- AbsDiff, Add, Subtract, Multiply -------------------------------------

vx_status validate_absdiff(node_check& c) { return check_two_inputs(c, 2); }
void emit_absdiff(pixel_emitter& e) {
  std::string a = e.temp(), b = e.temp();
  e.line("int " + a + " = " + e.read(0, 0, 0) + ", " + b + " = " + e.read(1, 0, 0) + ";");
  e.write(2, saturate_to(e, 2, "abs_diff(" + a + ", " + b + ")"));
}

vx_status validate_add_subtract(node_check& c) {
  vx_status status = check_policy(c, 2);
  return status == VX_SUCCESS ? check_two_inputs(c, 3) : status;
}
void emit_add(pixel_emitter& e) {
  std::string policy = scalar_int_argument(e, 2);
  write_with_policy(e, 3, e.read(0, 0, 0) + " + " + e.read(1, 0, 0), policy);
}
void emit_subtract(pixel_emitter& e) {
  std::string policy = scalar_int_argument(e, 2);
  write_with_policy(e, 3, e.read(0, 0, 0) + " - " + e.read(1, 0, 0), policy);
}

vx_status validate_multiply(node_check& c) {
  vx_status status = c.require_scalar(2, VX_TYPE_FLOAT32);
  if (status == VX_SUCCESS) {
    float scale = c.scalar_float(2);
    if (!std::isfinite(scale) || scale < 0)
      return c.fail(VX_ERROR_INVALID_VALUE, "the scale must be finite and not negative");
  }
  if (status == VX_SUCCESS) status = check_policy(c, 3);
  if (status == VX_SUCCESS) status = c.require_scalar(4, VX_TYPE_ENUM);
  if (status == VX_SUCCESS) {
    vx_enum rounding = c.scalar_enum(4);
    if (rounding != VX_ROUND_POLICY_TO_ZERO && rounding != VX_ROUND_POLICY_TO_NEAREST_EVEN)
      return c.fail(VX_ERROR_INVALID_VALUE, "0x%x is no rounding policy", rounding);
  }
  return status == VX_SUCCESS ? check_two_inputs(c, 5) : status;
}
void emit_multiply(pixel_emitter& e) {
  // The product of two S16 pixels needs 31 bits and the scaled result is
  // rounded once, in double precision, as the spec's real-valued formula is.
  e.helper("fp64", "#pragma OPENCL EXTENSION cl_khr_fp64 : enable");
  std::string scale = scalar_float_argument(e, 2);
  std::string overflow = scalar_int_argument(e, 3);
  std::string rounding = scalar_int_argument(e, 4);
  std::string exact = e.temp(), rounded = e.temp();
  e.line("double " + exact + " = (double)(" + e.read(0, 0, 0) + " * " + e.read(1, 0, 0) + ") * (double)" + scale + ";");
  e.line("double " + rounded + " = " + rounding + " == " + number(VX_ROUND_POLICY_TO_ZERO) + " ? trunc(" + exact +
         ") : rint(" + exact + ");");
  // Saturating first in double keeps the conversion to int defined.
  e.line(rounded + " = clamp(" + rounded + ", -2147483648.0, 2147483647.0);");
  write_with_policy(e, 5, "(int)" + rounded, overflow);
}

// --- Bitwise ----------------------------------------------------------------

vx_status validate_bitwise_two(node_check& c) {
  vx_status status = c.require_format(0, u8_only);
  if (status == VX_SUCCESS) status = c.require_format(1, u8_only);
  if (status == VX_SUCCESS) status = c.require_same_size(0, 1);
  return status == VX_SUCCESS ? c.settle_like(2, 0, VX_DF_IMAGE_U8) : status;
}
void emit_and(pixel_emitter& e) { e.write(2, e.read(0, 0, 0) + " & " + e.read(1, 0, 0)); }
void emit_or(pixel_emitter& e) { e.write(2, e.read(0, 0, 0) + " | " + e.read(1, 0, 0)); }
void emit_xor(pixel_emitter& e) { e.write(2, e.read(0, 0, 0) + " ^ " + e.read(1, 0, 0)); }

vx_status validate_not(node_check& c) {
  vx_status status = c.require_format(0, u8_only);
  return status == VX_SUCCESS ? c.settle_like(1, 0, VX_DF_IMAGE_U8) : status;
}
void emit_not(pixel_emitter& e) { e.write(1, "~" + e.read(0, 0, 0)); }

// --- ConvertDepth -------------------------------------------------------------

vx_status validate_convert_depth(node_check& c) {
  vx_status status = c.require_format(0, u8_or_s16);
  if (status == VX_SUCCESS) status = check_policy(c, 2);
  if (status == VX_SUCCESS) status = c.require_scalar(3, VX_TYPE_INT32);
  if (status != VX_SUCCESS) return status;
  vx_int64 shift = c.scalar_int(3);
  if (shift < 0 || shift >= 8)
    return c.fail(VX_ERROR_INVALID_VALUE, "the shift is %lld; it must be 0 to 7", static_cast<long long>(shift));
  vx_df_image in = c.image(0)->format;
  vx_df_image wanted = in == VX_DF_IMAGE_U8 ? VX_DF_IMAGE_S16 : VX_DF_IMAGE_U8;
  vx_df_image out = c.output_format(1);
  if (out != VX_DF_IMAGE_VIRT && out != wanted)
    return c.fail(VX_ERROR_INVALID_FORMAT, "converts U8 to S16 and S16 to U8 only");
  return c.settle_like(1, 0, wanted);
}
void emit_convert_depth(pixel_emitter& e) {
  std::string policy = scalar_int_argument(e, 2);
  std::string shift = scalar_int_argument(e, 3);
  if (e.pixel_type(1) == "short") {
    e.write(1, e.read(0, 0, 0) + " << " + shift);
  } else {
    write_with_policy(e, 1, e.read(0, 0, 0) + " >> " + shift, policy);  // arithmetic shift of an int
  }
}

// --- TableLookup ----------------------------------------------------------------

vx_status validate_table_lookup(node_check& c) {
  vx_status status = c.require_format(0, u8_or_s16);
  if (status != VX_SUCCESS) return status;
  vx_lut lut = c.lut(1);
  if (lut == nullptr) return c.fail(VX_ERROR_INVALID_TYPE, "parameter 1 is not a LUT");
  vx_df_image format = c.image(0)->format;
  vx_enum wanted = format == VX_DF_IMAGE_U8 ? VX_TYPE_UINT8 : VX_TYPE_INT16;
  if (lut->data_type != wanted)
    return c.fail(VX_ERROR_INVALID_TYPE, "a %s image takes a LUT of %s", format == VX_DF_IMAGE_U8 ? "U8" : "S16",
                  format == VX_DF_IMAGE_U8 ? "VX_TYPE_UINT8" : "VX_TYPE_INT16");
  return c.settle_like(2, 0, format);
}
void emit_table_lookup(pixel_emitter& e) {
  vx_node node = e.node();
  bool u8 = e.pixel_type(0) == "uchar";
  std::string table = e.buffer(u8 ? "uchar" : "short", [node] { return reinterpret_cast<vx_lut>(node->parameters[1])->data; });
  std::string count = int_argument(e, [](vx_node n) { return static_cast<cl_int>(reinterpret_cast<vx_lut>(n->parameters[1])->count); });
  std::string offset = int_argument(e, [](vx_node n) { return static_cast<cl_int>(reinterpret_cast<vx_lut>(n->parameters[1])->offset); });
  // A value the table does not cover reads its nearest entry (never outside it).
  e.write(2, table + "[clamp(" + offset + " + " + e.read(0, 0, 0) + ", 0, " + count + " - 1)]");
}

// --- WeightedAverage ----------------------------------------------------------------

vx_status validate_weighted_average(node_check& c) {
  vx_status status = c.require_format(0, u8_only);
  if (status == VX_SUCCESS) status = c.require_scalar(1, VX_TYPE_FLOAT32);
  if (status == VX_SUCCESS) status = c.require_format(2, u8_only);
  if (status == VX_SUCCESS) status = c.require_same_size(0, 2);
  if (status != VX_SUCCESS) return status;
  float alpha = c.scalar_float(1);
  if (!(alpha >= 0.0f && alpha <= 1.0f)) return c.fail(VX_ERROR_INVALID_VALUE, "alpha is %g; it must be in [0, 1]", alpha);
  return c.settle_like(3, 0, VX_DF_IMAGE_U8);
}
void emit_weighted_average(pixel_emitter& e) {
  // Each operation rounded to float as written: no fused multiply-add.
  e.helper("contract", "#pragma OPENCL FP_CONTRACT OFF");
  std::string alpha = scalar_float_argument(e, 1);
  std::string v = e.temp();
  e.line("float " + v + " = (1.0f - " + alpha + ") * (float)" + e.read(2, 0, 0) + " + " + alpha + " * (float)" +
         e.read(0, 0, 0) + ";");
  e.write(3, "clamp((int)" + v + ", 0, 255)");
}

// --- Threshold ----------------------------------------------------------------------

vx_status validate_threshold(node_check& c) {
  vx_status status = c.require_format(0, u8_or_s16);
  if (status != VX_SUCCESS) return status;
  vx_threshold t = c.threshold(1);
  if (t == nullptr) return c.fail(VX_ERROR_INVALID_TYPE, "parameter 1 is not a threshold");
  if (t->input_format != c.image(0)->format)
    return c.fail(VX_ERROR_INVALID_FORMAT, "the threshold was made for %s input, the image is %s",
                  format_name(t->input_format).text, format_name(c.image(0)->format).text);
  if (t->output_format != VX_DF_IMAGE_U8)
    return c.fail(VX_ERROR_INVALID_FORMAT, "the threshold's output format must be U8");
  return c.settle_like(2, 0, VX_DF_IMAGE_U8);
}
cl_int pixel_int(const vx_pixel_value_t& value, vx_df_image format) {
  return format == VX_DF_IMAGE_S16 ? value.S16 : value.U8;
}
void emit_threshold(pixel_emitter& e) {
  auto t = [](vx_node n) { return reinterpret_cast<vx_threshold>(n->parameters[1]); };
  std::string range = int_argument(e, [t](vx_node n) { return t(n)->threshold_type == VX_THRESHOLD_TYPE_RANGE ? 1 : 0; });
  std::string value = int_argument(e, [t](vx_node n) { return pixel_int(t(n)->value, t(n)->input_format); });
  std::string lower = int_argument(e, [t](vx_node n) { return pixel_int(t(n)->lower, t(n)->input_format); });
  std::string upper = int_argument(e, [t](vx_node n) { return pixel_int(t(n)->upper, t(n)->input_format); });
  std::string yes = int_argument(e, [t](vx_node n) { return static_cast<cl_int>(t(n)->true_value.U8); });
  std::string no = int_argument(e, [t](vx_node n) { return static_cast<cl_int>(t(n)->false_value.U8); });
  std::string v = e.temp(), pass = e.temp();
  e.line("int " + v + " = " + e.read(0, 0, 0) + ";");
  e.line("bool " + pass + " = " + range + " ? (" + v + " <= " + upper + " && " + v + " >= " + lower + ") : (" + v +
         " > " + value + ");");
  e.write(2, pass + " ? " + yes + " : " + no);
}

}  // namespace

void add_arithmetic_kernels(std::vector<kernel_definition>& t) {
  const auto image = VX_TYPE_IMAGE, scalar = VX_TYPE_SCALAR;
  auto point = [&](vx_enum e, const char* name, std::vector<_vx_kernel::parameter_info> p, vx_status (*v)(node_check&),
                   void (*emit)(pixel_emitter&)) {
    t.push_back({e, name, std::move(p), kernel_shape::point, 0, v, emit, nullptr});
  };
  point(VX_KERNEL_ABSDIFF, "org.khronos.openvx.absdiff", {input(image), input(image), output(image)}, validate_absdiff,
        emit_absdiff);
  point(VX_KERNEL_ADD, "org.khronos.openvx.add", {input(image), input(image), input(scalar), output(image)},
        validate_add_subtract, emit_add);
  point(VX_KERNEL_SUBTRACT, "org.khronos.openvx.subtract", {input(image), input(image), input(scalar), output(image)},
        validate_add_subtract, emit_subtract);
  point(VX_KERNEL_MULTIPLY, "org.khronos.openvx.multiply",
        {input(image), input(image), input(scalar), input(scalar), input(scalar), output(image)}, validate_multiply,
        emit_multiply);
  point(VX_KERNEL_AND, "org.khronos.openvx.and", {input(image), input(image), output(image)}, validate_bitwise_two,
        emit_and);
  point(VX_KERNEL_OR, "org.khronos.openvx.or", {input(image), input(image), output(image)}, validate_bitwise_two,
        emit_or);
  point(VX_KERNEL_XOR, "org.khronos.openvx.xor", {input(image), input(image), output(image)}, validate_bitwise_two,
        emit_xor);
  point(VX_KERNEL_NOT, "org.khronos.openvx.not", {input(image), output(image)}, validate_not, emit_not);
  point(VX_KERNEL_CONVERTDEPTH, "org.khronos.openvx.convertdepth",
        {input(image), output(image), input(scalar), input(scalar)}, validate_convert_depth, emit_convert_depth);
  point(VX_KERNEL_TABLE_LOOKUP, "org.khronos.openvx.table_lookup", {input(image), input(VX_TYPE_LUT), output(image)},
        validate_table_lookup, emit_table_lookup);
  point(VX_KERNEL_WEIGHTED_AVERAGE, "org.khronos.openvx.weighted_average",
        {input(image), input(scalar), input(image), output(image)}, validate_weighted_average, emit_weighted_average);
  point(VX_KERNEL_THRESHOLD, "org.khronos.openvx.threshold", {input(image), input(VX_TYPE_THRESHOLD), output(image)},
        validate_threshold, emit_threshold);
}

}  // namespace ferry::graph
