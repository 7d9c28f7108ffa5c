// What a whole kernel (kernel_shape::whole: histograms, integral images,
// warps, color conversion, ...) sees when its node runs: the node, the first
// device of the context with its queue, the device planes of its images, its
// OpenCL programs, and a way to bring results that are not images
// (distributions, scalars, arrays) back to their objects' host data.
//
// A whole kernel enqueues its own OpenCL work on the first device's in-order
// queue; its image outputs stay on the device (marked written there when the
// run ends, so the next step or a map reads them from there), while the
// results kept on the host are read back, blocking, before the run returns.
#pragma once

#include "graph/runtime/device_set.hpp"

#include <CL/cl.h>
#include <VX/vx.h>

#include <string>
#include <vector>

namespace ferry::graph {

class whole_run {
 public:
  /// One plane of an image parameter in device memory, as OpenCL kernels
  /// address it: `buffer + offset + y * pitch + x * element bytes`.
  struct plane_view {
    cl_mem buffer = nullptr;
    /// Bytes from the buffer's start to the image's (0, 0): an ROI's origin
    /// in its root's plane.
    cl_int offset = 0;
    /// Bytes between rows (the root's rows).
    cl_int pitch = 0;
    /// The plane's size in its own elements (a 4:2:0 chroma plane is half the
    /// image each way; a 4:2:2 plane's element holds two pixels).
    cl_int width = 0, height = 0;
  };

  whole_run(vx_node node, device_set& devices);
  /// Releases the kernels and scratch buffers the run made (their work is
  /// queued; OpenCL keeps them alive until it is done).
  ~whole_run();
  whole_run(const whole_run&) = delete;
  whole_run& operator=(const whole_run&) = delete;

  vx_node node() const { return node_; }
  cl_context context() const { return devices_.context(); }
  cl_command_queue queue() const { return devices_.devices().front().queue; }

  /// Parameter `index` as its type; null when unset or of another type.
  vx_image image(vx_uint32 index) const;
  vx_scalar scalar(vx_uint32 index) const;
  vx_matrix matrix(vx_uint32 index) const;
  vx_distribution distribution(vx_uint32 index) const;
  vx_array array(vx_uint32 index) const;

  /// Plane `p` of input image `index`, its device copy brought up to date
  /// first (from the host, or from the devices a tiled step left it on).
  vx_status input_plane(vx_uint32 index, vx_uint32 p, plane_view& view);
  /// Plane `p` of output image `index`, for writing. An ROI's root is made
  /// current on the device first: the kernel writes only the ROI's part.
  vx_status output_plane(vx_uint32 index, vx_uint32 p, plane_view& view);

  /// Kernel `name` of the program built from `source` for the context's
  /// devices (device_set caches the program by source); null, logged, when
  /// the source does not build. Released with the run.
  cl_kernel kernel(const std::string& source, const char* name);
  /// Sets `kernel`'s arguments, index 0 first: cl_mem, cl_int, cl_uint,
  /// cl_float, cl_long... (each passed by its size).
  template <class... Args>
  vx_status arguments(cl_kernel kernel, const Args&... args) {
    cl_uint index = 0;
    cl_int status = CL_SUCCESS;
    ((status = status == CL_SUCCESS ? clSetKernelArg(kernel, index++, sizeof(Args), &args) : status), ...);
    return status == CL_SUCCESS ? VX_SUCCESS : fail(VX_FAILURE, "a kernel argument was refused (OpenCL %d)", status);
  }
  /// Enqueues `kernel` over `global` (`dims` of them; a size of 0 enqueues
  /// nothing), work-groups of `local` or of the implementation's choosing.
  vx_status enqueue(cl_kernel kernel, cl_uint dims, const size_t* global, const size_t* local = nullptr);
  /// The largest work-group `kernel` may run with on the first device.
  size_t work_group_limit(cl_kernel kernel);

  /// A device buffer of `bytes` (at least 1), released with the run; its
  /// contents are `initial` when given (`bytes` of them), else undefined.
  cl_mem scratch(size_t bytes, const void* initial = nullptr);
  /// Reads `bytes` at `offset` of `buffer` into `host` once the work queued
  /// before it is done (blocking).
  vx_status read(cl_mem buffer, size_t offset, size_t bytes, void* host);

  /// Logs "node NAME (KERNEL): MESSAGE" against the node and returns `status`.
  vx_status fail(vx_status status, const char* format, ...) __attribute__((format(printf, 3, 4)));

  /// After the kernel's run succeeded: every image output is now current on
  /// the device alone, and valid over the whole image.
  void finish();

 private:
  vx_status plane_of(vx_uint32 index, vx_uint32 p, bool input, plane_view& view);

  vx_node node_;
  device_set& devices_;
  std::vector<cl_kernel> kernels_;
  std::vector<cl_mem> scratch_;
};

/// Runs one node of a whole kernel (the plan's whole steps): the kernel's
/// `run`, then `finish`; every failure is logged naming the node.
vx_status run_whole_node(vx_node node, device_set& devices);

}  // namespace ferry::graph
