// The file transfer commands of libferry_transfer (docs/transfer.md):
// clEnqueueReadBufferToStdioFile and clEnqueueWriteBufferFromStdioFile on the native
// platform (PoCL) and through Ferry, each test on both. Round trips byte for byte (empty,
// odd, many blocks, small forced blocks, a 1 GiB sparse file), the FILE's position, the
// order against kernels and user events in both directions, the returned event, blocking
// calls, the exact codes of bad calls, and transfers that fail while they run without
// touching anything else in their queue.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <future>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cl_helpers.hpp"
#include "ferry/cl_data_transfer.h"

namespace ferry::test {

suite_config this_suite() {
  suite_config config;
  config.loader = loader_mode::ferry_and_native;
  return config;
}

namespace {

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;
constexpr size_t GiB = size_t{1} << 30;

constexpr const char* transfer_kernels = R"CLC(
kernel void fill_pattern(global uchar* bytes, uint seed) {
  size_t i = get_global_id(0);
  bytes[i] = (uchar)(i * 31u + seed + (i >> 9));
}
kernel void add_one(global const uchar* in, global uchar* out) {
  size_t i = get_global_id(0);
  out[i] = (uchar)(in[i] + 1);
}
)CLC";

/// The bytes fill_pattern writes, computed on the host. Neighbouring blocks differ (the
/// i >> 9 term), so a block moved to the wrong place does not compare equal.
unsigned char pattern_byte(size_t i, unsigned seed) {
  return static_cast<unsigned char>(static_cast<unsigned>(i) * 31u + seed + static_cast<unsigned>(i >> 9));
}
std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = pattern_byte(i, seed);
  return out;
}

/// "" when equal, else where they first differ (a gtest message or a child's report).
std::string first_difference(const unsigned char* a, size_t a_size, const unsigned char* b, size_t b_size) {
  const size_t common = std::min(a_size, b_size);
  const auto mismatch = std::mismatch(a, a + common, b);
  if (mismatch.first != a + common) {
    const size_t at = static_cast<size_t>(mismatch.first - a);
    return "first difference at byte " + std::to_string(at) + ": " + std::to_string(a[at]) + " vs " +
           std::to_string(b[at]);
  }
  if (a_size != b_size) return "sizes differ: " + std::to_string(a_size) + " vs " + std::to_string(b_size);
  return {};
}
std::string first_difference(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  return first_difference(a.data(), a.size(), b.data(), b.size());
}

struct file_closer {
  void operator()(FILE* f) const { std::fclose(f); }
};
using file_handle = std::unique_ptr<FILE, file_closer>;

file_handle open_file(const std::string& path, const char* mode) { return file_handle(std::fopen(path.c_str(), mode)); }

bool write_whole_file(const std::string& path, const std::vector<unsigned char>& bytes) {
  file_handle f = open_file(path, "wb");
  if (!f) return false;
  return bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f.get()) == bytes.size();
}

std::vector<unsigned char> read_whole_file(const std::string& path) {
  std::vector<unsigned char> out;
  file_handle f = open_file(path, "rb");
  if (!f) return out;
  std::array<unsigned char, 64 * 1024> chunk;
  for (size_t got; (got = std::fread(chunk.data(), 1, chunk.size(), f.get())) > 0;)
    out.insert(out.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(got));
  return out;
}

