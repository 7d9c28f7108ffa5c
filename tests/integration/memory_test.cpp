// Buffers and sub-buffers through Ferry: host-pointer flags, read/write/copy/fill, the rect
// variants, map/unmap, lifetimes. Results are checked against host-side references.
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <numeric>

#include "cl_helpers.hpp"
#include "kernels.hpp"

namespace ferry::test {

suite_config this_suite() { return suite_config{}; }  // Ferry only, one daemon

namespace {

// Page-aligned host memory, so CL_MEM_USE_HOST_PTR can be zero-copy where the driver likes.
struct aligned_deleter {
  void operator()(void* p) const { std::free(p); }
};
template <class T>
std::unique_ptr<T[], aligned_deleter> aligned_array(size_t n) {
  const size_t bytes = (n * sizeof(T) + 4095) / 4096 * 4096;
  return std::unique_ptr<T[], aligned_deleter>(static_cast<T*>(std::aligned_alloc(4096, bytes)));
}

// The host-side meaning of a rect transfer: copies `region` bytes x rows x slices between
// two linear layouts described by origin and pitches.
struct rect_layout {
  size_t origin[3];
  size_t row_pitch;
  size_t slice_pitch;
  size_t offset(size_t x, size_t y, size_t z) const {
    return (origin[2] + z) * slice_pitch + (origin[1] + y) * row_pitch + origin[0] + x;
  }
};
void host_rect_copy(const unsigned char* src, const rect_layout& s, unsigned char* dst,
                    const rect_layout& d, const size_t region[3]) {
  for (size_t z = 0; z < region[2]; ++z)
    for (size_t y = 0; y < region[1]; ++y)
      std::memcpy(dst + d.offset(0, y, z), src + s.offset(0, y, z), region[0]);
}

std::vector<unsigned char> byte_pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131u + seed * 7u + (i >> 8)) & 0xff);
  return v;
}

}  // namespace

class memory : public ferry_test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(ferry_test::SetUp());
    program_ = build(kernels::basics);
    ASSERT_TRUE(program_);
  }
  void TearDown() override {
    program_.reset();
    ferry_test::TearDown();
  }

  // x[i] += 1 for i < n, through the add_one kernel.
  void add_one(cl_mem mem, size_t n, cl_uint num_waits = 0, const cl_event* waits = nullptr,
               cl_event* done = nullptr) {
    auto kernel = create_kernel(program_, "add_one");
    ASSERT_CL_OK(clSetKernelArg(kernel, 0, sizeof mem, &mem));
    ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &n, nullptr, num_waits, waits, done));
  }
  std::vector<cl_int> read_ints(cl_mem mem, size_t n, size_t offset_items = 0) {
    std::vector<cl_int> out(n, -1);
    EXPECT_CL_OK(clEnqueueReadBuffer(queue_, mem, CL_TRUE, offset_items * sizeof(cl_int),
                                     n * sizeof(cl_int), out.data(), 0, nullptr, nullptr));
    return out;
  }
  template <class T>
  T mem_value(cl_mem mem, cl_mem_info param) {
    return info_value<T>(FERRY_IT_INFO_QUERY(clGetMemObjectInfo, mem, param));
  }

  program_handle program_;
};

TEST_F(memory, buffer_info_reports_type_flags_size_and_references) {
  constexpr size_t n = 1000;
  std::vector<cl_int> host(n, 3);
  auto plain = buffer(CL_MEM_READ_WRITE, n * sizeof(cl_int));
  auto use = buffer(CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, n * sizeof(cl_int), host.data());
  ASSERT_TRUE(plain && use);
  EXPECT_EQ(mem_value<cl_mem_object_type>(plain, CL_MEM_TYPE), cl_mem_object_type{CL_MEM_OBJECT_BUFFER});
  EXPECT_EQ(mem_value<cl_mem_flags>(plain, CL_MEM_FLAGS), cl_mem_flags{CL_MEM_READ_WRITE});
  EXPECT_EQ(mem_value<cl_mem_flags>(use, CL_MEM_FLAGS), cl_mem_flags{CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR});
  EXPECT_EQ(mem_value<size_t>(plain, CL_MEM_SIZE), n * sizeof(cl_int));
  EXPECT_EQ(mem_value<void*>(plain, CL_MEM_HOST_PTR), nullptr);
  EXPECT_EQ(mem_value<void*>(use, CL_MEM_HOST_PTR), static_cast<void*>(host.data()));
  EXPECT_EQ(mem_value<cl_context>(plain, CL_MEM_CONTEXT), context_);
  EXPECT_EQ(mem_value<cl_mem>(plain, CL_MEM_ASSOCIATED_MEMOBJECT), nullptr);
  EXPECT_EQ(mem_value<size_t>(plain, CL_MEM_OFFSET), 0u);
  EXPECT_EQ(mem_value<cl_uint>(plain, CL_MEM_REFERENCE_COUNT), 1u);
  ASSERT_CL_OK(clRetainMemObject(plain));
  EXPECT_EQ(mem_value<cl_uint>(plain, CL_MEM_REFERENCE_COUNT), 2u);
  ASSERT_CL_OK(clReleaseMemObject(plain));
  EXPECT_EQ(mem_value<cl_uint>(plain, CL_MEM_REFERENCE_COUNT), 1u);
}

