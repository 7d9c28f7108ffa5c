#include "graph/runtime/pixel_program.hpp"

#include "graph/core/image.hpp"
#include "graph/core/node.hpp"

#include <algorithm>
#include <sstream>

namespace ferry::graph {
namespace {

vx_image image_parameter(vx_node node, vx_uint32 index) {
  return reinterpret_cast<vx_image>(node->parameters.at(index));
}

struct pixel_layout {
  const char* type;       // the element type in memory
  const char* value;      // the type reads give
  int bytes;              // per channel
  int channels;
};

pixel_layout layout_of(vx_df_image format) {
  switch (format) {
    case VX_DF_IMAGE_U16: return {"ushort", "int", 2, 1};
    case VX_DF_IMAGE_S16: return {"short", "int", 2, 1};
    case VX_DF_IMAGE_U32: return {"uint", "uint", 4, 1};
    case VX_DF_IMAGE_S32: return {"int", "int", 4, 1};
    case VX_DF_IMAGE_RGB: return {"uchar", "int", 1, 3};
    case VX_DF_IMAGE_RGBX: return {"uchar", "int", 1, 4};
    default: return {"uchar", "int", 1, 1};
  }
}

// The border constant of `node` for the pixels of image parameter `index`.
std::string border_constant(vx_node node, vx_uint32 index) {
  const vx_pixel_value_t& value = node->border.constant_value;
  switch (image_parameter(node, index)->format) {
    case VX_DF_IMAGE_S16: return std::to_string(value.S16);
    case VX_DF_IMAGE_U16: return std::to_string(value.U16);
    case VX_DF_IMAGE_S32: return std::to_string(value.S32);
    case VX_DF_IMAGE_U32: return std::to_string(value.U32) + "u";
    default: return std::to_string(value.U8);
  }
}

}  // namespace

pixel_emitter::pixel_emitter(vx_node node, std::string prefix) : node_(node), prefix_(std::move(prefix)) {}

const pixel_emitter::binding* pixel_emitter::bound(vx_uint32 index) const {
  for (const binding& b : bindings_)
    if (b.index == index) return &b;
  return nullptr;
}

void pixel_emitter::bind_local(vx_uint32 index, const local_image& image) {
  fused_ = true;
  bindings_.push_back({index, "", true, image, false});
}

void pixel_emitter::bind_private_input(vx_uint32 index, const std::string& name) {
  fused_ = true;
  bindings_.push_back({index, name, false, {}, false});
}

void pixel_emitter::bind_output(vx_uint32 index, const std::string& private_name, const local_image* local,
                                bool global) {
  fused_ = true;
  bindings_.push_back({index, private_name, local != nullptr, local != nullptr ? *local : local_image{}, global});
}

size_t pixel_emitter::input_slot(vx_uint32 index) {
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i] == index) return i;
  inputs_.push_back(index);
  return inputs_.size() - 1;
}

size_t pixel_emitter::output_slot(vx_uint32 index) {
  for (size_t i = 0; i < outputs_.size(); ++i)
    if (outputs_[i] == index) return i;
  outputs_.push_back(index);
  return outputs_.size() - 1;
}

std::string pixel_emitter::read(vx_uint32 index, int dx, int dy, int channel) {
  std::ostringstream text;
  const binding* b = bound(index);
  if (b != nullptr && !b->private_name.empty()) return "(int)" + b->private_name;
  if (b != nullptr && b->has_local) {
    // An image a node before this one made in local memory: its region
    // starts `halo` before the tile. Outside the image the node's border
    // mode decides, as for a global read: the constant, or the nearest pixel
    // inside (which the region always holds: it reaches the image's edge).
    // The border goes through macros (border_macros()), which the kernel's
    // interior copy swaps for ones that do nothing.
    const local_image& l = b->image;
    std::string xx = "(x + (" + std::to_string(dx) + "))", yy = "(y + (" + std::to_string(dy) + "))";
    std::string h = std::to_string(l.halo);
    std::string width = "(VX_TW + 2 * " + h + ")";
    if (node_->border.mode == VX_BORDER_CONSTANT) {
      text << "(VX_OUTSIDE(" << xx << ", " << yy << ") ? " << border_constant(node_, index) << " : (int)" << l.name
           << "[(" << yy << " - (gy0 - " << h << ")) * " << width << " + " << xx << " - (gx0 - " << h << ")])";
    } else {
      text << "(int)" << l.name << "[(VX_CY(" << yy << ") - (gy0 - " << h << ")) * " << width << " + VX_CX(" << xx
           << ") - (gx0 - " << h << ")]";
    }
    return text.str();
  }
  size_t slot = input_slot(index);
  reach_ = std::max({reach_, dx < 0 ? -dx : dx, dy < 0 ? -dy : dy});
  std::string i = prefix_ + "i" + std::to_string(slot);
  text << prefix_ << "rd" << slot << "(" << i << ", " << i << "_pitch, " << i << "_off, " << i << "_w, " << i << "_h, "
       << i << "_c, x + (" << dx << "), y + (" << dy << "), " << channel << ")";
  return text.str();
}

