#include "mpi_test_support.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "common/cl_errors.hpp"

namespace ferry::mpi_test {
namespace {

const char* current_case = "";

const char* kernel_source = R"CLC(
__kernel void write_pattern(__global uchar* bytes, uint seed) {
  uint i = (uint)get_global_id(0);
  bytes[i] = (uchar)((i * 131u) ^ (i >> 9) ^ seed);
}
__kernel void add_one(__global const uchar* in, __global uchar* out) {
  size_t i = get_global_id(0);
  out[i] = (uchar)(in[i] + 1);
}
)CLC";

bool mpi_running() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

/// What FERRY_MPI_TEST_PLATFORMS ("ferry,native", set by ferry_mpi_launch
/// --platform mixed) asks of `rank`: "ferry", "native", or "" for any.
std::string platform_wanted(int rank) {
  const char* list = std::getenv("FERRY_MPI_TEST_PLATFORMS");
  if (list == nullptr || *list == '\0') return "";
  std::vector<std::string> names;
  std::string name;
  for (const char* c = list;; ++c) {
    if (*c == ',' || *c == '\0') {
      names.push_back(name);
      name.clear();
      if (*c == '\0') break;
    } else {
      name += *c;
    }
  }
  return names[static_cast<std::size_t>(rank) % names.size()];
}

/// The first platform with a device (Ferry's or another, as `wanted` says), and its devices.
std::vector<cl_device_id> first_platform_devices(const std::string& wanted) {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  for (cl_platform_id p : platforms) {
    char name[256] = "";
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    const bool is_ferry = std::string_view(name) == "Ferry";
    if ((wanted == "ferry" && !is_ferry) || (wanted == "native" && is_ferry)) continue;
    cl_uint devices = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &devices) != CL_SUCCESS || devices == 0) continue;
    std::vector<cl_device_id> out(devices);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, devices, out.data(), nullptr);
    return out;
  }
  return {};
}

}  // namespace

void set_current_case(const char* name) { current_case = name; }

void fail(const char* file, int line, const std::string& what) {
  int rank = -1;
  if (mpi_running()) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "rank %d [%s]: FAIL %s:%d: %s\n", rank, current_case, file, line, what.c_str());
  std::fflush(stderr);
  if (mpi_running()) MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

std::string cl_code_text(cl_int code) { return ferry::cl_error_name(code) + " (" + std::to_string(code) + ")"; }

std::vector<std::uint8_t> pattern(std::size_t size, std::uint32_t seed, std::size_t first_index) {
  std::vector<std::uint8_t> out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = pattern_byte(first_index + i, seed);
  return out;
}

void expect_bytes(const std::vector<std::uint8_t>& expected, const std::vector<std::uint8_t>& got, const char* what) {
  if (expected.size() != got.size())
    fail(__FILE__, __LINE__,
         std::string(what) + ": " + std::to_string(got.size()) + " bytes, expected " + std::to_string(expected.size()));
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != got[i])
      fail(__FILE__, __LINE__,
           std::string(what) + ": byte " + std::to_string(i) + " of " + std::to_string(expected.size()) + " is " +
               std::to_string(got[i]) + ", expected " + std::to_string(expected[i]));
  }
}