TEST_F(memory, write_then_read_round_trips_at_any_offset) {
  for (size_t size : {size_t{1}, size_t{7}, size_t{4096}, size_t{4097}, size_t{1} << 20}) {
    SCOPED_TRACE("size " + std::to_string(size));
    const auto data = byte_pattern(size, static_cast<unsigned>(size));
    auto mem = buffer(CL_MEM_READ_WRITE, size + 64);
    ASSERT_TRUE(mem);
    ASSERT_CL_OK(clEnqueueWriteBuffer(queue_, mem, CL_TRUE, 64, size, data.data(), 0, nullptr, nullptr));
    std::vector<unsigned char> back(size, 0);
    ASSERT_CL_OK(clEnqueueReadBuffer(queue_, mem, CL_TRUE, 64, size, back.data(), 0, nullptr, nullptr));
    ASSERT_EQ(back, data);
    // Part of it, non-blocking, completed through its event.
    const size_t part = (size + 1) / 2;
    std::vector<unsigned char> half(part, 0);
    event_handle done;
    ASSERT_CL_OK(clEnqueueReadBuffer(queue_, mem, CL_FALSE, 64 + size - part, part, half.data(), 0, nullptr, done.out()));
    const cl_event wait = done;
    ASSERT_CL_OK(clWaitForEvents(1, &wait));
    EXPECT_EQ(event_status(done), CL_COMPLETE);
    EXPECT_TRUE(std::equal(half.begin(), half.end(), data.end() - static_cast<ptrdiff_t>(part)));
  }
}

TEST_F(memory, finish_after_a_blocking_read_still_waits_for_later_commands) {
  // A blocking read completes everything before it, so clFinish right after it has
  // nothing to wait for; commands enqueued after the read must still be waited for.
  constexpr size_t n = 4096;
  std::vector<cl_int> zeros(n, 0);
  auto mem = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(cl_int), zeros.data());
  ASSERT_TRUE(mem);
  for (int round = 1; round <= 20; ++round) {
    std::vector<cl_int> seen(n, -1);
    ASSERT_CL_OK(clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, n * sizeof(cl_int), seen.data(), 0, nullptr, nullptr));
    ASSERT_EQ(seen, std::vector<cl_int>(n, round - 1));
    ASSERT_CL_OK(clFinish(queue_));  // nothing left: answered without the server
    add_one(mem, n);
    std::vector<cl_int> after(n, -1);
    ASSERT_CL_OK(clEnqueueReadBuffer(queue_, mem, CL_FALSE, 0, n * sizeof(cl_int), after.data(), 0, nullptr, nullptr));
    ASSERT_CL_OK(clFinish(queue_));  // must wait for the kernel and the read's data
    ASSERT_EQ(after, std::vector<cl_int>(n, round)) << "round " << round;
  }
}

TEST_F(memory, large_transfers_arrive_intact) {
  constexpr size_t size = size_t{48} << 20;
  const auto data = byte_pattern(size, 5);
  auto mem = buffer(CL_MEM_READ_WRITE, size);
  ASSERT_TRUE(mem);
  ASSERT_CL_OK(clEnqueueWriteBuffer(queue_, mem, CL_FALSE, 0, size, data.data(), 0, nullptr, nullptr));
  std::vector<unsigned char> back(size, 0);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr));
  ASSERT_TRUE(back == data) << "48 MiB differ after a round trip";
}

// A read of 16 MiB or more goes to the device a piece (8 MiB) at a time and
// each piece to the client as soon as it is read (the daemon's "read in
// pieces"); what arrives must still be every byte, in its place, whatever the
// size, offset and blocking mode.
TEST_F(memory, large_reads_in_pieces_arrive_byte_for_byte) {
  constexpr size_t size = (size_t{100} << 20) + 4097;
  const auto data = byte_pattern(size, 11);
  auto mem = buffer(CL_MEM_READ_WRITE, size);
  ASSERT_TRUE(mem);
  ASSERT_CL_OK(clEnqueueWriteBuffer(queue_, mem, CL_TRUE, 0, size, data.data(), 0, nullptr, nullptr));
  std::vector<unsigned char> back(size, 0);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr));
  ASSERT_TRUE(back == data) << "the whole 100 MiB read differs";
  // An odd size that is no multiple of the piece, at an odd offset.
  struct range {
    size_t offset, size;
  };
  for (range r : {range{(size_t{3} << 20) + 5, (size_t{37} << 20) + 11}, range{1, (size_t{16} << 20)},
                  range{size - (size_t{24} << 20) - 1, (size_t{24} << 20) + 1}}) {
    SCOPED_TRACE("offset " + std::to_string(r.offset) + " size " + std::to_string(r.size));
    std::vector<unsigned char> part(r.size, 0);
    event_handle done;
    ASSERT_CL_OK(clEnqueueReadBuffer(queue_, mem, CL_FALSE, r.offset, r.size, part.data(), 0, nullptr, done.out()));
    ASSERT_CL_OK(clWaitForEvents(1, done.address()));
    EXPECT_EQ(event_status(done), CL_COMPLETE);
    EXPECT_TRUE(std::equal(part.begin(), part.end(), data.begin() + static_cast<std::ptrdiff_t>(r.offset)))
        << "the read differs from the buffer";
  }
  // CL_INVALID_VALUE if the region being read specified by (offset, size) is out of bounds.
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueReadBuffer(queue_, mem, CL_TRUE, size - (size_t{16} << 20) + 1,
                                                  size_t{16} << 20, back.data(), 0, nullptr, nullptr));
}