void pixel_emitter::write(vx_uint32 index, const std::string& value, int channel) {
  pixel_layout layout = layout_of(image_parameter(node_, index)->format);
  if (const binding* b = bound(index)) {
    // A value kept for the pass's later nodes, and for later passes; `li` is
    // the pixel's place in the region (the fused kernel's loop).
    std::string v = value;
    if (!b->private_name.empty()) {
      body_.push_back(b->private_name + " = (" + layout.type + ")(" + value + ");");
      v = b->private_name;
    }
    if (b->has_local) body_.push_back(b->image.name + "[li] = (" + b->image.type + ")(" + v + ");");
    if (!b->global) return;
    if (!b->private_name.empty()) {
      size_t slot = output_slot(index);
      std::string o = prefix_ + "o" + std::to_string(slot);
      body_.push_back("if (central) *(__global " + std::string(layout.type) + "*)(" + o + " + " + o + "_off + y * " + o +
                      "_pitch + (x * " + std::to_string(layout.channels) + " + " + std::to_string(channel) + ") * " +
                      std::to_string(layout.bytes) + ") = " + v + ";");
      return;
    }
  }
  size_t slot = output_slot(index);
  std::string o = prefix_ + "o" + std::to_string(slot);
  std::ostringstream text;
  // In a fused kernel only the tile's own pixels go to global memory.
  if (fused_) text << "if (central) ";
  text << "*(__global " << layout.type << "*)(" << o << " + " << o << "_off + y * " << o << "_pitch + (x * "
       << layout.channels << " + " << channel << ") * " << layout.bytes << ") = (" << layout.type << ")(" << value
       << ");";
  body_.push_back(text.str());
}

std::string pixel_emitter::pixel_type(vx_uint32 index) const {
  return layout_of(image_parameter(node_, index)->format).type;
}

void pixel_emitter::line(const std::string& statement) { body_.push_back(statement); }

std::string pixel_emitter::temp() { return prefix_ + "t" + std::to_string(temps_++); }

std::string pixel_emitter::argument(const std::string& cl_type, std::function<std::vector<uint8_t>()> value) {
  std::string name = prefix_ + "a" + std::to_string(arguments_.size());
  arguments_.push_back({cl_type, name, std::move(value), false});
  return name;
}

std::string pixel_emitter::buffer(const std::string& element_type, std::function<std::vector<uint8_t>()> bytes) {
  std::string name = prefix_ + "a" + std::to_string(arguments_.size());
  arguments_.push_back({element_type, name, std::move(bytes), true});
  return name;
}

void pixel_emitter::helper(const std::string& key, const std::string& source) {
  for (const auto& [k, s] : helpers_)
    if (k == key) return;
  helpers_.emplace_back(key, source);
}

std::string pixel_emitter::read_helpers() const {
  std::ostringstream text;
  bool constant = node_->border.mode == VX_BORDER_CONSTANT;
  for (size_t slot = 0; slot < inputs_.size(); ++slot) {
    pixel_layout layout = layout_of(image_parameter(node_, inputs_[slot])->format);
    text << "static inline " << layout.value << " " << prefix_ << "rd" << slot
         << "(__global const uchar* b, int pitch, int off, int w, int h, int c, int x, int y, int ch) {\n";
    if (constant)
      text << "  if (x < 0 || y < 0 || x >= w || y >= h) return (" << layout.value << ")c;\n";
    else
      text << "  x = clamp(x, 0, w - 1);\n  y = clamp(y, 0, h - 1);\n";
    text << "  return (" << layout.value << ")*(__global const " << layout.type << "*)(b + off + y * pitch + (x * "
         << layout.channels << " + ch) * " << layout.bytes << ");\n}\n";
    // Inside the image, far enough from its edges: no border to apply.
    text << "static inline " << layout.value << " " << prefix_ << "rdi" << slot
         << "(__global const uchar* b, int pitch, int off, int w, int h, int c, int x, int y, int ch) {\n"
         << "  return (" << layout.value << ")*(__global const " << layout.type << "*)(b + off + y * pitch + (x * "
         << layout.channels << " + ch) * " << layout.bytes << ");\n}\n";
  }
  return text.str();
}

std::string pixel_emitter::input_parameters() const {
  std::ostringstream text;
  for (size_t slot = 0; slot < inputs_.size(); ++slot) {
    std::string i = prefix_ + "i" + std::to_string(slot);
    text << ", __global const uchar* " << i << ", int " << i << "_pitch, int " << i << "_off, int " << i << "_w, int "
         << i << "_h, int " << i << "_c";
  }
  return text.str();
}

std::string pixel_emitter::output_parameters() const {
  std::ostringstream text;
  for (size_t slot = 0; slot < outputs_.size(); ++slot) {
    std::string o = prefix_ + "o" + std::to_string(slot);
    text << ", __global uchar* " << o << ", int " << o << "_pitch, int " << o << "_off";
  }
  return text.str();
}

