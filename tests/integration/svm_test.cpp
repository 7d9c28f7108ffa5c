// Coarse-grained buffer SVM through Ferry: the capability reported, allocation, map and
// unmap, kernels with SVM pointers (offsets included), copies in all four directions, fills,
// clEnqueueSVMFree with and without a callback, buffers over SVM memory, exec info, and the
// error codes of bad inputs. Results are checked against host-side references.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "cl_helpers.hpp"

namespace ferry::test {

suite_config this_suite() { return suite_config{}; }  // Ferry only, one daemon

namespace {

constexpr const char* svm_kernels = R"CLC(
kernel void add(global int* x, int k) {
  x[get_global_id(0)] += k;
}

kernel void twice(global float* x) {
  x[get_global_id(0)] *= 2.0f;
}

kernel void copy_twice(global int* out, global const int* in) {
  out[get_global_id(0)] = 2 * in[get_global_id(0)];
}

typedef struct {
  global int* store;
} pointer_holder;

kernel void store_through(int value, global pointer_holder* holder) {
  *holder->store = value;
}
)CLC";

// One clSVMAlloc allocation, freed with clSVMFree when the test leaves its scope (before
// the fixture's leak check).
class svm_memory {
 public:
  svm_memory(cl_context context, size_t size, cl_svm_mem_flags flags = CL_MEM_READ_WRITE, cl_uint alignment = 0)
      : context_(context), pointer_(clSVMAlloc(context, flags, size, alignment)) {}
  ~svm_memory() { reset(); }
  svm_memory(const svm_memory&) = delete;
  svm_memory& operator=(const svm_memory&) = delete;

  void reset() {
    if (pointer_ != nullptr) clSVMFree(context_, pointer_);
    pointer_ = nullptr;
  }
  /// Hands the allocation over (to clEnqueueSVMFree).
  void* release_ownership() { return std::exchange(pointer_, nullptr); }
  template <class T = void>
  T* get() const {
    return static_cast<T*>(pointer_);
  }
  explicit operator bool() const { return pointer_ != nullptr; }

 private:
  cl_context context_;
  void* pointer_;
};

// Whether an SVM allocation's host block can take the server's address, so that a
// kernel may follow pointers stored inside it (docs/extensions.md, SVM). Not between
// two AddressSanitizer processes: ASan's allocator reserves the same fixed range in every
// instrumented process, daemon and client alike, so the server's address is always
// taken here (and Ferry refuses CL_KERNEL_EXEC_INFO_SVM_PTRS, as it must).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool same_address_svm = false;
#else
constexpr bool same_address_svm = true;
#endif

std::vector<cl_int> iota_ints(size_t n, cl_int base = 0) {
  std::vector<cl_int> v(n);
  std::iota(v.begin(), v.end(), base);
  return v;
}

}  // namespace

class svm : public ferry_test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(ferry_test::SetUp());
    program_ = build(svm_kernels);
    ASSERT_TRUE(program_);
  }
  void TearDown() override {
    program_.reset();
    ferry_test::TearDown();
  }

  // Host writes through a blocking write map, then unmap.
  void write_through_map(void* pointer, const void* data, size_t size) {
    ASSERT_CL_OK(clEnqueueSVMMap(queue_, CL_TRUE, CL_MAP_WRITE, pointer, size, 0, nullptr, nullptr));
    std::memcpy(pointer, data, size);
    ASSERT_CL_OK(clEnqueueSVMUnmap(queue_, pointer, 0, nullptr, nullptr));
  }
  // The contents as the device holds them, through a blocking read map.
  std::vector<cl_int> read_through_map(void* pointer, size_t n) {
    std::vector<cl_int> out(n, -1);
    EXPECT_CL_OK(clEnqueueSVMMap(queue_, CL_TRUE, CL_MAP_READ, pointer, n * sizeof(cl_int), 0, nullptr, nullptr));
    std::memcpy(out.data(), pointer, n * sizeof(cl_int));
    EXPECT_CL_OK(clEnqueueSVMUnmap(queue_, pointer, 0, nullptr, nullptr));
    return out;
  }

  program_handle program_;
};

