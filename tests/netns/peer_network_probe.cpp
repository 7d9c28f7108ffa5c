// The client half of tests/netns/peer_network.sh: one context over the devices of two
// servers, a buffer whose contents start on the first and are needed by a kernel on the
// second, and the link counters that show which network carried the bytes.
//
// Prints (stdout, one line): "ok peer_out_remote=<addr> peer_out_bytes=<n>
// client_bulk_in_second=<n>" and exits 0 when the kernel's result is right; otherwise says
// what went wrong on stderr and exits 1.
#include <CL/cl.h>
#include <CL/cl_ext_ferry.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

const char* source = R"CLC(
__kernel void increment(__global uint* data) { data[get_global_id(0)] += 1u; }
)CLC";

int failed(const char* what, cl_int code) {
  std::fprintf(stderr, "peer_network_probe: %s failed with %d\n", what, code);
  return 1;
}

}  // namespace

int main() {
  cl_uint count = 0;
  clGetPlatformIDs(0, nullptr, &count);
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  cl_platform_id ferry = nullptr;
  for (cl_platform_id p : platforms) {
    char name[64] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
    if (std::strcmp(name, CL_FERRY_PLATFORM_NAME) == 0) ferry = p;
  }
  if (ferry == nullptr) return failed("finding the Ferry platform", CL_INVALID_PLATFORM);
  std::array<cl_device_id, 2> devices{};
  cl_uint found = 0;
  cl_int rc = clGetDeviceIDs(ferry, CL_DEVICE_TYPE_ALL, 2, devices.data(), &found);
  if (rc != CL_SUCCESS || found != 2) return failed("finding a device on each of two servers", rc);
  auto counters = reinterpret_cast<clFerryGetLinkCounters_fn>(
      clGetExtensionFunctionAddressForPlatform(ferry, "clFerryGetLinkCounters"));
  if (counters == nullptr) return failed("finding clFerryGetLinkCounters", CL_INVALID_VALUE);

  cl_context context = clCreateContext(nullptr, 2, devices.data(), nullptr, nullptr, &rc);
  if (rc != CL_SUCCESS) return failed("clCreateContext", rc);
  cl_command_queue second = clCreateCommandQueueWithProperties(context, devices[1], nullptr, &rc);
  if (rc != CL_SUCCESS) return failed("clCreateCommandQueueWithProperties", rc);
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &rc);
  if (rc != CL_SUCCESS || (rc = clBuildProgram(program, 0, nullptr, "", nullptr, nullptr)) != CL_SUCCESS)
    return failed("building the program", rc);
  cl_kernel kernel = clCreateKernel(program, "increment", &rc);
  if (rc != CL_SUCCESS) return failed("clCreateKernel", rc);

  // The initial contents go to the first server; the kernel runs on the second.
  std::vector<cl_uint> host((4u << 20) / sizeof(cl_uint));
  std::iota(host.begin(), host.end(), 1u);
  const size_t bytes = host.size() * sizeof(cl_uint);
  cl_mem data = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host.data(), &rc);
  if (rc != CL_SUCCESS) return failed("clCreateBuffer", rc);
  std::array<cl_ferry_link_counters, 32> before{};
  cl_uint before_count = 0;
  if ((rc = counters(devices[1], 32, before.data(), &before_count)) != CL_SUCCESS) return failed("counters", rc);
  clSetKernelArg(kernel, 0, sizeof data, &data);
  const size_t items = host.size();
  rc = clEnqueueNDRangeKernel(second, kernel, 1, nullptr, &items, nullptr, 0, nullptr, nullptr);
  if (rc != CL_SUCCESS) return failed("clEnqueueNDRangeKernel", rc);
  std::vector<cl_uint> got(host.size());
  rc = clEnqueueReadBuffer(second, data, CL_TRUE, 0, bytes, got.data(), 0, nullptr, nullptr);
  if (rc != CL_SUCCESS) return failed("clEnqueueReadBuffer", rc);
  for (size_t i = 0; i < host.size(); ++i) {
    if (got[i] != host[i] + 1) {
      std::fprintf(stderr, "peer_network_probe: wrong result at %zu: %u, not %u\n", i, got[i], host[i] + 1);
      return 1;
    }
  }

  // Where the bytes went.
  std::array<cl_ferry_link_counters, 32> first_links{}, second_links{};
  cl_uint first_count = 0, second_count = 0;
  if ((rc = counters(devices[0], 32, first_links.data(), &first_count)) != CL_SUCCESS ||
      (rc = counters(devices[1], 32, second_links.data(), &second_count)) != CL_SUCCESS)
    return failed("clFerryGetLinkCounters", rc);
  std::string remote;
  cl_ulong peer_bytes = 0;
  for (cl_uint i = 0; i < first_count && i < 32; ++i) {
    if (first_links[i].kind != CL_FERRY_LINK_PEER_OUT) continue;
    remote = first_links[i].remote;
    peer_bytes += first_links[i].bytes_out;
  }
  auto client_bulk_in = [](const std::array<cl_ferry_link_counters, 32>& links, cl_uint n) {
    cl_ulong sum = 0;
    for (cl_uint i = 0; i < n && i < 32; ++i)
      if (links[i].kind == CL_FERRY_LINK_CLIENT_BULK) sum += links[i].bytes_in;
    return sum;
  };
  std::printf("ok peer_out_remote=%s peer_out_bytes=%llu client_bulk_in_second=%llu\n", remote.c_str(),
              static_cast<unsigned long long>(peer_bytes),
              static_cast<unsigned long long>(client_bulk_in(second_links, second_count) -
                                              client_bulk_in(before, before_count)));
  clReleaseMemObject(data);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(second);
  clReleaseContext(context);
  return 0;
}
