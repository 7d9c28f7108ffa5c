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
  void host_written() { host_current_ = true, device_current_ = false, forget_slabs(); }
  void device_written() { device_current_ = true, host_current_ = false, forget_slabs(); }
  bool host_current() const { return host_current_; }
  /// The queue the last device write went to (reads of the result wait behind it).
  cl_command_queue last_queue = nullptr;

  /// vxSwapImageHandle: new application planes (empty: the library's own
  /// memory again); the device copy is dropped to be re-sent.
  void replace_host(std::vector<plane> planes);

  // Row slabs of plane 0 over several devices (docs/graph.md, "Tiling"): a
  // graph step on N devices has each compute a band of rows, reading its
  // inputs' rows around the band and writing its outputs' band into a buffer
  // of its own. Device 0's buffer is `device_buffer(0, ...)`. Rows another
  // device holds reach this one through a small staging buffer, device to
  // device (server to server on Ferry's), never through the host.

  /// Makes rows [lo, hi) of plane 0 current in device `d`'s buffer (from the
  /// host, or from the devices that hold them) and returns that buffer.
  cl_int rows_on_device(size_t d, cl_context context, const std::vector<cl_command_queue>& queues, uint32_t lo,
                        uint32_t hi, cl_mem& buffer);
  /// Device `d`'s buffer of plane 0 (made if there is none), for writing.
  cl_mem slab_buffer(size_t d, cl_context context, cl_int& status);
  /// A step is about to write plane 0 in bands over `devices` devices: no
  /// copy stays current until slab_written says which rows each holds.
  void begin_slabs(size_t devices);
  void slab_written(size_t d, cl_command_queue queue, uint32_t lo, uint32_t hi);

 private:
  const image_format& format_;
  uint32_t width_, height_;
  std::vector<plane> planes_;
  std::vector<std::vector<uint8_t>> owned_;  // the library's host memory, a vector per plane
  cl_int upload_rows(cl_command_queue queue, cl_mem mem, size_t p, uint32_t lo, uint32_t hi);
  cl_int download_rows(cl_command_queue queue, cl_mem mem, size_t p, uint32_t lo, uint32_t hi);
  void forget_slabs();

  std::vector<cl_mem> device_;
  bool host_current_ = true;
  bool device_current_ = false;
  /// Plane 0 on devices 1.. (index 0 mirrors device_[0]) and the rows each
  /// holds current; `sliced_`: the rows are spread over them (neither the
  /// host nor device 0 holds them all).
  struct slab {
    cl_mem buffer = nullptr;
    cl_command_queue queue = nullptr;
    uint32_t lo = 0, hi = 0;
  };
  std::vector<slab> slabs_;
  bool sliced_ = false;
};

}  // namespace ferry::graph