TEST_F(svm, capability_reported_is_coarse_grain_buffer_only) {
  // PoCL offers fine-grained buffers and atomics too; across a network only coarse-grained
  // buffers can be had.
  EXPECT_EQ(device_value<cl_device_svm_capabilities>(device_, CL_DEVICE_SVM_CAPABILITIES),
            cl_device_svm_capabilities{CL_DEVICE_SVM_COARSE_GRAIN_BUFFER});
}

TEST_F(svm, mapped_writes_reach_a_kernel_through_an_offset_pointer_and_come_back) {
  constexpr size_t n = 4096, skip = 16;
  svm_memory memory(context_, n * sizeof(cl_int));
  ASSERT_TRUE(memory);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(memory.get()) % 128, 0u) << "default alignment: the largest type";
  const auto data = iota_ints(n, 5);
  ASSERT_NO_FATAL_FAILURE(write_through_map(memory.get(), data.data(), n * sizeof(cl_int)));

  auto kernel = create_kernel(program_, "add");
  ASSERT_CL_OK(clSetKernelArgSVMPointer(kernel, 0, memory.get<cl_int>() + skip));
  const cl_int k = 1000;
  ASSERT_CL_OK(clSetKernelArg(kernel, 1, sizeof k, &k));
  const size_t items = n - skip;
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &items, nullptr, 0, nullptr, nullptr));

  auto back = read_through_map(memory.get(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], data[i] + (i < skip ? 0 : k)) << "at " << i;

  // Setting the base pointer again (a steady-state argument) runs on the whole block.
  ASSERT_CL_OK(clSetKernelArgSVMPointer(kernel, 0, memory.get()));
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
  back = read_through_map(memory.get(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], data[i] + (i < skip ? k : 2 * k)) << "at " << i;
}

TEST_F(svm, a_non_blocking_map_fills_the_region_when_its_event_completes) {
  constexpr size_t n = 1024;
  svm_memory memory(context_, n * sizeof(cl_int));
  ASSERT_TRUE(memory);
  const auto data = iota_ints(n, -300);
  ASSERT_CL_OK(clEnqueueSVMMemcpy(queue_, CL_TRUE, memory.get(), data.data(), n * sizeof(cl_int), 0, nullptr, nullptr));
  // Only a window, read-only.
  cl_int* window = memory.get<cl_int>() + 100;
  event_handle mapped;
  ASSERT_CL_OK(clEnqueueSVMMap(queue_, CL_FALSE, CL_MAP_READ, window, 200 * sizeof(cl_int), 0, nullptr, mapped.out()));
  const cl_event wait = mapped;
  ASSERT_CL_OK(clWaitForEvents(1, &wait));
  EXPECT_EQ(event_value<cl_command_type>(mapped, CL_EVENT_COMMAND_TYPE), cl_command_type{CL_COMMAND_SVM_MAP});
  EXPECT_TRUE(std::equal(window, window + 200, data.begin() + 100));
  event_handle unmapped;
  ASSERT_CL_OK(clEnqueueSVMUnmap(queue_, window, 0, nullptr, unmapped.out()));
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_EQ(event_value<cl_command_type>(unmapped, CL_EVENT_COMMAND_TYPE), cl_command_type{CL_COMMAND_SVM_UNMAP});
  EXPECT_EQ(event_status(unmapped), CL_COMPLETE);
}

