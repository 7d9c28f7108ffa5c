// RAII owners of native OpenCL handles, released through the real API.
// (Objects a session creates live in its object_table, which releases them
// through whichever native::api the session uses.)
#pragma once

#include <CL/cl.h>

#include <utility>

namespace ferry::server::native {

template <class Handle, cl_int (*Release)(Handle)>
class unique_handle {
 public:
  unique_handle() = default;
  explicit unique_handle(Handle handle) : handle_(handle) {}
  unique_handle(unique_handle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  unique_handle& operator=(unique_handle&& other) noexcept {
    if (this != &other) reset(std::exchange(other.handle_, nullptr));
    return *this;
  }
  unique_handle(const unique_handle&) = delete;
  unique_handle& operator=(const unique_handle&) = delete;
  ~unique_handle() { reset(); }

  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }
  Handle release() { return std::exchange(handle_, nullptr); }
  void reset(Handle handle = nullptr) {
    if (handle_) Release(handle_);
    handle_ = handle;
  }

 private:
  Handle handle_ = nullptr;
};

using unique_context = unique_handle<cl_context, &::clReleaseContext>;
using unique_queue = unique_handle<cl_command_queue, &::clReleaseCommandQueue>;
using unique_event = unique_handle<cl_event, &::clReleaseEvent>;
using unique_mem = unique_handle<cl_mem, &::clReleaseMemObject>;
using unique_program = unique_handle<cl_program, &::clReleaseProgram>;
using unique_kernel = unique_handle<cl_kernel, &::clReleaseKernel>;

}  // namespace ferry::server::native