// A read in pieces behind a user event that fails reports the same error as
// a read in one piece does, once, and leaves the application's memory alone.
TEST_F(memory, a_large_read_behind_a_failed_event_fails_like_a_small_one) {
  constexpr size_t size = size_t{40} << 20;
  auto mem = buffer(CL_MEM_READ_WRITE, size);
  ASSERT_TRUE(mem);
  std::vector<cl_int> statuses;
  for (size_t bytes : {size_t{1024}, size}) {
    SCOPED_TRACE(std::to_string(bytes) + " bytes");
    cl_int rc = CL_SUCCESS;
    event_handle gate(clCreateUserEvent(context_, &rc));
    ASSERT_CL_OK(rc);
    queue_handle q(clCreateCommandQueue(context_, device_, 0, &rc));
    ASSERT_CL_OK(rc);
    std::vector<unsigned char> host(bytes, 0x5c);
    event_handle read;
    ASSERT_CL_OK(clEnqueueReadBuffer(q, mem, CL_FALSE, 0, bytes, host.data(), 1, gate.address(), read.out()));
    ASSERT_CL_OK(clFlush(q));
    ASSERT_CL_OK(clSetUserEventStatus(gate, -1234));
    // CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the execution status of any of the
    // events in event_list is a negative integer value.
    EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, clWaitForEvents(1, read.address()));
    statuses.push_back(event_status(read));
    EXPECT_LT(statuses.back(), 0);
    EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](unsigned char b) { return b == 0x5c; }))
        << "a failed read wrote into the application's memory";
  }
  EXPECT_EQ(statuses[0], statuses[1]) << "a read in pieces fails with another error than a read in one";
  // The session goes on: a large read still works.
  const auto data = byte_pattern(size, 3);
  ASSERT_CL_OK(clEnqueueWriteBuffer(queue_, mem, CL_TRUE, 0, size, data.data(), 0, nullptr, nullptr));
  std::vector<unsigned char> back(size, 0);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr));
  EXPECT_TRUE(back == data);
}

// A profiled read in pieces reports one span, from its first piece's start to its last
// piece's end, in the order the specification gives the counters.
TEST_F(memory, a_profiled_large_read_reports_its_whole_span) {
  constexpr size_t size = (size_t{33} << 20) + 3;
  cl_int rc = CL_SUCCESS;
  const cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  queue_handle q(clCreateCommandQueueWithProperties(context_, device_, properties, &rc));
  ASSERT_CL_OK(rc);
  const auto data = byte_pattern(size, 9);
  auto mem = buffer(CL_MEM_READ_WRITE, size);
  ASSERT_TRUE(mem);
  ASSERT_CL_OK(clEnqueueWriteBuffer(q, mem, CL_TRUE, 0, size, data.data(), 0, nullptr, nullptr));
  std::vector<unsigned char> back(size, 0);
  event_handle read;
  ASSERT_CL_OK(clEnqueueReadBuffer(q, mem, CL_TRUE, 0, size, back.data(), 0, nullptr, read.out()));
  EXPECT_TRUE(back == data);
  cl_ulong counters[4] = {};
  const cl_profiling_info names[] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                     CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
  for (int i = 0; i < 4; ++i)
    ASSERT_CL_OK(clGetEventProfilingInfo(read, names[i], sizeof counters[i], &counters[i], nullptr));
  EXPECT_GT(counters[0], 0u);
  EXPECT_LE(counters[0], counters[1]);
  EXPECT_LE(counters[1], counters[2]);
  EXPECT_LT(counters[2], counters[3]) << "a 33 MiB read took no time";
}

TEST_F(memory, copy_host_ptr_takes_a_snapshot_of_host_memory) {
  constexpr size_t n = 512;
  std::vector<cl_int> host(n);
  std::iota(host.begin(), host.end(), 100);
  const std::vector<cl_int> original = host;
  auto mem = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(cl_int), host.data());
  ASSERT_TRUE(mem);
  std::fill(host.begin(), host.end(), -7);  // the buffer must not see this
  EXPECT_EQ(mem_value<void*>(mem, CL_MEM_HOST_PTR), nullptr);
  ASSERT_NO_FATAL_FAILURE(add_one(mem, n));
  auto back = read_ints(mem, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], original[i] + 1) << "at " << i;
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](cl_int v) { return v == -7; }));
}