rank_device::rank_device(int rank) {
  const std::string wanted = platform_wanted(rank);
  const std::vector<cl_device_id> devices = first_platform_devices(wanted);
  MPI_TEST_CHECK(!devices.empty(), "no OpenCL platform with a device" + (wanted.empty() ? "" : " (" + wanted + ")"));
  cl_device_id device = devices[static_cast<std::size_t>(rank) % devices.size()];
  cl_platform_id platform = nullptr;
  char version[256] = "";
  clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr);
  clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof version, version, nullptr);
  pocl_3_1_ = std::string_view(version).find("PoCL 3.1") != std::string_view::npos;
  char name[256] = "";
  clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name, name, nullptr);
  on_ferry_ = std::string_view(name) == "Ferry";
  device_ = device;
  cl_int rc = CL_SUCCESS;
  context_ = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  MPI_TEST_CL(CL_SUCCESS, rc);
  queue_ = clCreateCommandQueue(context_, device, CL_QUEUE_PROFILING_ENABLE, &rc);
  MPI_TEST_CL(CL_SUCCESS, rc);
  second_queue_ = clCreateCommandQueue(context_, device, CL_QUEUE_PROFILING_ENABLE, &rc);
  MPI_TEST_CL(CL_SUCCESS, rc);
  program_ = clCreateProgramWithSource(context_, 1, &kernel_source, nullptr, &rc);
  MPI_TEST_CL(CL_SUCCESS, rc);
  MPI_TEST_CL(CL_SUCCESS, clBuildProgram(program_, 1, &device, "", nullptr, nullptr));
  write_pattern_ = clCreateKernel(program_, "write_pattern", &rc);
  MPI_TEST_CL(CL_SUCCESS, rc);
  add_one_ = clCreateKernel(program_, "add_one", &rc);
  MPI_TEST_CL(CL_SUCCESS, rc);
}

rank_device::~rank_device() {
  clReleaseKernel(add_one_);
  clReleaseKernel(write_pattern_);
  clReleaseProgram(program_);
  clReleaseCommandQueue(second_queue_);
  clReleaseCommandQueue(queue_);
  clReleaseContext(context_);
}

cl_mem rank_device::buffer_with(const std::vector<std::uint8_t>& bytes) {
  cl_int rc = CL_SUCCESS;
  // A buffer cannot be empty; a zero-byte range gets one byte to sit in.
  cl_mem buffer = clCreateBuffer(context_, CL_MEM_READ_WRITE, std::max<std::size_t>(bytes.size(), 1), nullptr, &rc);
  MPI_TEST_CL(CL_SUCCESS, rc);
  if (!bytes.empty())
    MPI_TEST_CL(CL_SUCCESS, clEnqueueWriteBuffer(queue_, buffer, CL_TRUE, 0, bytes.size(), bytes.data(), 0, nullptr,
                                                 nullptr));
  return buffer;
}

cl_mem rank_device::buffer_filled(std::size_t size, std::uint8_t fill) {
  return buffer_with(std::vector<std::uint8_t>(size, fill));
}

std::vector<std::uint8_t> rank_device::read(cl_mem buffer, std::size_t offset, std::size_t size) {
  std::vector<std::uint8_t> out(size);
  if (size > 0)
    MPI_TEST_CL(CL_SUCCESS, clEnqueueReadBuffer(queue_, buffer, CL_TRUE, offset, size, out.data(), 0, nullptr, nullptr));
  return out;
}

void rank_device::enqueue_write_pattern(cl_command_queue queue, cl_mem buffer, std::size_t size, std::uint32_t seed,
                                        cl_uint num_events, const cl_event* wait_list, cl_event* event) {
  MPI_TEST_CL(CL_SUCCESS, clSetKernelArg(write_pattern_, 0, sizeof buffer, &buffer));
  MPI_TEST_CL(CL_SUCCESS, clSetKernelArg(write_pattern_, 1, sizeof seed, &seed));
  MPI_TEST_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(queue, write_pattern_, 1, nullptr, &size, nullptr, num_events, wait_list, event));
}

void rank_device::enqueue_add_one(cl_command_queue queue, cl_mem in, cl_mem out, std::size_t size,
                                  cl_uint num_events, const cl_event* wait_list, cl_event* event) {
  MPI_TEST_CL(CL_SUCCESS, clSetKernelArg(add_one_, 0, sizeof in, &in));
  MPI_TEST_CL(CL_SUCCESS, clSetKernelArg(add_one_, 1, sizeof out, &out));
  MPI_TEST_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(queue, add_one_, 1, nullptr, &size, nullptr, num_events, wait_list, event));
}

cl_int event_status(cl_event event) {
  cl_int status = 0;
  MPI_TEST_CL(CL_SUCCESS,
              clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr));
  return status;
}

}  // namespace ferry::mpi_test