/// A directory of this test's own files, removed with them at the end. Under TMPDIR (or
/// /tmp): a real file system on the machines here, and sparse files stay sparse.
class scratch_dir {
 public:
  scratch_dir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/ferry-transfer-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~scratch_dir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  bool made() const { return !path_.empty(); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Blocking buffer reads and writes, "" or what failed.
std::string read_buffer(cl_command_queue queue, cl_mem buffer, size_t offset, std::vector<unsigned char>& out) {
  if (out.empty()) return {};
  const cl_int rc = clEnqueueReadBuffer(queue, buffer, CL_TRUE, offset, out.size(), out.data(), 0, nullptr, nullptr);
  return rc == CL_SUCCESS ? std::string() : "clEnqueueReadBuffer: " + cl_error_name(rc);
}
std::string write_buffer(cl_command_queue queue, cl_mem buffer, size_t offset, const std::vector<unsigned char>& in) {
  if (in.empty()) return {};
  const cl_int rc = clEnqueueWriteBuffer(queue, buffer, CL_TRUE, offset, in.size(), in.data(), 0, nullptr, nullptr);
  return rc == CL_SUCCESS ? std::string() : "clEnqueueWriteBuffer: " + cl_error_name(rc);
}

/// Waits for `event` and returns "" when it ended CL_COMPLETE.
std::string expect_complete(cl_event event, const char* what) {
  const cl_int waited = clWaitForEvents(1, &event);
  cl_int status = 1;
  clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  if (waited != CL_SUCCESS || status != CL_COMPLETE)
    return std::string(what) + ": clWaitForEvents " + cl_error_name(waited) + ", status " + std::to_string(status);
  return {};
}

/// Round trips of `size` bytes on `queue`, both ways, at buffer offsets that are not zero:
///   buffer -> file (non-blocking, waited on) -> buffer (blocking), and
///   file -> buffer (non-blocking) -> file (non-blocking, ordered by the in-order queue
///   alone). Returns "" when every byte arrived, else what went wrong. Used by the tests
///   and by the child that forces small blocks.
std::string round_trips(cl_context context, cl_command_queue queue, size_t size, const scratch_dir& dir) {
  constexpr size_t front = 13, back = 5;
  cl_int rc = CL_SUCCESS;
  mem_handle first(clCreateBuffer(context, CL_MEM_READ_WRITE, front + size + back, nullptr, &rc));
  if (rc != CL_SUCCESS) return "clCreateBuffer: " + cl_error_name(rc);
  mem_handle second(clCreateBuffer(context, CL_MEM_READ_WRITE, front + size + back, nullptr, &rc));
  if (rc != CL_SUCCESS) return "clCreateBuffer: " + cl_error_name(rc);
  const std::vector<unsigned char> data = pattern(size, 7);
  if (auto e = write_buffer(queue, first, front, data); !e.empty()) return e;

  // buffer -> file -> buffer
  const std::string there = dir.file("there-" + std::to_string(size));
  {
    file_handle out = open_file(there, "wb");
    if (!out) return "cannot create " + there;
    event_handle done;
    rc = clEnqueueReadBufferToStdioFile(queue, first, CL_FALSE, front, size, out.get(), 0, nullptr, done.out());
    if (rc != CL_SUCCESS) return "clEnqueueReadBufferToStdioFile: " + cl_error_name(rc);
    if (auto e = expect_complete(done, "buffer to file"); !e.empty()) return e;
    if (std::ftell(out.get()) != static_cast<long>(size)) return "the file's position is not after the bytes written";
  }
  if (auto e = first_difference(read_whole_file(there), data); !e.empty()) return "buffer to file: " + e;
  {
    file_handle in = open_file(there, "rb");
    if (!in) return "cannot open " + there;
    rc = clEnqueueWriteBufferFromStdioFile(queue, second, CL_TRUE, 1, size, in.get(), 0, nullptr, nullptr);
    if (rc != CL_SUCCESS) return "blocking clEnqueueWriteBufferFromStdioFile: " + cl_error_name(rc);
    if (std::ftell(in.get()) != static_cast<long>(size)) return "the file's position is not after the bytes read";
  }
  std::vector<unsigned char> back_in(size);
  if (auto e = read_buffer(queue, second, 1, back_in); !e.empty()) return e;
  if (auto e = first_difference(back_in, data); !e.empty()) return "file to buffer: " + e;

  // file -> buffer -> file, the second command ordered behind the first by the queue alone
  const std::vector<unsigned char> other = pattern(size, 99);
  const std::string source = dir.file("source-" + std::to_string(size));
  const std::string copy = dir.file("copy-" + std::to_string(size));
  if (!write_whole_file(source, other)) return "cannot write " + source;
  {
    file_handle in = open_file(source, "rb"), out = open_file(copy, "wb");
    if (!in || !out) return "cannot open " + source + " or " + copy;
    rc = clEnqueueWriteBufferFromStdioFile(queue, first, CL_FALSE, front, size, in.get(), 0, nullptr, nullptr);
    if (rc != CL_SUCCESS) return "clEnqueueWriteBufferFromStdioFile: " + cl_error_name(rc);
    event_handle done;
    rc = clEnqueueReadBufferToStdioFile(queue, first, CL_FALSE, front, size, out.get(), 0, nullptr, done.out());
    if (rc != CL_SUCCESS) return "clEnqueueReadBufferToStdioFile: " + cl_error_name(rc);
    if (auto e = expect_complete(done, "file to buffer to file"); !e.empty()) return e;
  }
  if (auto e = first_difference(read_whole_file(copy), other); !e.empty()) return "file to buffer to file: " + e;
  return {};
}

enum class platform_kind { native, ferry };
void PrintTo(platform_kind kind, std::ostream* os) { *os << (kind == platform_kind::native ? "native" : "ferry"); }

}  // namespace

// With FERRY_TRANSFER_BLOCK=64K from the start (the library reads it once per process):
// transfers of many small blocks, a size that is a whole number of blocks and one that is
// not, on both platforms.
FERRY_IT_CHILD(small_blocks) {
  const scratch_dir dir;
  CHILD_CHECK(dir.made(), "no scratch directory");
  for (cl_platform_id platform : {find_native_platform(), find_ferry_platform()}) {
    CHILD_CHECK(platform != nullptr, "a platform is missing");
    const auto devices = platform_devices(platform);
    CHILD_CHECK(!devices.empty(), "%s has no device", platform_name(platform).c_str());
    cl_int rc = CL_SUCCESS;
    context_handle context(clCreateContext(nullptr, 1, &devices[0], nullptr, nullptr, &rc));
    CHILD_CHECK(rc == CL_SUCCESS, "clCreateContext: %s", cl_error_name(rc).c_str());
    queue_handle queue(clCreateCommandQueueWithProperties(context, devices[0], nullptr, &rc));
    CHILD_CHECK(rc == CL_SUCCESS, "clCreateCommandQueue: %s", cl_error_name(rc).c_str());
    for (size_t size : {size_t{1}, 64 * KiB - 1, 3 * 64 * KiB, 3 * MiB + 7, 5 * MiB + 12345}) {
      const std::string error = round_trips(context, queue, size, dir);
      CHILD_CHECK(error.empty(), "%s, %zu bytes in 64 KiB blocks: %s", platform_name(platform).c_str(), size,
                  error.c_str());
    }
  }
  std::printf("PASS\n");
  return 0;
}

class transfer_file : public ferry_and_native_test, public ::testing::WithParamInterface<platform_kind> {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(ferry_and_native_test::SetUp());
    side_ = GetParam() == platform_kind::native ? &native_ : &ferry_;
    ASSERT_TRUE(dir_.made()) << "no scratch directory";
    if (!self_check) baseline_ = object_counts(platform_, device_);
  }