TEST_F(memory, use_host_ptr_shows_kernel_results_in_host_memory_once_mapped) {
  constexpr size_t n = 4096;
  auto host = aligned_array<cl_int>(n);
  std::iota(host.get(), host.get() + n, 0);
  auto mem = buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, n * sizeof(cl_int), host.get());
  ASSERT_TRUE(mem);
  ASSERT_NO_FATAL_FAILURE(add_one(mem, n));
  // "The host_ptr specified in clCreateBuffer is guaranteed to contain the latest bits in
  // the region being mapped" and the mapped pointer is derived from host_ptr.
  cl_int rc = CL_SUCCESS;
  const size_t offset = 16 * sizeof(cl_int);
  void* mapped = clEnqueueMapBuffer(queue_, mem, CL_TRUE, CL_MAP_READ, offset,
                                    (n - 16) * sizeof(cl_int), 0, nullptr, nullptr, &rc);
  ASSERT_CL_OK(rc);
  EXPECT_EQ(mapped, static_cast<void*>(host.get() + 16));
  for (size_t i = 16; i < n; ++i) ASSERT_EQ(host[i], static_cast<cl_int>(i) + 1) << "at " << i;
  ASSERT_CL_OK(clEnqueueUnmapMemObject(queue_, mem, mapped, 0, nullptr, nullptr));
  ASSERT_CL_OK(clFinish(queue_));
}

TEST_F(memory, use_host_ptr_host_writes_under_a_map_reach_the_kernel) {
  constexpr size_t n = 1024;
  auto host = aligned_array<cl_int>(n);
  std::fill(host.get(), host.get() + n, 0);
  auto mem = buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, n * sizeof(cl_int), host.get());
  ASSERT_TRUE(mem);
  cl_int rc = CL_SUCCESS;
  auto* mapped = static_cast<cl_int*>(clEnqueueMapBuffer(queue_, mem, CL_TRUE, CL_MAP_WRITE, 0,
                                                         n * sizeof(cl_int), 0, nullptr, nullptr, &rc));
  ASSERT_CL_OK(rc);
  ASSERT_EQ(mapped, host.get());
  for (size_t i = 0; i < n; ++i) mapped[i] = static_cast<cl_int>(3 * i);
  ASSERT_CL_OK(clEnqueueUnmapMemObject(queue_, mem, mapped, 0, nullptr, nullptr));
  ASSERT_NO_FATAL_FAILURE(add_one(mem, n));
  auto back = read_ints(mem, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], static_cast<cl_int>(3 * i) + 1) << "at " << i;
}

TEST_F(memory, use_host_ptr_on_a_cpu_device_stays_coherent_without_maps) {
  // FluidX3D's pattern on CPU devices: host memory written and read directly, never a
  // write, a read or a map. Natively the CPU device uses that very memory.
  ASSERT_TRUE(info_value<cl_device_type>(FERRY_IT_INFO_QUERY(clGetDeviceInfo, device_, CL_DEVICE_TYPE)) &
              CL_DEVICE_TYPE_CPU);
  constexpr size_t n = 64 * 1024 + 100;  // 65 pages and a bit
  auto host = aligned_array<cl_int>(n);
  std::iota(host.get(), host.get() + n, 0);
  std::vector<cl_int> expected(host.get(), host.get() + n);
  auto mem = buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, n * sizeof(cl_int), host.get());
  ASSERT_TRUE(mem);
  auto other = buffer(CL_MEM_READ_WRITE, sizeof(cl_int));
  for (cl_int step = 0; step < 6; ++step) {
    // The host changes a few elements between steps (one far from the others).
    for (size_t i : {size_t{3}, size_t{5000} + step, n - 1}) {
      host[i] = 1000 * step + static_cast<cl_int>(i);
      expected[i] = host[i];
    }
    cl_event done = nullptr;
    ASSERT_NO_FATAL_FAILURE(add_one(mem, n, 0, nullptr, &done));
    for (auto& x : expected) x += 1;
    // Each kind of blocking wait brings the results back.
    switch (step % 3) {
      case 0: ASSERT_CL_OK(clFinish(queue_)); break;
      case 1: ASSERT_CL_OK(clWaitForEvents(1, &done)); break;
      case 2: {
        cl_int value = 0;
        ASSERT_CL_OK(clEnqueueReadBuffer(queue_, other, CL_TRUE, 0, sizeof value, &value, 0, nullptr, nullptr));
        break;
      }
    }
    ASSERT_CL_OK(clReleaseEvent(done));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(host[i], expected[i]) << "step " << step << " at " << i;
  }
  // A page the host changed while a kernel wrote others is not lost.
  auto half = buffer(CL_MEM_READ_WRITE, sizeof(cl_int));
  size_t first_half = n / 2;
  auto kernel = create_kernel(program_, "add_one");
  ASSERT_CL_OK(clSetKernelArg(kernel, 0, sizeof(cl_mem), mem.address()));
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &first_half, nullptr, 0, nullptr, nullptr));
  host[n - 2] = -7;  // after the launch, on a page the kernel does not touch
  for (size_t i = 0; i < first_half; ++i) expected[i] += 1;
  expected[n - 2] = -7;
  ASSERT_CL_OK(clFinish(queue_));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(host[i], expected[i]) << "at " << i;
}