TEST_F(svm, memcpy_works_in_all_four_directions) {
  constexpr size_t n = 3000;
  constexpr size_t bytes = n * sizeof(cl_int);
  svm_memory a(context_, bytes), b(context_, bytes);
  ASSERT_TRUE(a && b);
  const auto data = iota_ints(n, 7);

  // host -> SVM, then SVM -> SVM (shifted by 10 elements), then SVM -> host.
  ASSERT_CL_OK(clEnqueueSVMMemcpy(queue_, CL_FALSE, a.get(), data.data(), bytes, 0, nullptr, nullptr));
  ASSERT_CL_OK(clEnqueueSVMMemcpy(queue_, CL_FALSE, b.get<cl_int>() + 10, a.get(), bytes - 10 * sizeof(cl_int), 0,
                                  nullptr, nullptr));
  std::vector<cl_int> back(n, -1);
  ASSERT_CL_OK(clEnqueueSVMMemcpy(queue_, CL_TRUE, back.data() + 10, b.get<cl_int>() + 10,
                                  bytes - 10 * sizeof(cl_int), 0, nullptr, nullptr));
  for (size_t i = 10; i < n; ++i) ASSERT_EQ(back[i], data[i - 10]) << "at " << i;

  // SVM -> host without blocking, completed through its event.
  std::vector<cl_int> again(n, -1);
  event_handle read;
  ASSERT_CL_OK(clEnqueueSVMMemcpy(queue_, CL_FALSE, again.data(), a.get(), bytes, 0, nullptr, read.out()));
  cl_event wait = read;
  ASSERT_CL_OK(clWaitForEvents(1, &wait));
  EXPECT_EQ(again, data);
  EXPECT_EQ(event_value<cl_command_type>(read, CL_EVENT_COMMAND_TYPE), cl_command_type{CL_COMMAND_SVM_MEMCPY});

  // host -> host, blocking and not: done on the client, in the queue's order.
  std::vector<cl_int> copy(n, -1);
  ASSERT_CL_OK(clEnqueueSVMMemcpy(queue_, CL_TRUE, copy.data(), data.data(), bytes, 0, nullptr, nullptr));
  EXPECT_EQ(copy, data);
  std::vector<cl_int> later(n, -1);
  cl_int rc = CL_SUCCESS;
  event_handle gate(clCreateUserEvent(context_, &rc));
  ASSERT_CL_OK(rc);
  event_handle host_copy;
  cl_event gate_event = gate;
  ASSERT_CL_OK(
      clEnqueueSVMMemcpy(queue_, CL_FALSE, later.data(), copy.data(), bytes, 1, &gate_event, host_copy.out()));
  EXPECT_EQ(later[0], -1) << "the copy waits for its wait list";
  ASSERT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  wait = host_copy;
  ASSERT_CL_OK(clWaitForEvents(1, &wait));
  EXPECT_EQ(later, data);
}

TEST_F(svm, memfill_repeats_its_pattern_over_the_range) {
  constexpr size_t n = 1000;
  svm_memory memory(context_, n * sizeof(cl_int));
  ASSERT_TRUE(memory);
  const cl_int zero = 0, pattern = 0x5a5a1234;
  ASSERT_CL_OK(clEnqueueSVMMemFill(queue_, memory.get(), &zero, sizeof zero, n * sizeof(cl_int), 0, nullptr, nullptr));
  event_handle filled;
  ASSERT_CL_OK(clEnqueueSVMMemFill(queue_, memory.get<cl_int>() + 100, &pattern, sizeof pattern, 500 * sizeof(cl_int),
                                   0, nullptr, filled.out()));
  auto back = read_through_map(memory.get(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], i >= 100 && i < 600 ? pattern : 0) << "at " << i;
  EXPECT_EQ(event_value<cl_command_type>(filled, CL_EVENT_COMMAND_TYPE), cl_command_type{CL_COMMAND_SVM_MEMFILL});
  // A 16-byte pattern (int4).
  const cl_int4 wide{{1, 2, 3, 4}};
  ASSERT_CL_OK(clEnqueueSVMMemFill(queue_, memory.get(), &wide, sizeof wide, 64 * sizeof(cl_int), 0, nullptr, nullptr));
  back = read_through_map(memory.get(), 64);
  for (size_t i = 0; i < 64; ++i) ASSERT_EQ(back[i], static_cast<cl_int>(i % 4 + 1)) << "at " << i;
}

TEST_F(svm, enqueue_svm_free_without_callback_frees_after_its_wait_list) {
  svm_memory first(context_, 4096), second(context_, 64);
  ASSERT_TRUE(first && second);
  cl_int rc = CL_SUCCESS;
  event_handle gate(clCreateUserEvent(context_, &rc));
  ASSERT_CL_OK(rc);
  cl_event gate_event = gate;
  void* pointers[] = {first.release_ownership(), second.release_ownership()};
  event_handle freed;
  ASSERT_CL_OK(clEnqueueSVMFree(queue_, 2, pointers, nullptr, nullptr, 1, &gate_event, freed.out()));
  EXPECT_EQ(event_value<cl_command_type>(freed, CL_EVENT_COMMAND_TYPE), cl_command_type{CL_COMMAND_SVM_FREE});
  EXPECT_GT(event_status(freed), CL_COMPLETE) << "waits for its wait list";
  ASSERT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  const cl_event wait = freed;
  ASSERT_CL_OK(clWaitForEvents(1, &wait));
  // The fixture's leak check finds neither allocation on either side.
}

