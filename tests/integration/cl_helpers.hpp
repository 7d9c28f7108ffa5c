// OpenCL helpers for the integration tests: readable error codes in assertions, owning
// handles (so an ASSERT that returns early still releases everything before the leak check),
// platform lookup, info queries, and the fixtures.
#pragma once

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_ext_ferry.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon.hpp"

namespace ferry::test {

// ---------------------------------------------------------------------------------------
// Error codes

/// "CL_INVALID_VALUE" for -30; "CL_<unknown -1234>" for codes the spec does not name.
std::string cl_error_name(cl_int code);

/// A cl_int that gtest prints by name.
struct cl_status {
  cl_int code;
  bool operator==(const cl_status&) const = default;
};
void PrintTo(const cl_status& status, std::ostream* os);

#define EXPECT_CL(expected, expr) \
  EXPECT_EQ(::ferry::test::cl_status{expected}, ::ferry::test::cl_status{(expr)}) << #expr
#define ASSERT_CL(expected, expr) \
  ASSERT_EQ(::ferry::test::cl_status{expected}, ::ferry::test::cl_status{(expr)}) << #expr
/// For clauses the native implementation here (PoCL 3.1) does not follow: checked on Ferry
/// only, so a self-check build (where "Ferry" is PoCL) skips them.
#ifdef FERRY_IT_SELF_CHECK
#define EXPECT_CL_SPEC(expected, expr) static_cast<void>(expr)
#else
#define EXPECT_CL_SPEC(expected, expr) EXPECT_CL(expected, expr)
#endif
#define EXPECT_CL_OK(expr) EXPECT_CL(CL_SUCCESS, expr)
#define ASSERT_CL_OK(expr) ASSERT_CL(CL_SUCCESS, expr)

// ---------------------------------------------------------------------------------------
// Owning handles

template <class T>
struct cl_release;
template <>
struct cl_release<cl_context> {
  static cl_int release(cl_context h) { return clReleaseContext(h); }
  static cl_int retain(cl_context h) { return clRetainContext(h); }
};
template <>
struct cl_release<cl_command_queue> {
  static cl_int release(cl_command_queue h) { return clReleaseCommandQueue(h); }
  static cl_int retain(cl_command_queue h) { return clRetainCommandQueue(h); }
};
template <>
struct cl_release<cl_mem> {
  static cl_int release(cl_mem h) { return clReleaseMemObject(h); }
  static cl_int retain(cl_mem h) { return clRetainMemObject(h); }
};
template <>
struct cl_release<cl_program> {
  static cl_int release(cl_program h) { return clReleaseProgram(h); }
  static cl_int retain(cl_program h) { return clRetainProgram(h); }
};
template <>
struct cl_release<cl_kernel> {
  static cl_int release(cl_kernel h) { return clReleaseKernel(h); }
  static cl_int retain(cl_kernel h) { return clRetainKernel(h); }
};
template <>
struct cl_release<cl_event> {
  static cl_int release(cl_event h) { return clReleaseEvent(h); }
  static cl_int retain(cl_event h) { return clRetainEvent(h); }
};

/// Owns one API reference to an OpenCL object; a failed release is a test failure.
template <class T>
class cl_handle {
 public:
  cl_handle() = default;
  explicit cl_handle(T h) : h_(h) {}
  cl_handle(cl_handle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  cl_handle& operator=(cl_handle&& o) noexcept {
    if (this != &o) reset(std::exchange(o.h_, nullptr));
    return *this;
  }
  cl_handle(const cl_handle&) = delete;
  cl_handle& operator=(const cl_handle&) = delete;
  ~cl_handle() { reset(); }

  T get() const { return h_; }
  /// Where the handle is kept: for APIs that take an array of one (wait lists, cl_mem args).
  const T* address() const { return &h_; }
  operator T() const { return h_; }  // NOLINT: handles pass straight into the C API
  explicit operator bool() const { return h_ != nullptr; }
  /// For out-parameters: releases what is held and returns the slot to fill.
  T* out() {
    reset();
    return &h_;
  }
  T release_ownership() { return std::exchange(h_, nullptr); }
  void reset(T h = nullptr) {
    if (h_ != nullptr) {
      const cl_int rc = cl_release<T>::release(h_);
      EXPECT_EQ(cl_status{CL_SUCCESS}, cl_status{rc}) << "releasing an OpenCL object";
    }
    h_ = h;
  }

 private:
  T h_ = nullptr;
};

using context_handle = cl_handle<cl_context>;
using queue_handle = cl_handle<cl_command_queue>;
using mem_handle = cl_handle<cl_mem>;
using program_handle = cl_handle<cl_program>;
using kernel_handle = cl_handle<cl_kernel>;
using event_handle = cl_handle<cl_event>;

// ---------------------------------------------------------------------------------------
// Info queries (sizes negotiated: size query, then the value)

/// Calls `query(size, value, size_ret)` twice and returns the bytes; nullopt on an error,
/// which is stored in *error when given.
template <class Query>
std::optional<std::vector<unsigned char>> info_bytes(Query query, cl_int* error = nullptr) {
  size_t size = 0;
  cl_int rc = query(0, nullptr, &size);
  std::vector<unsigned char> bytes(size);
  if (rc == CL_SUCCESS && size > 0) rc = query(size, bytes.data(), nullptr);
  if (error != nullptr) *error = rc;
  if (rc != CL_SUCCESS) return std::nullopt;
  return bytes;
}

/// A string-valued info query; fails the test on an error.
template <class Query>
std::string info_string(Query query) {
  cl_int rc = CL_SUCCESS;
  auto bytes = info_bytes(query, &rc);
  EXPECT_CL_OK(rc);
  if (!bytes || bytes->empty()) return {};
  std::string s(bytes->begin(), bytes->end());
  EXPECT_EQ(s.back(), '\0') << "an info string must include its terminating NUL";
  if (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

/// A fixed-size info query; fails the test on an error or a size mismatch.
template <class T, class Query>
T info_value(Query query) {
  T value{};
  size_t size = 0;
  EXPECT_CL_OK(query(sizeof(T), &value, &size));
  EXPECT_EQ(size, sizeof(T));
  return value;
}

/// An array-valued info query; fails the test on an error.
template <class T, class Query>
std::vector<T> info_array(Query query) {
  cl_int rc = CL_SUCCESS;
  auto bytes = info_bytes(query, &rc);
  EXPECT_CL_OK(rc);
  if (!bytes) return {};
  EXPECT_EQ(bytes->size() % sizeof(T), 0u);
  std::vector<T> out(bytes->size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes->data(), out.size() * sizeof(T));
  return out;
}

#define FERRY_IT_INFO_QUERY(fn, ...) \
  [&](size_t size_, void* value_, size_t* ret_) { return fn(__VA_ARGS__, size_, value_, ret_); }

inline std::string platform_string(cl_platform_id p, cl_platform_info param) {
  return info_string(FERRY_IT_INFO_QUERY(clGetPlatformInfo, p, param));
}
inline std::string device_string(cl_device_id d, cl_device_info param) {
  return info_string(FERRY_IT_INFO_QUERY(clGetDeviceInfo, d, param));
}
template <class T>
T device_value(cl_device_id d, cl_device_info param) {
  return info_value<T>(FERRY_IT_INFO_QUERY(clGetDeviceInfo, d, param));
}
template <class T>
T event_value(cl_event e, cl_event_info param) {
  return info_value<T>(FERRY_IT_INFO_QUERY(clGetEventInfo, e, param));
}
inline cl_int event_status(cl_event e) {
  return event_value<cl_int>(e, CL_EVENT_COMMAND_EXECUTION_STATUS);
}

// ---------------------------------------------------------------------------------------
// Platforms and devices (no gtest assertions: children use these too)

std::vector<cl_platform_id> all_platforms();
/// Empty string when the query fails.
std::string platform_name(cl_platform_id platform);
/// The Ferry platform, or nullptr. In self-check mode, the native platform.
cl_platform_id find_ferry_platform();
/// The native platform: "Portable Computing Language" when present, else the first
/// platform not named "Ferry"; nullptr when there is none.
cl_platform_id find_native_platform();
std::vector<cl_device_id> platform_devices(cl_platform_id platform,
                                           cl_device_type type = CL_DEVICE_TYPE_ALL);
/// Major and minor version from "OpenCL <major>.<minor> ..." (CL_DEVICE_VERSION).
std::pair<int, int> device_version(cl_device_id device);

/// The Ferry extension function `name`, or nullptr.
void* ferry_extension(cl_platform_id platform, const char* name);
/// Object counts for the server hosting `device`; nullopt when the call fails.
std::optional<cl_ferry_object_counts> object_counts(cl_platform_id platform, cl_device_id device,
                                                    cl_int* error = nullptr);
/// Fails the test unless both counts are zero.
void expect_no_leaks(cl_platform_id platform, cl_device_id device);
/// Waits (at most `limit`) until the client's and the server's object counts are back at
/// `baseline` or below: objects a body released may still be going (the transfer
/// library's own queues and events go once the application's event has completed).
void wait_for_counts(cl_platform_id platform, cl_device_id device, const cl_ferry_object_counts& baseline,
                     std::chrono::seconds limit = std::chrono::minutes(1));

// ---------------------------------------------------------------------------------------
// Programs

/// The build log of `program` for `device`.
std::string build_log(cl_program program, cl_device_id device);
/// Builds `source`; a null handle (and, with `report`, a test failure carrying the build
/// log) when it does not build.
program_handle build_program(cl_context context, cl_device_id device, std::string_view source,
                             const char* options = "", bool report = true);
kernel_handle create_kernel(cl_program program, const char* name);
mem_handle create_buffer(cl_context context, cl_mem_flags flags, size_t size,
                         void* host = nullptr);

/// Runs vector_add (c = a + b) on `n` floats through a fresh context on `device` and
/// returns an empty string when the results are right, else what went wrong. Used by
/// tests and by child processes alike.
std::string run_vector_add(cl_device_id device, size_t n, float scale);

// ---------------------------------------------------------------------------------------
// Fixtures

/// One platform's device with a context and an in-order queue.
struct cl_side {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  context_handle context;
  queue_handle queue;
};

/// Fills `side` for the first device of `platform`; fails the test when it cannot.
void open_side(cl_side& side, cl_platform_id platform);
/// The same for a child process: "" when done, else what failed.
std::string try_open_side(cl_side& side, cl_platform_id platform);

/// Tests through Ferry: SetUp asserts the platform is Ferry's and makes a context and an
/// in-order queue on its first device; TearDown releases them and checks that neither the
/// client nor the server has any object left.
class ferry_test : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  program_handle build(std::string_view source, const char* options = "") {
    return build_program(ferry_.context, ferry_.device, source, options);
  }
  mem_handle buffer(cl_mem_flags flags, size_t size, void* host = nullptr) {
    return create_buffer(ferry_.context, flags, size, host);
  }

  cl_side ferry_;
  // Short names for the Ferry side, used by most tests.
  cl_platform_id platform_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
};

/// ferry_test plus the same on the native platform, for suites whose loader offers both
/// (loader_mode::ferry_and_native), to compare Ferry's answers with native ones.
class ferry_and_native_test : public ferry_test {
 protected:
  void SetUp() override;
  void TearDown() override;
  cl_side native_;
};

}  // namespace ferry::test