TEST_F(memory, use_host_ptr_sub_buffers_and_copies_stay_coherent) {
  constexpr size_t n = 8192;
  auto host = aligned_array<cl_int>(n);
  std::fill(host.get(), host.get() + n, 1);
  auto mem = buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, n * sizeof(cl_int), host.get());
  ASSERT_TRUE(mem);
  // The host's change reaches a copy to another buffer; a kernel on a sub-buffer comes back.
  host[10] = 42;
  auto copy = buffer(CL_MEM_READ_WRITE, n * sizeof(cl_int));
  ASSERT_CL_OK(clEnqueueCopyBuffer(queue_, mem, copy, 0, 0, n * sizeof(cl_int), 0, nullptr, nullptr));
  auto copied = read_ints(copy, n);
  EXPECT_EQ(copied[10], 42);
  EXPECT_EQ(copied[11], 1);
  cl_buffer_region region{4096 * sizeof(cl_int), 1024 * sizeof(cl_int)};
  cl_int rc = CL_SUCCESS;
  mem_handle sub(clCreateSubBuffer(mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &rc));
  ASSERT_CL_OK(rc);
  ASSERT_NO_FATAL_FAILURE(add_one(sub, 1024));
  ASSERT_CL_OK(clFinish(queue_));
  for (size_t i = 0; i < n; ++i) {
    const cl_int want = i == 10 ? 42 : (i >= 4096 && i < 5120 ? 2 : 1);
    ASSERT_EQ(host[i], want) << "at " << i;
  }
}

namespace {

// What a host write to one CL_MEM_USE_HOST_PTR buffer and a kernel on it leave in host
// memory after the program mapped another buffer of the context: `coherent` when the
// kernel saw the write and its result came back, else the plain caching.
enum class host_ptr_outcome { coherent, cached, other };

host_ptr_outcome after_a_map_of_another_buffer(cl_context context, cl_device_id device, cl_command_queue queue) {
  constexpr size_t n = 1024;
  auto a = aligned_array<cl_int>(n);
  auto b = aligned_array<cl_int>(n);
  std::fill(a.get(), a.get() + n, 0);
  std::fill(b.get(), b.get() + n, 0);
  mem_handle ma = create_buffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, n * sizeof(cl_int), a.get());
  mem_handle mb = create_buffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, n * sizeof(cl_int), b.get());
  cl_int rc = CL_SUCCESS;
  void* view = clEnqueueMapBuffer(queue, ma, CL_TRUE, CL_MAP_READ, 0, n * sizeof(cl_int), 0, nullptr, nullptr, &rc);
  if (rc != CL_SUCCESS || clEnqueueUnmapMemObject(queue, ma, view, 0, nullptr, nullptr) != CL_SUCCESS)
    return host_ptr_outcome::other;
  b[5] = 9;  // never sent explicitly
  program_handle program = build_program(context, device, kernels::basics, "");
  kernel_handle add_one = create_kernel(program, "add_one");
  const cl_mem arg = mb.get();
  if (clSetKernelArg(add_one, 0, sizeof arg, &arg) != CL_SUCCESS) return host_ptr_outcome::other;
  if (clEnqueueNDRangeKernel(queue, add_one, 1, nullptr, &n, nullptr, 0, nullptr, nullptr) != CL_SUCCESS ||
      clFinish(queue) != CL_SUCCESS)
    return host_ptr_outcome::other;
  if (b[0] == 1 && b[5] == 10) return host_ptr_outcome::coherent;
  if (b[0] != 0 || b[5] != 9) return host_ptr_outcome::other;
  // Plain caching: the device saw the initial contents only.
  std::vector<cl_int> device_copy(n);
  if (clEnqueueReadBuffer(queue, mb, CL_TRUE, 0, n * sizeof(cl_int), device_copy.data(), 0, nullptr, nullptr) !=
      CL_SUCCESS)
    return host_ptr_outcome::other;
  return device_copy[0] == 1 && device_copy[5] == 1 ? host_ptr_outcome::cached : host_ptr_outcome::other;
}

// A child with FERRY_HOST_PTR from the parent: prints PASS when the outcome is `want`.
int host_ptr_mode_child(host_ptr_outcome want) {
  cl_platform_id platform = find_ferry_platform();
  CHILD_CHECK(platform != nullptr, "no Ferry platform");
  cl_device_id device = platform_devices(platform).at(0);
  cl_int rc = CL_SUCCESS;
  context_handle context(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc));
  CHILD_CHECK(rc == CL_SUCCESS, "context: %d", rc);
  queue_handle queue(clCreateCommandQueueWithProperties(context, device, nullptr, &rc));
  CHILD_CHECK(rc == CL_SUCCESS, "queue: %d", rc);
  const host_ptr_outcome got = after_a_map_of_another_buffer(context, device, queue);
  CHILD_CHECK(got == want, "outcome %d, expected %d", static_cast<int>(got), static_cast<int>(want));
  std::printf("PASS\n");
  return 0;
}

FERRY_IT_CHILD(host_ptr_forced_coherent) { return host_ptr_mode_child(host_ptr_outcome::coherent); }
FERRY_IT_CHILD(host_ptr_cached) { return host_ptr_mode_child(host_ptr_outcome::cached); }

}  // namespace

TEST_F(memory, use_host_ptr_coherence_ends_for_the_context_once_the_program_maps) {
  // A program that maps follows the specification, and need not map the buffers it never
  // looks at: none of its context's buffers pays for coherence any more.
  EXPECT_EQ(after_a_map_of_another_buffer(context_, device_, queue_), host_ptr_outcome::cached);
}

