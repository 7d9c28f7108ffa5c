// The path variants of libferry_transfer's file commands (docs/transfer.md, "Files by
// path"): clEnqueueReadBufferToFileFERRY and clEnqueueWriteBufferFromFileFERRY, with the
// file on this host (both platforms) or on the server that holds the buffer (Ferry: below
// the daemon's --file-root; natively: this host again). Round trips byte for byte at
// file offsets, files opened when the command runs (a file written by the command before
// it is read by the next), the exact codes of bad calls, and files that fail while the
// command runs (outside the root, missing, short, a directory, a symbolic link out, no
// root at all) failing their command alone.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cl_helpers.hpp"
#include "ferry/cl_data_transfer.h"

namespace ferry::test {

namespace {

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;

/// The directory the suite's ferryd serves (--file-root), made before the daemon starts:
/// world-writable, since the daemon's session workers run as nobody under root. Removed
/// when the suite's process ends.
class file_root_dir {
 public:
  file_root_dir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/ferry-file-root-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr && ::chmod(pattern.c_str(), 0777) == 0) path_ = pattern;
  }
  ~file_root_dir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

file_root_dir& root() {
  static file_root_dir dir;
  return dir;
}

}  // namespace

suite_config this_suite() {
  suite_config config;
  config.loader = loader_mode::ferry_and_native;
  config.daemon_args = {"--file-root", root().path()};
  return config;
}

namespace {

std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<unsigned char>(i * 131u + seed + (i >> 12));
  return out;
}

bool write_file(const std::string& path, const std::vector<unsigned char>& bytes, mode_t mode = 0644) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) return false;
  }
  return ::chmod(path.c_str(), mode) == 0;
}

std::vector<unsigned char> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}

/// Waits for `event`; its final status (CL_COMPLETE or the error).
cl_int final_status(cl_event event) {
  clWaitForEvents(1, &event);
  cl_int status = 1;
  clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  return status;
}

enum class where { client, server };

struct variant {
  bool ferry;
  where location;
};

std::string name_of(const variant& v) {
  return std::string(v.ferry ? "ferry" : "native") + (v.location == where::client ? "_client_file" : "_server_file");
}

class transfer_path : public ferry_and_native_test, public ::testing::WithParamInterface<variant> {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(ferry_and_native_test::SetUp());
    side_ = GetParam().ferry ? &ferry_ : &native_;
    ASSERT_FALSE(root().path().empty()) << "no file root";
    if (!self_check) baseline_ = object_counts(platform_, device_);
  }
  // The library's transfers release their own queues and events once the application's
  // event has completed, so some may still be alive when a body ends: the leak check
  // waits (at most a minute) for Ferry's counts to come back to what SetUp left.
  void TearDown() override {
    if (!self_check && baseline_) wait_for_counts(platform_, device_, *baseline_);
    ferry_and_native_test::TearDown();
  }

  cl_context context() const { return side_->context; }
  cl_command_queue queue() const { return side_->queue; }
  cl_uint location() const {
    return GetParam().location == where::client ? CL_FERRY_FILE_ON_CLIENT : CL_FERRY_FILE_ON_SERVER;
  }
  /// What the command names for `name`: a path relative to the root on a Ferry server,
  /// else the file's path on this host (the server that holds a native buffer is this
  /// host, so both locations name it alike).
  std::string path_for(const std::string& name) const {
    return GetParam().ferry && GetParam().location == where::server ? name : on_disk(name);
  }
  /// Where the test itself finds that file: the daemon runs on this host.
  static std::string on_disk(const std::string& name) { return root().path() + "/" + name; }

  mem_handle buffer(size_t size) { return create_buffer(context(), CL_MEM_READ_WRITE, size); }
  void put(cl_mem m, size_t offset, const std::vector<unsigned char>& bytes) {
    if (bytes.empty()) return;
    ASSERT_CL_OK(clEnqueueWriteBuffer(queue(), m, CL_TRUE, offset, bytes.size(), bytes.data(), 0, nullptr, nullptr));
    ASSERT_CL_OK(clFinish(queue()));
  }
  std::vector<unsigned char> get(cl_mem m, size_t offset, size_t size) {
    std::vector<unsigned char> out(size);
    if (size) {
      EXPECT_CL_OK(clEnqueueReadBuffer(queue(), m, CL_TRUE, offset, size, out.data(), 0, nullptr, nullptr));
    }
    return out;
  }
  cl_int to_file(cl_mem m, size_t offset, size_t size, const std::string& name, cl_ulong file_offset,
                 cl_event* event = nullptr, cl_bool blocking = CL_FALSE, cl_uint count = 0,
                 const cl_event* list = nullptr) {
    return clEnqueueReadBufferToFileFERRY(queue(), m, blocking, offset, size, path_for(name).c_str(), file_offset,
                                          location(), count, list, event);
  }
  cl_int from_file(cl_mem m, size_t offset, size_t size, const std::string& name, cl_ulong file_offset,
                   cl_event* event = nullptr, cl_bool blocking = CL_FALSE) {
    return clEnqueueWriteBufferFromFileFERRY(queue(), m, blocking, offset, size, path_for(name).c_str(), file_offset,
                                             location(), 0, nullptr, event);
  }
  /// A unique name per test and variant, so that tests never see each other's files.
  /// A failed command's event: the exact code where the command is Ferry's own (a file on
  /// its server), else a negative status (the library's event fails as its platform fails
  /// a command behind a failed user event; the blocking call returns the exact code).
  void expect_failed(cl_event event, cl_int code) const {
    const cl_int status = final_status(event);
    if (GetParam().ferry && GetParam().location == where::server) EXPECT_EQ(status, code);
    else EXPECT_LT(status, 0);
  }
  std::string unique(const std::string& name) const {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string test = info->name();
    std::replace(test.begin(), test.end(), '/', '_');
    return test + "-" + name;
  }

  cl_side* side_ = nullptr;
  std::optional<cl_ferry_object_counts> baseline_;
};

