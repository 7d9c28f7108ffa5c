#include "graph/runtime/plan.hpp"

#include "common/log.hpp"

#include "graph/core/context.hpp"
#include "graph/core/graph.hpp"
#include "graph/core/image.hpp"
#include "graph/core/kernel.hpp"
#include "graph/core/meta_format.hpp"
#include "graph/core/node.hpp"
#include "graph/core/scalar.hpp"
#include "graph/kernels/kernel_definition.hpp"
#include "graph/kernels/node_check.hpp"
#include "graph/runtime/device_set.hpp"
#include "graph/runtime/memory_plan.hpp"
#include "graph/runtime/user_kernel_run.hpp"
#include "graph/runtime/whole_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>

namespace ferry::graph {
namespace {

const char* node_label(vx_node node) {
  return node->name.empty() ? node->kernel->name.c_str() : node->name.c_str();
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void account(vx_perf_t& perf, int64_t begin, int64_t end) {
  perf.beg = static_cast<vx_uint64>(begin);
  perf.end = static_cast<vx_uint64>(end);
  perf.tmp = static_cast<vx_uint64>(end - begin);
  perf.sum += perf.tmp;
  perf.num += 1;
  perf.avg = perf.sum / perf.num;
  perf.min = perf.num == 1 ? perf.tmp : std::min(perf.min, perf.tmp);
  perf.max = std::max(perf.max, perf.tmp);
}

// Checks every node's parameters against its kernel's signature: present when
// required, of the signature's type, and, if virtual, of this graph.
vx_status check_signatures(vx_graph graph) {
  for (vx_node node : graph->nodes) {
    vx_kernel kernel = node->kernel;
    for (vx_uint32 i = 0; i < kernel->parameters.size(); ++i) {
      const _vx_kernel::parameter_info& info = kernel->parameters[i];
      vx_reference ref = node->parameters[i];
      if (ref == nullptr) {
        if (info.state == VX_PARAMETER_STATE_OPTIONAL) continue;
        add_log(node, VX_ERROR_NOT_SUFFICIENT, "node %s (%s): required parameter %u is not set", node_label(node),
                kernel->name.c_str(), i);
        return VX_ERROR_NOT_SUFFICIENT;
      }
      if (!is_live(ref)) {
        add_log(node, VX_ERROR_INVALID_REFERENCE, "node %s (%s): parameter %u was released", node_label(node),
                kernel->name.c_str(), i);
        return VX_ERROR_INVALID_REFERENCE;
      }
      if (info.type != VX_TYPE_REFERENCE && ref->type != info.type) {
        add_log(node, VX_ERROR_INVALID_TYPE, "node %s (%s): parameter %u is a %s, the kernel takes a %s",
                node_label(node), kernel->name.c_str(), i, type_name(ref->type), type_name(info.type));
        return VX_ERROR_INVALID_TYPE;
      }
      if (ref->is_virtual && ref->scope != graph) {
        add_log(node, VX_ERROR_INVALID_SCOPE, "node %s (%s): parameter %u is a virtual %s of another graph",
                node_label(node), kernel->name.c_str(), i, type_name(ref->type));
        return VX_ERROR_INVALID_SCOPE;
      }
      if (ref->type == VX_TYPE_IMAGE && is_output(node, i) && reinterpret_cast<vx_image>(ref)->uniform) {
        add_log(node, VX_ERROR_INVALID_PARAMETERS, "node %s (%s): output %u is a uniform image (read-only)",
                node_label(node), kernel->name.c_str(), i);
        return VX_ERROR_INVALID_PARAMETERS;
      }
    }
  }
  return VX_SUCCESS;
}

// One writer per object; a virtual object must be written by some node.
vx_status check_writers(vx_graph graph) {
  std::map<vx_reference, vx_node> writer;
  for (vx_node node : graph->nodes)
    for (vx_uint32 i = 0; i < node->parameters.size(); ++i) {
      vx_reference ref = node->parameters[i];
      if (ref == nullptr || !is_output(node, i)) continue;
      vx_reference data = data_object(ref);
      auto [found, inserted] = writer.emplace(data, node);
      if (!inserted && found->second != node) {
        add_log(graph, VX_ERROR_MULTIPLE_WRITERS, "graph: nodes %s and %s both write the same %s",
                node_label(found->second), node_label(node), type_name(data->type));
        return VX_ERROR_MULTIPLE_WRITERS;
      }
    }
  for (vx_node node : graph->nodes)
    for (vx_uint32 i = 0; i < node->parameters.size(); ++i) {
      vx_reference ref = node->parameters[i];
      if (ref == nullptr || is_output(node, i) || !ref->is_virtual) continue;
      if (writer.count(data_object(ref)) == 0) {
        add_log(node, VX_ERROR_INVALID_GRAPH, "node %s (%s): input %u is a virtual %s no node writes",
                node_label(node), node->kernel->name.c_str(), i, type_name(ref->type));
        return VX_ERROR_INVALID_GRAPH;
      }
    }
  return VX_SUCCESS;
}

// A user kernel's validator fills meta formats; they settle its outputs.
vx_status validate_user_node(vx_node node) {
  vx_kernel kernel = node->kernel;
  if (kernel->validate == nullptr) return VX_SUCCESS;
  std::vector<vx_meta_format> metas(node->parameters.size(), nullptr);
  for (vx_uint32 i = 0; i < metas.size(); ++i)
    if (is_output(node, i) && node->parameters[i] != nullptr) {
      metas[i] = new _vx_meta_format(node->context);
      metas[i]->object_type = node->parameters[i]->type;
      register_reference(metas[i]);
    }
  vx_status status = kernel->validate(node, node->parameters.data(), static_cast<vx_uint32>(node->parameters.size()),
                                      metas.data());
  node_check check(node);
  for (vx_uint32 i = 0; status == VX_SUCCESS && i < metas.size(); ++i) {
    if (metas[i] == nullptr) continue;
    vx_reference out = node->parameters[i];
    if (out->type == VX_TYPE_IMAGE) {
      vx_meta_format meta = metas[i];
      if (meta->like != nullptr && meta->like->type == VX_TYPE_IMAGE) {
        auto* like = reinterpret_cast<vx_image>(meta->like);
        status = check.settle_image(i, like->format, like->width, like->height);
      } else if (meta->format != VX_DF_IMAGE_VIRT || meta->width != 0) {
        status = check.settle_image(i, meta->format, meta->width, meta->height);
      }
    } else if (out->type == VX_TYPE_SCALAR && metas[i]->scalar_type != VX_TYPE_INVALID) {
      auto* scalar = reinterpret_cast<vx_scalar>(out);
      if (scalar->data_type == VX_TYPE_INVALID) {
        scalar->data_type = metas[i]->scalar_type;
        scalar->value.assign(scalar_size(scalar->data_type), 0);
      } else if (scalar->data_type != metas[i]->scalar_type) {
        status = check.fail(VX_ERROR_INVALID_TYPE, "output %u is a scalar of another type than the kernel makes", i);
      }
    }
  }
  for (vx_meta_format meta : metas)
    if (meta != nullptr) release_external(meta);
  if (status != VX_SUCCESS)
    add_log(node, status, "node %s (%s): the user kernel's validator refused it (%d)", node_label(node),
            kernel->name.c_str(), status);
  return status;
}

// A node's outputs are valid where all its image inputs are, less what an
// undefined border leaves unspecified around a stencil.
void propagate_valid_region(vx_node node) {
  vx_rectangle_t valid{0, 0, UINT32_MAX, UINT32_MAX};
  vx_image first_out = nullptr;
  for (vx_uint32 i = 0; i < node->parameters.size(); ++i) {
    vx_reference ref = node->parameters[i];
    if (ref == nullptr || ref->type != VX_TYPE_IMAGE) continue;
    auto* image = reinterpret_cast<vx_image>(ref);
    if (is_output(node, i)) {
      if (first_out == nullptr) first_out = image;
      continue;
    }
    valid.start_x = std::max(valid.start_x, image->valid.start_x);
    valid.start_y = std::max(valid.start_y, image->valid.start_y);
    valid.end_x = std::min(valid.end_x, image->valid.end_x);
    valid.end_y = std::min(valid.end_y, image->valid.end_y);
  }
  if (first_out == nullptr) return;
  valid.end_x = std::min(valid.end_x, first_out->width);
  valid.end_y = std::min(valid.end_y, first_out->height);
  auto r = static_cast<vx_uint32>(node_radius(node));
  if (node->border.mode == VX_BORDER_UNDEFINED && r > 0) {
    valid.start_x += r, valid.start_y += r;
    valid.end_x = valid.end_x > r ? valid.end_x - r : 0;
    valid.end_y = valid.end_y > r ? valid.end_y - r : 0;
  }
  // An empty region is {0, 0, 0, 0}, whatever emptied it.
  if (valid.end_x <= valid.start_x || valid.end_y <= valid.start_y) valid = {0, 0, 0, 0};
  for (vx_uint32 i = 0; i < node->parameters.size(); ++i)
    if (node->parameters[i] != nullptr && node->parameters[i]->type == VX_TYPE_IMAGE && is_output(node, i))
      reinterpret_cast<vx_image>(node->parameters[i])->valid = valid;
}

}  // namespace

vx_status schedule_nodes(vx_graph graph, std::vector<vx_node>& order) {
  // Edges run from a node that writes an object to every node that reads it.
  std::map<vx_reference, vx_node> writer;
  for (vx_node node : graph->nodes)
    for (vx_uint32 i = 0; i < node->parameters.size(); ++i)
      if (node->parameters[i] != nullptr && is_output(node, i)) writer[data_object(node->parameters[i])] = node;
  std::map<vx_node, std::set<vx_node>> successors;
  std::map<vx_node, size_t> waiting;
  for (vx_node node : graph->nodes) waiting[node] = 0;
  for (vx_node node : graph->nodes)
    for (vx_uint32 i = 0; i < node->parameters.size(); ++i) {
      vx_reference ref = node->parameters[i];
      if (ref == nullptr || is_output(node, i)) continue;
      auto found = writer.find(data_object(ref));
      if (found == writer.end()) continue;
      if (found->second == node) {
        add_log(node, VX_ERROR_INVALID_GRAPH, "node %s (%s) reads the %s it writes", node_label(node),
                node->kernel->name.c_str(), type_name(ref->type));
        return VX_ERROR_INVALID_GRAPH;
      }
      if (successors[found->second].insert(node).second) ++waiting[node];
    }
  order.clear();
  std::vector<vx_node> ready;
  for (vx_node node : graph->nodes)
    if (waiting[node] == 0) ready.push_back(node);
  while (!ready.empty()) {
    vx_node node = ready.front();
    ready.erase(ready.begin());
    order.push_back(node);
    for (vx_node next : successors[node])
      if (--waiting[next] == 0) ready.push_back(next);
  }
  if (order.size() != graph->nodes.size()) {
    std::string cycle;
    for (vx_node node : graph->nodes)
      if (waiting[node] != 0) cycle += std::string(cycle.empty() ? "" : ", ") + node_label(node);
    add_log(graph, VX_ERROR_INVALID_GRAPH, "graph: a cycle through nodes %s", cycle.c_str());
    return VX_ERROR_INVALID_GRAPH;
  }
  return VX_SUCCESS;
}

vx_status plan::verify(vx_graph graph) {
  graph->plan.reset();
  graph->state = VX_GRAPH_STATE_UNVERIFIED;
  if (graph->nodes.empty()) {
    add_log(graph, VX_ERROR_INVALID_GRAPH, "graph: it has no nodes");
    return VX_ERROR_INVALID_GRAPH;
  }
  vx_status status = check_signatures(graph);
  if (status == VX_SUCCESS) status = check_writers(graph);
  std::unique_ptr<plan> made(new plan);
  if (status == VX_SUCCESS) status = schedule_nodes(graph, made->order_);
  // Validate in schedule order: a node's virtual inputs are settled by then.
  for (size_t n = 0; status == VX_SUCCESS && n < made->order_.size(); ++n) {
    vx_node node = made->order_[n];
    if (node->kernel->definition != nullptr) {
      node_check check(node);
      status = node->kernel->definition->validate(check);
    } else {
      status = validate_user_node(node);
    }
  }
  device_set* devices = nullptr;
  if (status == VX_SUCCESS) {
    bool needs_devices = std::any_of(made->order_.begin(), made->order_.end(),
                                     [](vx_node node) { return node->kernel->definition != nullptr; });
    if (needs_devices) {
      devices = open_devices(graph->context);
      if (devices == nullptr) status = VX_ERROR_NO_RESOURCES;
    }
  }
  if (status == VX_SUCCESS) status = made->compile(graph, devices);
  // Memory for every output image but those fusion keeps in local memory.
  if (status == VX_SUCCESS) status = place_images(made->order_, made->internal_);
  if (status != VX_SUCCESS) return status;
  graph->plan = std::move(made);
  graph->state = VX_GRAPH_STATE_VERIFIED;
  graph->needs_verify = false;
  return VX_SUCCESS;
}

plan::~plan() {
  deinitialize();  // a plan that failed to compile part-way
  for (step& s : steps_)
    if (s.kernel != nullptr) clReleaseKernel(s.kernel);
}

void plan::deinitialize() {
  for (step& s : steps_)
    if (s.what == step::kind::user && s.initialized) {
      deinitialize_user_node(s.nodes.front());
      s.initialized = false;
    }
}

size_t plan::pixel_kernels() const {
  return static_cast<size_t>(std::count_if(steps_.begin(), steps_.end(), [](const step& s) { return s.what == step::kind::pixel; }));
}

namespace {

// What fusion may use: a quarter of the smallest local memory (several
// work-groups per compute unit) and the smallest work-group limit.
// FERRY_VX_FUSION=1 fuses, =0 does not (the benchmark's unfused runs);
// unset, graphs are fused where every device is a GPU or accelerator: on
// PoCL's CPU device the fused kernels are slower than the separate ones so
// far (docs/graph.md, "Fusion").
fusion_limits limits_of(device_set* devices) {
  fusion_limits limits;
  const char* setting = std::getenv("FERRY_VX_FUSION");
  if (setting != nullptr && *setting != '\0') {
    limits.enabled = std::string(setting) != "0";
  } else {
    limits.enabled = true;
    for (const auto& d : devices->devices()) {
      cl_device_type type = 0;
      clGetDeviceInfo(d.id, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
      if ((type & CL_DEVICE_TYPE_CPU) != 0) limits.enabled = false;
    }
  }
  limits.local_bytes = SIZE_MAX;
  limits.work_group_size = SIZE_MAX;
  for (const auto& d : devices->devices()) {
    cl_ulong local = 0;
    size_t group = 0;
    clGetDeviceInfo(d.id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, nullptr);
    clGetDeviceInfo(d.id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof group, &group, nullptr);
    limits.local_bytes = std::min<size_t>(limits.local_bytes, static_cast<size_t>(local / 4));
    limits.work_group_size = std::min(limits.work_group_size, group);
  }
  return limits;
}

}  // namespace

vx_status plan::compile(vx_graph graph, device_set* devices) {
  std::vector<pixel_group> groups;
  if (devices != nullptr) groups = plan_pixel_groups(order_, limits_of(devices));
  size_t next_group = 0;
  for (vx_node node : order_) {
    const kernel_definition* definition = node->kernel->definition;
    step s;
    if (definition == nullptr) {
      s.what = step::kind::user;
      s.nodes = {node};
      vx_status status = initialize_user_node(node);
      if (status != VX_SUCCESS) return status;
      s.initialized = true;
    } else if (definition->shape == kernel_shape::whole) {
      s.what = step::kind::whole;
      s.nodes = {node};
    } else {
      // A pixel node: the first of its group makes the group's step.
      if (next_group >= groups.size() || groups[next_group].nodes.front() != node) continue;
      pixel_group& group = groups[next_group++];
      std::string log;
      cl_program program = devices->program(group.source, log);
      const char* what = group.fused ? "fused group" : "kernel";
      if (program == nullptr) {
        add_log(node, VX_ERROR_INVALID_NODE, "node %s (%s): its OpenCL %s does not build: %s", node_label(node),
                node->kernel->name.c_str(), what, log.c_str());
        return VX_ERROR_INVALID_NODE;
      }
      cl_int made = CL_SUCCESS;
      s.kernel = clCreateKernel(program, group.fused ? "vx_group" : "vx_node", &made);
      if (s.kernel == nullptr) {
        add_log(node, VX_ERROR_NO_RESOURCES, "node %s (%s): clCreateKernel failed (%d)", node_label(node),
                node->kernel->name.c_str(), made);
        return VX_ERROR_NO_RESOURCES;
      }
      s.nodes = group.nodes;
      s.fused = group.fused;
      for (vx_node n : group.nodes) s.reach += node_radius(n);
      s.tile_width = static_cast<size_t>(group.tile_width);
      s.tile_height = static_cast<size_t>(group.tile_height);
      s.inputs = std::move(group.inputs);
      s.outputs = std::move(group.outputs);
      s.arguments = std::move(group.arguments);
      internal_.insert(internal_.end(), group.internal.begin(), group.internal.end());
      if (group.fused) {
        std::string names;
        for (vx_node n : s.nodes) names += std::string(names.empty() ? "" : ", ") + node_label(n);
        FERRY_DEBUG("vx", "fused %zu nodes into one kernel (%zu bytes of local memory): %s", s.nodes.size(),
                    group.local_bytes, names.c_str());
      }
    }
    steps_.push_back(std::move(s));
  }
  (void)graph;
  return VX_SUCCESS;
}

namespace {

// A step runs in bands over several devices when every image it reads or
// writes is a whole image of one plane (an ROI's band would be its
// parent's rows, which the step does not own).
bool sliceable(const std::vector<image_use>& uses) {
  for (const image_use& use : uses) {
    auto* image = reinterpret_cast<vx_image>(use.node->parameters[use.index]);
    if (image->parent != nullptr || image->memory == nullptr || image->memory->plane_count() != 1) return false;
  }
  return true;
}

cl_int border_value_of(vx_node node, vx_image image) {
  const vx_pixel_value_t& value = node->border.constant_value;
  switch (image->format) {
    case VX_DF_IMAGE_S16: return value.S16;
    case VX_DF_IMAGE_U16: return value.U16;
    case VX_DF_IMAGE_S32: return value.S32;
    case VX_DF_IMAGE_U32: return static_cast<cl_int>(value.U32);
    default: return value.U8;
  }
}

// Enqueues a pixel step's kernel over `rows` rows of a `width`-wide image: a fused kernel
// as one work-group per output tile, an unfused one a work-item per pixel in groups the
// driver shapes. (A fixed 64x4 shape would spare PoCL compiling a kernel again for each
// image size, but its many small groups made the unfused 3840x2160 pipelines 1.2-1.3x
// slower on this CPU.)
cl_int enqueue_pixel_kernel(cl_command_queue queue, cl_kernel kernel, bool fused, size_t tile_width,
                            size_t tile_height, cl_int width, cl_int rows) {
  if (!fused) {
    size_t global[2] = {static_cast<size_t>(width), static_cast<size_t>(rows)};
    return clEnqueueNDRangeKernel(queue, kernel, 2, nullptr, global, nullptr, 0, nullptr, nullptr);
  }
  size_t local[2] = {fused_group_width, fused_group_height};
  size_t global[2] = {(static_cast<size_t>(width) + tile_width - 1) / tile_width * fused_group_width,
                      (static_cast<size_t>(rows) + tile_height - 1) / tile_height * fused_group_height};
  return clEnqueueNDRangeKernel(queue, kernel, 2, nullptr, global, local, 0, nullptr, nullptr);
}

}  // namespace

vx_status plan::run_pixel(step& s, device_set& devices) {
  vx_node node = s.nodes.front();
  const device_set::device& device = devices.devices().front();
  auto bind = [&](const image_use& use, bool input, image_binding& binding) -> cl_int {
    auto* image = reinterpret_cast<vx_image>(use.node->parameters[use.index]);
    vx_uint32 ox = 0, oy = 0;
    vx_image root = memory_root(image, ox, oy);
    image_memory& memory = *root->memory;
    cl_int status = input ? memory.to_device(devices.context(), device.queue) : CL_SUCCESS;
    if (status != CL_SUCCESS) return status;
    binding.buffer = memory.device_buffer(0, devices.context(), status);
    if (binding.buffer == nullptr) return status;
    const plane_format& plane = memory.format().plane[0];
    binding.pitch = static_cast<cl_int>(memory.device_pitch(0));
    binding.offset = static_cast<cl_int>(oy * memory.device_pitch(0) + ox * plane.bytes_per_element);
    binding.width = static_cast<cl_int>(image->width);
    binding.height = static_cast<cl_int>(image->height);
    binding.border_value = border_value_of(use.node, image);
    return CL_SUCCESS;
  };
  std::vector<image_binding> inputs(s.inputs.size()), outputs(s.outputs.size());
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    cl_int status = bind(s.inputs[i], true, inputs[i]);
    if (status != CL_SUCCESS) {
      add_log(s.inputs[i].node, VX_FAILURE, "node %s: its input %u could not reach the device (%d)",
              node_label(s.inputs[i].node), s.inputs[i].index, status);
      return VX_FAILURE;
    }
  }
  for (size_t i = 0; i < s.outputs.size(); ++i) {
    cl_int status = bind(s.outputs[i], false, outputs[i]);
    if (status != CL_SUCCESS) {
      add_log(s.outputs[i].node, VX_ERROR_NO_MEMORY, "node %s: no device memory for output %u (%d)",
              node_label(s.outputs[i].node), s.outputs[i].index, status);
      return VX_ERROR_NO_MEMORY;
    }
  }
  // Every output of a step has one size (fusion.hpp): the first names it.
  vx_image size_of = nullptr;
  for (vx_uint32 i = 0; size_of == nullptr && i < node->parameters.size(); ++i)
    if (is_output(node, i) && node->parameters[i] != nullptr) size_of = reinterpret_cast<vx_image>(node->parameters[i]);
  cl_int width = static_cast<cl_int>(size_of->width);
  cl_int height = static_cast<cl_int>(size_of->height);
  std::vector<cl_mem> temporaries;
  cl_int status = bind_pixel_kernel(s.kernel, devices.context(), inputs, outputs, width, height, 0, height,
                                    s.arguments, temporaries);
  if (status == CL_SUCCESS)
    status = enqueue_pixel_kernel(device.queue, s.kernel, s.fused, s.tile_width, s.tile_height, width, height);
  for (cl_mem mem : temporaries) clReleaseMemObject(mem);
  if (status != CL_SUCCESS) {
    add_log(node, VX_FAILURE, "node %s (%s): the kernel could not be enqueued (%d)", node_label(node),
            node->kernel->name.c_str(), status);
    return VX_FAILURE;
  }
  for (const image_use& use : s.outputs) {
    auto* image = reinterpret_cast<vx_image>(use.node->parameters[use.index]);
    vx_uint32 ox, oy;
    image_memory& memory = *memory_root(image, ox, oy)->memory;
    memory.device_written();
    memory.last_queue = device.queue;
  }
  for (vx_node n : s.nodes) propagate_valid_region(n);
  return VX_SUCCESS;
}

bool plan::can_slice(const step& s) { return sliceable(s.inputs) && sliceable(s.outputs); }

vx_status plan::run_pixel_slabs(step& s, device_set& devices) {
  vx_node node = s.nodes.front();
  std::vector<cl_command_queue> queues;
  for (const auto& d : devices.devices()) queues.push_back(d.queue);
  auto* first_out = reinterpret_cast<vx_image>(s.outputs.front().node->parameters[s.outputs.front().index]);
  const auto width = static_cast<cl_int>(first_out->width), height = static_cast<cl_int>(first_out->height);
  const size_t count = queues.size();
  for (const image_use& use : s.outputs)
    reinterpret_cast<vx_image>(use.node->parameters[use.index])->memory->begin_slabs(count);
  for (size_t d = 0; d < count; ++d) {
    // Device d makes rows [y0, y1) and reads its inputs' rows `reach` around them.
    auto y0 = static_cast<cl_int>(static_cast<int64_t>(height) * d / count);
    auto y1 = static_cast<cl_int>(static_cast<int64_t>(height) * (d + 1) / count);
    if (y0 >= y1) continue;
    auto lo = static_cast<uint32_t>(std::max(0, y0 - s.reach));
    auto hi = static_cast<uint32_t>(std::min(height, y1 + s.reach));
    std::vector<image_binding> inputs(s.inputs.size()), outputs(s.outputs.size());
    cl_int status = CL_SUCCESS;
    for (size_t i = 0; i < s.inputs.size() && status == CL_SUCCESS; ++i) {
      auto* image = reinterpret_cast<vx_image>(s.inputs[i].node->parameters[s.inputs[i].index]);
      image_memory& memory = *image->memory;
      // An input of another size (none of the pixel kernels has one) is read whole.
      uint32_t in_lo = image->height == first_out->height ? lo : 0;
      uint32_t in_hi = image->height == first_out->height ? hi : image->height;
      status = memory.rows_on_device(d, devices.context(), queues, in_lo, in_hi, inputs[i].buffer);
      inputs[i].pitch = static_cast<cl_int>(memory.device_pitch(0));
      inputs[i].width = static_cast<cl_int>(image->width);
      inputs[i].height = static_cast<cl_int>(image->height);
      inputs[i].border_value = border_value_of(s.inputs[i].node, image);
    }
    for (size_t i = 0; i < s.outputs.size() && status == CL_SUCCESS; ++i) {
      image_memory& memory = *reinterpret_cast<vx_image>(s.outputs[i].node->parameters[s.outputs[i].index])->memory;
      outputs[i].buffer = memory.slab_buffer(d, devices.context(), status);
      outputs[i].pitch = static_cast<cl_int>(memory.device_pitch(0));
    }
    if (status != CL_SUCCESS) {
      add_log(node, VX_FAILURE, "node %s: device %zu could not take its band of rows (%d)", node_label(node), d, status);
      return VX_FAILURE;
    }
    std::vector<cl_mem> temporaries;
    status = bind_pixel_kernel(s.kernel, devices.context(), inputs, outputs, width, height, y0, y1, s.arguments,
                               temporaries);
    if (status == CL_SUCCESS)
      status = enqueue_pixel_kernel(queues[d], s.kernel, s.fused, s.tile_width, s.tile_height, width, y1 - y0);
    for (cl_mem mem : temporaries) clReleaseMemObject(mem);
    if (status != CL_SUCCESS) {
      add_log(node, VX_FAILURE, "node %s (%s): the kernel could not be enqueued on device %zu (%d)", node_label(node),
              node->kernel->name.c_str(), d, status);
      return VX_FAILURE;
    }
    for (const image_use& use : s.outputs)
      reinterpret_cast<vx_image>(use.node->parameters[use.index])
          ->memory->slab_written(d, queues[d], static_cast<uint32_t>(y0), static_cast<uint32_t>(y1));
  }
  for (vx_node n : s.nodes) propagate_valid_region(n);
  return VX_SUCCESS;
}

vx_status plan::run(vx_graph graph) {
  device_set* devices = graph->context->devices.get();
  int64_t graph_begin = now_ns();
  vx_status status = VX_SUCCESS;
  // Steps [waited, ran) have device work no clFinish has waited for yet: when a finish
  // fails (a server lost mid-graph, a kernel that faulted), their nodes are the ones that
  // may not have run, so they get the failure and the log names them.
  size_t waited = 0, ran = 0;
  auto finish_devices = [&]() -> vx_status {
    vx_status finished_status = VX_SUCCESS;
    if (devices != nullptr)
      for (const auto& d : devices->devices()) {
        cl_int finished = clFinish(d.queue);
        if (finished == CL_SUCCESS || finished_status != VX_SUCCESS) continue;
        std::string names;
        for (size_t k = waited; k < ran; ++k)
          for (vx_node n : steps_[k].nodes) {
            names += (names.empty() ? "" : ", ") + std::string(node_label(n));
            n->status = VX_FAILURE;
          }
        add_log(graph, VX_FAILURE, "graph: device %s failed (%d) with node(s) %s", d.name.c_str(), finished,
                names.empty() ? "(none)" : names.c_str());
        finished_status = VX_FAILURE;
      }
    waited = ran;
    return finished_status;
  };
  for (step& s : steps_) {
    int64_t begin = now_ns();
    switch (s.what) {
      case step::kind::pixel:
        status = devices->devices().size() > 1 && can_slice(s) ? run_pixel_slabs(s, *devices) : run_pixel(s, *devices);
        break;
      case step::kind::user: status = run_user_kernel(s.nodes.front()); break;
      case step::kind::whole: status = run_whole_node(s.nodes.front(), *devices); break;
    }
    // A node's completion callback, or a measured node, needs its work done.
    bool callback = std::any_of(s.nodes.begin(), s.nodes.end(), [](vx_node n) { return n->callback != nullptr; });
    // A fused group's nodes share its time and its outcome.
    for (vx_node n : s.nodes) n->status = status;
    ++ran;
    if (status == VX_SUCCESS && (callback || graph->context->performance_enabled)) status = finish_devices();
    int64_t end = now_ns();
    for (vx_node n : s.nodes) account(n->perf, begin, end);
    if (status != VX_SUCCESS) break;
    for (vx_node n : s.nodes)
      if (n->callback != nullptr && n->callback(n) == VX_ACTION_ABANDON) status = VX_ERROR_GRAPH_ABANDONED;
    if (status != VX_SUCCESS) break;
  }
  // Even after a failed step: what was enqueued before it must end before its buffers
  // can be reused or released.
  vx_status finished = finish_devices();
  if (status == VX_SUCCESS) status = finished;
  account(graph->perf, graph_begin, now_ns());
  return status;
}


}  // namespace ferry::graph