TEST(memory_modes, ferry_host_ptr_coherent_keeps_coherence_after_maps) {
  expect_child_passes("host_ptr_forced_coherent", std::chrono::seconds(60), {{"FERRY_HOST_PTR", "coherent"}});
}

TEST(memory_modes, ferry_host_ptr_cached_is_the_plain_caching) {
  expect_child_passes("host_ptr_cached", std::chrono::seconds(60), {{"FERRY_HOST_PTR", "cached"}});
}

TEST_F(memory, alloc_host_ptr_buffer_is_written_and_read_through_maps) {
  constexpr size_t n = 2048;
  auto mem = buffer(CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, n * sizeof(cl_int));
  ASSERT_TRUE(mem);
  cl_int rc = CL_SUCCESS;
  auto* w = static_cast<cl_int*>(clEnqueueMapBuffer(queue_, mem, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION,
                                                    0, n * sizeof(cl_int), 0, nullptr, nullptr, &rc));
  ASSERT_CL_OK(rc);
  ASSERT_NE(w, nullptr);
  for (size_t i = 0; i < n; ++i) w[i] = static_cast<cl_int>(n - i);
  ASSERT_CL_OK(clEnqueueUnmapMemObject(queue_, mem, w, 0, nullptr, nullptr));
  ASSERT_NO_FATAL_FAILURE(add_one(mem, n));
  auto* r = static_cast<cl_int*>(clEnqueueMapBuffer(queue_, mem, CL_TRUE, CL_MAP_READ, 0,
                                                    n * sizeof(cl_int), 0, nullptr, nullptr, &rc));
  ASSERT_CL_OK(rc);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(r[i], static_cast<cl_int>(n - i) + 1) << "at " << i;
  ASSERT_CL_OK(clEnqueueUnmapMemObject(queue_, mem, r, 0, nullptr, nullptr));
  ASSERT_CL_OK(clFinish(queue_));
}

TEST_F(memory, alloc_and_copy_host_ptr_starts_from_host_data) {
  constexpr size_t n = 300;
  std::vector<cl_int> host(n);
  std::iota(host.begin(), host.end(), -50);
  auto mem = buffer(CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR, n * sizeof(cl_int), host.data());
  ASSERT_TRUE(mem);
  EXPECT_EQ(read_ints(mem, n), host);
}

TEST_F(memory, map_regions_see_device_data_and_write_back) {
  constexpr size_t n = 1000;
  auto mem = buffer(CL_MEM_READ_WRITE, n * sizeof(cl_int));
  ASSERT_TRUE(mem);
  {
    auto kernel = create_kernel(program_, "iota");
    cl_mem m = mem;
    cl_int base = 1000;
    ASSERT_CL_OK(clSetKernelArg(kernel, 0, sizeof m, &m));
    ASSERT_CL_OK(clSetKernelArg(kernel, 1, sizeof base, &base));
    ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
  }
  // Two maps at once, one non-blocking (its pointer is usable once its event completes).
  cl_int rc = CL_SUCCESS;
  event_handle mapped_event;
  auto* low = static_cast<cl_int*>(clEnqueueMapBuffer(queue_, mem, CL_FALSE, CL_MAP_READ, 0, 100 * sizeof(cl_int),
                                                      0, nullptr, mapped_event.out(), &rc));
  ASSERT_CL_OK(rc);
  auto* high = static_cast<cl_int*>(clEnqueueMapBuffer(queue_, mem, CL_TRUE, CL_MAP_WRITE, 500 * sizeof(cl_int),
                                                       500 * sizeof(cl_int), 0, nullptr, nullptr, &rc));
  ASSERT_CL_OK(rc);
  const cl_event wait = mapped_event;
  ASSERT_CL_OK(clWaitForEvents(1, &wait));
  EXPECT_EQ(event_value<cl_command_type>(mapped_event, CL_EVENT_COMMAND_TYPE), cl_command_type{CL_COMMAND_MAP_BUFFER});
  for (size_t i = 0; i < 100; ++i) ASSERT_EQ(low[i], 1000 + static_cast<cl_int>(i));
  for (size_t i = 0; i < 500; ++i) ASSERT_EQ(high[i], 1500 + static_cast<cl_int>(i));  // CL_MAP_WRITE keeps contents
  for (size_t i = 0; i < 500; ++i) high[i] = -static_cast<cl_int>(i);
  event_handle unmapped;
  ASSERT_CL_OK(clEnqueueUnmapMemObject(queue_, mem, high, 0, nullptr, unmapped.out()));
  ASSERT_CL_OK(clEnqueueUnmapMemObject(queue_, mem, low, 0, nullptr, nullptr));
  const cl_event unmap_wait = unmapped;
  ASSERT_CL_OK(clWaitForEvents(1, &unmap_wait));
  EXPECT_EQ(event_value<cl_command_type>(unmapped, CL_EVENT_COMMAND_TYPE), cl_command_type{CL_COMMAND_UNMAP_MEM_OBJECT});
  auto back = read_ints(mem, n);
  for (size_t i = 0; i < 500; ++i) ASSERT_EQ(back[i], 1000 + static_cast<cl_int>(i));
  for (size_t i = 500; i < n; ++i) ASSERT_EQ(back[i], -static_cast<cl_int>(i - 500));
}

