// Where an image's pixels live: host memory (the library's, or the
// application's for an image from a handle) and a device copy (one OpenCL
// buffer per plane, rows packed), with which of the two is current.
//
// Graphs read and write the device copy; maps and copies read and write the
// host one; each side is brought up to date only when the other changed, so
// a chain of graphs never moves pixels through the host. ROI images share
// their parent's memory.
#pragma once

#include "graph/core/image_format.hpp"

#include <CL/cl.h>

#include <cstdint>
#include <vector>

namespace ferry::graph {

class image_memory {
 public:
  struct plane {
    uint8_t* base = nullptr;  // the plane's first element on the host
    int32_t stride_x = 0;     // bytes between elements along x
    int32_t stride_y = 0;     // bytes between rows
    uint32_t width = 0;       // elements per row
    uint32_t height = 0;      // rows
    uint32_t element_bytes = 0;
  };

  /// Host memory of the library's own, rows packed, zero-filled.
  image_memory(const image_format& format, uint32_t width, uint32_t height);
  /// The application's memory (vxCreateImageFromHandle); `planes` as it described them.
  image_memory(const image_format& format, uint32_t width, uint32_t height, std::vector<plane> planes);
  ~image_memory();
  image_memory(const image_memory&) = delete;
  image_memory& operator=(const image_memory&) = delete;

  const image_format& format() const { return format_; }
  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }
  size_t plane_count() const { return planes_.size(); }
  const plane& host_plane(size_t p) const { return planes_[p]; }
  /// Packed row pitch of plane `p`'s device copy.
  size_t device_pitch(size_t p) const { return size_t{planes_[p].width} * planes_[p].element_bytes; }
  bool owns_host() const { return !owned_.empty(); }

  /// The device buffer of plane `p`, made in `context` if there is none yet.
  cl_mem device_buffer(size_t p, cl_context context, cl_int& status);
  /// Brings the device copy up to date (when the host one is newer).
  cl_int to_device(cl_context context, cl_command_queue queue);
  /// Brings the host copy up to date (when the device one is newer); blocks.
  cl_int to_host(cl_command_queue queue);
  /// The host (after a write through a map or copy) or device (after a graph
  /// wrote it) copy is now the only current one.
  void host_written() { host_current_ = true, device_current_ = false; }
  void device_written() { device_current_ = true, host_current_ = false; }
  bool host_current() const { return host_current_; }
  /// The queue the last device write went to (reads of the result wait behind it).
  cl_command_queue last_queue = nullptr;

  /// vxSwapImageHandle: new application planes (empty: the library's own
  /// memory again); the device copy is dropped to be re-sent.
  void replace_host(std::vector<plane> planes);

 private:
  const image_format& format_;
  uint32_t width_, height_;
  std::vector<plane> planes_;
  std::vector<std::vector<uint8_t>> owned_;  // the library's host memory, a vector per plane
  std::vector<cl_mem> device_;
  bool host_current_ = true;
  bool device_current_ = false;
};

}  // namespace ferry::graph
