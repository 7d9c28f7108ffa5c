#include "graph/core/image_memory.hpp"

#include <algorithm>
#include <cstring>

namespace ferry::graph {
namespace {

bool packed(const image_memory::plane& plane) {
  return plane.stride_x == static_cast<int32_t>(plane.element_bytes) &&
         plane.stride_y == static_cast<int32_t>(plane.width * plane.element_bytes);
}

}  // namespace

image_memory::image_memory(const image_format& format, uint32_t width, uint32_t height)
    : format_(format), width_(width), height_(height) {
  replace_host({});
}

image_memory::image_memory(const image_format& format, uint32_t width, uint32_t height, std::vector<plane> planes)
    : format_(format), width_(width), height_(height) {
  replace_host(std::move(planes));
}

image_memory::~image_memory() {
  for (cl_mem mem : device_)
    if (mem != nullptr) clReleaseMemObject(mem);
  for (size_t d = 1; d < slabs_.size(); ++d)
    if (slabs_[d].buffer != nullptr) clReleaseMemObject(slabs_[d].buffer);
}

void image_memory::replace_host(std::vector<plane> planes) {
  owned_.clear();
  if (planes.empty()) {
    for (uint32_t p = 0; p < format_.planes; ++p) {
      plane plane;
      plane.width = plane_width(format_, p, width_);
      plane.height = plane_height(format_, p, height_);
      plane.element_bytes = format_.plane[p].bytes_per_element;
      plane.stride_x = static_cast<int32_t>(plane.element_bytes);
      plane.stride_y = static_cast<int32_t>(plane.width * plane.element_bytes);
      owned_.emplace_back(size_t{plane.width} * plane.element_bytes * plane.height, uint8_t{0});
      plane.base = owned_.back().data();
      planes.push_back(plane);
    }
  }
  planes_ = std::move(planes);
  device_.resize(planes_.size(), nullptr);
  host_current_ = true;
  device_current_ = false;
  forget_slabs();
}

void image_memory::forget_slabs() {
  sliced_ = false;
  for (slab& s : slabs_) s.lo = s.hi = 0;
}

cl_mem image_memory::device_buffer(size_t p, cl_context context, cl_int& status) {
  status = CL_SUCCESS;
  if (device_[p] == nullptr) {
    size_t bytes = device_pitch(p) * planes_[p].height;
    device_[p] = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes == 0 ? 1 : bytes, nullptr, &status);
  }
  return device_[p];
}

// Host rows [lo, hi) of plane p to a device buffer, rows packed there.
// Uploads block: the host memory may be the application's, which it may
// change (through a map) as soon as this returns.
cl_int image_memory::upload_rows(cl_command_queue queue, cl_mem mem, size_t p, uint32_t lo, uint32_t hi) {
  const plane& plane = planes_[p];
  size_t pitch = device_pitch(p);
  size_t rows = hi - lo;
  if (packed(plane))
    return clEnqueueWriteBuffer(queue, mem, CL_TRUE, lo * pitch, rows * pitch, plane.base + lo * pitch, 0, nullptr,
                                nullptr);
  if (plane.stride_x == static_cast<int32_t>(plane.element_bytes) && plane.stride_y > 0) {
    size_t origin[3] = {0, lo, 0};
    size_t region[3] = {pitch, rows, 1};
    return clEnqueueWriteBufferRect(queue, mem, CL_TRUE, origin, origin, region, pitch, 0,
                                    static_cast<size_t>(plane.stride_y), 0, plane.base, 0, nullptr, nullptr);
  }
  // Elements not adjacent (an application's unusual stride_x): gather on the host.
  std::vector<uint8_t> gathered(pitch * rows);
  for (uint32_t y = lo; y < hi; ++y)
    for (uint32_t x = 0; x < plane.width; ++x)
      std::memcpy(&gathered[(y - lo) * pitch + x * plane.element_bytes],
                  plane.base + int64_t{y} * plane.stride_y + int64_t{x} * plane.stride_x, plane.element_bytes);
  return clEnqueueWriteBuffer(queue, mem, CL_TRUE, lo * pitch, gathered.size(), gathered.data(), 0, nullptr, nullptr);
}

// Device rows [lo, hi) of plane p to the host; blocks.
cl_int image_memory::download_rows(cl_command_queue queue, cl_mem mem, size_t p, uint32_t lo, uint32_t hi) {
  const plane& plane = planes_[p];
  size_t pitch = device_pitch(p);
  size_t rows = hi - lo;
  if (packed(plane))
    return clEnqueueReadBuffer(queue, mem, CL_TRUE, lo * pitch, rows * pitch, plane.base + lo * pitch, 0, nullptr,
                               nullptr);
  if (plane.stride_x == static_cast<int32_t>(plane.element_bytes) && plane.stride_y > 0) {
    size_t origin[3] = {0, lo, 0};
    size_t region[3] = {pitch, rows, 1};
    return clEnqueueReadBufferRect(queue, mem, CL_TRUE, origin, origin, region, pitch, 0,
                                   static_cast<size_t>(plane.stride_y), 0, plane.base, 0, nullptr, nullptr);
  }
  std::vector<uint8_t> gathered(pitch * rows);
  cl_int status =
      clEnqueueReadBuffer(queue, mem, CL_TRUE, lo * pitch, gathered.size(), gathered.data(), 0, nullptr, nullptr);
  if (status == CL_SUCCESS)
    for (uint32_t y = lo; y < hi; ++y)
      for (uint32_t x = 0; x < plane.width; ++x)
        std::memcpy(plane.base + int64_t{y} * plane.stride_y + int64_t{x} * plane.stride_x,
                    &gathered[(y - lo) * pitch + x * plane.element_bytes], plane.element_bytes);
  return status;
}