  // A transfer's thread releases the command's own queues, events and scratch buffer once
  // the application's event has completed (PoCL needs the fill behind the event finished
  // before they go), so they may still be alive when a test body ends. The leak check
  // first waits for Ferry's counts to come back to what SetUp left (the fixture's context
  // and queue); whatever is still alive after a minute fails it.
  void TearDown() override {
    if (!self_check && baseline_) wait_for_counts(platform_, device_, *baseline_);
    ferry_and_native_test::TearDown();
  }

  cl_context context() const { return side_->context; }
  cl_command_queue queue() const { return side_->queue; }
  cl_device_id device() const { return side_->device; }

  mem_handle buffer(size_t size, cl_mem_flags flags = CL_MEM_READ_WRITE) {
    return create_buffer(context(), flags, size);
  }
  std::vector<unsigned char> contents(cl_mem buffer, size_t offset, size_t size) {
    std::vector<unsigned char> out(size);
    const std::string error = read_buffer(queue(), buffer, offset, out);
    EXPECT_EQ(error, "");
    return out;
  }
  /// Writes `bytes` and waits until they are in the buffer: a blocking write may return
  /// once the bytes are copied (Ferry: on the wire), and commands of other queues are
  /// not ordered behind it.
  void fill(cl_mem buffer, size_t offset, const std::vector<unsigned char>& bytes) {
    EXPECT_EQ(write_buffer(queue(), buffer, offset, bytes), "");
    EXPECT_CL_OK(clFinish(queue()));
  }
  /// A file of `bytes`, open with `mode`.
  file_handle file_of(const std::string& name, const std::vector<unsigned char>& bytes, const char* mode = "rb") {
    EXPECT_TRUE(write_whole_file(dir_.file(name), bytes)) << dir_.file(name);
    file_handle f = open_file(dir_.file(name), mode);
    EXPECT_NE(f, nullptr) << dir_.file(name);
    return f;
  }
  /// A new, empty file open for writing and reading.
  file_handle new_file(const std::string& name) {
    file_handle f = open_file(dir_.file(name), "w+b");
    EXPECT_NE(f, nullptr) << dir_.file(name);
    return f;
  }
  /// What `file` holds from its start (its stream flushed first).
  static std::vector<unsigned char> file_contents(FILE* file) {
    std::vector<unsigned char> out;
    if (std::fflush(file) != 0 || std::fseek(file, 0, SEEK_END) != 0) return out;
    out.resize(static_cast<size_t>(std::ftell(file)));
    std::rewind(file);
    if (!out.empty() && std::fread(out.data(), 1, out.size(), file) != out.size()) out.clear();
    return out;
  }
  program_handle program() { return build_program(context(), device(), transfer_kernels); }
  /// An out-of-order queue of the test's device, or a null handle when the device has none.
  queue_handle out_of_order_queue() {
    const auto supported = device_value<cl_command_queue_properties>(device(), CL_DEVICE_QUEUE_ON_HOST_PROPERTIES);
    if ((supported & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0) return {};
    const cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_int rc = CL_SUCCESS;
    queue_handle q(clCreateCommandQueueWithProperties(context(), device(), properties, &rc));
    EXPECT_CL_OK(rc);
    return q;
  }
  /// Runs `body(queue, in_order)` twice: on an out-of-order queue, where the second
  /// command names the first's event in its wait list (skipped when the device has no
  /// such queue), and on the in-order queue, where the queue alone orders them.
  template <class Body>
  void for_each_ordering(Body body) {
    if (queue_handle own = out_of_order_queue()) {
      SCOPED_TRACE("wait list, out-of-order queue");
      body(own.get(), false);
    }
    SCOPED_TRACE("in-order queue");
    body(queue(), true);
  }
  event_handle user_event() {
    cl_int rc = CL_SUCCESS;
    event_handle e(clCreateUserEvent(context(), &rc));
    EXPECT_CL_OK(rc);
    return e;
  }
  /// Enqueues fill_pattern over `size` bytes of `target` behind `wait` (may be null).
  event_handle enqueue_fill_pattern(cl_command_queue q, cl_kernel kernel, cl_mem target, size_t size, unsigned seed,
                                    const cl_event* wait) {
    EXPECT_CL_OK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &target));
    const cl_uint seed_arg = seed;
    EXPECT_CL_OK(clSetKernelArg(kernel, 1, sizeof seed_arg, &seed_arg));
    event_handle done;
    EXPECT_CL_OK(clEnqueueNDRangeKernel(q, kernel, 1, nullptr, &size, nullptr, wait ? 1 : 0, wait, done.out()));
    return done;
  }

  cl_side* side_ = nullptr;
  scratch_dir dir_;
  std::optional<cl_ferry_object_counts> baseline_;
};

INSTANTIATE_TEST_SUITE_P(platforms, transfer_file, ::testing::Values(platform_kind::native, platform_kind::ferry),
                         [](const ::testing::TestParamInfo<platform_kind>& info) {
                           return info.param == platform_kind::native ? std::string("native") : std::string("ferry");
                         });

