#include "graph/runtime/whole_run.hpp"

#include "graph/core/array.hpp"
#include "graph/core/context.hpp"
#include "graph/core/distribution.hpp"
#include "graph/core/image.hpp"
#include "graph/core/kernel.hpp"
#include "graph/core/matrix.hpp"
#include "graph/core/node.hpp"
#include "graph/core/scalar.hpp"
#include "graph/kernels/kernel_definition.hpp"

#include <climits>
#include <cstdarg>
#include <cstdio>

namespace ferry::graph {
namespace {

template <class T>
T* typed(vx_node node, vx_uint32 index, vx_enum type) {
  if (index >= node->parameters.size()) return nullptr;
  vx_reference ref = node->parameters[index];
  return ref != nullptr && ref->type == type ? reinterpret_cast<T*>(ref) : nullptr;
}

const char* label(vx_node node) { return node->name.empty() ? node->kernel->name.c_str() : node->name.c_str(); }

}  // namespace

whole_run::whole_run(vx_node node, device_set& devices) : node_(node), devices_(devices) {}

whole_run::~whole_run() {
  for (cl_kernel k : kernels_) clReleaseKernel(k);
  for (cl_mem m : scratch_) clReleaseMemObject(m);
}

vx_image whole_run::image(vx_uint32 index) const { return typed<_vx_image>(node_, index, VX_TYPE_IMAGE); }
vx_scalar whole_run::scalar(vx_uint32 index) const { return typed<_vx_scalar>(node_, index, VX_TYPE_SCALAR); }
vx_matrix whole_run::matrix(vx_uint32 index) const { return typed<_vx_matrix>(node_, index, VX_TYPE_MATRIX); }
vx_distribution whole_run::distribution(vx_uint32 index) const {
  return typed<_vx_distribution>(node_, index, VX_TYPE_DISTRIBUTION);
}
vx_array whole_run::array(vx_uint32 index) const { return typed<_vx_array>(node_, index, VX_TYPE_ARRAY); }

vx_status whole_run::fail(vx_status status, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  add_log(node_, status, "node %s (%s): %s", label(node_), node_->kernel->name.c_str(), message);
  return status;
}

vx_status whole_run::plane_of(vx_uint32 index, vx_uint32 p, bool input, plane_view& view) {
  vx_image img = image(index);
  if (img == nullptr) return fail(VX_ERROR_INVALID_PARAMETERS, "parameter %u is not an image", index);
  vx_uint32 ox = 0, oy = 0;
  vx_image root = memory_root(img, ox, oy);
  image_memory* memory = root->memory.get();
  const image_format* layout = find_image_format(img->format);
  if (memory == nullptr || layout == nullptr || p >= layout->planes)
    return fail(VX_ERROR_INVALID_PARAMETERS, "image parameter %u has no plane %u in memory", index, p);
  cl_int status = CL_SUCCESS;
  // An input must be current on the device; so must the root of an ROI
  // output, whose pixels outside the ROI the kernel leaves as they are.
  if (input || root != img) status = memory->to_device(context(), queue());
  if (status != CL_SUCCESS)
    return fail(input ? VX_FAILURE : VX_ERROR_NO_MEMORY, "image parameter %u could not reach the device (OpenCL %d)",
                index, status);
  view.buffer = memory->device_buffer(p, context(), status);
  if (view.buffer == nullptr)
    return fail(VX_ERROR_NO_MEMORY, "no device memory for image parameter %u (OpenCL %d)", index, status);
  const plane_format& plane = layout->plane[p];
  // The ROI's origin in the plane's own elements (an ROI of a subsampled
  // format starts on a whole element: the image API keeps it so).
  uint64_t column = ox / plane.subsample_x / plane.pixels_per_element;
  uint64_t row = oy / plane.subsample_y;
  uint64_t pitch = memory->device_pitch(p);
  uint64_t offset = row * pitch + column * plane.bytes_per_element;
  uint64_t end = pitch * memory->host_plane(p).height;
  // Kernels address planes with 32-bit offsets.
  if (end > static_cast<uint64_t>(INT_MAX))
    return fail(VX_ERROR_NO_RESOURCES, "image parameter %u's plane %u is over 2 GiB", index, p);
  view.offset = static_cast<cl_int>(offset);
  view.pitch = static_cast<cl_int>(pitch);
  view.width = static_cast<cl_int>(plane_width(*layout, p, img->width));
  view.height = static_cast<cl_int>(plane_height(*layout, p, img->height));
  return VX_SUCCESS;
}

vx_status whole_run::input_plane(vx_uint32 index, vx_uint32 p, plane_view& view) {
  return plane_of(index, p, true, view);
}

vx_status whole_run::output_plane(vx_uint32 index, vx_uint32 p, plane_view& view) {
  return plane_of(index, p, false, view);
}

cl_kernel whole_run::kernel(const std::string& source, const char* name) {
  std::string log;
  cl_program program = devices_.program(source, log);
  if (program == nullptr) {
    fail(VX_ERROR_INVALID_NODE, "its OpenCL kernel %s does not build: %s", name, log.c_str());
    return nullptr;
  }
  cl_int status = CL_SUCCESS;
  cl_kernel made = clCreateKernel(program, name, &status);
  if (made == nullptr) {
    fail(VX_ERROR_NO_RESOURCES, "clCreateKernel(%s) failed (OpenCL %d)", name, status);
    return nullptr;
  }
  kernels_.push_back(made);
  return made;
}

vx_status whole_run::enqueue(cl_kernel kernel, cl_uint dims, const size_t* global, const size_t* local) {
  for (cl_uint d = 0; d < dims; ++d)
    if (global[d] == 0) return VX_SUCCESS;
  cl_int status = clEnqueueNDRangeKernel(queue(), kernel, dims, nullptr, global, local, 0, nullptr, nullptr);
  if (status != CL_SUCCESS) return fail(VX_FAILURE, "its kernel could not be enqueued (OpenCL %d)", status);
  return VX_SUCCESS;
}

size_t whole_run::work_group_limit(cl_kernel kernel) {
  size_t limit = 1;
  clGetKernelWorkGroupInfo(kernel, devices_.devices().front().id, CL_KERNEL_WORK_GROUP_SIZE, sizeof limit, &limit,
                           nullptr);
  return limit == 0 ? 1 : limit;
}

cl_mem whole_run::scratch(size_t bytes, const void* initial) {
  cl_int status = CL_SUCCESS;
  cl_mem made = clCreateBuffer(context(), CL_MEM_READ_WRITE, bytes == 0 ? 1 : bytes, nullptr, &status);
  if (made == nullptr) {
    fail(VX_ERROR_NO_MEMORY, "no device memory for %zu bytes of working space (OpenCL %d)", bytes, status);
    return nullptr;
  }
  scratch_.push_back(made);
  // Blocking: `initial` may be the caller's temporary.
  if (initial != nullptr && bytes > 0)
    status = clEnqueueWriteBuffer(queue(), made, CL_TRUE, 0, bytes, initial, 0, nullptr, nullptr);
  if (status != CL_SUCCESS) {
    fail(VX_FAILURE, "its working space could not be written (OpenCL %d)", status);
    return nullptr;
  }
  return made;
}

vx_status whole_run::read(cl_mem buffer, size_t offset, size_t bytes, void* host) {
  if (bytes == 0) return VX_SUCCESS;
  cl_int status = clEnqueueReadBuffer(queue(), buffer, CL_TRUE, offset, bytes, host, 0, nullptr, nullptr);
  if (status != CL_SUCCESS) return fail(VX_FAILURE, "its result could not be read back (OpenCL %d)", status);
  return VX_SUCCESS;
}

void whole_run::finish() {
  for (vx_uint32 i = 0; i < node_->parameters.size(); ++i) {
    vx_image img = image(i);
    if (img == nullptr || !is_output(node_, i)) continue;
    vx_uint32 ox, oy;
    image_memory* memory = memory_root(img, ox, oy)->memory.get();
    if (memory == nullptr) continue;
    memory->device_written();
    memory->last_queue = queue();
    // Every whole kernel here defines every output pixel it writes (a warp
    // or scale under an undefined border still writes a value everywhere,
    // the spec only leaves which one open), so the valid region is the
    // whole image (docs/graph.md, "Generated kernels").
    img->valid = {0, 0, img->width, img->height};
  }
}

vx_status run_whole_node(vx_node node, device_set& devices) {
  const kernel_definition* definition = node->kernel->definition;
  whole_run run(node, devices);
  if (definition == nullptr || definition->run == nullptr)
    return run.fail(VX_ERROR_NOT_IMPLEMENTED, "this kernel does not run yet");
  vx_status status = definition->run(run);
  if (status == VX_SUCCESS) run.finish();
  return status;
}

}  // namespace ferry::graph