INSTANTIATE_TEST_SUITE_P(variants, transfer_path,
                         ::testing::Values(variant{false, where::client}, variant{false, where::server},
                                           variant{true, where::client}, variant{true, where::server}),
                         [](const ::testing::TestParamInfo<variant>& info) { return name_of(info.param); });

TEST_P(transfer_path, round_trips_at_file_offsets_for_empty_odd_and_many_block_sizes) {
  for (size_t size : {size_t{0}, size_t{1}, size_t{4097}, 20 * MiB + 7}) {
    SCOPED_TRACE(size);
    const std::vector<unsigned char> data = pattern(size, static_cast<unsigned>(size));
    mem_handle first = buffer(size + 16), second = buffer(size + 16);
    ASSERT_NO_FATAL_FAILURE(put(first, 3, data));
    const std::string name = unique(std::to_string(size));
    // Into the file at 4097 (a hole before, which reads as zeros), then back out of it.
    event_handle written, read;
    ASSERT_CL_OK(to_file(first, 3, size, name, 4097, written.out()));
    EXPECT_EQ(final_status(written), CL_COMPLETE);
    // Nothing written extends no file: an empty transfer leaves it empty (but made).
    std::vector<unsigned char> expected(size ? 4097 : 0, 0);
    expected.insert(expected.end(), data.begin(), data.end());
    EXPECT_TRUE(read_file_bytes(on_disk(name)) == expected) << "the file's bytes differ";
    ASSERT_CL_OK(from_file(second, 5, size, name, 4097, read.out()));
    EXPECT_EQ(final_status(read), CL_COMPLETE);
    EXPECT_TRUE(get(second, 5, size) == data) << "the buffer's bytes differ";
  }
}

TEST_P(transfer_path, a_file_is_opened_when_its_command_runs_so_the_command_before_may_write_it) {
  // buffer -> file -> buffer on the in-order queue, with no waiting in between: the second
  // command finds the file the first one wrote, though it did not exist at the call.
  const size_t size = 3 * MiB + 11;
  const std::vector<unsigned char> data = pattern(size, 5);
  mem_handle first = buffer(size), second = buffer(size);
  ASSERT_NO_FATAL_FAILURE(put(first, 0, data));
  const std::string name = unique("relay");
  ASSERT_CL_OK(to_file(first, 0, size, name, 0));
  event_handle done;
  ASSERT_CL_OK(from_file(second, 0, size, name, 0, done.out()));
  EXPECT_EQ(final_status(done), CL_COMPLETE);
  EXPECT_TRUE(get(second, 0, size) == data);
}

TEST_P(transfer_path, a_blocking_call_returns_once_the_bytes_have_moved) {
  const std::vector<unsigned char> data = pattern(100 * KiB, 9);
  mem_handle m = buffer(data.size());
  const std::string name = unique("blocking");
  ASSERT_TRUE(write_file(on_disk(name), data));
  ASSERT_CL_OK(from_file(m, 0, data.size(), name, 0, nullptr, CL_TRUE));
  EXPECT_TRUE(get(m, 0, data.size()) == data);
  const std::string out = unique("blocking-out");
  ASSERT_CL_OK(to_file(m, 0, data.size(), out, 0, nullptr, CL_TRUE));
  EXPECT_TRUE(read_file_bytes(on_disk(out)) == data);
}