// ---------------------------------------------------------------------------------------
// Bytes

TEST_P(transfer_file, round_trips_are_byte_for_byte_for_empty_odd_and_many_block_sizes) {
  for (size_t size : {size_t{0}, size_t{1}, size_t{4097}, MiB, 3 * MiB + 7, 50 * MiB + 12345}) {
    SCOPED_TRACE(size);
    EXPECT_EQ(round_trips(context(), queue(), size, dir_), "");
  }
}

TEST_P(transfer_file, round_trips_in_small_forced_blocks) {
  if (GetParam() == platform_kind::ferry) GTEST_SKIP() << "one child covers both platforms";
  expect_child_passes("small_blocks", std::chrono::seconds(240), {{"FERRY_TRANSFER_BLOCK", "64K"}});
}

// A 1 GiB file that is all zeros but for three bytes (first, at 512 MiB + 3, last):
// file -> buffer -> file, compared chunk by chunk.
TEST_P(transfer_file, sparse_gibibyte_file_round_trips_through_a_buffer) {
  const auto max_alloc = device_value<cl_ulong>(device(), CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  if (max_alloc < GiB) GTEST_SKIP() << "the device allocates at most " << max_alloc << " bytes";
  const std::string sparse = dir_.file("sparse"), copy = dir_.file("copy");
  const std::array<std::pair<size_t, unsigned char>, 3> marks{{{0, 0x5a}, {512 * MiB + 3, 0xa5}, {GiB - 1, 0x3c}}};
  {
    const int fd = ::open(sparse.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    ASSERT_GE(fd, 0) << sparse;
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(GiB)), 0);
    for (auto [at, value] : marks) ASSERT_EQ(::pwrite(fd, &value, 1, static_cast<off_t>(at)), 1);
    ::close(fd);
  }
  mem_handle target = buffer(GiB);
  ASSERT_TRUE(target);
  {
    file_handle in = open_file(sparse, "rb"), out = open_file(copy, "wb");
    ASSERT_TRUE(in && out);
    EXPECT_CL_OK(clEnqueueWriteBufferFromStdioFile(queue(), target, CL_FALSE, 0, GiB, in.get(), 0, nullptr, nullptr));
    EXPECT_CL_OK(clEnqueueReadBufferToStdioFile(queue(), target, CL_TRUE, 0, GiB, out.get(), 0, nullptr, nullptr));
  }
  target.reset();
  file_handle original = open_file(sparse, "rb"), copied = open_file(copy, "rb");
  ASSERT_TRUE(original && copied);
  std::vector<unsigned char> a(16 * MiB), b(16 * MiB);
  size_t compared = 0;
  while (compared < GiB) {
    const size_t got_a = std::fread(a.data(), 1, a.size(), original.get());
    const size_t got_b = std::fread(b.data(), 1, b.size(), copied.get());
    ASSERT_EQ(got_a, a.size());
    ASSERT_EQ(got_a, got_b) << "the copy is shorter than the original, after " << compared << " bytes";
    ASSERT_EQ(first_difference(a, b), "") << "in the 16 MiB from byte " << compared;
    for (auto [at, value] : marks) {
      if (at >= compared && at < compared + got_a) {
        EXPECT_EQ(a[at - compared], value) << "the mark at " << at;
      }
    }
    compared += got_a;
  }
  EXPECT_EQ(std::fgetc(copied.get()), EOF) << "the copy is longer than 1 GiB";
}

// ---------------------------------------------------------------------------------------
// The FILE's position

