#include "graph/core/image_memory.hpp"

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
}

cl_mem image_memory::device_buffer(size_t p, cl_context context, cl_int& status) {
  status = CL_SUCCESS;
  if (device_[p] == nullptr) {
    size_t bytes = device_pitch(p) * planes_[p].height;
    device_[p] = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes == 0 ? 1 : bytes, nullptr, &status);
  }
  return device_[p];
}

// Uploads block: the host memory may be the application's, which it may change
// (through a map) as soon as this returns.
cl_int image_memory::to_device(cl_context context, cl_command_queue queue) {
  if (device_current_) return CL_SUCCESS;
  for (size_t p = 0; p < planes_.size(); ++p) {
    cl_int status = CL_SUCCESS;
    cl_mem mem = device_buffer(p, context, status);
    if (mem == nullptr) return status;
    const plane& plane = planes_[p];
    size_t pitch = device_pitch(p);
    if (packed(plane)) {
      status = clEnqueueWriteBuffer(queue, mem, CL_TRUE, 0, pitch * plane.height, plane.base, 0, nullptr, nullptr);
    } else if (plane.stride_x == static_cast<int32_t>(plane.element_bytes) && plane.stride_y > 0) {
      size_t origin[3] = {0, 0, 0};
      size_t region[3] = {pitch, plane.height, 1};
      status = clEnqueueWriteBufferRect(queue, mem, CL_TRUE, origin, origin, region, pitch, 0,
                                        static_cast<size_t>(plane.stride_y), 0, plane.base, 0, nullptr, nullptr);
    } else {
      // Elements not adjacent (an application's unusual stride_x): gather on the host.
      std::vector<uint8_t> gathered(pitch * plane.height);
      for (uint32_t y = 0; y < plane.height; ++y)
        for (uint32_t x = 0; x < plane.width; ++x)
          std::memcpy(&gathered[y * pitch + x * plane.element_bytes],
                      plane.base + int64_t{y} * plane.stride_y + int64_t{x} * plane.stride_x, plane.element_bytes);
      status = clEnqueueWriteBuffer(queue, mem, CL_TRUE, 0, gathered.size(), gathered.data(), 0, nullptr, nullptr);
    }
    if (status != CL_SUCCESS) return status;
  }
  device_current_ = true;
  last_queue = queue;
  return CL_SUCCESS;
}

cl_int image_memory::to_host(cl_command_queue queue) {
  if (host_current_) return CL_SUCCESS;
  if (last_queue != nullptr) queue = last_queue;
  for (size_t p = 0; p < planes_.size(); ++p) {
    const plane& plane = planes_[p];
    size_t pitch = device_pitch(p);
    cl_int status;
    if (packed(plane)) {
      status = clEnqueueReadBuffer(queue, device_[p], CL_TRUE, 0, pitch * plane.height, plane.base, 0, nullptr, nullptr);
    } else if (plane.stride_x == static_cast<int32_t>(plane.element_bytes) && plane.stride_y > 0) {
      size_t origin[3] = {0, 0, 0};
      size_t region[3] = {pitch, plane.height, 1};
      status = clEnqueueReadBufferRect(queue, device_[p], CL_TRUE, origin, origin, region, pitch, 0,
                                       static_cast<size_t>(plane.stride_y), 0, plane.base, 0, nullptr, nullptr);
    } else {
      std::vector<uint8_t> gathered(pitch * plane.height);
      status = clEnqueueReadBuffer(queue, device_[p], CL_TRUE, 0, gathered.size(), gathered.data(), 0, nullptr, nullptr);
      if (status == CL_SUCCESS)
        for (uint32_t y = 0; y < plane.height; ++y)
          for (uint32_t x = 0; x < plane.width; ++x)
            std::memcpy(plane.base + int64_t{y} * plane.stride_y + int64_t{x} * plane.stride_x,
                        &gathered[y * pitch + x * plane.element_bytes], plane.element_bytes);
    }
    if (status != CL_SUCCESS) return status;
  }
  host_current_ = true;
  return CL_SUCCESS;
}

}  // namespace ferry::graph
