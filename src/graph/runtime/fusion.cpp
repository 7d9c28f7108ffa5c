#include "graph/runtime/fusion.hpp"

#include "graph/core/image.hpp"
#include "graph/core/kernel.hpp"
#include "graph/core/node.hpp"
#include "graph/kernels/kernel_definition.hpp"

#include <algorithm>
#include <map>
#include <sstream>

namespace ferry::graph {
namespace {

bool is_pixel_node(vx_node node) {
  const kernel_definition* definition = node->kernel->definition;
  return definition != nullptr && definition->shape != kernel_shape::whole;
}

vx_image first_output(vx_node node) {
  for (vx_uint32 i = 0; i < node->parameters.size(); ++i)
    if (is_output(node, i) && node->parameters[i] != nullptr && node->parameters[i]->type == VX_TYPE_IMAGE)
      return reinterpret_cast<vx_image>(node->parameters[i]);
  return nullptr;
}

size_t element_bytes(const std::string& type) {
  if (type == "uchar") return 1;
  if (type == "short" || type == "ushort") return 2;
  return 4;
}

// The local-memory layout of a group: each node's halo, and the images that
// nodes of the group read from nodes before them.
struct group_layout {
  std::vector<int> halo;  // per node
  struct local_output {
    size_t producer;  // node position in the group
    vx_uint32 index;  // its output parameter
    vx_image image;
    bool external = false;  // read outside the group or not virtual: written to global memory too
  };
  std::vector<local_output> locals;
  size_t bytes = 0;
  int max_halo = 0;
  int tile_width() const { return fused_group_width - 2 * max_halo; }
};

// Which node of `group` writes `image` (its position), or -1.
int producer_of(const std::vector<vx_node>& group, vx_reference image) {
  for (size_t k = 0; k < group.size(); ++k)
    for (vx_uint32 i = 0; i < group[k]->parameters.size(); ++i)
      if (is_output(group[k], i) && data_object(group[k]->parameters[i]) == data_object(image))
        return static_cast<int>(k);
  return -1;
}

group_layout lay_out(const std::vector<vx_node>& group, const std::vector<vx_node>& all_nodes) {
  group_layout layout;
  layout.halo.assign(group.size(), 0);
  // Halos from the last node back: a producer needs what its readers in the
  // group need plus their radius.
  for (size_t j = group.size(); j-- > 0;) {
    vx_node reader = group[j];
    for (vx_uint32 i = 0; i < reader->parameters.size(); ++i) {
      vx_reference ref = reader->parameters[i];
      if (ref == nullptr || is_output(reader, i) || ref->type != VX_TYPE_IMAGE) continue;
      int k = producer_of(group, ref);
      if (k < 0 || static_cast<size_t>(k) >= j) continue;
      layout.halo[k] = std::max(layout.halo[k], layout.halo[j] + node_radius(reader));
      bool known = std::any_of(layout.locals.begin(), layout.locals.end(),
                               [&](const group_layout::local_output& l) { return data_object(l.image) == data_object(ref); });
      if (!known) {
        for (vx_uint32 o = 0; o < group[k]->parameters.size(); ++o)
          if (is_output(group[k], o) && group[k]->parameters[o] == ref)
            layout.locals.push_back({static_cast<size_t>(k), o, reinterpret_cast<vx_image>(ref)});
      }
    }
  }
  layout.max_halo = *std::max_element(layout.halo.begin(), layout.halo.end());
  for (group_layout::local_output& l : layout.locals) {
    l.external = !l.image->is_virtual;
    for (vx_node node : all_nodes) {
      if (std::find(group.begin(), group.end(), node) != group.end()) continue;
      for (vx_uint32 i = 0; i < node->parameters.size(); ++i)
        if (!is_output(node, i) && node->parameters[i] != nullptr && data_object(node->parameters[i]) == data_object(l.image))
          l.external = true;
    }
    pixel_emitter probe(group[l.producer]);
    auto h = static_cast<size_t>(layout.halo[l.producer]);
    layout.bytes += (static_cast<size_t>(layout.tile_width()) + 2 * h) * (fused_tile_height + 2 * h) *
                    element_bytes(probe.pixel_type(l.index));
  }
  return layout;
}

bool can_join(const std::vector<vx_node>& group, vx_node node, const std::vector<vx_node>& all_nodes,
              const fusion_limits& limits) {
  if (!limits.enabled || limits.work_group_size < size_t{fused_group_width} * fused_group_height) return false;
  vx_image out = first_output(node), group_out = first_output(group.front());
  if (out == nullptr || group_out == nullptr || out->width != group_out->width || out->height != group_out->height)
    return false;
  bool reads_group = false;
  for (vx_uint32 i = 0; i < node->parameters.size(); ++i) {
    vx_reference ref = node->parameters[i];
    if (ref == nullptr || is_output(node, i) || ref->type != VX_TYPE_IMAGE) continue;
    if (producer_of(group, ref) < 0) continue;
    auto* image = reinterpret_cast<vx_image>(ref);
    // Only a virtual image may live in local memory alone; one the
    // application can see must be complete in global memory before a reader
    // of its halo runs.
    if (!image->is_virtual || image->width != group_out->width || image->height != group_out->height) return false;
    reads_group = true;
  }
  if (!reads_group) return false;
  std::vector<vx_node> joined = group;
  joined.push_back(node);
  group_layout layout = lay_out(joined, all_nodes);
  return layout.max_halo <= fused_max_halo && layout.bytes <= limits.local_bytes;
}

pixel_group build_single(vx_node node) {
  pixel_group group;
  group.nodes = {node};
  pixel_emitter emitter(node);
  node->kernel->definition->emit(emitter);
  group.source = emitter.source("vx_node");
  for (vx_uint32 index : emitter.inputs()) group.inputs.push_back({node, index});
  for (vx_uint32 index : emitter.outputs()) group.outputs.push_back({node, index});
  group.arguments = emitter.arguments();
  return group;
}

// Which segment each node of a group runs in. A segment is a run of nodes
// with one halo that one pass over the region computes together: a node
// joins the segment before it unless its halo differs or it reads a node of
// that segment around its pixel (a stencil needs its neighbours finished,
// which takes a barrier). Within a segment a value goes from node to node
// in a private variable, never through local memory.
std::vector<size_t> segments_of(const std::vector<vx_node>& nodes, const group_layout& layout) {
  std::vector<size_t> segment(nodes.size(), 0);
  for (size_t j = 1; j < nodes.size(); ++j) {
    bool split = layout.halo[j] != layout.halo[j - 1];
    for (vx_uint32 i = 0; !split && i < nodes[j]->parameters.size(); ++i) {
      vx_reference ref = nodes[j]->parameters[i];
      if (ref == nullptr || is_output(nodes[j], i) || ref->type != VX_TYPE_IMAGE) continue;
      int k = producer_of(nodes, ref);
      if (k >= 0 && segment[k] == segment[j - 1] && node_radius(nodes[j]) > 0) split = true;
    }
    segment[j] = segment[j - 1] + (split ? 1 : 0);
  }
  return segment;
}

pixel_group build_fused(const std::vector<vx_node>& nodes, const std::vector<vx_node>& all_nodes) {
  pixel_group group;
  group.nodes = nodes;
  group.fused = true;
  group_layout layout = lay_out(nodes, all_nodes);
  group.tile_width = layout.tile_width();
  group.tile_height = fused_tile_height;
  std::vector<size_t> segment = segments_of(nodes, layout);
  std::vector<pixel_emitter> emitters;
  for (size_t k = 0; k < nodes.size(); ++k) {
    emitters.emplace_back(nodes[k], "n" + std::to_string(k) + "_");
    emitters.back().set_fused();
  }
  std::ostringstream locals;
  std::vector<std::string> privates(segment.back() + 1);  // declarations per segment
  std::vector<bool> segment_writes_local(segment.back() + 1, false);
  for (size_t l = 0; l < layout.locals.size(); ++l) {
    const group_layout::local_output& out = layout.locals[l];
    std::string type = emitters[out.producer].pixel_type(out.index);
    bool same_segment_reader = false, later_segment_reader = false;
    for (size_t j = out.producer + 1; j < nodes.size(); ++j)
      for (vx_uint32 i = 0; i < nodes[j]->parameters.size(); ++i)
        if (!is_output(nodes[j], i) && nodes[j]->parameters[i] == out.image)
          (segment[j] == segment[out.producer] ? same_segment_reader : later_segment_reader) = true;
    std::string name_private = "vx_private" + std::to_string(l);
    local_image image{"vx_local" + std::to_string(l), type, layout.halo[out.producer]};
    if (same_segment_reader) privates[segment[out.producer]] += "      " + type + " " + name_private + ";\n";
    if (later_segment_reader) {
      locals << "  __local " << type << " " << image.name << "[(VX_TW + " << 2 * image.halo << ") * (VX_TH + "
             << 2 * image.halo << ")];\n";
      group.local_bytes += (static_cast<size_t>(group.tile_width) + 2 * image.halo) *
                           (fused_tile_height + 2 * image.halo) * element_bytes(type);
      segment_writes_local[segment[out.producer]] = true;
    }
    emitters[out.producer].bind_output(out.index, same_segment_reader ? name_private : "",
                                       later_segment_reader ? &image : nullptr, out.external);
    for (size_t j = out.producer + 1; j < nodes.size(); ++j)
      for (vx_uint32 i = 0; i < nodes[j]->parameters.size(); ++i) {
        if (is_output(nodes[j], i) || nodes[j]->parameters[i] != out.image) continue;
        if (segment[j] == segment[out.producer]) emitters[j].bind_private_input(i, name_private);
        else emitters[j].bind_local(i, image);
      }
    if (!out.external) group.internal.push_back(out.image);
  }
  for (size_t k = 0; k < nodes.size(); ++k) nodes[k]->kernel->definition->emit(emitters[k]);

  std::ostringstream source;
  std::vector<std::string> helper_keys;
  for (const pixel_emitter& e : emitters)
    for (const auto& [key, helper] : e.helpers())
      if (std::find(helper_keys.begin(), helper_keys.end(), key) == helper_keys.end()) {
        helper_keys.push_back(key);
        source << helper << "\n";
      }
  source << "#define VX_TW " << group.tile_width << "\n#define VX_TH " << group.tile_height << "\n#define VX_WX "
         << fused_group_width << "\n#define VX_WY " << fused_group_height << "\n"
         << pixel_emitter::border_macros();
  for (const pixel_emitter& e : emitters) source << e.read_helpers();
  std::string parameters;
  for (const pixel_emitter& e : emitters) parameters += e.input_parameters();
  for (const pixel_emitter& e : emitters) parameters += e.output_parameters();
  parameters += ", int width, int height, int y0, int y1";
  for (const pixel_emitter& e : emitters) parameters += e.value_parameters();
  source << "__kernel __attribute__((reqd_work_group_size(VX_WX, VX_WY, 1))) void vx_group("
         << parameters.substr(2) << ") {\n"
         << locals.str()
         << "  const int gx0 = (int)get_group_id(0) * VX_TW, gy0 = y0 + (int)get_group_id(1) * VX_TH;\n"
         << "  const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);\n";
  // A work-group whose every read, of every node, falls inside the images (most
  // of them) runs a copy of the bodies without the border arithmetic, as an
  // unfused kernel's interior pixels do. A node reads at most its radius
  // around its region, which its halo sets.
  int reach = 0;
  for (size_t k = 0; k < nodes.size(); ++k) reach = std::max(reach, layout.halo[k] + node_radius(nodes[k]));
  const std::string r = std::to_string(reach);
  source << "  const bool vx_inside = gx0 >= " << r << " && gy0 >= " << r << " && gx0 + VX_TW + " << r
         << " <= width && gy0 + VX_TH + " << r << " <= height";
  for (size_t k = 0; k < nodes.size(); ++k)
    for (size_t slot = 0; slot < emitters[k].inputs().size(); ++slot) {
      std::string i = "n" + std::to_string(k) + "_i" + std::to_string(slot);
      source << " && gx0 + VX_TW + " << r << " <= " << i << "_w && gy0 + VX_TH + " << r << " <= " << i << "_h";
    }
  source << ";\n";
  for (size_t first = 0; first < nodes.size();) {
    size_t last = first;
    while (last + 1 < nodes.size() && segment[last + 1] == segment[first]) ++last;
    // A row of work-items covers a row of the segment's region (the tile and
    // its halo: at most the group's width), so x is a work-item's own x plus
    // a constant and the compiler vectorizes across work-items; rows go in a
    // constant number of passes it can unroll.
    int h = layout.halo[first];
    int rw = group.tile_width + 2 * h, rh = fused_tile_height + 2 * h;
    int passes = (rh + fused_group_height - 1) / fused_group_height;
    source << "  for (int pass = 0; pass < " << passes << "; ++pass) {\n"
           << "    const int rx = lx, ry = ly + pass * VX_WY;\n"
           << "    if (rx < " << rw << " && ry < " << rh << ") {\n"
           << "      const int li = ry * " << rw << " + rx;\n"
           << "      const int x = gx0 - " << h << " + rx, y = gy0 - " << h << " + ry;\n"
           << "      const bool central = x >= gx0 && x < gx0 + VX_TW && y >= gy0 && y < gy0 + VX_TH && x < width && "
              "y < y1;\n      (void)central;\n"
           << privates[segment[first]];
    source << "      if (vx_inside) {\n";
    for (size_t k = first; k <= last; ++k) source << "      " << emitters[k].interior_body();
    source << "      } else {\n";
    for (size_t k = first; k <= last; ++k) source << "      " << emitters[k].body();
    source << "      }\n    }\n  }\n";
    if (segment_writes_local[segment[first]]) source << "  barrier(CLK_LOCAL_MEM_FENCE);\n";
    first = last + 1;
  }
  source << "}\n";
  group.source = source.str();
  for (size_t k = 0; k < nodes.size(); ++k)
    for (vx_uint32 index : emitters[k].inputs()) group.inputs.push_back({nodes[k], index});
  for (size_t k = 0; k < nodes.size(); ++k)
    for (vx_uint32 index : emitters[k].outputs()) group.outputs.push_back({nodes[k], index});
  for (const pixel_emitter& e : emitters) group.arguments.insert(group.arguments.end(), e.arguments().begin(), e.arguments().end());
  return group;
}

}  // namespace

std::vector<pixel_group> plan_pixel_groups(const std::vector<vx_node>& nodes, const fusion_limits& limits) {
  std::vector<pixel_group> groups;
  std::vector<vx_node> current;
  auto close = [&] {
    if (current.size() == 1) groups.push_back(build_single(current.front()));
    if (current.size() > 1) groups.push_back(build_fused(current, nodes));
    current.clear();
  };
  for (vx_node node : nodes) {
    if (!is_pixel_node(node)) {
      close();
      continue;
    }
    if (!current.empty() && !can_join(current, node, nodes, limits)) close();
    current.push_back(node);
  }
  close();
  return groups;
}

}  // namespace ferry::graph