TEST_P(transfer_file, commands_read_at_the_position_when_they_run_and_leave_it_after_the_bytes) {
  const std::vector<unsigned char> data = pattern(10000, 3);
  file_handle in = file_of("positions", data);
  mem_handle target = buffer(4000);
  event_handle open_gate = user_event();
  // Both commands wait for the gate; the position is moved before it opens, so they read
  // from where the FILE stands when they run, the second after the first.
  EXPECT_CL_OK(clEnqueueWriteBufferFromStdioFile(queue(), target, CL_FALSE, 0, 1500, in.get(), 1,
                                                 open_gate.address(), nullptr));
  EXPECT_CL_OK(clEnqueueWriteBufferFromStdioFile(queue(), target, CL_FALSE, 1500, 2500, in.get(), 0, nullptr,
                                                 nullptr));
  ASSERT_EQ(std::fseek(in.get(), 777, SEEK_SET), 0);
  EXPECT_CL_OK(clSetUserEventStatus(open_gate, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(queue()));
  EXPECT_EQ(std::ftell(in.get()), 777 + 4000);
  const std::vector<unsigned char> expected(data.begin() + 777, data.begin() + 777 + 4000);
  EXPECT_EQ(first_difference(contents(target, 0, 4000), expected), "");
}

TEST_P(transfer_file, commands_in_a_row_append_to_the_file_in_order) {
  const std::vector<unsigned char> data = pattern(3 * MiB + 1, 5);
  mem_handle source = buffer(data.size());
  fill(source, 0, data);
  file_handle out = new_file("appended");
  // What the program wrote before, still in the stream's buffer, comes first.
  ASSERT_EQ(std::fputs("header", out.get()), 1);
  const size_t cut = MiB + 3;
  EXPECT_CL_OK(clEnqueueReadBufferToStdioFile(queue(), source, CL_FALSE, cut, data.size() - cut, out.get(), 0,
                                              nullptr, nullptr));
  EXPECT_CL_OK(clEnqueueReadBufferToStdioFile(queue(), source, CL_FALSE, 0, cut, out.get(), 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue()));
  EXPECT_EQ(std::ftell(out.get()), static_cast<long>(6 + data.size()));
  std::vector<unsigned char> expected{'h', 'e', 'a', 'd', 'e', 'r'};
  expected.insert(expected.end(), data.begin() + cut, data.end());
  expected.insert(expected.end(), data.begin(), data.begin() + cut);
  EXPECT_EQ(first_difference(file_contents(out.get()), expected), "");
}

// ---------------------------------------------------------------------------------------
// Order against kernels and events. Each first command waits for a user event, so a
// command that did not wait would see the bytes from before it.

TEST_P(transfer_file, buffer_to_file_waits_for_the_kernel_that_writes_the_buffer) {
  constexpr size_t size = 2 * MiB + 11;
  program_handle p = program();
  ASSERT_TRUE(p);
  kernel_handle fill_kernel = create_kernel(p, "fill_pattern");
  const std::vector<unsigned char> expected = pattern(size, 42);
  for_each_ordering([&](cl_command_queue q, bool in_order) {
    mem_handle source = buffer(size);
    fill(source, 0, std::vector<unsigned char>(size, 0));
    file_handle out = new_file(std::string("after-kernel-") + (in_order ? "in" : "out"));
    event_handle start = user_event();
    event_handle kernel_done = enqueue_fill_pattern(q, fill_kernel, source, size, 42, start.address());
    event_handle written;
    EXPECT_CL_OK(clEnqueueReadBufferToStdioFile(q, source, CL_FALSE, 0, size, out.get(), in_order ? 0 : 1,
                                                in_order ? nullptr : kernel_done.address(), written.out()));
    EXPECT_CL_OK(clSetUserEventStatus(start, CL_COMPLETE));
    EXPECT_EQ(expect_complete(written, "buffer to file"), "");
    EXPECT_EQ(first_difference(file_contents(out.get()), expected), "");
  });
}

TEST_P(transfer_file, kernel_that_reads_the_buffer_waits_for_file_to_buffer) {
  constexpr size_t size = 2 * MiB + 11;
  program_handle p = program();
  ASSERT_TRUE(p);
  kernel_handle add_one = create_kernel(p, "add_one");
  const std::vector<unsigned char> data = pattern(size, 9);
  std::vector<unsigned char> expected(size);
  std::transform(data.begin(), data.end(), expected.begin(), [](unsigned char c) { return c + 1; });
  for_each_ordering([&](cl_command_queue q, bool in_order) {
    mem_handle in = buffer(size), out = buffer(size);
    fill(in, 0, std::vector<unsigned char>(size, 0));
    file_handle file = file_of(std::string("before-kernel-") + (in_order ? "in" : "out"), data);
    event_handle start = user_event();
    event_handle read;
    EXPECT_CL_OK(clEnqueueWriteBufferFromStdioFile(q, in, CL_FALSE, 0, size, file.get(), 1, start.address(),
                                                   read.out()));
    EXPECT_CL_OK(clSetKernelArg(add_one, 0, sizeof(cl_mem), in.address()));
    EXPECT_CL_OK(clSetKernelArg(add_one, 1, sizeof(cl_mem), out.address()));
    size_t global = size;
    event_handle kernel_done;
    EXPECT_CL_OK(clEnqueueNDRangeKernel(q, add_one, 1, nullptr, &global, nullptr, in_order ? 0 : 1,
                                        in_order ? nullptr : read.address(), kernel_done.out()));
    EXPECT_CL_OK(clSetUserEventStatus(start, CL_COMPLETE));
    EXPECT_EQ(expect_complete(kernel_done, "the kernel"), "");
    EXPECT_EQ(first_difference(contents(out, 0, size), expected), "");
  });
}

TEST_P(transfer_file, nothing_moves_until_the_user_event_of_the_wait_list_is_set) {
  const std::vector<unsigned char> data = pattern(100000, 1);
  file_handle in = file_of("gated-in", data);
  file_handle out = new_file("gated-out");
  mem_handle target = buffer(data.size()), source = buffer(data.size());
  fill(target, 0, std::vector<unsigned char>(data.size(), 0xee));
  fill(source, 0, data);
  event_handle gate = user_event();
  event_handle read, written;
  EXPECT_CL_OK(clEnqueueWriteBufferFromStdioFile(queue(), target, CL_FALSE, 0, data.size(), in.get(), 1,
                                                 gate.address(), read.out()));
  EXPECT_CL_OK(clEnqueueReadBufferToStdioFile(queue(), source, CL_FALSE, 0, data.size(), out.get(), 1,
                                              gate.address(), written.out()));
  // Neither has moved a byte nor ended: the position is where it was.
  EXPECT_EQ(std::ftell(in.get()), 0);
  EXPECT_EQ(std::ftell(out.get()), 0);
  EXPECT_GT(event_status(read), CL_COMPLETE);
  EXPECT_GT(event_status(written), CL_COMPLETE);
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  EXPECT_EQ(expect_complete(read, "file to buffer"), "");
  EXPECT_EQ(expect_complete(written, "buffer to file"), "");
  EXPECT_EQ(std::ftell(in.get()), static_cast<long>(data.size()));
  EXPECT_EQ(std::ftell(out.get()), static_cast<long>(data.size()));
  EXPECT_EQ(first_difference(contents(target, 0, data.size()), data), "");
  EXPECT_EQ(first_difference(file_contents(out.get()), data), "");
}

// A buffer the program releases right after the call lives until the command has used it,
// as with any enqueued command.
TEST_P(transfer_file, buffer_released_after_the_call_is_kept_until_the_command_ends) {
  const std::vector<unsigned char> data = pattern(300000, 4);
  mem_handle source = buffer(data.size());
  fill(source, 0, data);
  file_handle out = new_file("released");
  event_handle gate = user_event(), written;
  EXPECT_CL_OK(clEnqueueReadBufferToStdioFile(queue(), source, CL_FALSE, 0, data.size(), out.get(), 1,
                                              gate.address(), written.out()));
  source.reset();
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  EXPECT_EQ(expect_complete(written, "buffer to file"), "");
  EXPECT_EQ(first_difference(file_contents(out.get()), data), "");
}

// ---------------------------------------------------------------------------------------
// The returned event and blocking calls

TEST_P(transfer_file, returned_event_completes_with_callback_profiling_and_the_queue_context) {
  const std::vector<unsigned char> data = pattern(MiB + 1, 8);
  file_handle in = file_of("event", data);
  mem_handle target = buffer(data.size());
  event_handle done;
  EXPECT_CL_OK(clEnqueueWriteBufferFromStdioFile(queue(), target, CL_FALSE, 0, data.size(), in.get(), 0, nullptr,
                                                 done.out()));
  ASSERT_TRUE(done);
  std::promise<cl_int> called;
  auto callback = [](cl_event, cl_int status, void* promise) {
    static_cast<std::promise<cl_int>*>(promise)->set_value(status);
  };
  EXPECT_CL_OK(clSetEventCallback(done, CL_COMPLETE, callback, &called));
  EXPECT_EQ(expect_complete(done, "file to buffer"), "");
  EXPECT_EQ(event_value<cl_context>(done, CL_EVENT_CONTEXT), context());
  // The callback runs on the platform's thread, after the event completed; no clock here.
  std::future<cl_int> fired = called.get_future();
  EXPECT_EQ(fired.wait_for(std::chrono::minutes(1)), std::future_status::ready) << "the callback never ran";
  EXPECT_EQ(fired.get(), CL_COMPLETE);
  cl_ulong queued = 0, end = 0;
  const cl_int queued_rc = clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, nullptr);
  const cl_int end_rc = clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
  if (queued_rc != CL_PROFILING_INFO_NOT_AVAILABLE) {
    EXPECT_CL_OK(queued_rc);
    EXPECT_CL_OK(end_rc);
    EXPECT_LE(queued, end);
  }
  EXPECT_EQ(first_difference(contents(target, 0, data.size()), data), "");
}