namespace {

struct free_record {
  std::atomic<int> calls{0};
  cl_command_queue queue = nullptr;
  std::vector<void*> pointers;
  cl_context context = nullptr;
};

void CL_CALLBACK free_with_clsvmfree(cl_command_queue queue, cl_uint count, void* pointers[], void* user_data) {
  auto* record = static_cast<free_record*>(user_data);
  record->queue = queue;
  record->pointers.assign(pointers, pointers + count);
  for (cl_uint i = 0; i < count; ++i) clSVMFree(record->context, pointers[i]);
  record->calls.fetch_add(1);
}

}  // namespace

TEST_F(svm, enqueue_svm_free_runs_its_callback_before_the_event_completes) {
  svm_memory first(context_, 256), second(context_, 512);
  ASSERT_TRUE(first && second);
  free_record record;
  record.context = context_;
  void* pointers[] = {first.release_ownership(), second.release_ownership()};
  const std::vector<void*> expected(std::begin(pointers), std::end(pointers));
  event_handle freed;
  ASSERT_CL_OK(clEnqueueSVMFree(queue_, 2, pointers, free_with_clsvmfree, &record, 0, nullptr, freed.out()));
  pointers[0] = pointers[1] = nullptr;  // the command took a copy of the list
  const cl_event wait = freed;
  ASSERT_CL_OK(clWaitForEvents(1, &wait));
  EXPECT_EQ(record.calls.load(), 1) << "the callback ran before the command completed";
  EXPECT_EQ(record.queue, queue_);
  EXPECT_EQ(record.pointers, expected);
  EXPECT_EQ(event_status(freed), CL_COMPLETE);
}

TEST_F(svm, buffer_over_an_svm_pointer_uses_the_svm_memory) {
  constexpr size_t n = 2048, offset = 256, length = 1024;
  svm_memory memory(context_, n * sizeof(float));
  ASSERT_TRUE(memory);
  std::vector<float> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = static_cast<float>(i) * 0.5f;
  ASSERT_CL_OK(clEnqueueSVMMemcpy(queue_, CL_TRUE, memory.get(), data.data(), n * sizeof(float), 0, nullptr, nullptr));

  float* window = memory.get<float>() + offset;
  auto mem = buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, length * sizeof(float), window);
  ASSERT_TRUE(mem);
  EXPECT_EQ(info_value<cl_bool>(FERRY_IT_INFO_QUERY(clGetMemObjectInfo, mem, CL_MEM_USES_SVM_POINTER)),
            cl_bool{CL_TRUE});
  EXPECT_EQ(info_value<void*>(FERRY_IT_INFO_QUERY(clGetMemObjectInfo, mem, CL_MEM_HOST_PTR)),
            static_cast<void*>(window));
  auto plain = buffer(CL_MEM_READ_WRITE, 64);
  ASSERT_TRUE(plain);
  EXPECT_EQ(info_value<cl_bool>(FERRY_IT_INFO_QUERY(clGetMemObjectInfo, plain, CL_MEM_USES_SVM_POINTER)),
            cl_bool{CL_FALSE});

  // A kernel on the buffer changes the SVM allocation.
  auto kernel = create_kernel(program_, "twice");
  cl_mem handle = mem;
  ASSERT_CL_OK(clSetKernelArg(kernel, 0, sizeof handle, &handle));
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &length, nullptr, 0, nullptr, nullptr));
  std::vector<float> back(n, -1.0f);
  ASSERT_CL_OK(clEnqueueSVMMemcpy(queue_, CL_TRUE, back.data(), memory.get(), n * sizeof(float), 0, nullptr, nullptr));
  for (size_t i = 0; i < n; ++i) {
    const bool inside = i >= offset && i < offset + length;
    ASSERT_EQ(back[i], inside ? data[i] * 2.0f : data[i]) << "at " << i;
  }
  // And it is still a buffer like any other: read, and map.
  std::vector<float> read(length, -1.0f);
  ASSERT_CL_OK(clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, length * sizeof(float), read.data(), 0, nullptr, nullptr));
  EXPECT_TRUE(std::equal(read.begin(), read.end(), back.begin() + offset));
  cl_int rc = CL_SUCCESS;
  auto* mapped = static_cast<float*>(
      clEnqueueMapBuffer(queue_, mem, CL_TRUE, CL_MAP_READ, 0, length * sizeof(float), 0, nullptr, nullptr, &rc));
  ASSERT_CL_OK(rc);
  EXPECT_EQ(mapped, window) << "a USE_HOST_PTR buffer maps at its host pointer";
  EXPECT_TRUE(std::equal(mapped, mapped + length, back.begin() + offset));
  ASSERT_CL_OK(clEnqueueUnmapMemObject(queue_, mem, mapped, 0, nullptr, nullptr));
  ASSERT_CL_OK(clFinish(queue_));

  // A buffer may not reach past the end of the allocation.
  cl_mem past = clCreateBuffer(context_, CL_MEM_USE_HOST_PTR, n * sizeof(float), window, &rc);
  EXPECT_EQ(past, nullptr);
  EXPECT_CL(CL_INVALID_HOST_PTR, rc);
}