TEST_F(memory, copy_buffer_copies_between_and_within_buffers) {
  constexpr size_t size = 64 * 1024;
  const auto data = byte_pattern(size, 11);
  auto src = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, size, const_cast<unsigned char*>(data.data()));
  auto dst = buffer(CL_MEM_READ_WRITE, size);
  ASSERT_TRUE(src && dst);
  ASSERT_CL_OK(clEnqueueCopyBuffer(queue_, src, dst, 0, 0, size, 0, nullptr, nullptr));
  // Within one buffer, non-overlapping: the first 1000 bytes onto offset 40000.
  event_handle copied;
  ASSERT_CL_OK(clEnqueueCopyBuffer(queue_, dst, dst, 0, 40000, 1000, 0, nullptr, copied.out()));
  std::vector<unsigned char> back(size);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, dst, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr));
  auto expected = data;
  std::copy(data.begin(), data.begin() + 1000, expected.begin() + 40000);
  EXPECT_TRUE(back == expected);
  EXPECT_EQ(event_value<cl_command_type>(copied, CL_EVENT_COMMAND_TYPE), cl_command_type{CL_COMMAND_COPY_BUFFER});
}

TEST_F(memory, fill_buffer_repeats_every_pattern_size) {
  for (size_t pattern_size : {1, 2, 4, 8, 16, 32, 64, 128}) {
    SCOPED_TRACE("pattern size " + std::to_string(pattern_size));
    const size_t size = 4096;
    const auto initial = byte_pattern(size, 1);
    auto mem = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, size, const_cast<unsigned char*>(initial.data()));
    ASSERT_TRUE(mem);
    const auto pattern = byte_pattern(pattern_size, 99);
    const size_t offset = pattern_size * 3, length = pattern_size * 20;
    ASSERT_CL_OK(clEnqueueFillBuffer(queue_, mem, pattern.data(), pattern_size, offset, length, 0, nullptr, nullptr));
    std::vector<unsigned char> back(size);
    ASSERT_CL_OK(clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr));
    auto expected = initial;
    for (size_t i = 0; i < length; ++i) expected[offset + i] = pattern[i % pattern_size];
    ASSERT_TRUE(back == expected);
  }
}

TEST_F(memory, rect_transfers_match_a_host_reference) {
  // Buffer: 64-byte rows, 16 rows a slice, 4 slices. Host: 80-byte rows, 20 rows, 5 slices.
  const rect_layout buf{{5, 3, 1}, 64, 64 * 16};
  const rect_layout host{{2, 1, 0}, 80, 80 * 20};
  const size_t region[3] = {37, 9, 2};
  const size_t buf_size = 64 * 16 * 4, host_size = 80 * 20 * 5;
  const auto buf_init = byte_pattern(buf_size, 3);
  const auto host_data = byte_pattern(host_size, 4);
  auto a = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, buf_size, const_cast<unsigned char*>(buf_init.data()));
  ASSERT_TRUE(a);

  // Write rect: host -> buffer.
  ASSERT_CL_OK(clEnqueueWriteBufferRect(queue_, a, CL_TRUE, buf.origin, host.origin, region, buf.row_pitch,
                                        buf.slice_pitch, host.row_pitch, host.slice_pitch, host_data.data(), 0,
                                        nullptr, nullptr));
  auto mirror = buf_init;
  host_rect_copy(host_data.data(), host, mirror.data(), buf, region);
  std::vector<unsigned char> back(buf_size);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, a, CL_TRUE, 0, buf_size, back.data(), 0, nullptr, nullptr));
  ASSERT_TRUE(back == mirror) << "clEnqueueWriteBufferRect wrote the wrong bytes";

  // Read rect: buffer -> host, other origins.
  const rect_layout from{{1, 2, 0}, 64, 64 * 16};
  const rect_layout to{{0, 0, 1}, 80, 80 * 20};
  std::vector<unsigned char> got(host_size, 0xee), want(host_size, 0xee);
  ASSERT_CL_OK(clEnqueueReadBufferRect(queue_, a, CL_TRUE, from.origin, to.origin, region, from.row_pitch,
                                       from.slice_pitch, to.row_pitch, to.slice_pitch, got.data(), 0, nullptr,
                                       nullptr));
  host_rect_copy(mirror.data(), from, want.data(), to, region);
  ASSERT_TRUE(got == want) << "clEnqueueReadBufferRect read the wrong bytes";

  // Copy rect: buffer -> buffer with other pitches; zero pitches mean tightly packed.
  const size_t tight_region[3] = {16, 4, 3};
  auto b = buffer(CL_MEM_READ_WRITE, 16 * 4 * 3);
  ASSERT_TRUE(b);
  const size_t zero[3] = {0, 0, 0};
  const rect_layout src{{8, 2, 0}, 64, 64 * 16};
  ASSERT_CL_OK(clEnqueueCopyBufferRect(queue_, a, b, src.origin, zero, tight_region, src.row_pitch,
                                       src.slice_pitch, 0, 0, 0, nullptr, nullptr));
  std::vector<unsigned char> packed(16 * 4 * 3), packed_want(16 * 4 * 3);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, b, CL_TRUE, 0, packed.size(), packed.data(), 0, nullptr, nullptr));
  host_rect_copy(mirror.data(), src, packed_want.data(), rect_layout{{0, 0, 0}, 16, 64}, tight_region);
  EXPECT_TRUE(packed == packed_want) << "clEnqueueCopyBufferRect copied the wrong bytes";
}