TEST_P(transfer_file, blocking_calls_return_once_the_bytes_have_moved) {
  const std::vector<unsigned char> data = pattern(2 * MiB + 3, 6);
  file_handle in = file_of("blocking-in", data);
  mem_handle target = buffer(data.size());
  event_handle read;
  EXPECT_CL_OK(clEnqueueWriteBufferFromStdioFile(queue(), target, CL_TRUE, 0, data.size(), in.get(), 0, nullptr,
                                                 read.out()));
  EXPECT_EQ(event_status(read), CL_COMPLETE);
  EXPECT_EQ(std::ftell(in.get()), static_cast<long>(data.size()));
  EXPECT_EQ(first_difference(contents(target, 0, data.size()), data), "");

  // Straight from the descriptor, not through the stream: the bytes are in the file.
  file_handle out = new_file("blocking-out");
  event_handle written;
  EXPECT_CL_OK(clEnqueueReadBufferToStdioFile(queue(), target, CL_TRUE, 0, data.size(), out.get(), 0, nullptr,
                                              written.out()));
  EXPECT_EQ(event_status(written), CL_COMPLETE);
  EXPECT_EQ(std::ftell(out.get()), static_cast<long>(data.size()));
  std::vector<unsigned char> on_disk(data.size());
  EXPECT_EQ(::pread(::fileno(out.get()), on_disk.data(), on_disk.size(), 0), static_cast<ssize_t>(on_disk.size()));
  EXPECT_EQ(first_difference(on_disk, data), "");
}

// ---------------------------------------------------------------------------------------
// Bad calls: the exact code, no event, nothing moved