TEST_F(svm, two_allocations_feed_one_kernel_on_two_queues) {
  constexpr size_t n = 10;
  svm_memory in(context_, n * sizeof(cl_int), CL_MEM_READ_ONLY), out(context_, n * sizeof(cl_int));
  ASSERT_TRUE(in && out);
  const auto data = iota_ints(n, 17);
  ASSERT_NO_FATAL_FAILURE(write_through_map(in.get(), data.data(), n * sizeof(cl_int)));
  cl_int rc = CL_SUCCESS;
  queue_handle second(clCreateCommandQueueWithProperties(context_, device_, nullptr, &rc));
  ASSERT_CL_OK(rc);
  ASSERT_CL_OK(clFinish(queue_));
  auto kernel = create_kernel(program_, "copy_twice");
  ASSERT_CL_OK(clSetKernelArgSVMPointer(kernel, 0, out.get()));
  ASSERT_CL_OK(clSetKernelArgSVMPointer(kernel, 1, in.get()));
  ASSERT_CL_OK(clEnqueueNDRangeKernel(second, kernel, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
  ASSERT_CL_OK(clFinish(second));
  auto back = read_through_map(out.get(), n);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(back[i], 2 * data[i]) << "at " << i;
}

TEST_F(svm, freeing_while_commands_still_wait_keeps_the_memory_until_they_ran) {
  // clSVMFree does not wait for the commands that use the memory; the application should
  // have. When it has not, ferryd must still never let a command touch freed memory.
  constexpr size_t n = 1 << 16;
  svm_memory memory(context_, n * sizeof(cl_int));
  ASSERT_TRUE(memory);
  cl_int rc = CL_SUCCESS;
  event_handle gate(clCreateUserEvent(context_, &rc));
  ASSERT_CL_OK(rc);
  cl_event gate_event = gate;
  auto kernel = create_kernel(program_, "add");
  ASSERT_CL_OK(clSetKernelArgSVMPointer(kernel, 0, memory.get()));
  const cl_int k = 3;
  ASSERT_CL_OK(clSetKernelArg(kernel, 1, sizeof k, &k));
  event_handle ran;
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &n, nullptr, 1, &gate_event, ran.out()));
  memory.reset();  // clSVMFree while the kernel still waits
  ASSERT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  const cl_event wait = ran;
  ASSERT_CL_OK(clWaitForEvents(1, &wait));
  EXPECT_EQ(event_status(ran), CL_COMPLETE);
  // The daemon is still there.
  svm_memory next(context_, 64);
  EXPECT_TRUE(next);
}

