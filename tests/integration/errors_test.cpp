// Error clauses: invalid arguments return the spec's codes through Ferry, and the same as
// the native platform does for the same call. Each check carries the spec clause it tests.
// Where PoCL 3.1 itself strays from the spec, the check runs on Ferry alone and says so.
#include <algorithm>

#include "cl_helpers.hpp"
#include "kernels.hpp"

namespace ferry::test {

suite_config this_suite() {
  suite_config config;
  config.loader = loader_mode::ferry_and_native;
  return config;
}

namespace {

constexpr const char* error_kernels = R"CLC(
kernel void scale(global float* x, float factor) { x[get_global_id(0)] *= factor; }

kernel void with_local(global int* out, local int* scratch) {
  scratch[get_local_id(0)] = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = scratch[0];
}

__attribute__((reqd_work_group_size(4, 1, 1)))
kernel void fixed_group(global int* out) { out[get_global_id(0)] = 1; }

kernel void takes_char(char c, global int* out) { out[get_global_id(0)] = c; }
)CLC";

// The objects each check works on, one set per platform.
struct side_objects {
  cl_side* side = nullptr;
  program_handle program;   // error_kernels, built
  program_handle unbuilt;   // error_kernels, never built
  kernel_handle scale;      // (global float*, float)
  kernel_handle with_local; // (global int*, local int*)
  kernel_handle fixed;      // reqd_work_group_size(4, 1, 1)
  kernel_handle takes_char; // (char, global int*)
  mem_handle buf;           // 4096 bytes, read-write
  mem_handle other_buf;     // 4096 bytes, read-write
  context_handle context2;  // a second context on the same device
  queue_handle queue2;      // and its queue
  mem_handle foreign_buf;   // a buffer of context2
  event_handle foreign_event;  // a (complete) user event of context2

  cl_context ctx() const { return side->context; }
  cl_command_queue q() const { return side->queue; }
  cl_device_id dev() const { return side->device; }
};

// Releases what a create call returned and reports its error code. `rc` is read only
// here, after the call that writes it (a by-value argument could be read first).
template <class T>
cl_int created(T object, const cl_int& rc) {
  if (object != nullptr) {
    if (rc != CL_SUCCESS) {
      ADD_FAILURE() << "a non-NULL object came back with " << cl_error_name(rc);
    } else {
      cl_release<T>::release(object);
    }
  }
  return rc;
}

}  // namespace

class errors : public ferry_and_native_test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(ferry_and_native_test::SetUp());
    ASSERT_NO_FATAL_FAILURE(prepare(f_, ferry_));
    ASSERT_NO_FATAL_FAILURE(prepare(n_, native_));
  }
  void TearDown() override {
    f_ = side_objects{};
    n_ = side_objects{};
    ferry_and_native_test::TearDown();
  }

  void prepare(side_objects& s, cl_side& side) {
    s.side = &side;
    s.program = build_program(side.context, side.device, error_kernels);
    ASSERT_TRUE(s.program);
    cl_int rc = CL_SUCCESS;
    const char* src = error_kernels;
    s.unbuilt.reset(clCreateProgramWithSource(side.context, 1, &src, nullptr, &rc));
    ASSERT_CL_OK(rc);
    s.scale = create_kernel(s.program, "scale");
    s.with_local = create_kernel(s.program, "with_local");
    s.fixed = create_kernel(s.program, "fixed_group");
    s.takes_char = create_kernel(s.program, "takes_char");
    s.buf = create_buffer(side.context, CL_MEM_READ_WRITE, 4096);
    s.other_buf = create_buffer(side.context, CL_MEM_READ_WRITE, 4096);
    s.context2.reset(clCreateContext(nullptr, 1, &side.device, nullptr, nullptr, &rc));
    ASSERT_CL_OK(rc);
    s.queue2.reset(clCreateCommandQueue(s.context2, side.device, 0, &rc));
    ASSERT_CL_OK(rc);
    s.foreign_buf = create_buffer(s.context2, CL_MEM_READ_WRITE, 4096);
    s.foreign_event.reset(clCreateUserEvent(s.context2, &rc));
    ASSERT_CL_OK(rc);
    ASSERT_CL_OK(clSetUserEventStatus(s.foreign_event, CL_COMPLETE));
  }

  // Runs `check` on Ferry and on the native platform; both must answer `expected`.
  template <class Check>
  void both(cl_int expected, Check check, const char* what) {
    for (side_objects* s : {&f_, &n_}) {
      SCOPED_TRACE(platform_name(s->side->platform));
      EXPECT_EQ(cl_status{expected}, cl_status{check(*s)}) << what;
    }
  }
  // For clauses PoCL 3.1 does not follow: Ferry alone must answer `expected`.
  template <class Check>
  void ferry_only(cl_int expected, Check check, const char* what) {
    if constexpr (self_check) return;
    EXPECT_EQ(cl_status{expected}, cl_status{check(f_)}) << what << " (on Ferry)";
  }

  side_objects f_, n_;
};

