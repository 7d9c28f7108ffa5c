// What the MPI test programs share: checks that stop every rank with a clear message
// (a failed rank must not leave its peer waiting for a message that never comes), the
// OpenCL objects of one rank, and the byte pattern the tests send.
//
// These programs run under mpirun, where gtest would report one rank's failure while the
// other hangs; a failed check here prints the rank, the case, the place and the values,
// then calls MPI_Abort, which ends every rank at once.
#pragma once

#include <mpi.h>

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ferry::mpi_test {

/// The case a check belongs to, for its message ("" outside one).
void set_current_case(const char* name);

/// Prints "rank R [case]: FAIL file:line: what" to stderr and ends every rank
/// (MPI_Abort while MPI runs, else exit(1)).
[[noreturn]] void fail(const char* file, int line, const std::string& what);

/// "CL_INVALID_VALUE (-30)".
std::string cl_code_text(cl_int code);

#define MPI_TEST_CHECK(condition, detail)                                                       \
  do {                                                                                          \
    if (!(condition)) ::ferry::mpi_test::fail(__FILE__, __LINE__, std::string(#condition ": ") + (detail)); \
  } while (0)

/// An OpenCL call or result that must be a given code.
#define MPI_TEST_CL(expected, expr)                                                                         \
  do {                                                                                                      \
    const cl_int mpi_test_got_ = (expr);                                                                    \
    if (mpi_test_got_ != (expected))                                                                        \
      ::ferry::mpi_test::fail(__FILE__, __LINE__,                                                           \
                              std::string(#expr) + " returned " + ::ferry::mpi_test::cl_code_text(mpi_test_got_) + \
                                  ", expected " + ::ferry::mpi_test::cl_code_text(expected));               \
  } while (0)

/// The byte the tests place at index `i` of a range seeded with `seed`; the kernel
/// write_pattern computes the same.
inline std::uint8_t pattern_byte(std::size_t i, std::uint32_t seed) {
  const auto x = static_cast<std::uint32_t>(i);
  return static_cast<std::uint8_t>((x * 131u) ^ (x >> 9) ^ seed);
}
std::vector<std::uint8_t> pattern(std::size_t size, std::uint32_t seed, std::size_t first_index = 0);

/// Fails (naming `what` and the first differing index) unless `got` equals `expected`.
void expect_bytes(const std::vector<std::uint8_t>& expected, const std::vector<std::uint8_t>& got, const char* what);

/// One rank's device, context, two in-order queues with profiling and the test kernels
/// (write_pattern(buffer, seed), add_one(in, out)). The device is rank % devices of the
/// first platform that has one: on Ferry or PoCL every rank finds one.
class rank_device {
 public:
  explicit rank_device(int rank);
  ~rank_device();
  rank_device(const rank_device&) = delete;
  rank_device& operator=(const rank_device&) = delete;

  cl_context context() const { return context_; }
  cl_device_id device() const { return device_; }
  /// The device is Ferry's (its platform is named "Ferry").
  bool on_ferry() const { return on_ferry_; }
  cl_command_queue queue() const { return queue_; }
  cl_command_queue second_queue() const { return second_queue_; }
  cl_kernel write_pattern() const { return write_pattern_; }
  cl_kernel add_one() const { return add_one_; }
  /// False on PoCL 3.1, which runs no callback of a command that failed because an
  /// event it waited for failed (docs/architecture.md, "Platform quirks handled": Ferry's
  /// daemon works around it, a native program cannot).
  bool runs_callbacks_of_failed_commands() const { return !pocl_3_1_; }

  /// A buffer of `size` bytes holding `bytes` (written before this returns).
  cl_mem buffer_with(const std::vector<std::uint8_t>& bytes);
  /// A buffer of `size` bytes, each `fill`.
  cl_mem buffer_filled(std::size_t size, std::uint8_t fill);
  /// `size` bytes at `offset`, read on queue() behind everything enqueued there.
  std::vector<std::uint8_t> read(cl_mem buffer, std::size_t offset, std::size_t size);
  /// Enqueues write_pattern over the first `size` bytes of `buffer` on `queue`.
  void enqueue_write_pattern(cl_command_queue queue, cl_mem buffer, std::size_t size, std::uint32_t seed,
                             cl_uint num_events, const cl_event* wait_list, cl_event* event);
  /// Enqueues add_one: out[i] = in[i] + 1 for the first `size` bytes.
  void enqueue_add_one(cl_command_queue queue, cl_mem in, cl_mem out, std::size_t size, cl_uint num_events,
                       const cl_event* wait_list, cl_event* event);

 private:
  cl_device_id device_ = nullptr;
  bool on_ferry_ = false;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_command_queue second_queue_ = nullptr;
  cl_program program_ = nullptr;
  cl_kernel write_pattern_ = nullptr;
  cl_kernel add_one_ = nullptr;
  bool pocl_3_1_ = false;
};

/// CL_EVENT_COMMAND_EXECUTION_STATUS of `event`.
cl_int event_status(cl_event event);

}  // namespace ferry::mpi_test