TEST_F(svm, exec_info_takes_svm_pointers_and_a_clone_keeps_them) {
  svm_memory memory(context_, 1024);
  ASSERT_TRUE(memory);
  auto kernel = create_kernel(program_, "add");
  void* pointers[] = {memory.get(), memory.get<char>() + 100};
  if constexpr (!same_address_svm) {
    EXPECT_CL(CL_INVALID_OPERATION, clSetKernelExecInfo(kernel, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof pointers, pointers));
    GTEST_SKIP() << "the client cannot take the server's addresses under AddressSanitizer";
  }
  ASSERT_CL_OK(clSetKernelExecInfo(kernel, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof pointers, pointers));
  const cl_bool off = CL_FALSE;
  EXPECT_CL_OK(clSetKernelExecInfo(kernel, CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, sizeof off, &off));
  cl_int rc = CL_SUCCESS;
  kernel_handle clone(clCloneKernel(kernel, &rc));
  ASSERT_CL_OK(rc);
  // The clone runs like its source.
  ASSERT_CL_OK(clSetKernelArgSVMPointer(clone, 0, memory.get()));
  const cl_int k = 1;
  ASSERT_CL_OK(clSetKernelArg(clone, 1, sizeof k, &k));
  const size_t items = 256;
  const cl_int forty = 40;
  ASSERT_CL_OK(clEnqueueSVMMemFill(queue_, memory.get(), &forty, sizeof forty, 1024, 0, nullptr, nullptr));
  ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, clone, 1, nullptr, &items, nullptr, 0, nullptr, nullptr));
  auto back = read_through_map(memory.get(), items);
  for (size_t i = 0; i < items; ++i) ASSERT_EQ(back[i], forty + 1) << "at " << i;
}

TEST_F(svm, kernels_follow_pointers_stored_inside_svm_memory_and_clones_keep_them) {
  // The conformance test clone_kernel_with_exec_info: the host stores an SVM pointer inside
  // SVM memory under a map, and the kernel follows it. Each allocation's host block takes the
  // server's address, so the stored pointer means the same there.
  if constexpr (!same_address_svm) GTEST_SKIP() << "the client cannot take the server's addresses under AddressSanitizer";
  struct pointer_holder {
    cl_int* store;
  };
  svm_memory holder(context_, sizeof(pointer_holder));
  svm_memory first(context_, sizeof(cl_int)), second(context_, sizeof(cl_int)), third(context_, sizeof(cl_int));
  ASSERT_TRUE(holder && first && second && third);
  auto run = [&](cl_kernel kernel, svm_memory& target, cl_int value) {
    ASSERT_CL_OK(clEnqueueSVMMap(queue_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, holder.get(), sizeof(pointer_holder),
                                 0, nullptr, nullptr));
    holder.get<pointer_holder>()->store = target.get<cl_int>();
    ASSERT_CL_OK(clEnqueueSVMUnmap(queue_, holder.get(), 0, nullptr, nullptr));
    ASSERT_CL_OK(clSetKernelArg(kernel, 0, sizeof value, &value));
    ASSERT_CL_OK(clSetKernelArgSVMPointer(kernel, 1, holder.get()));
    void* followed = target.get();
    ASSERT_CL_OK(clSetKernelExecInfo(kernel, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof followed, &followed));
    const size_t one = 1;
    ASSERT_CL_OK(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &one, nullptr, 0, nullptr, nullptr));
    ASSERT_CL_OK(clFinish(queue_));
    EXPECT_EQ(read_through_map(target.get(), 1)[0], value);
  };
  auto source = create_kernel(program_, "store_through");
  ASSERT_NO_FATAL_FAILURE(run(source, first, 11));
  cl_int rc = CL_SUCCESS;
  kernel_handle clone(clCloneKernel(source, &rc));
  ASSERT_CL_OK(rc);
  ASSERT_NO_FATAL_FAILURE(run(clone, second, 22));
  kernel_handle clone_of_clone(clCloneKernel(clone, &rc));
  ASSERT_CL_OK(rc);
  ASSERT_NO_FATAL_FAILURE(run(clone_of_clone, third, 33));
  EXPECT_EQ(read_through_map(first.get(), 1)[0], 11) << "the others' runs left it alone";
  EXPECT_EQ(read_through_map(second.get(), 1)[0], 22);
  // The daemon is alive and serves on.
  svm_memory next(context_, 64);
  EXPECT_TRUE(next);
}

