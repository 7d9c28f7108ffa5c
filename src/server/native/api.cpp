#include "server/native/api.hpp"

#include <cstdlib>
#include <cstring>
#include <tuple>

#include "server/native/event_parking.hpp"

namespace ferry::server::native {

const api& real_api() {
  static const api table = [] {
    api t{};
#define FERRY_NATIVE_REAL(name) t.name = &::name;
    FERRY_NATIVE_FUNCTIONS(FERRY_NATIVE_REAL)
#undef FERRY_NATIVE_REAL
    t.clReleaseEvent = &release_event_when_safe;
    t.release_parked_events = &release_parked_events;
    t.holds_parked_events = &holds_parked_events;
    return t;
  }();
  return table;
}

namespace dry {
namespace {

std::atomic<int64_t> live{0};
std::atomic<uintptr_t> next_handle{1};

template <class Handle>
Handle fake() {
  live.fetch_add(1, std::memory_order_relaxed);
  // Distinct, aligned, never dereferenced.
  return reinterpret_cast<Handle>(next_handle.fetch_add(1, std::memory_order_relaxed) << 4);
}

template <class Last>
Last last_of(Last last) {
  return last;
}
template <class First, class... Rest>
auto last_of(First, Rest... rest) {
  return last_of(rest...);
}

// Creators: the last parameter is errcode_ret.
template <class Handle, class... Args>
Handle create(Args... args) {
  if (cl_int* error = last_of(args...)) *error = CL_SUCCESS;
  return fake<Handle>();
}

template <class Handle>
cl_int release(Handle) {
  live.fetch_sub(1, std::memory_order_relaxed);
  return CL_SUCCESS;
}
template <class Handle>
cl_int retain(Handle) {
  live.fetch_add(1, std::memory_order_relaxed);
  return CL_SUCCESS;
}

// Enqueues: the last parameter is the optional event.
template <class... Args>
cl_int enqueue(Args... args) {
  if (cl_event* event = last_of(args...)) *event = fake<cl_event>();
  return CL_SUCCESS;
}

template <class... Args>
cl_int succeed(Args...) {
  return CL_SUCCESS;
}

cl_int answer(const void* data, size_t size, size_t value_size, void* value, size_t* size_ret) {
  if (size_ret) *size_ret = size;
  if (value) {
    if (value_size < size) return CL_INVALID_VALUE;
    std::memcpy(value, data, size);
  }
  return CL_SUCCESS;
}

constexpr char kernel_name[] = "dry_kernel";

cl_mem create_buffer(cl_context, cl_mem_flags, size_t size, void*, cl_int* error) {
  if (size == 0 || size > (size_t{64} << 20)) {
    if (error) *error = CL_INVALID_BUFFER_SIZE;
    return nullptr;
  }
  if (error) *error = CL_SUCCESS;
  return fake<cl_mem>();
}

cl_program create_with_binary(cl_context, cl_uint count, const cl_device_id*, const size_t*,
                              const unsigned char**, cl_int* status, cl_int* error) {
  for (cl_uint i = 0; status && i < count; ++i) status[i] = CL_SUCCESS;
  if (error) *error = CL_SUCCESS;
  return fake<cl_program>();
}

cl_int event_info(cl_event, cl_event_info param, size_t size, void* value, size_t* size_ret) {
  if (param != CL_EVENT_COMMAND_EXECUTION_STATUS) return CL_INVALID_VALUE;
  cl_int status = CL_COMPLETE;
  return answer(&status, sizeof status, size, value, size_ret);
}

cl_int profiling_info(cl_event, cl_profiling_info, size_t size, void* value, size_t* size_ret) {
  cl_ulong zero = 0;
  return answer(&zero, sizeof zero, size, value, size_ret);
}

cl_int set_callback(cl_event event, cl_int, void(CL_CALLBACK* notify)(cl_event, cl_int, void*), void* user) {
  notify(event, CL_COMPLETE, user);
  return CL_SUCCESS;
}

cl_int program_info(cl_program, cl_program_info param, size_t size, void* value, size_t* size_ret) {
  switch (param) {
    case CL_PROGRAM_KERNEL_NAMES: return answer(kernel_name, sizeof kernel_name, size, value, size_ret);
    case CL_PROGRAM_NUM_KERNELS: {
      size_t one = 1;
      return answer(&one, sizeof one, size, value, size_ret);
    }
    case CL_PROGRAM_NUM_DEVICES: {
      cl_uint one = 1;
      return answer(&one, sizeof one, size, value, size_ret);
    }
    case CL_PROGRAM_BINARY_SIZES: {
      size_t four = 4;
      return answer(&four, sizeof four, size, value, size_ret);
    }
    case CL_PROGRAM_BINARIES: {
      if (size_ret) *size_ret = sizeof(unsigned char*);
      if (value) {
        if (size < sizeof(unsigned char*)) return CL_INVALID_VALUE;
        unsigned char* out = *static_cast<unsigned char**>(value);
        if (out) std::memcpy(out, "dry!", 4);
      }
      return CL_SUCCESS;
    }
    default: return CL_INVALID_VALUE;
  }
}

cl_int build_info(cl_program, cl_device_id, cl_program_build_info param, size_t size, void* value,
                  size_t* size_ret) {
  if (param == CL_PROGRAM_BUILD_LOG) return answer("", 1, size, value, size_ret);
  if (param == CL_PROGRAM_BUILD_STATUS) {
    cl_build_status ok = CL_BUILD_SUCCESS;
    return answer(&ok, sizeof ok, size, value, size_ret);
  }
  return CL_INVALID_VALUE;
}

cl_int kernel_info(cl_kernel, cl_kernel_info param, size_t size, void* value, size_t* size_ret) {
  if (param == CL_KERNEL_FUNCTION_NAME) return answer(kernel_name, sizeof kernel_name, size, value, size_ret);
  if (param == CL_KERNEL_NUM_ARGS) {
    cl_uint two = 2;
    return answer(&two, sizeof two, size, value, size_ret);
  }
  return CL_INVALID_VALUE;
}

cl_int work_group_info(cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t size, void* value,
                       size_t* size_ret) {
  size_t one = 1;
  return answer(&one, sizeof one, size, value, size_ret);
}

cl_int sub_group_info(cl_kernel, cl_device_id, cl_kernel_sub_group_info, size_t, const void*, size_t size,
                      void* value, size_t* size_ret) {
  size_t one = 1;
  return answer(&one, sizeof one, size, value, size_ret);
}

cl_int arg_info(cl_kernel, cl_uint, cl_kernel_arg_info, size_t size, void* value, size_t* size_ret) {
  return answer("x", 2, size, value, size_ret);
}

cl_int image_info(cl_mem, cl_image_info param, size_t size, void* value, size_t* size_ret) {
  if (param != CL_IMAGE_ELEMENT_SIZE) return CL_INVALID_VALUE;
  size_t four = 4;
  return answer(&four, sizeof four, size, value, size_ret);
}

// SVM: fake addresses, never dereferenced; sizes bounded like buffers.
void* svm_alloc(cl_context, cl_svm_mem_flags, size_t size, cl_uint) {
  if (size == 0 || size > (size_t{64} << 20)) return nullptr;
  return fake<void*>();
}

void svm_free(cl_context, void* pointer) {
  if (pointer) live.fetch_sub(1, std::memory_order_relaxed);
}

// Maps are real zeroed memory: a migration sends from them and receives into them.
void* map_buffer(cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t size, cl_uint, const cl_event*,
                 cl_event* event, cl_int* error) {
  void* memory = size == 0 || size > (size_t{64} << 20) ? nullptr : std::calloc(size, 1);
  if (memory == nullptr) {
    if (error) *error = size == 0 ? CL_INVALID_VALUE : CL_MAP_FAILURE;
    return nullptr;
  }
  live.fetch_add(1, std::memory_order_relaxed);
  if (event) *event = fake<cl_event>();
  if (error) *error = CL_SUCCESS;
  return memory;
}

cl_int unmap(cl_command_queue, cl_mem, void* pointer, cl_uint, const cl_event*, cl_event* event) {
  std::free(pointer);
  live.fetch_sub(1, std::memory_order_relaxed);
  if (event) *event = fake<cl_event>();
  return CL_SUCCESS;
}

// No dry buffer is ever destroyed later than its release: report it gone at once.
cl_int set_destructor(cl_mem mem, void(CL_CALLBACK* notify)(cl_mem, void*), void* user) {
  notify(mem, user);
  return CL_SUCCESS;
}

cl_int image_formats(cl_context, cl_mem_flags, cl_mem_object_type, cl_uint, cl_image_format*, cl_uint* count) {
  if (count) *count = 0;  // a dry device has no image support
  return CL_SUCCESS;
}

}  // namespace
}  // namespace dry

const api& dry_api() {
  static const api table = [] {
    api t{};
    t.clCreateContext = &dry::create<cl_context>;
    t.clReleaseContext = &dry::release<cl_context>;
    t.clCreateCommandQueueWithProperties = &dry::create<cl_command_queue>;
    t.clReleaseCommandQueue = &dry::release<cl_command_queue>;
    t.clCreateBuffer = &dry::create_buffer;
    t.clCreateSubBuffer = &dry::create<cl_mem>;
    t.clReleaseMemObject = &dry::release<cl_mem>;
    t.clCreateUserEvent = &dry::create<cl_event>;
    t.clSetUserEventStatus = &dry::succeed;
    t.clRetainEvent = &dry::retain<cl_event>;
    t.clReleaseEvent = &dry::release<cl_event>;
    t.clGetEventInfo = &dry::event_info;
    t.clGetEventProfilingInfo = &dry::profiling_info;
    t.clSetEventCallback = &dry::set_callback;
    t.clCreateProgramWithSource = &dry::create<cl_program>;
    t.clCreateProgramWithBinary = &dry::create_with_binary;
    t.clBuildProgram = &dry::succeed;
    t.clCompileProgram = &dry::succeed;
    t.clLinkProgram = &dry::create<cl_program>;
    t.clReleaseProgram = &dry::release<cl_program>;
    t.clGetProgramInfo = &dry::program_info;
    t.clGetProgramBuildInfo = &dry::build_info;
    t.clCreateKernel = &dry::create<cl_kernel>;
    t.clReleaseKernel = &dry::release<cl_kernel>;
    t.clGetKernelInfo = &dry::kernel_info;
    t.clGetKernelWorkGroupInfo = &dry::work_group_info;
    t.clGetKernelSubGroupInfo = &dry::sub_group_info;
    t.clGetKernelArgInfo = &dry::arg_info;
    t.clSetKernelArg = &dry::succeed;
    t.clEnqueueNDRangeKernel = &dry::enqueue;
    t.clEnqueueWriteBuffer = &dry::enqueue;
    t.clEnqueueWriteBufferRect = &dry::enqueue;
    t.clEnqueueReadBuffer = &dry::enqueue;
    t.clEnqueueReadBufferRect = &dry::enqueue;
    t.clEnqueueCopyBuffer = &dry::enqueue;
    t.clEnqueueCopyBufferRect = &dry::enqueue;
    t.clEnqueueFillBuffer = &dry::enqueue;
    t.clEnqueueMarkerWithWaitList = &dry::enqueue;
    t.clEnqueueBarrierWithWaitList = &dry::enqueue;
    t.clFlush = &dry::succeed;
    t.clFinish = &dry::succeed;
    t.clCreateImageWithProperties = &dry::create<cl_mem>;
    t.clGetImageInfo = &dry::image_info;
    t.clGetSupportedImageFormats = &dry::image_formats;
    t.clCreateSamplerWithProperties = &dry::create<cl_sampler>;
    t.clReleaseSampler = &dry::release<cl_sampler>;
    t.clEnqueueReadImage = &dry::enqueue;
    t.clEnqueueWriteImage = &dry::enqueue;
    t.clEnqueueCopyImage = &dry::enqueue;
    t.clEnqueueFillImage = &dry::enqueue;
    t.clEnqueueCopyImageToBuffer = &dry::enqueue;
    t.clEnqueueCopyBufferToImage = &dry::enqueue;
    t.clRetainContext = &dry::retain<cl_context>;
    t.clSetMemObjectDestructorCallback = &dry::set_destructor;
    t.clSVMAlloc = &dry::svm_alloc;
    t.clSVMFree = &dry::svm_free;
    t.clEnqueueSVMMemcpy = &dry::enqueue;
    t.clEnqueueSVMMemFill = &dry::enqueue;
    t.clSetKernelArgSVMPointer = &dry::succeed;
    t.clSetKernelExecInfo = &dry::succeed;
    t.clWaitForEvents = &dry::succeed;
    // Any IL makes a program; the dry device takes every specialization constant.
    t.clCreateProgramWithIL = &dry::create<cl_program>;
    t.clSetProgramSpecializationConstant = &dry::succeed;
    t.clRetainCommandQueue = &dry::retain<cl_command_queue>;
    t.clRetainMemObject = &dry::retain<cl_mem>;
    t.clEnqueueMapBuffer = &dry::map_buffer;
    t.clEnqueueUnmapMemObject = &dry::unmap;
    t.release_parked_events = [](cl_context) {};  // dry events never park
    t.holds_parked_events = [](cl_context) { return false; };
    return t;
  }();
  return table;
}

int64_t dry_live_handles() { return dry::live.load(); }

}  // namespace ferry::server::native
