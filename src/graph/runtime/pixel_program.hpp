// Builds the OpenCL kernel of a pixel node, or of a fused group of pixel
// nodes (docs/graph.md, "Generated kernels" and "Fusion"), from the
// statements each node's kernel emits, and binds its arguments when it runs.
//
// A node's statements compute its outputs at one pixel (x, y). Each input
// image is read through a helper that applies the node's border mode
// (constant: the border value outside the image; replicate and undefined:
// the nearest pixel inside), so every read stays inside the image.
//
// Alone, a node's kernel runs one work-item per output pixel of the rows
// [y0, y1). In a fused group every work-group makes a tile of the last
// nodes' outputs: the earlier nodes compute their outputs over the tile and
// the halo the later ones read into local memory, where the later ones read
// them; the images between them never exist in global memory.
#pragma once

#include <CL/cl.h>
#include <VX/vx.h>

#include <functional>
#include <string>
#include <vector>

namespace ferry::graph {

/// A kernel argument whose value is read when the node runs (a scalar's or
/// threshold's value may change between runs without a new verification).
struct value_argument {
  std::string cl_type;
  std::string name;
  std::function<std::vector<uint8_t>()> value;
  /// A __global const buffer of these bytes rather than a value.
  bool buffer = false;
};

/// Where a fused node's image lives in the work-group's local memory: its
/// region starts `halo` pixels before the tile and spans the tile and `halo`
/// pixels on each side.
struct local_image {
  std::string name;      // the __local array
  std::string type;      // its element type
  int halo = 0;
};

/// What a pixel kernel's `emit` writes with (kernel_definition::emit).
class pixel_emitter {
 public:
  /// `prefix` makes the node's names unique within a fused kernel.
  explicit pixel_emitter(vx_node node, std::string prefix = "");

  vx_node node() const { return node_; }
  /// An expression for input image parameter `index` at (x + dx, y + dy),
  /// channel `channel`: an int (a uint for U32 images).
  std::string read(vx_uint32 index, int dx, int dy, int channel = 0);
  /// Stores `value` to output image `index` at (x, y), channel `channel`.
  /// The value must already fit the output's type (the kernel saturates or wraps).
  void write(vx_uint32 index, const std::string& value, int channel = 0);
  /// The OpenCL C type of image parameter `index`'s pixels ("uchar", "short", ...).
  std::string pixel_type(vx_uint32 index) const;
  /// One statement (or a block) of the kernel's body.
  void line(const std::string& statement);
  /// A fresh name for a local variable.
  std::string temp();
  /// A value argument (returns its name in the source).
  std::string argument(const std::string& cl_type, std::function<std::vector<uint8_t>()> value);
  /// A __global const buffer argument of `element_type` (returns its name).
  std::string buffer(const std::string& element_type, std::function<std::vector<uint8_t>()> bytes);
  /// Extra source before the kernel (helper functions, pragmas), once per `key`.
  void helper(const std::string& key, const std::string& source);

  /// Fusion: input image parameter `index` is read from local memory.
  void bind_local(vx_uint32 index, const local_image& image);
  /// Fusion: input image parameter `index` is the private variable `name`
  /// that a node before this one in the same pass set at this pixel.
  void bind_private_input(vx_uint32 index, const std::string& name);
  /// Fusion: where output image parameter `index` goes: a private variable
  /// (`private_name`, unless empty), local memory (unless null), and global
  /// memory when `global`.
  void bind_output(vx_uint32 index, const std::string& private_name, const local_image* local, bool global);

  /// The finished source of the node's own kernel, named `kernel_name`.
  std::string source(const std::string& kernel_name) const;

  // The parts a fused kernel is assembled from.
  /// The read helpers of the node's global inputs.
  std::string read_helpers() const;
  /// The node's parameters of the kernel signature, each ", ..." led:
  /// global inputs, global outputs, values.
  std::string input_parameters() const;
  std::string output_parameters() const;
  std::string value_parameters() const;
  /// A fused node: its global writes are limited to the tile's own pixels
  /// (`central` in the fused kernel's loop).
  void set_fused() { fused_ = true; }
  /// The node's statements, in a block.
  std::string body() const;
  /// body() for pixels whose reads all fall inside the image: the border
  /// arithmetic of every read goes (global reads take the rdi helpers, reads
  /// of local memory the VX_FX/VX_FY/VX_FOUTSIDE forms of the macros that
  /// border_macros() defines).
  std::string interior_body() const;
  /// The macros a fused kernel's reads of local memory use: VX_CX, VX_CY and
  /// VX_OUTSIDE apply the border, VX_FX, VX_FY and VX_FOUTSIDE are for the
  /// interior, where they do nothing.
  static std::string border_macros();
  const std::vector<std::pair<std::string, std::string>>& helpers() const { return helpers_; }

  const std::vector<value_argument>& arguments() const { return arguments_; }
  /// Image parameters read and written in global memory, in the order of the
  /// kernel's image arguments.
  const std::vector<vx_uint32>& inputs() const { return inputs_; }
  const std::vector<vx_uint32>& outputs() const { return outputs_; }

 private:
  /// How a fused node reaches one of its images in the kernel.
  struct binding {
    vx_uint32 index;
    std::string private_name;  // a private variable (inputs: read it; outputs: set it)
    bool has_local = false;    // local memory `image`
    local_image image;
    bool global = true;        // outputs: global memory too
  };
  const binding* bound(vx_uint32 index) const;
  size_t input_slot(vx_uint32 index);
  size_t output_slot(vx_uint32 index);

  vx_node node_;
  std::string prefix_;
  std::vector<vx_uint32> inputs_, outputs_;
  std::vector<binding> bindings_;
  std::vector<std::string> body_;
  std::vector<std::pair<std::string, std::string>> helpers_;
  std::vector<value_argument> arguments_;
  int temps_ = 0;
  bool fused_ = false;
  /// The farthest offset a read of a global input takes (the kernel's reach).
  int reach_ = 0;
};

/// One image argument set of a generated kernel: buffer, byte pitch, byte
/// offset of the view's origin, and (inputs) the view's width and height and
/// the value read outside it under a constant border.
struct image_binding {
  cl_mem buffer = nullptr;
  cl_int pitch = 0;
  cl_int offset = 0;
  cl_int width = 0, height = 0;
  cl_int border_value = 0;
};

/// Sets a generated kernel's arguments: inputs, outputs, the output width,
/// height and row range, then the value arguments. Temporary buffers it
/// makes go to `temporaries` (released by the caller once the kernel has run).
cl_int bind_pixel_kernel(cl_kernel kernel, cl_context context, const std::vector<image_binding>& inputs,
                         const std::vector<image_binding>& outputs, cl_int width, cl_int height, cl_int y0,
                         cl_int y1, const std::vector<value_argument>& values, std::vector<cl_mem>& temporaries);

}  // namespace ferry::graph