#define EXPECT_BOTH(expected, ...) \
  both(expected, [&](side_objects& s) -> cl_int { return __VA_ARGS__; }, #__VA_ARGS__)
#define EXPECT_FERRY(expected, ...) \
  ferry_only(expected, [&](side_objects& s) -> cl_int { return __VA_ARGS__; }, #__VA_ARGS__)

TEST_F(errors, buffer_creation) {
  int host[16] = {};
  cl_int rc = CL_SUCCESS;
  // CL_INVALID_CONTEXT if context is not a valid context.
  EXPECT_BOTH(CL_INVALID_CONTEXT, created(clCreateBuffer(nullptr, CL_MEM_READ_WRITE, 64, nullptr, &rc), rc));
  // CL_INVALID_BUFFER_SIZE if size is 0.
  EXPECT_BOTH(CL_INVALID_BUFFER_SIZE, created(clCreateBuffer(s.ctx(), CL_MEM_READ_WRITE, 0, nullptr, &rc), rc));
  // CL_INVALID_BUFFER_SIZE if size is greater than CL_DEVICE_MAX_MEM_ALLOC_SIZE.
  EXPECT_BOTH(CL_INVALID_BUFFER_SIZE,
              created(clCreateBuffer(s.ctx(), CL_MEM_READ_WRITE,
                                     device_value<cl_ulong>(s.dev(), CL_DEVICE_MAX_MEM_ALLOC_SIZE) + 1, nullptr, &rc),
                      rc));
  // CL_INVALID_VALUE if values specified in flags are not valid.
  EXPECT_BOTH(CL_INVALID_VALUE, created(clCreateBuffer(s.ctx(), CL_MEM_READ_WRITE | CL_MEM_READ_ONLY, 64, nullptr, &rc), rc));
  EXPECT_BOTH(CL_INVALID_VALUE, created(clCreateBuffer(s.ctx(), CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY, 64, nullptr, &rc), rc));
  EXPECT_BOTH(CL_INVALID_VALUE,
              created(clCreateBuffer(s.ctx(), CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR, sizeof host, host, &rc), rc));
  EXPECT_BOTH(CL_INVALID_VALUE,
              created(clCreateBuffer(s.ctx(), CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR, sizeof host, host, &rc), rc));
  EXPECT_BOTH(CL_INVALID_VALUE,
              created(clCreateBuffer(s.ctx(), CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS, 64, nullptr, &rc), rc));
  // CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or CL_MEM_COPY_HOST_PTR
  // are set in flags, or if host_ptr is not NULL but neither is set.
  EXPECT_BOTH(CL_INVALID_HOST_PTR, created(clCreateBuffer(s.ctx(), CL_MEM_USE_HOST_PTR, 64, nullptr, &rc), rc));
  EXPECT_BOTH(CL_INVALID_HOST_PTR, created(clCreateBuffer(s.ctx(), CL_MEM_COPY_HOST_PTR, 64, nullptr, &rc), rc));
  EXPECT_BOTH(CL_INVALID_HOST_PTR, created(clCreateBuffer(s.ctx(), CL_MEM_READ_WRITE, sizeof host, host, &rc), rc));
  // CL_INVALID_VALUE if param_name is not valid.
  size_t size = 0;
  EXPECT_BOTH(CL_INVALID_VALUE, clGetMemObjectInfo(s.buf, 0x7fff, 0, nullptr, &size));
}

TEST_F(errors, sub_buffer_creation) {
  cl_int rc = CL_SUCCESS;
  auto sub = [&](side_objects& s, cl_mem parent, cl_mem_flags flags, size_t origin, size_t size) {
    const cl_buffer_region region{origin, size};
    return created(clCreateSubBuffer(parent, flags, CL_BUFFER_CREATE_TYPE_REGION, &region, &rc), rc);
  };
  const size_t align = device_value<cl_uint>(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
  ASSERT_GT(align, 1u);
  ASSERT_LE(2 * align, 4096u);
  // CL_MISALIGNED_SUB_BUFFER_OFFSET if there are no devices in context associated with buffer
  // for which the origin field is aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN.
  EXPECT_BOTH(CL_MISALIGNED_SUB_BUFFER_OFFSET, sub(s, s.buf, 0, 1, 16));
  // CL_INVALID_VALUE if the region specified by the cl_buffer_region structure passed in
  // buffer_create_info is out of bounds in buffer.
  EXPECT_BOTH(CL_INVALID_VALUE, sub(s, s.buf, 0, align, 4096));
  // CL_INVALID_BUFFER_SIZE if the size field of the cl_buffer_region structure is 0.
  EXPECT_BOTH(CL_INVALID_BUFFER_SIZE, sub(s, s.buf, 0, 0, 0));
  // CL_INVALID_VALUE if the value specified in buffer_create_type is not valid, or if
  // buffer_create_info is NULL.
  const cl_buffer_region region{0, 64};
  EXPECT_BOTH(CL_INVALID_VALUE, created(clCreateSubBuffer(s.buf, 0, 0x7fff, &region, &rc), rc));
  EXPECT_BOTH(CL_INVALID_VALUE, created(clCreateSubBuffer(s.buf, 0, CL_BUFFER_CREATE_TYPE_REGION, nullptr, &rc), rc));
  // CL_INVALID_MEM_OBJECT if buffer is a sub-buffer object.
  for (side_objects* s : {&f_, &n_}) {
    SCOPED_TRACE(platform_name(s->side->platform));
    mem_handle first(clCreateSubBuffer(s->buf, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &rc));
    ASSERT_CL_OK(rc);
    EXPECT_CL(CL_INVALID_MEM_OBJECT, sub(*s, first, 0, 0, 16));
  }
  // CL_INVALID_VALUE if buffer was created with CL_MEM_WRITE_ONLY and flags specifies
  // CL_MEM_READ_WRITE or CL_MEM_READ_ONLY.
  for (side_objects* s : {&f_, &n_}) {
    SCOPED_TRACE(platform_name(s->side->platform));
    auto write_only = create_buffer(s->ctx(), CL_MEM_WRITE_ONLY, 4096);
    EXPECT_CL(CL_INVALID_VALUE, sub(*s, write_only, CL_MEM_READ_ONLY, 0, 64));
  }
}

TEST_F(errors, buffer_transfers) {
  std::vector<unsigned char> host(8192);
  // CL_INVALID_MEM_OBJECT if buffer is not a valid buffer object.
  EXPECT_BOTH(CL_INVALID_MEM_OBJECT, clEnqueueReadBuffer(s.q(), nullptr, CL_TRUE, 0, 16, host.data(), 0, nullptr, nullptr));
  EXPECT_BOTH(CL_INVALID_MEM_OBJECT, clEnqueueWriteBuffer(s.q(), nullptr, CL_TRUE, 0, 16, host.data(), 0, nullptr, nullptr));
  // CL_INVALID_VALUE if the region being read or written specified by (offset, size) is out
  // of bounds or if ptr is a NULL value.
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueReadBuffer(s.q(), s.buf, CL_TRUE, 4000, 100, host.data(), 0, nullptr, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueWriteBuffer(s.q(), s.buf, CL_TRUE, 0, 4097, host.data(), 0, nullptr, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueReadBuffer(s.q(), s.buf, CL_TRUE, 0, 16, nullptr, 0, nullptr, nullptr));
  // CL_INVALID_CONTEXT if the context associated with command_queue and buffer are not the same.
  EXPECT_BOTH(CL_INVALID_CONTEXT, clEnqueueReadBuffer(s.q(), s.foreign_buf, CL_TRUE, 0, 16, host.data(), 0, nullptr, nullptr));
  // CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and num_events_in_wait_list > 0, or
  // event_wait_list is not NULL and num_events_in_wait_list is 0.
  cl_event some_event = f_.foreign_event;  // only its non-NULL-ness matters here
  EXPECT_BOTH(CL_INVALID_EVENT_WAIT_LIST, clEnqueueReadBuffer(s.q(), s.buf, CL_TRUE, 0, 16, host.data(), 1, nullptr, nullptr));
  EXPECT_BOTH(CL_INVALID_EVENT_WAIT_LIST, clEnqueueWriteBuffer(s.q(), s.buf, CL_TRUE, 0, 16, host.data(), 0, &some_event, nullptr));
  // CL_INVALID_OPERATION if clEnqueueReadBuffer is called on a buffer created with
  // CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS (and the converse for writes).
  for (side_objects* s : {&f_, &n_}) {
    SCOPED_TRACE(platform_name(s->side->platform));
    auto host_write_only = create_buffer(s->ctx(), CL_MEM_READ_WRITE | CL_MEM_HOST_WRITE_ONLY, 64);
    auto host_read_only = create_buffer(s->ctx(), CL_MEM_READ_WRITE | CL_MEM_HOST_READ_ONLY, 64);
    EXPECT_CL(CL_INVALID_OPERATION, clEnqueueReadBuffer(s->q(), host_write_only, CL_TRUE, 0, 16, host.data(), 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_OPERATION, clEnqueueWriteBuffer(s->q(), host_read_only, CL_TRUE, 0, 16, host.data(), 0, nullptr, nullptr));
  }
  // CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the read and write operations are blocking
  // and the execution status of any of the events in event_wait_list is a negative integer.
  // (PoCL 3.1 then hangs releasing the queue: Ferry only.)
  if constexpr (!self_check) {
    side_objects* s = &f_;
    cl_int rc = CL_SUCCESS;
    event_handle failed(clCreateUserEvent(s->ctx(), &rc));
    ASSERT_CL_OK(rc);
    ASSERT_CL_OK(clSetUserEventStatus(failed, -5));
    const cl_event list[] = {failed};
    queue_handle q(clCreateCommandQueue(s->ctx(), s->dev(), 0, &rc));
    ASSERT_CL_OK(rc);
    EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
              clEnqueueReadBuffer(q, s->buf, CL_TRUE, 0, 16, host.data(), 1, list, nullptr));
  }
}

TEST_F(errors, copy_fill_and_map) {
  std::vector<unsigned char> pattern(256, 1);
  // CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same buffer object and the
  // source and destination regions overlap.
  EXPECT_BOTH(CL_MEM_COPY_OVERLAP, clEnqueueCopyBuffer(s.q(), s.buf, s.buf, 0, 100, 200, 0, nullptr, nullptr));
  // CL_INVALID_VALUE if src_offset, dst_offset, size, src_offset + size or dst_offset + size
  // require accessing elements outside the buffers.
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueCopyBuffer(s.q(), s.buf, s.other_buf, 4000, 0, 200, 0, nullptr, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueCopyBuffer(s.q(), s.buf, s.other_buf, 0, 4000, 200, 0, nullptr, nullptr));
  // CL_INVALID_CONTEXT if the context associated with command_queue, src_buffer and dst_buffer
  // are not the same.
  EXPECT_BOTH(CL_INVALID_CONTEXT, clEnqueueCopyBuffer(s.q(), s.buf, s.foreign_buf, 0, 0, 16, 0, nullptr, nullptr));
  // CL_INVALID_VALUE if pattern is NULL, if pattern_size is 0 or not one of
  // {1, 2, 4, 8, 16, 32, 64, 128}, if offset or size is not a multiple of pattern_size, or
  // if the region is out of bounds.
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueFillBuffer(s.q(), s.buf, nullptr, 4, 0, 64, 0, nullptr, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueFillBuffer(s.q(), s.buf, pattern.data(), 3, 0, 63, 0, nullptr, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueFillBuffer(s.q(), s.buf, pattern.data(), 256, 0, 512, 0, nullptr, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueFillBuffer(s.q(), s.buf, pattern.data(), 4, 2, 64, 0, nullptr, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueFillBuffer(s.q(), s.buf, pattern.data(), 4, 0, 66, 0, nullptr, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueFillBuffer(s.q(), s.buf, pattern.data(), 4, 4092, 8, 0, nullptr, nullptr));
  // CL_INVALID_VALUE if region being mapped given by (offset, size) is out of bounds or if
  // size is 0 or if values specified in map_flags are not valid.
  auto map_rc = [](side_objects& s, cl_map_flags flags, size_t offset, size_t size) {
    cl_int rc = CL_SUCCESS;
    void* p = clEnqueueMapBuffer(s.q(), s.buf, CL_TRUE, flags, offset, size, 0, nullptr, nullptr, &rc);
    if (p != nullptr && rc == CL_SUCCESS) {
      clEnqueueUnmapMemObject(s.q(), s.buf, p, 0, nullptr, nullptr);
      clFinish(s.q());
    }
    return rc;
  };
  EXPECT_BOTH(CL_INVALID_VALUE, map_rc(s, CL_MAP_READ, 4000, 200));
  EXPECT_BOTH(CL_INVALID_VALUE, map_rc(s, CL_MAP_READ, 0, 0));
  // (PoCL 3.1 accepts CL_MAP_READ with CL_MAP_WRITE_INVALIDATE_REGION.)
  EXPECT_FERRY(CL_INVALID_VALUE, map_rc(s, CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION, 0, 64));
  // CL_INVALID_VALUE if mapped_ptr is not a valid pointer returned by clEnqueueMapBuffer for
  // memobj.
  int not_mapped = 0;
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueUnmapMemObject(s.q(), s.buf, &not_mapped, 0, nullptr, nullptr));
}

TEST_F(errors, rect_transfers) {
  std::vector<unsigned char> host(8192);
  const size_t origin[3] = {0, 0, 0};
  const size_t region[3] = {16, 4, 1};
  const size_t empty_region[3] = {16, 0, 1};
  const size_t beyond[3] = {0, 300, 0};
  // CL_INVALID_VALUE if any region array element is 0.
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueReadBufferRect(s.q(), s.buf, CL_TRUE, origin, origin, empty_region, 16, 64, 16, 64,
                                                        host.data(), 0, nullptr, nullptr));
  // CL_INVALID_VALUE if buffer_row_pitch is not 0 and is less than region[0].
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueWriteBufferRect(s.q(), s.buf, CL_TRUE, origin, origin, region, 8, 0, 16, 64,
                                                         host.data(), 0, nullptr, nullptr));
  // CL_INVALID_VALUE if host_row_pitch is not 0 and is less than region[0].
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueWriteBufferRect(s.q(), s.buf, CL_TRUE, origin, origin, region, 16, 64, 8, 0,
                                                         host.data(), 0, nullptr, nullptr));
  // CL_INVALID_VALUE if the region being read or written specified by (buffer_origin,
  // region, buffer_row_pitch, buffer_slice_pitch) is out of bounds.
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueReadBufferRect(s.q(), s.buf, CL_TRUE, beyond, origin, region, 16, 64, 16, 64,
                                                        host.data(), 0, nullptr, nullptr));
  // CL_INVALID_VALUE if ptr is NULL.
  EXPECT_BOTH(CL_INVALID_VALUE, clEnqueueReadBufferRect(s.q(), s.buf, CL_TRUE, origin, origin, region, 16, 64, 16, 64,
                                                        nullptr, 0, nullptr, nullptr));
  // CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same and the regions overlap.
  const size_t shifted[3] = {8, 1, 0};
  EXPECT_BOTH(CL_MEM_COPY_OVERLAP, clEnqueueCopyBufferRect(s.q(), s.buf, s.buf, origin, shifted, region, 16, 64, 16, 64,
                                                           0, nullptr, nullptr));
}

TEST_F(errors, program_creation_and_build) {
  cl_int rc = CL_SUCCESS;
  const char* src = kernels::basics;
  const char* null_string = nullptr;
  // CL_INVALID_VALUE if count is zero or if strings or any entry in strings is NULL.
  // (PoCL 3.1 crashes on a NULL strings array: Ferry only.)
  EXPECT_BOTH(CL_INVALID_VALUE, created(clCreateProgramWithSource(s.ctx(), 0, &src, nullptr, &rc), rc));
  EXPECT_FERRY(CL_INVALID_VALUE, created(clCreateProgramWithSource(s.ctx(), 1, nullptr, nullptr, &rc), rc));
  EXPECT_BOTH(CL_INVALID_VALUE, created(clCreateProgramWithSource(s.ctx(), 1, &null_string, nullptr, &rc), rc));
  // CL_INVALID_VALUE if device_list is NULL and num_devices is greater than zero, or if
  // device_list is not NULL and num_devices is zero.
  EXPECT_BOTH(CL_INVALID_VALUE, clBuildProgram(s.unbuilt, 1, nullptr, "", nullptr, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clBuildProgram(s.unbuilt, 0, &s.side->device, "", nullptr, nullptr));
  // CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL.
  int user_data = 0;
  EXPECT_BOTH(CL_INVALID_VALUE, clBuildProgram(s.unbuilt, 0, nullptr, "", nullptr, &user_data));
  // CL_INVALID_DEVICE if any device in device_list is not in the list of devices associated
  // with program.
  EXPECT_FERRY(CL_INVALID_DEVICE, clBuildProgram(s.unbuilt, 1, &native_.device, "", nullptr, nullptr));
  // CL_INVALID_PROGRAM_EXECUTABLE (CL_PROGRAM_NUM_KERNELS, CL_PROGRAM_KERNEL_NAMES) if a
  // successful program executable has not been built.
  size_t kernels_count = 0;
  EXPECT_BOTH(CL_INVALID_PROGRAM_EXECUTABLE,
              clGetProgramInfo(s.unbuilt, CL_PROGRAM_NUM_KERNELS, sizeof kernels_count, &kernels_count, nullptr));
  // CL_INVALID_VALUE if param_name is not valid.
  size_t size = 0;
  EXPECT_BOTH(CL_INVALID_VALUE, clGetProgramInfo(s.program, 0x7fff, 0, nullptr, &size));
  EXPECT_BOTH(CL_INVALID_VALUE, clGetProgramBuildInfo(s.program, s.dev(), 0x7fff, 0, nullptr, &size));
  // CL_INVALID_DEVICE if device is not in the list of devices associated with program.
  EXPECT_FERRY(CL_INVALID_DEVICE, clGetProgramBuildInfo(s.program, native_.device, CL_PROGRAM_BUILD_STATUS, 0, nullptr, &size));
  // CL_INVALID_VALUE if num_input_programs is zero or input_programs is NULL.
  EXPECT_BOTH(CL_INVALID_VALUE, created(clLinkProgram(s.ctx(), 1, &s.side->device, "", 0, nullptr, nullptr, nullptr, &rc), rc));
  // CL_INVALID_VALUE if num_input_headers is not zero and input_headers or header_include_names
  // is NULL. (PoCL 3.1 crashes: Ferry only.)
  EXPECT_FERRY(CL_INVALID_VALUE, clCompileProgram(s.unbuilt, 1, &s.side->device, "", 1, nullptr, nullptr, nullptr, nullptr));
}

TEST_F(errors, program_build_failures) {
  // CL_BUILD_PROGRAM_FAILURE if there is a failure to build the program executable.
  const char* bad = "kernel void k(global int* x) { x[0] = 1 +; }";
  for (side_objects* s : {&f_, &n_}) {
    SCOPED_TRACE(platform_name(s->side->platform));
    cl_int rc = CL_SUCCESS;
    program_handle p(clCreateProgramWithSource(s->ctx(), 1, &bad, nullptr, &rc));
    ASSERT_CL_OK(rc);
    EXPECT_CL(CL_BUILD_PROGRAM_FAILURE, clBuildProgram(p, 1, &s->side->device, "", nullptr, nullptr));
    EXPECT_FALSE(build_log(p, s->dev()).empty());
  }
  // CL_INVALID_BUILD_OPTIONS if the build options specified by options are invalid.
  // (PoCL 3.1 reports an unknown option as CL_BUILD_PROGRAM_FAILURE or not at all.)
  {
    cl_int rc = CL_SUCCESS;
    const char* src = kernels::basics;
    program_handle p(clCreateProgramWithSource(context_, 1, &src, nullptr, &rc));
    ASSERT_CL_OK(rc);
    const cl_int ferry_rc = clBuildProgram(p, 1, &device_, "-cl-ferry-no-such-option", nullptr, nullptr);
    program_handle np(clCreateProgramWithSource(native_.context, 1, &src, nullptr, &rc));
    ASSERT_CL_OK(rc);
    const cl_int native_rc = clBuildProgram(np, 1, &native_.device, "-cl-ferry-no-such-option", nullptr, nullptr);
    EXPECT_CL(native_rc, ferry_rc) << "Ferry should fail an unknown option the way the device does";
  }
  // CL_INVALID_BINARY if an invalid program binary was encountered for any device.
  const unsigned char garbage[64] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4};
  const unsigned char* binaries[] = {garbage};
  const size_t lengths[] = {sizeof garbage};
  const size_t zero_lengths[] = {0};
  for (side_objects* s : {&f_, &n_}) {
    SCOPED_TRACE(platform_name(s->side->platform));
    cl_int rc = CL_SUCCESS, status = CL_SUCCESS;
    const cl_int created_rc =
        created(clCreateProgramWithBinary(s->ctx(), 1, &s->side->device, lengths, binaries, &status, &rc), rc);
    EXPECT_CL(CL_INVALID_BINARY, created_rc);
    EXPECT_CL(CL_INVALID_BINARY, status);
    // CL_INVALID_VALUE if lengths or binaries is NULL or if any entry in lengths[i] is zero or
    // binaries[i] is NULL.
    EXPECT_CL(CL_INVALID_VALUE,
              created(clCreateProgramWithBinary(s->ctx(), 1, &s->side->device, zero_lengths, binaries, nullptr, &rc), rc));
    EXPECT_CL(CL_INVALID_VALUE,
              created(clCreateProgramWithBinary(s->ctx(), 1, &s->side->device, nullptr, binaries, nullptr, &rc), rc));
  }
}

TEST_F(errors, kernel_creation_and_info) {
  cl_int rc = CL_SUCCESS;
  // CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built executable for program.
  EXPECT_BOTH(CL_INVALID_PROGRAM_EXECUTABLE, created(clCreateKernel(s.unbuilt, "scale", &rc), rc));
  // CL_INVALID_KERNEL_NAME if kernel_name is not found in program.
  EXPECT_BOTH(CL_INVALID_KERNEL_NAME, created(clCreateKernel(s.program, "no_such_kernel", &rc), rc));
  // CL_INVALID_VALUE if kernel_name is NULL.
  EXPECT_BOTH(CL_INVALID_VALUE, created(clCreateKernel(s.program, nullptr, &rc), rc));
  // CL_INVALID_VALUE if kernels is not NULL and num_kernels is less than the number of kernels
  // in program.
  cl_kernel one[1] = {};
  EXPECT_BOTH(CL_INVALID_VALUE, clCreateKernelsInProgram(s.program, 1, one, nullptr));
  // CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built executable for any device in program.
  cl_uint count = 0;
  EXPECT_BOTH(CL_INVALID_PROGRAM_EXECUTABLE, clCreateKernelsInProgram(s.unbuilt, 0, nullptr, &count));
  // CL_INVALID_VALUE if param_name is not valid.
  size_t size = 0;
  EXPECT_BOTH(CL_INVALID_VALUE, clGetKernelInfo(s.scale, 0x7fff, 0, nullptr, &size));
  EXPECT_BOTH(CL_INVALID_VALUE, clGetKernelWorkGroupInfo(s.scale, s.dev(), 0x7fff, 0, nullptr, &size));
  // CL_INVALID_DEVICE if device is not in the list of devices associated with kernel.
  EXPECT_FERRY(CL_INVALID_DEVICE, clGetKernelWorkGroupInfo(s.scale, native_.device, CL_KERNEL_WORK_GROUP_SIZE, 0, nullptr, &size));
}

TEST_F(errors, kernel_arguments) {
  const float f = 1.0f;
  const double d = 1.0;
  // CL_INVALID_ARG_INDEX if arg_index is not a valid argument index.
  EXPECT_BOTH(CL_INVALID_ARG_INDEX, clSetKernelArg(s.scale, 2, sizeof f, &f));
  EXPECT_BOTH(CL_INVALID_ARG_INDEX, clSetKernelArg(s.scale, 99, sizeof f, &f));
  // CL_INVALID_ARG_SIZE if arg_size does not match the size of the data type for an argument
  // that is not a memory object, or if the argument is a memory object and arg_size !=
  // sizeof(cl_mem), or if the argument is declared with __local and arg_size is zero.
  EXPECT_BOTH(CL_INVALID_ARG_SIZE, clSetKernelArg(s.scale, 1, sizeof d, &d));
  EXPECT_BOTH(CL_INVALID_ARG_SIZE, clSetKernelArg(s.scale, 0, sizeof(cl_mem) / 2, &s.buf));
  EXPECT_BOTH(CL_INVALID_ARG_SIZE, clSetKernelArg(s.with_local, 1, 0, nullptr));
  // A size of 0 with a value is no char, whatever the value, every time it is tried, and
  // also after the argument took a right-sized value.
  const char c = 1;
  EXPECT_BOTH(CL_INVALID_ARG_SIZE, clSetKernelArg(s.takes_char, 0, 0, &s.buf));
  EXPECT_BOTH(CL_INVALID_ARG_SIZE, clSetKernelArg(s.takes_char, 0, 0, &c));
  EXPECT_BOTH(CL_SUCCESS, clSetKernelArg(s.takes_char, 0, sizeof c, &c));
  EXPECT_BOTH(CL_INVALID_ARG_SIZE, clSetKernelArg(s.takes_char, 0, 0, &c));
  // CL_INVALID_ARG_VALUE if arg_value specified is not a valid value, e.g. NULL for an
  // argument not declared __local, or not NULL for one declared __local.
  EXPECT_BOTH(CL_INVALID_ARG_VALUE, clSetKernelArg(s.scale, 1, sizeof f, nullptr));
  EXPECT_BOTH(CL_INVALID_ARG_VALUE, clSetKernelArg(s.with_local, 1, 64, &f));
  // CL_INVALID_MEM_OBJECT for an argument declared to be a memory object when the specified
  // arg_value is not a valid memory object. (PoCL 3.1 takes any pointer.)
  cl_command_queue not_a_buffer = queue_;
  EXPECT_FERRY(CL_INVALID_MEM_OBJECT, clSetKernelArg(s.scale, 0, sizeof not_a_buffer, &not_a_buffer));
}

TEST_F(errors, kernel_enqueue) {
  const size_t global = 64, local = 8, too_big = device_value<size_t>(device_, CL_DEVICE_MAX_WORK_GROUP_SIZE) * 2;
  // CL_INVALID_KERNEL_ARGS if the kernel argument values have not been specified.
  EXPECT_BOTH(CL_INVALID_KERNEL_ARGS, clEnqueueNDRangeKernel(s.q(), s.scale, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  for (side_objects* s : {&f_, &n_}) {
    cl_mem m = s->buf;
    const float factor = 2.0f;
    ASSERT_CL_OK(clSetKernelArg(s->scale, 0, sizeof m, &m));
    ASSERT_CL_OK(clSetKernelArg(s->scale, 1, sizeof factor, &factor));
    ASSERT_CL_OK(clSetKernelArg(s->fixed, 0, sizeof m, &m));
  }
  // CL_INVALID_WORK_DIMENSION if work_dim is not a valid value (1, 2 or 3).
  const size_t globals[4] = {64, 1, 1, 1};
  EXPECT_BOTH(CL_INVALID_WORK_DIMENSION, clEnqueueNDRangeKernel(s.q(), s.scale, 0, nullptr, globals, nullptr, 0, nullptr, nullptr));
  EXPECT_BOTH(CL_INVALID_WORK_DIMENSION, clEnqueueNDRangeKernel(s.q(), s.scale, 4, nullptr, globals, nullptr, 0, nullptr, nullptr));
  // CL_INVALID_WORK_GROUP_SIZE if local_work_size is specified and the total number of
  // work-items in the work-group is greater than CL_KERNEL_WORK_GROUP_SIZE / the device maximum.
  const size_t big_global = too_big * 2;
  EXPECT_BOTH(CL_INVALID_WORK_GROUP_SIZE,
              clEnqueueNDRangeKernel(s.q(), s.scale, 1, nullptr, &big_global, &too_big, 0, nullptr, nullptr));
  // CL_INVALID_WORK_GROUP_SIZE if local_work_size is specified and does not match the required
  // work-group size for kernel in the program source.
  EXPECT_BOTH(CL_INVALID_WORK_GROUP_SIZE, clEnqueueNDRangeKernel(s.q(), s.fixed, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  // CL_INVALID_CONTEXT if context associated with command_queue and kernel are not the same.
  EXPECT_BOTH(CL_INVALID_CONTEXT, clEnqueueNDRangeKernel(s.queue2, s.scale, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  // CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and num_events_in_wait_list > 0, or
  // event_wait_list is not NULL and num_events_in_wait_list is 0. (PoCL 3.1 crashes on the
  // first: Ferry only.)
  cl_event some_event = f_.foreign_event;
  EXPECT_FERRY(CL_INVALID_EVENT_WAIT_LIST, clEnqueueNDRangeKernel(s.q(), s.scale, 1, nullptr, &global, nullptr, 2, nullptr, nullptr));
  EXPECT_FERRY(CL_INVALID_EVENT_WAIT_LIST,
               clEnqueueNDRangeKernel(s.q(), s.scale, 1, nullptr, &global, nullptr, 0, &some_event, nullptr));
  // CL_INVALID_CONTEXT if context associated with command_queue and events in event_wait_list
  // are not the same. (PoCL 3.1 checks wait lists for markers but not for kernels.)
  EXPECT_FERRY(CL_INVALID_CONTEXT, [&] {
    const cl_event foreign[] = {s.foreign_event};
    return clEnqueueNDRangeKernel(s.q(), s.scale, 1, nullptr, &global, nullptr, 1, foreign, nullptr);
  }());
  EXPECT_BOTH(CL_INVALID_CONTEXT, [&] {
    const cl_event foreign[] = {s.foreign_event};
    return clEnqueueMarkerWithWaitList(s.q(), 1, foreign, nullptr);
  }());
  EXPECT_BOTH(CL_SUCCESS, clFinish(s.q()));
}

TEST_F(errors, events) {
  cl_int rc = CL_SUCCESS;
  // CL_INVALID_CONTEXT if context is not a valid context.
  EXPECT_BOTH(CL_INVALID_CONTEXT, created(clCreateUserEvent(nullptr, &rc), rc));
  // CL_INVALID_VALUE if num_events is zero or event_list is NULL.
  EXPECT_BOTH(CL_INVALID_VALUE, clWaitForEvents(0, nullptr));
  // CL_INVALID_CONTEXT if events specified in event_list do not belong to the same context.
  for (side_objects* s : {&f_, &n_}) {
    SCOPED_TRACE(platform_name(s->side->platform));
    event_handle mine(clCreateUserEvent(s->ctx(), &rc));
    ASSERT_CL_OK(rc);
    ASSERT_CL_OK(clSetUserEventStatus(mine, CL_COMPLETE));
    const cl_event mixed[] = {mine, s->foreign_event};
    EXPECT_CL(CL_INVALID_CONTEXT, clWaitForEvents(2, mixed));
    // CL_INVALID_VALUE if the execution_status is not CL_COMPLETE or a negative integer value.
    event_handle user(clCreateUserEvent(s->ctx(), &rc));
    ASSERT_CL_OK(rc);
    EXPECT_CL(CL_INVALID_VALUE, clSetUserEventStatus(user, CL_SUBMITTED));
    // CL_INVALID_OPERATION if the execution_status for event has already been changed by a
    // previous call to clSetUserEventStatus.
    ASSERT_CL_OK(clSetUserEventStatus(user, CL_COMPLETE));
    EXPECT_CL(CL_INVALID_OPERATION, clSetUserEventStatus(user, CL_COMPLETE));
    // CL_INVALID_VALUE if pfn_event_notify is NULL or if command_exec_callback_type is not
    // CL_SUBMITTED, CL_RUNNING, or CL_COMPLETE.
    EXPECT_CL(CL_INVALID_VALUE, clSetEventCallback(user, CL_COMPLETE, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_VALUE, clSetEventCallback(user, CL_QUEUED, [](cl_event, cl_int, void*) {}, nullptr));
    // CL_INVALID_VALUE if param_name is not valid.
    size_t size = 0;
    EXPECT_CL(CL_INVALID_VALUE, clGetEventInfo(user, 0x7fff, 0, nullptr, &size));
    // CL_INVALID_EVENT_WAIT_LIST for markers and barriers too.
    EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST, clEnqueueMarkerWithWaitList(s->q(), 1, nullptr, nullptr));
    const cl_event list[] = {user};
    EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST, clEnqueueBarrierWithWaitList(s->q(), 0, list, nullptr));
  }
  // CL_PROFILING_INFO_NOT_AVAILABLE if CL_QUEUE_PROFILING_ENABLE is not set for the queue.
  for (side_objects* s : {&f_, &n_}) {
    SCOPED_TRACE(platform_name(s->side->platform));
    event_handle marker;
    ASSERT_CL_OK(clEnqueueMarkerWithWaitList(s->q(), 0, nullptr, marker.out()));
    ASSERT_CL_OK(clFinish(s->q()));
    cl_ulong t = 0;
    EXPECT_CL(CL_PROFILING_INFO_NOT_AVAILABLE, clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_END, sizeof t, &t, nullptr));
  }
}

TEST_F(errors, info_queries_negotiate_sizes) {
  // CL_INVALID_VALUE if the size in bytes specified by param_value_size is < size of return
  // type and param_value is not NULL.
  char small[2];
  cl_uint too_small_for_ulong = 0;
  EXPECT_BOTH(CL_INVALID_VALUE, clGetDeviceInfo(s.dev(), CL_DEVICE_NAME, sizeof small, small, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clGetDeviceInfo(s.dev(), CL_DEVICE_GLOBAL_MEM_SIZE, sizeof too_small_for_ulong,
                                                &too_small_for_ulong, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clGetKernelInfo(s.scale, CL_KERNEL_FUNCTION_NAME, sizeof small, small, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clGetProgramInfo(s.program, CL_PROGRAM_SOURCE, sizeof small, small, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clGetMemObjectInfo(s.buf, CL_MEM_SIZE, sizeof small, small, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clGetContextInfo(s.ctx(), CL_CONTEXT_DEVICES, sizeof small, small, nullptr));
  EXPECT_BOTH(CL_INVALID_VALUE, clGetCommandQueueInfo(s.q(), CL_QUEUE_CONTEXT, sizeof small, small, nullptr));
  // A NULL param_value with any size just reports the size.
  size_t size = 0;
  EXPECT_BOTH(CL_SUCCESS, clGetKernelInfo(s.scale, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &size));
  EXPECT_EQ(size, 6u);
}

}  // namespace ferry::test

namespace ferry::test {
namespace {

// How many lines of `log` contain every one of `parts`.
size_t lines_with(const std::string& log, std::initializer_list<std::string_view> parts) {
  size_t count = 0, start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    const std::string_view line(log.data() + start, end - start);
    if (std::all_of(parts.begin(), parts.end(), [&](std::string_view p) { return line.find(p) != line.npos; }))
      ++count;
    start = end + 1;
  }
  return count;
}

}  // namespace

// Runs with FERRY_LOG=debug and FERRY_LOG_FILE set (the level and file are read once, when
// libferry first logs, so a process of its own): errors checked by the client and errors a
// server answered, each logged with the entry point, the code's name and the reason.
FERRY_IT_CHILD(error_log) {
  const char* path = std::getenv("FERRY_LOG_FILE");
  const char* servers = std::getenv("FERRY_SERVERS");
  CHILD_CHECK(path != nullptr && servers != nullptr, "FERRY_LOG_FILE and FERRY_SERVERS must be set");
  const cl_platform_id platform = find_ferry_platform();
  CHILD_CHECK(platform != nullptr && platform_name(platform) == CL_FERRY_PLATFORM_NAME, "no Ferry platform");
  const std::vector<cl_device_id> devices = platform_devices(platform);
  CHILD_CHECK(!devices.empty(), "no Ferry device");
  cl_int rc = CL_SUCCESS;
  context_handle context(clCreateContext(nullptr, 1, &devices[0], nullptr, nullptr, &rc));
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateContext: %s", cl_error_name(rc).c_str());

  // Checked by the client: a kernel name the program lacks, a context passed as a program
  // (the loader answers for a NULL handle itself; this one reaches libferry).
  program_handle program = build_program(context, devices[0], error_kernels, "", false);
  CHILD_CHECK(program, "the error kernels do not build");
  CHILD_CHECK(clCreateKernel(program, "no_such_kernel", &rc) == nullptr && rc == CL_INVALID_KERNEL_NAME,
              "clCreateKernel(no_such_kernel): %s", cl_error_name(rc).c_str());
  const auto not_a_program = reinterpret_cast<cl_program>(context.get());
  CHILD_CHECK(clCreateKernel(not_a_program, "scale", &rc) == nullptr && rc == CL_INVALID_PROGRAM,
              "clCreateKernel(a context): %s", cl_error_name(rc).c_str());
  // Answered by the server: a build that fails, twice on the same program.
  const char* bad = "kernel void k(global int* x) { x[0] = 1 +; }";
  program_handle broken(clCreateProgramWithSource(context, 1, &bad, nullptr, &rc));
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateProgramWithSource: %s", cl_error_name(rc).c_str());
  for (int i = 0; i < 2; ++i) {
    rc = clBuildProgram(broken, 1, &devices[0], "", nullptr, nullptr);
    CHILD_CHECK(rc == CL_BUILD_PROGRAM_FAILURE, "clBuildProgram %d: %s", i, cl_error_name(rc).c_str());
  }

  // Failed on the server: a write whose wait list holds a failed event, twice on one queue.
  {
    queue_handle queue(clCreateCommandQueue(context, devices[0], 0, &rc));
    CHILD_CHECK(rc == CL_SUCCESS, "clCreateCommandQueue: %s", cl_error_name(rc).c_str());
    mem_handle buffer(clCreateBuffer(context, CL_MEM_READ_WRITE, 64, nullptr, &rc));
    CHILD_CHECK(rc == CL_SUCCESS, "clCreateBuffer: %s", cl_error_name(rc).c_str());
    event_handle failed(clCreateUserEvent(context, &rc));
    CHILD_CHECK(rc == CL_SUCCESS, "clCreateUserEvent: %s", cl_error_name(rc).c_str());
    CHILD_CHECK(clSetUserEventStatus(failed, -5) == CL_SUCCESS, "clSetUserEventStatus");
    const int host[4] = {};
    for (int i = 0; i < 2; ++i) {
      event_handle write;
      rc = clEnqueueWriteBuffer(queue, buffer, CL_FALSE, 0, sizeof host, host, 1, failed.address(), write.out());
      CHILD_CHECK(rc == CL_SUCCESS, "clEnqueueWriteBuffer %d: %s", i, cl_error_name(rc).c_str());
      rc = clWaitForEvents(1, write.address());
      CHILD_CHECK(rc == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "clWaitForEvents %d: %s", i,
                  cl_error_name(rc).c_str());
    }
  }

  const std::string log = read_file(path);
  const bool kernel_name = lines_with(log, {" debug api: clCreateKernel: CL_INVALID_KERNEL_NAME (no kernel "
                                            "\"no_such_kernel\" in program "}) == 1;
  const bool bad_handle = lines_with(log, {" debug api: clCreateKernel: CL_INVALID_PROGRAM (invalid cl_program handle",
                                           "an object of another type"}) == 1;
  // Each failed build at debug, with the server that answered.
  const bool builds = lines_with(log, {" debug api: clBuildProgram: CL_BUILD_PROGRAM_FAILURE (answered by server ",
                                       servers, " to build_program for program "}) == 2;
  // The server's answer at warn once, naming the server and the session; the repeat at debug.
  const bool warned_once = lines_with(log, {" warn errors: server ", servers, " (session ",
                                            "answered build_program for program ", "CL_BUILD_PROGRAM_FAILURE"}) == 1;
  const bool repeat_at_debug =
      lines_with(log, {" debug errors: server ", servers, "answered build_program", "CL_BUILD_PROGRAM_FAILURE"}) == 1;
  // The failed command at warn once per queue and kind, the repeat at debug; each wait says
  // which command failed where.
  const bool command_warned_once = lines_with(log, {" warn errors: server ", servers, " (session ",
                                                    "(CL_COMMAND_WRITE_BUFFER) on queue ", " failed with "}) == 1;
  const bool command_repeat_at_debug =
      lines_with(log, {" debug errors: server ", servers, "(CL_COMMAND_WRITE_BUFFER) on queue ", " failed with "}) == 1;
  const bool waits = lines_with(log, {" debug api: clWaitForEvents: CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST "
                                      "(command ",
                                      "(CL_COMMAND_WRITE_BUFFER) failed with ", servers}) == 2;
  if (!(kernel_name && bad_handle && builds && warned_once && repeat_at_debug && command_warned_once &&
        command_repeat_at_debug && waits))
    std::printf("%s", log.c_str());
  CHILD_CHECK(kernel_name, "no debug line for the kernel name");
  CHILD_CHECK(bad_handle, "no debug line for the handle of another type");
  CHILD_CHECK(builds, "no debug line for each failed build");
  CHILD_CHECK(warned_once, "not exactly one warning for the failed builds");
  CHILD_CHECK(repeat_at_debug, "the repeated failure is not at debug");
  CHILD_CHECK(command_warned_once, "not exactly one warning for the failed writes");
  CHILD_CHECK(command_repeat_at_debug, "the repeated command failure is not at debug");
  CHILD_CHECK(waits, "no debug line for each failed wait");
  std::printf("PASS\n");
  return 0;
}

TEST(error_log, entry_point_errors_are_logged_with_their_reason_and_server_errors_warn_once) {
  if constexpr (self_check) GTEST_SKIP() << "logs libferry's own lines";
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/ferry-error-log-" +
                           std::to_string(::getpid()) + ".log";
  std::remove(path.c_str());
  expect_child_passes("error_log", std::chrono::seconds(120), {{"FERRY_LOG", "debug"}, {"FERRY_LOG_FILE", path}});
  std::remove(path.c_str());
}

}  // namespace ferry::test