TEST_P(transfer_path, bad_arguments_give_the_exact_code_at_the_call) {
  mem_handle m = buffer(64);
  const std::string name = unique("bad");
  ASSERT_TRUE(write_file(on_disk(name), pattern(64, 1)));
  const std::string path = path_for(name);
  EXPECT_EQ(clEnqueueWriteBufferFromFileFERRY(queue(), m, CL_FALSE, 0, 64, nullptr, 0, location(), 0, nullptr,
                                              nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(clEnqueueReadBufferToFileFERRY(queue(), m, CL_FALSE, 0, 64, "", 0, location(), 0, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(clEnqueueReadBufferToFileFERRY(queue(), m, CL_FALSE, 0, 64, path.c_str(), 0, 7, 0, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(clEnqueueWriteBufferFromFileFERRY(queue(), m, CL_FALSE, 1, 64, path.c_str(), 0, location(), 0, nullptr,
                                              nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(clEnqueueWriteBufferFromFileFERRY(nullptr, m, CL_FALSE, 0, 64, path.c_str(), 0, location(), 0, nullptr,
                                              nullptr),
            CL_INVALID_COMMAND_QUEUE);
  EXPECT_EQ(clEnqueueReadBufferToFileFERRY(queue(), nullptr, CL_FALSE, 0, 64, path.c_str(), 0, location(), 0, nullptr,
                                           nullptr),
            CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(clEnqueueReadBufferToFileFERRY(queue(), m, CL_FALSE, 0, 64, path.c_str(), 0, location(), 1, nullptr,
                                           nullptr),
            CL_INVALID_EVENT_WAIT_LIST);
  if (GetParam().ferry && GetParam().location == where::server) {
    const std::string too_long(4096, 'a');
    EXPECT_EQ(clEnqueueReadBufferToFileFERRY(queue(), m, CL_FALSE, 0, 64, too_long.c_str(), 0, location(), 0, nullptr,
                                             nullptr),
              CL_INVALID_VALUE);
  }
  EXPECT_CL_OK(clFinish(queue()));
}

TEST_P(transfer_path, a_missing_or_short_file_fails_its_command_alone) {
  const std::vector<unsigned char> before = pattern(256, 3);
  mem_handle m = buffer(256);
  ASSERT_NO_FATAL_FAILURE(put(m, 0, before));
  // Missing: the buffer is untouched, and the command behind it in the queue runs.
  event_handle missing;
  ASSERT_CL_OK(from_file(m, 0, 256, unique("never-made"), 0, missing.out()));
  const cl_uchar byte = 0x5A;
  event_handle fill;
  ASSERT_CL_OK(clEnqueueFillBuffer(queue(), m, &byte, 1, 200, 56, 0, nullptr, fill.out()));
  expect_failed(missing, CL_INVALID_VALUE);
  EXPECT_EQ(final_status(fill), CL_COMPLETE);
  std::vector<unsigned char> expected = before;
  std::fill(expected.begin() + 200, expected.end(), 0x5A);
  EXPECT_TRUE(get(m, 0, 256) == expected);
  // Short: the bytes it had are written, then the command fails; blocking returns the code.
  const std::vector<unsigned char> half = pattern(100, 8);
  const std::string name = unique("short");
  ASSERT_TRUE(write_file(on_disk(name), half));
  EXPECT_EQ(from_file(m, 0, 256, name, 0, nullptr, CL_TRUE), CL_INVALID_VALUE);
  std::vector<unsigned char> now = get(m, 0, 100);
  EXPECT_TRUE(now == half) << "the bytes before the file's end were not written";
}

TEST_P(transfer_path, a_directory_is_no_file) {
  const std::string name = unique("a-directory");
  ASSERT_EQ(::mkdir(on_disk(name).c_str(), 0777), 0);
  mem_handle m = buffer(16);
  event_handle done;
  ASSERT_CL_OK(from_file(m, 0, 16, name, 0, done.out()));
  expect_failed(done, CL_INVALID_VALUE);
  EXPECT_EQ(from_file(m, 0, 16, name, 0, nullptr, CL_TRUE), CL_INVALID_VALUE);
  EXPECT_CL_OK(clFinish(queue()));
}

// ---------------------------------------------------------------------------------------
// A Ferry server's root: what leads out of it

class server_file_root : public ferry_test {};

TEST_F(server_file_root, no_path_leads_outside_the_root_and_each_fails_its_command_alone) {
  const std::string outside_name = "ferry-outside-" + std::to_string(::getpid());
  const std::string outside = std::filesystem::path(root().path()).parent_path().string() + "/" + outside_name;
  ASSERT_TRUE(write_file(outside, pattern(64, 2)));
  const std::string link = "link-out-" + std::to_string(::getpid());
  ASSERT_EQ(::symlink(outside.c_str(), (root().path() + "/" + link).c_str()), 0);
  const std::string relative_link = "relative-link-out-" + std::to_string(::getpid());
  ASSERT_EQ(::symlink(("../" + outside_name).c_str(), (root().path() + "/" + relative_link).c_str()), 0);
  mem_handle m = buffer(CL_MEM_READ_WRITE, 64);
  for (const std::string& path : {"../" + outside_name, outside, link, relative_link, std::string("/etc/passwd")}) {
    SCOPED_TRACE(path);
    event_handle done;
    ASSERT_CL_OK(clEnqueueWriteBufferFromFileFERRY(ferry_.queue, m, CL_FALSE, 0, 64, path.c_str(), 0,
                                                   CL_FERRY_FILE_ON_SERVER, 0, nullptr, done.out()));
    EXPECT_EQ(final_status(done), CL_INVALID_VALUE);
    event_handle out;
    ASSERT_CL_OK(clEnqueueReadBufferToFileFERRY(ferry_.queue, m, CL_FALSE, 0, 64, path.c_str(), 0,
                                                CL_FERRY_FILE_ON_SERVER, 0, nullptr, out.out()));
    EXPECT_EQ(final_status(out), CL_INVALID_VALUE);
  }
  // Nothing outside was written.
  EXPECT_TRUE(read_file_bytes(outside) == pattern(64, 2));
  std::filesystem::remove(outside);
  EXPECT_CL_OK(clFinish(ferry_.queue));
}

TEST_F(server_file_root, a_file_the_session_worker_may_not_read_is_refused) {
  if (::geteuid() != 0) GTEST_SKIP() << "session workers run as this user: the file's mode does not stop them";
  const std::string name = "private-" + std::to_string(::getpid());
  ASSERT_TRUE(write_file(root().path() + "/" + name, pattern(64, 4), 0600));
  mem_handle m = buffer(CL_MEM_READ_WRITE, 64);
  EXPECT_EQ(clEnqueueWriteBufferFromFileFERRY(ferry_.queue, m, CL_TRUE, 0, 64, name.c_str(), 0, CL_FERRY_FILE_ON_SERVER,
                                              0, nullptr, nullptr),
            CL_INVALID_VALUE);
}

// A daemon without --file-root: every server file command fails with CL_INVALID_OPERATION.
FERRY_IT_CHILD(no_file_root) {
  cl_side side;
  const std::string opened = try_open_side(side, find_ferry_platform());
  CHILD_CHECK(opened.empty(), "%s", opened.c_str());
  const cl_context context = side.context;
  const cl_command_queue queue = side.queue;
  cl_int rc = CL_SUCCESS;
  mem_handle m(clCreateBuffer(context, CL_MEM_READ_WRITE, 64, nullptr, &rc));
  CHILD_CHECK(rc == CL_SUCCESS, "clCreateBuffer: %s", cl_error_name(rc).c_str());
  event_handle done;
  rc = clEnqueueReadBufferToFileFERRY(queue, m, CL_FALSE, 0, 64, "anything", 0, CL_FERRY_FILE_ON_SERVER, 0, nullptr,
                                      done.out());
  CHILD_CHECK(rc == CL_SUCCESS, "clEnqueueReadBufferToFileFERRY: %s", cl_error_name(rc).c_str());
  const cl_int status = final_status(done);
  CHILD_CHECK(status == CL_INVALID_OPERATION, "the command ended with %s", cl_error_name(status).c_str());
  rc = clEnqueueWriteBufferFromFileFERRY(queue, m, CL_TRUE, 0, 64, "anything", 0, CL_FERRY_FILE_ON_SERVER, 0, nullptr,
                                         nullptr);
  CHILD_CHECK(rc == CL_INVALID_OPERATION, "blocking: %s", cl_error_name(rc).c_str());
  CHILD_CHECK(clFinish(queue) == CL_SUCCESS, "clFinish after the failures");
  std::printf("PASS\n");
  return 0;
}

TEST_F(server_file_root, a_server_without_a_root_fails_file_commands_with_invalid_operation) {
  if (self_check) GTEST_SKIP() << "needs a second daemon";
  daemon plain;
  ASSERT_TRUE(plain.started());
  expect_child_passes("no_file_root", std::chrono::seconds(120), {{"FERRY_SERVERS", plain.address()}});
}

}  // namespace
}  // namespace ferry::test