TEST_P(transfer_file, bad_arguments_give_the_exact_code_at_the_call) {
  constexpr size_t size = 4096;
  mem_handle good = buffer(size);
  file_handle readable = file_of("readable", pattern(size, 2));
  file_handle writable = new_file("writable");
  file_handle read_only = open_file(dir_.file("readable"), "r");
  file_handle write_only = open_file(dir_.file("write-only"), "w");
  ASSERT_TRUE(read_only && write_only);
  cl_int rc = CL_SUCCESS;
  context_handle other_context(clCreateContext(nullptr, 1, &side_->device, nullptr, nullptr, &rc));
  ASSERT_CL_OK(rc);
  mem_handle foreign = create_buffer(other_context, CL_MEM_READ_WRITE, size);
  mem_handle no_host_access = buffer(size, CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS);
  mem_handle host_reads_only = buffer(size, CL_MEM_READ_WRITE | CL_MEM_HOST_READ_ONLY);
  mem_handle host_writes_only = buffer(size, CL_MEM_READ_WRITE | CL_MEM_HOST_WRITE_ONLY);
  event_handle gate = user_event();
  const cl_event* no_events = nullptr;

  struct call {
    const char* what;
    cl_command_queue q;
    cl_mem m;
    size_t offset, size;
    cl_uint count;
    const cl_event* list;
  };
  auto both_ways = [&](const call& c, FILE* to_file, FILE* from_file, cl_int expected) {
    SCOPED_TRACE(c.what);
    for (cl_bool blocking : {CL_FALSE, CL_TRUE}) {
      cl_event event = nullptr;
      EXPECT_CL(expected, clEnqueueReadBufferToStdioFile(c.q, c.m, blocking, c.offset, c.size, to_file, c.count,
                                                         c.list, &event));
      EXPECT_EQ(event, nullptr);
      EXPECT_CL(expected, clEnqueueWriteBufferFromStdioFile(c.q, c.m, blocking, c.offset, c.size, from_file,
                                                            c.count, c.list, &event));
      EXPECT_EQ(event, nullptr);
    }
  };
  FILE* w = writable.get();
  FILE* r = readable.get();
  both_ways({"NULL queue", nullptr, good, 0, size, 0, no_events}, w, r, CL_INVALID_COMMAND_QUEUE);
  both_ways({"NULL buffer", queue(), nullptr, 0, size, 0, no_events}, w, r, CL_INVALID_MEM_OBJECT);
  both_ways({"buffer of another context", queue(), foreign, 0, size, 0, no_events}, w, r, CL_INVALID_CONTEXT);
  both_ways({"past the end", queue(), good, 1, size, 0, no_events}, w, r, CL_INVALID_VALUE);
  both_ways({"offset past the end", queue(), good, size + 1, 0, 0, no_events}, w, r, CL_INVALID_VALUE);
  both_ways({"offset + size overflows", queue(), good, 2, std::numeric_limits<size_t>::max(), 0, no_events}, w, r,
            CL_INVALID_VALUE);
  both_ways({"count without a list", queue(), good, 0, size, 1, no_events}, w, r, CL_INVALID_EVENT_WAIT_LIST);
  both_ways({"a list without a count", queue(), good, 0, size, 0, gate.address()}, w, r, CL_INVALID_EVENT_WAIT_LIST);
  both_ways({"NULL FILE", queue(), good, 0, size, 0, no_events}, nullptr, nullptr, CL_INVALID_VALUE);
  both_ways({"FILE opened the wrong way", queue(), good, 0, size, 0, no_events}, read_only.get(), write_only.get(),
            CL_INVALID_VALUE);
  both_ways({"CL_MEM_HOST_NO_ACCESS", queue(), no_host_access, 0, size, 0, no_events}, w, r,
            CL_INVALID_OPERATION);
  {
    SCOPED_TRACE("host access for the other direction only");
    EXPECT_CL(CL_INVALID_OPERATION, clEnqueueReadBufferToStdioFile(queue(), host_writes_only, CL_TRUE, 0, size, w, 0,
                                                                   nullptr, nullptr));
    EXPECT_CL(CL_INVALID_OPERATION, clEnqueueWriteBufferFromStdioFile(queue(), host_reads_only, CL_TRUE, 0, size, r,
                                                                      0, nullptr, nullptr));
    EXPECT_CL_OK(clEnqueueReadBufferToStdioFile(queue(), host_reads_only, CL_TRUE, 0, size, w, 0, nullptr, nullptr));
    EXPECT_CL_OK(
        clEnqueueWriteBufferFromStdioFile(queue(), host_writes_only, CL_TRUE, 0, size, r, 0, nullptr, nullptr));
  }
  if (device_value<cl_bool>(device(), CL_DEVICE_IMAGE_SUPPORT)) {
    const cl_image_format format{CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 16;
    desc.image_height = 16;
    mem_handle image(clCreateImage(context(), CL_MEM_READ_WRITE, &format, &desc, nullptr, &rc));
    ASSERT_CL_OK(rc);
    both_ways({"an image for a buffer", queue(), image, 0, 64, 0, no_events}, w, r, CL_INVALID_MEM_OBJECT);
  }
  // None of them moved anything (the host-access calls that succeeded moved `size`).
  EXPECT_EQ(std::ftell(r), static_cast<long>(size));
  EXPECT_EQ(std::ftell(w), static_cast<long>(size));
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
}

// ---------------------------------------------------------------------------------------
// Failures while running: the command's event fails, nothing else in the queue does

TEST_P(transfer_file, short_file_fails_the_command_after_writing_what_it_had) {
  constexpr size_t have = 1000, want = 4097;
  const std::vector<unsigned char> data = pattern(have, 11);
  mem_handle target = buffer(want);
  const std::vector<unsigned char> before(want, 0xaa);
  fill(target, 0, before);
  std::vector<unsigned char> expected = before;
  std::copy(data.begin(), data.end(), expected.begin());

  for (cl_bool blocking : {CL_FALSE, CL_TRUE}) {
    SCOPED_TRACE(blocking ? "blocking" : "non-blocking");
    fill(target, 0, before);
    file_handle in = file_of("short", data);
    event_handle failed;
    const cl_int rc = clEnqueueWriteBufferFromStdioFile(queue(), target, blocking, 0, want, in.get(), 0, nullptr,
                                                        failed.out());
    EXPECT_CL(blocking ? CL_INVALID_VALUE : CL_SUCCESS, rc);
    EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, clWaitForEvents(1, failed.address()));
    EXPECT_LT(event_status(failed), 0);
    EXPECT_EQ(std::ftell(in.get()), static_cast<long>(have));
    // Commands enqueued after it on the same in-order queue run as if nothing happened.
    const std::vector<unsigned char> later = pattern(64, 12);
    event_handle after;
    EXPECT_CL_OK(clEnqueueWriteBuffer(queue(), target, CL_FALSE, want - 64, 64, later.data(), 0, nullptr,
                                      after.out()));
    EXPECT_EQ(expect_complete(after, "the write after the failed command"), "");
    std::vector<unsigned char> now = expected;
    std::copy(later.begin(), later.end(), now.end() - 64);
    EXPECT_EQ(first_difference(contents(target, 0, want), now), "");
    file_handle again = file_of("whole", data);
    EXPECT_CL_OK(clEnqueueWriteBufferFromStdioFile(queue(), target, CL_TRUE, 0, have, again.get(), 0, nullptr,
                                                   nullptr));
  }
}