TEST_F(memory, sub_buffer_is_a_window_on_its_parent) {
  const cl_uint align_bits = device_value<cl_uint>(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
  const size_t align = std::max<size_t>(align_bits / 8, sizeof(cl_int));
  const size_t n = 4 * align / sizeof(cl_int);
  std::vector<cl_int> host(n);
  std::iota(host.begin(), host.end(), 0);
  auto parent = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(cl_int), host.data());
  ASSERT_TRUE(parent);
  const cl_buffer_region region{align, align};  // the second quarter
  const size_t first = align / sizeof(cl_int), count = align / sizeof(cl_int);
  cl_int rc = CL_SUCCESS;
  mem_handle sub(clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &rc));
  ASSERT_CL_OK(rc);
  EXPECT_EQ(mem_value<cl_mem>(sub, CL_MEM_ASSOCIATED_MEMOBJECT), parent.get());
  EXPECT_EQ(mem_value<size_t>(sub, CL_MEM_OFFSET), align);
  EXPECT_EQ(mem_value<size_t>(sub, CL_MEM_SIZE), align);
  // Flags not given are inherited from the parent.
  EXPECT_EQ(mem_value<cl_mem_flags>(sub, CL_MEM_FLAGS) & CL_MEM_READ_WRITE, cl_mem_flags{CL_MEM_READ_WRITE});

  auto seen = read_ints(sub, count);
  for (size_t i = 0; i < count; ++i) ASSERT_EQ(seen[i], static_cast<cl_int>(first + i));
  ASSERT_NO_FATAL_FAILURE(add_one(sub, count));
  // Writes through the sub-buffer land in the parent, and nowhere else.
  const std::vector<cl_int> marker(4, -9);
  ASSERT_CL_OK(clEnqueueWriteBuffer(queue_, sub, CL_TRUE, 0, sizeof(cl_int) * 4, marker.data(), 0, nullptr, nullptr));
  auto whole = read_ints(parent, n);
  for (size_t i = 0; i < n; ++i) {
    cl_int want = static_cast<cl_int>(i);
    if (i >= first && i < first + count) want += 1;
    if (i >= first && i < first + 4) want = -9;
    ASSERT_EQ(whole[i], want) << "at " << i;
  }
  // Releasing the parent first is allowed: the sub-buffer keeps it alive.
  parent.reset();
  auto still = read_ints(sub, 8);
  EXPECT_EQ(still[0], -9);
  EXPECT_EQ(still[7], static_cast<cl_int>(first + 7) + 1);
}

TEST_F(memory, released_buffers_live_until_their_commands_finish) {
  constexpr size_t n = 1 << 16;
  std::vector<cl_int> host(n, 41);
  cl_int rc = CL_SUCCESS;
  cl_mem src = clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(cl_int), host.data(), &rc);
  ASSERT_CL_OK(rc);
  auto dst = buffer(CL_MEM_READ_WRITE, n * sizeof(cl_int));
  ASSERT_TRUE(dst);
  ASSERT_NO_FATAL_FAILURE(add_one(src, n));
  ASSERT_CL_OK(clEnqueueCopyBuffer(queue_, src, dst, 0, 0, n * sizeof(cl_int), 0, nullptr, nullptr));
  ASSERT_CL_OK(clReleaseMemObject(src));  // commands in flight hold their own references
  auto back = read_ints(dst, n);
  EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](cl_int v) { return v == 42; }));
}

TEST_F(memory, destructor_callbacks_run_after_the_release_in_reverse_order) {
  // Static: a callback that comes late must not write into a finished test's stack.
  struct state {
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<int> calls;  // guarded by mutex
  };
  static state s;
  static std::pair<state*, int> first{&s, 1}, second{&s, 2};
  {
    std::lock_guard lock(s.mutex);
    s.calls.clear();
  }
  auto callback = [](cl_mem, void* user) {
    auto* tag = static_cast<std::pair<state*, int>*>(user);
    std::lock_guard lock(tag->first->mutex);
    tag->first->calls.push_back(tag->second);
    tag->first->cv.notify_all();
  };
  cl_int rc = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(context_, CL_MEM_READ_WRITE, 256, nullptr, &rc);
  ASSERT_CL_OK(rc);
  ASSERT_CL_OK(clSetMemObjectDestructorCallback(mem, callback, &first));
  ASSERT_CL_OK(clSetMemObjectDestructorCallback(mem, callback, &second));
  {
    std::lock_guard lock(s.mutex);
    EXPECT_TRUE(s.calls.empty()) << "destructor callback before the release";
  }
  ASSERT_CL_OK(clReleaseMemObject(mem));
  std::unique_lock lock(s.mutex);
  ASSERT_TRUE(s.cv.wait_for(lock, std::chrono::seconds(20), [&] { return s.calls.size() >= 2; }))
      << "destructor callbacks did not run within 20 s";
  // "The registered user callback functions are called in the reverse order in which they
  // were registered."
  EXPECT_EQ(s.calls, (std::vector<int>{2, 1}));
}

}  // namespace ferry::test
