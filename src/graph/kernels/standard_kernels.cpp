#include "graph/core/convolution.hpp"
#include "graph/core/matrix.hpp"
#include "graph/core/node.hpp"
#include "graph/core/scalar.hpp"
#include "graph/kernels/kernel_families.hpp"

#include <cstring>

namespace ferry::graph {

const vx_df_image u8_only[] = {VX_DF_IMAGE_U8, 0};
const vx_df_image s16_only[] = {VX_DF_IMAGE_S16, 0};
const vx_df_image u8_or_s16[] = {VX_DF_IMAGE_U8, VX_DF_IMAGE_S16, 0};

const std::vector<kernel_definition>& standard_kernels() {
  static const std::vector<kernel_definition> table = [] {
    std::vector<kernel_definition> t;
    add_arithmetic_kernels(t);
    add_filter_kernels(t);
    add_gradient_kernels(t);
    add_color_kernels(t);
    add_geometry_kernels(t);
    add_statistics_kernels(t);
    return t;
  }();
  return table;
}

const kernel_definition* find_standard_kernel(vx_enum enumeration) {
  for (const kernel_definition& definition : standard_kernels())
    if (definition.enumeration == enumeration) return &definition;
  return nullptr;
}

int node_radius(vx_node node) {
  const kernel_definition* definition = node->kernel->definition;
  if (definition == nullptr) return 0;
  return definition->node_radius != nullptr ? definition->node_radius(node) : definition->radius;
}

std::string scalar_int_argument(pixel_emitter& e, vx_uint32 index) {
  vx_node node = e.node();
  return e.argument("int", [node, index] {
    return value_bytes(static_cast<cl_int>(scalar_integer(reinterpret_cast<vx_scalar>(node->parameters[index]))));
  });
}

std::string scalar_float_argument(pixel_emitter& e, vx_uint32 index) {
  vx_node node = e.node();
  return e.argument("float", [node, index] {
    return value_bytes(static_cast<cl_float>(scalar_number(reinterpret_cast<vx_scalar>(node->parameters[index]))));
  });
}

std::string saturate_to(pixel_emitter& e, vx_uint32 index, const std::string& value) {
  std::string type = e.pixel_type(index);
  if (type == "uchar") return "clamp((int)(" + value + "), 0, 255)";
  if (type == "short") return "clamp((int)(" + value + "), -32768, 32767)";
  if (type == "ushort") return "clamp((int)(" + value + "), 0, 65535)";
  return "(" + value + ")";
}

}  // namespace ferry::graph