namespace {

// With host blocks placed anywhere, a kernel told it follows a stored pointer is refused
// up front, and the daemon never runs it.
FERRY_IT_CHILD(svm_stored_pointers_refused) {
  cl_platform_id platform = find_ferry_platform();
  CHILD_CHECK(platform != nullptr, "no Ferry platform");
  cl_device_id device = platform_devices(platform).at(0);
  cl_int rc = CL_SUCCESS;
  context_handle context(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc));
  CHILD_CHECK(rc == CL_SUCCESS, "context: %d", rc);
  program_handle program = build_program(context, device, svm_kernels, "");
  kernel_handle kernel = create_kernel(program, "store_through");
  CHILD_CHECK(kernel, "kernel");
  svm_memory target(context, sizeof(cl_int));
  CHILD_CHECK(target, "clSVMAlloc");
  void* followed = target.get();
  rc = clSetKernelExecInfo(kernel, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof followed, &followed);
  CHILD_CHECK(rc == CL_INVALID_OPERATION, "clSetKernelExecInfo answered %d", rc);
  // Pointers passed as arguments are still translated.
  auto add = create_kernel(program, "add");
  CHILD_CHECK(clSetKernelArgSVMPointer(add, 0, target.get()) == CL_SUCCESS, "argument");
  std::printf("PASS\n");
  return 0;
}

}  // namespace

TEST(svm_placement, stored_pointers_into_blocks_at_other_addresses_are_refused_up_front) {
  expect_child_passes("svm_stored_pointers_refused", std::chrono::seconds(60), {{"FERRY_SVM_SAME_ADDRESS", "0"}});
}