TEST_P(transfer_file, failed_user_event_fails_the_command_and_nothing_after_it) {
  // PoCL 3.1 aborts now and then ('PTHREAD ERROR in pocl_update_event_failed', about one
  // run in twenty) while it fails the events behind the user event: not yet understood.
  if (GetParam() == platform_kind::native) GTEST_SKIP() << "PoCL 3.1 aborts in pocl_update_event_failed now and then";
  const std::vector<unsigned char> data = pattern(5000, 13);
  file_handle in = file_of("unread", data);
  file_handle out = new_file("unwritten");
  mem_handle target = buffer(data.size());
  fill(target, 0, std::vector<unsigned char>(data.size(), 0x11));
  event_handle gate = user_event(), read, written;
  EXPECT_CL_OK(clEnqueueWriteBufferFromStdioFile(queue(), target, CL_FALSE, 0, data.size(), in.get(), 1,
                                                 gate.address(), read.out()));
  EXPECT_CL_OK(clEnqueueReadBufferToStdioFile(queue(), target, CL_FALSE, 0, data.size(), out.get(), 1,
                                              gate.address(), written.out()));
  EXPECT_CL_OK(clSetUserEventStatus(gate, -1));
  for (cl_event e : {read.get(), written.get()}) {
    EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, clWaitForEvents(1, &e));
    EXPECT_LT(event_status(e), 0);
  }
  // Neither touched its file.
  EXPECT_EQ(std::ftell(in.get()), 0);
  EXPECT_EQ(file_contents(out.get()), std::vector<unsigned char>{});
  // Later commands of the queue, transfers and others, run.
  event_handle after;
  EXPECT_CL_OK(clEnqueueWriteBufferFromStdioFile(queue(), target, CL_FALSE, 0, data.size(), in.get(), 0, nullptr,
                                                 after.out()));
  EXPECT_EQ(expect_complete(after, "the transfer after the failed one"), "");
  EXPECT_EQ(first_difference(contents(target, 0, data.size()), data), "");
}

// What the system refuses while the command runs, where Linux refuses it every time: a
// read from a directory (EISDIR) and a write to /dev/full (ENOSPC).
TEST_P(transfer_file, system_refusing_the_file_fails_the_command_with_out_of_resources) {
  mem_handle target = buffer(100000);
  fill(target, 0, pattern(100000, 14));
  file_handle directory = open_file(dir_.file(""), "r");
  ASSERT_TRUE(directory) << "glibc opens a directory for reading";
  event_handle read;
  EXPECT_CL(CL_OUT_OF_RESOURCES, clEnqueueWriteBufferFromStdioFile(queue(), target, CL_TRUE, 0, 100000,
                                                                   directory.get(), 0, nullptr, read.out()));
  EXPECT_LT(event_status(read), 0);
  EXPECT_EQ(first_difference(contents(target, 0, 100000), pattern(100000, 14)), "");

  file_handle full = open_file("/dev/full", "w");
  if (!full) GTEST_SKIP() << "no /dev/full here";
  event_handle written;
  EXPECT_CL_OK(clEnqueueReadBufferToStdioFile(queue(), target, CL_FALSE, 0, 100000, full.get(), 0, nullptr,
                                              written.out()));
  EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, clWaitForEvents(1, written.address()));
  EXPECT_LT(event_status(written), 0);
  EXPECT_CL(CL_OUT_OF_RESOURCES,
            clEnqueueReadBufferToStdioFile(queue(), target, CL_TRUE, 0, 100000, full.get(), 0, nullptr, nullptr));
  // The queue goes on.
  event_handle after;
  const std::vector<unsigned char> tail = pattern(10, 15);
  EXPECT_CL_OK(clEnqueueWriteBuffer(queue(), target, CL_FALSE, 0, tail.size(), tail.data(), 0, nullptr, after.out()));
  EXPECT_EQ(expect_complete(after, "the write after the failed commands"), "");
}

}  // namespace ferry::test