cl_int image_memory::to_device(cl_context context, cl_command_queue queue) {
  if (device_current_) return CL_SUCCESS;
  // Bands on several devices come together on the host first (rare: a whole
  // kernel after a tiled step).
  if (sliced_ && !host_current_) {
    cl_int status = to_host(queue);
    if (status != CL_SUCCESS) return status;
  }
  for (size_t p = 0; p < planes_.size(); ++p) {
    cl_int status = CL_SUCCESS;
    cl_mem mem = device_buffer(p, context, status);
    if (mem == nullptr) return status;
    status = upload_rows(queue, mem, p, 0, planes_[p].height);
    if (status != CL_SUCCESS) return status;
  }
  device_current_ = true;
  last_queue = queue;
  return CL_SUCCESS;
}

cl_int image_memory::to_host(cl_command_queue queue) {
  if (host_current_) return CL_SUCCESS;
  if (sliced_) {
    for (slab& s : slabs_) {
      if (s.lo >= s.hi) continue;
      cl_mem mem = &s == &slabs_.front() ? device_[0] : s.buffer;
      cl_int status = download_rows(s.queue, mem, 0, s.lo, s.hi);
      if (status != CL_SUCCESS) return status;
    }
    host_current_ = true;
    return CL_SUCCESS;
  }
  if (last_queue != nullptr) queue = last_queue;
  for (size_t p = 0; p < planes_.size(); ++p) {
    cl_int status = download_rows(queue, device_[p], p, 0, planes_[p].height);
    if (status != CL_SUCCESS) return status;
  }
  host_current_ = true;
  return CL_SUCCESS;
}

cl_mem image_memory::slab_buffer(size_t d, cl_context context, cl_int& status) {
  if (d == 0) return device_buffer(0, context, status);
  if (slabs_.size() <= d) slabs_.resize(d + 1);
  status = CL_SUCCESS;
  if (slabs_[d].buffer == nullptr) {
    size_t bytes = device_pitch(0) * planes_[0].height;
    slabs_[d].buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes == 0 ? 1 : bytes, nullptr, &status);
  }
  return slabs_[d].buffer;
}

cl_int image_memory::rows_on_device(size_t d, cl_context context, const std::vector<cl_command_queue>& queues,
                                    uint32_t lo, uint32_t hi, cl_mem& buffer) {
  cl_int status = CL_SUCCESS;
  buffer = slab_buffer(d, context, status);
  if (buffer == nullptr) return status;
  if (slabs_.size() < queues.size()) slabs_.resize(queues.size());
  const uint32_t rows = planes_[0].height;
  // Which rows each device holds: device 0 all of them while device_current_.
  auto held = [&](size_t e) {
    if (e == 0 && device_current_) return std::pair<uint32_t, uint32_t>{0, rows};
    return std::pair<uint32_t, uint32_t>{slabs_[e].lo, slabs_[e].hi};
  };
  auto [have_lo, have_hi] = held(d);
  if (have_lo <= lo && hi <= have_hi && have_lo < have_hi) return CL_SUCCESS;
  size_t pitch = device_pitch(0);
  if (host_current_) {
    status = upload_rows(queues[d], buffer, 0, lo, hi);
  } else {
    // From each device that holds some of the rows: its rows into a staging
    // buffer on its own queue, then from there on this device's queue once
    // that is done. Only the staging buffer crosses between devices.
    for (size_t e = 0; e < queues.size() && status == CL_SUCCESS; ++e) {
      if (e == d) continue;
      auto [e_lo, e_hi] = held(e);
      uint32_t from = std::max(lo, e_lo), to = std::min(hi, e_hi);
      if (from >= to) continue;
      cl_mem source = e == 0 ? device_[0] : slabs_[e].buffer;
      size_t bytes = (to - from) * pitch;
      cl_mem stage = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
      if (stage == nullptr) break;
      cl_event staged = nullptr;
      status = clEnqueueCopyBuffer(queues[e], source, stage, from * pitch, 0, bytes, 0, nullptr, &staged);
      if (status == CL_SUCCESS)
        status = clEnqueueCopyBuffer(queues[d], stage, buffer, 0, from * pitch, bytes, 1, &staged, nullptr);
      if (staged != nullptr) clReleaseEvent(staged);
      clReleaseMemObject(stage);  // freed once the copies are done
    }
  }
  if (status != CL_SUCCESS) return status;
  // The device now holds [lo, hi), joined to what it held if they touch.
  if (have_lo < have_hi && lo <= have_hi && have_lo <= hi) {
    lo = std::min(lo, have_lo);
    hi = std::max(hi, have_hi);
  }
  slabs_[d].lo = lo, slabs_[d].hi = hi, slabs_[d].queue = queues[d];
  if (d == 0 && lo == 0 && hi == rows) device_current_ = true;
  return CL_SUCCESS;
}

void image_memory::begin_slabs(size_t devices) {
  if (slabs_.size() < devices) slabs_.resize(devices);
  for (slab& s : slabs_) s.lo = s.hi = 0;
  host_current_ = false;
  device_current_ = false;
  sliced_ = true;
}

void image_memory::slab_written(size_t d, cl_command_queue queue, uint32_t lo, uint32_t hi) {
  slabs_[d].lo = lo, slabs_[d].hi = hi, slabs_[d].queue = queue;
  last_queue = queue;
}

}  // namespace ferry::graph