TEST_F(svm, bad_inputs_answer_the_spec_codes) {
  // clSVMAlloc: NULL for fine-grained or atomic memory (no Ferry device offers them), size 0,
  // alignments that are no power of two or larger than the largest type, conflicting
  // access flags, an invalid context.
  EXPECT_EQ(clSVMAlloc(context_, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, 64, 0), nullptr);
  EXPECT_EQ(clSVMAlloc(context_, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS, 64, 0),
            nullptr);
  EXPECT_EQ(clSVMAlloc(context_, CL_MEM_READ_WRITE, 0, 0), nullptr);
  EXPECT_EQ(clSVMAlloc(context_, CL_MEM_READ_WRITE, 64, 3), nullptr);
  EXPECT_EQ(clSVMAlloc(context_, CL_MEM_READ_WRITE, 64, 256), nullptr);
  EXPECT_EQ(clSVMAlloc(context_, CL_MEM_READ_WRITE | CL_MEM_READ_ONLY, 64, 0), nullptr);
  const auto max_alloc = device_value<cl_ulong>(device_, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  EXPECT_EQ(clSVMAlloc(context_, CL_MEM_READ_WRITE, static_cast<size_t>(max_alloc) + 1, 0), nullptr);
  clSVMFree(context_, nullptr);  // no action

  svm_memory memory(context_, 4096, CL_MEM_READ_WRITE, 64);
  ASSERT_TRUE(memory);
  char* base = memory.get<char>();
  std::vector<cl_int> host(1024, 0);

  // clSetKernelArgSVMPointer: a pointer in no SVM allocation, an argument that is no
  // pointer, an index out of range.
  auto kernel = create_kernel(program_, "add");
  EXPECT_CL(CL_INVALID_ARG_VALUE, clSetKernelArgSVMPointer(kernel, 0, host.data()));
  EXPECT_CL(CL_INVALID_ARG_VALUE, clSetKernelArgSVMPointer(kernel, 1, base));
  EXPECT_CL(CL_INVALID_ARG_INDEX, clSetKernelArgSVMPointer(kernel, 2, base));
  EXPECT_CL(CL_INVALID_KERNEL, clSetKernelArgSVMPointer(nullptr, 0, base));
  EXPECT_CL_OK(clSetKernelArgSVMPointer(kernel, 0, nullptr));

  // clSetKernelExecInfo.
  const cl_bool on = CL_TRUE;
  EXPECT_CL(CL_INVALID_OPERATION,
            clSetKernelExecInfo(kernel, CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, sizeof on, &on));
  EXPECT_CL(CL_INVALID_VALUE, clSetKernelExecInfo(kernel, CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, 1, &on));
  void* foreign[] = {host.data()};
  EXPECT_CL(CL_INVALID_VALUE, clSetKernelExecInfo(kernel, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof foreign, foreign));
  EXPECT_CL(CL_INVALID_VALUE, clSetKernelExecInfo(kernel, CL_KERNEL_EXEC_INFO_SVM_PTRS, 3, foreign));
  EXPECT_CL(CL_INVALID_VALUE, clSetKernelExecInfo(kernel, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof foreign, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clSetKernelExecInfo(kernel, 0x12345, sizeof on, &on));

  // clEnqueueSVMMemcpy: NULL pointers, overlapping regions, a region running past its
  // allocation.
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMemcpy(queue_, CL_TRUE, nullptr, base, 16, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMemcpy(queue_, CL_TRUE, base, nullptr, 16, 0, nullptr, nullptr));
  EXPECT_CL(CL_MEM_COPY_OVERLAP, clEnqueueSVMMemcpy(queue_, CL_TRUE, base + 8, base, 16, 0, nullptr, nullptr));
  EXPECT_CL(CL_MEM_COPY_OVERLAP, clEnqueueSVMMemcpy(queue_, CL_TRUE, base, base + 8, 16, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMemcpy(queue_, CL_TRUE, host.data(), base + 4000, 200, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_COMMAND_QUEUE, clEnqueueSVMMemcpy(nullptr, CL_TRUE, base, host.data(), 16, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST,
            clEnqueueSVMMemcpy(queue_, CL_TRUE, base, host.data(), 16, 1, nullptr, nullptr));

  // clEnqueueSVMMemFill: NULL, a pattern size that is no power of two, a pointer not
  // aligned to the pattern, a size that is no multiple of it.
  const cl_int pattern = 7;
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMemFill(queue_, nullptr, &pattern, 4, 16, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMemFill(queue_, base, &pattern, 3, 12, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMemFill(queue_, base + 2, &pattern, 4, 16, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMemFill(queue_, base, &pattern, 4, 6, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMemFill(queue_, base, nullptr, 4, 16, 0, nullptr, nullptr));

  // clEnqueueSVMMap / Unmap: NULL, size 0, unknown flags, a region past the allocation.
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMap(queue_, CL_TRUE, CL_MAP_READ, nullptr, 16, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMap(queue_, CL_TRUE, CL_MAP_READ, base, 0, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMap(queue_, CL_TRUE, 0x80, base, 16, 0, nullptr, nullptr));
  const cl_map_flags contradictory = CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION;
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMap(queue_, CL_TRUE, contradictory, base, 16, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMap(queue_, CL_TRUE, CL_MAP_READ, base + 4000, 200, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMUnmap(queue_, nullptr, 0, nullptr, nullptr));

  // clEnqueueSVMFree and clEnqueueSVMMigrateMem.
  void* none[] = {nullptr};
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMFree(queue_, 0, none, nullptr, nullptr, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMFree(queue_, 1, nullptr, nullptr, nullptr, 0, nullptr, nullptr));
  const void* migrate[] = {base};
  const size_t too_long[] = {8192};
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMigrateMem(queue_, 0, migrate, nullptr, 0, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMigrateMem(queue_, 1, migrate, too_long, 0, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMigrateMem(queue_, 1, migrate, nullptr, 0x80, 0, nullptr, nullptr));
  event_handle migrated;
  EXPECT_CL_OK(clEnqueueSVMMigrateMem(queue_, 1, migrate, nullptr, CL_MIGRATE_MEM_OBJECT_HOST, 0, nullptr,
                                      migrated.out()));
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_EQ(event_value<cl_command_type>(migrated, CL_EVENT_COMMAND_TYPE),
            cl_command_type{CL_COMMAND_SVM_MIGRATE_MEM});
}

}  // namespace ferry::test