std::string pixel_emitter::value_parameters() const {
  std::ostringstream text;
  for (const value_argument& argument : arguments_) {
    if (argument.buffer)
      text << ", __global const " << argument.cl_type << "* " << argument.name;
    else
      text << ", " << argument.cl_type << " " << argument.name;
  }
  return text.str();
}

std::string pixel_emitter::body() const {
  std::ostringstream text;
  text << "{\n";
  for (const std::string& statement : body_) text << "  " << statement << "\n";
  text << "}\n";
  return text.str();
}

std::string pixel_emitter::interior_body() const {
  std::string fast = body();
  auto replace_all = [&fast](const std::string& from, const std::string& to) {
    for (size_t at = fast.find(from); at != std::string::npos; at = fast.find(from, at + to.size()))
      fast.replace(at, from.size(), to);
  };
  for (size_t slot = 0; slot < inputs_.size(); ++slot)
    replace_all(prefix_ + "rd" + std::to_string(slot) + "(", prefix_ + "rdi" + std::to_string(slot) + "(");
  replace_all("VX_CX(", "VX_FX(");
  replace_all("VX_CY(", "VX_FY(");
  replace_all("VX_OUTSIDE(", "VX_FOUTSIDE(");
  return fast;
}

std::string pixel_emitter::border_macros() {
  return "#define VX_CX(v) clamp((v), 0, width - 1)\n"
         "#define VX_CY(v) clamp((v), 0, height - 1)\n"
         "#define VX_OUTSIDE(px, py) ((px) < 0 || (py) < 0 || (px) >= width || (py) >= height)\n"
         "#define VX_FX(v) (v)\n"
         "#define VX_FY(v) (v)\n"
         "#define VX_FOUTSIDE(px, py) 0\n";
}

std::string pixel_emitter::source(const std::string& kernel_name) const {
  std::ostringstream text;
  for (const auto& [key, helper] : helpers_) text << helper << "\n";
  text << read_helpers();
  // The parameter list starts with the images; the leading ", " of the first goes.
  std::string images = input_parameters() + output_parameters();
  text << "__kernel void " << kernel_name << "(" << images.substr(2) << ", int width, int height, int y0, int y1"
       << value_parameters() << ") {\n  const int x = (int)get_global_id(0);\n"
       << "  const int y = y0 + (int)get_global_id(1);\n  if (x >= width || y >= y1) return;\n";
  // Most pixels read nothing outside the image: they take a copy of the body
  // whose reads skip the border arithmetic, which lets the compiler load
  // neighbouring work-items' pixels together.
  std::string inside = "x >= " + std::to_string(reach_) + " && y >= " + std::to_string(reach_);
  for (size_t slot = 0; slot < inputs_.size(); ++slot) {
    std::string i = prefix_ + "i" + std::to_string(slot);
    inside += " && x + " + std::to_string(reach_) + " < " + i + "_w && y + " + std::to_string(reach_) + " < " + i + "_h";
  }
  text << "  if (" << inside << ") " << interior_body() << "  else " << body() << "}\n";
  return text.str();
}

cl_int bind_pixel_kernel(cl_kernel kernel, cl_context context, const std::vector<image_binding>& inputs,
                         const std::vector<image_binding>& outputs, cl_int width, cl_int height, cl_int y0, cl_int y1,
                         const std::vector<value_argument>& values, std::vector<cl_mem>& temporaries) {
  cl_uint arg = 0;
  cl_int status = CL_SUCCESS;
  auto set = [&](size_t size, const void* value) {
    if (status == CL_SUCCESS) status = clSetKernelArg(kernel, arg, size, value);
    ++arg;
  };
  for (const image_binding& in : inputs) {
    set(sizeof(cl_mem), &in.buffer);
    set(sizeof(cl_int), &in.pitch);
    set(sizeof(cl_int), &in.offset);
    set(sizeof(cl_int), &in.width);
    set(sizeof(cl_int), &in.height);
    set(sizeof(cl_int), &in.border_value);
  }
  for (const image_binding& out : outputs) {
    set(sizeof(cl_mem), &out.buffer);
    set(sizeof(cl_int), &out.pitch);
    set(sizeof(cl_int), &out.offset);
  }
  set(sizeof(cl_int), &width);
  set(sizeof(cl_int), &height);
  set(sizeof(cl_int), &y0);
  set(sizeof(cl_int), &y1);
  for (const value_argument& value : values) {
    std::vector<uint8_t> bytes = value.value();
    if (value.buffer) {
      cl_int made = CL_SUCCESS;
      cl_mem mem = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes.empty() ? 1 : bytes.size(),
                                  bytes.empty() ? nullptr : bytes.data(), &made);
      if (bytes.empty() && mem == nullptr) mem = clCreateBuffer(context, CL_MEM_READ_ONLY, 1, nullptr, &made);
      if (mem == nullptr) return made;
      temporaries.push_back(mem);
      set(sizeof(cl_mem), &mem);
    } else {
      set(bytes.size(), bytes.data());
    }
  }
  return status;
}

}  // namespace ferry::graph
