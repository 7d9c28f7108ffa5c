// The client half of tests/netns/roaming.sh: a long run of small commands on one server
// while the script takes the client's address away and gives it a new one. Each round
// writes a source buffer (blocking) and runs a kernel that folds it into an accumulator,
// so a command lost or run twice across the reconnection shows in the final contents.
//
//   ferry_netns_roaming_probe ROUNDS MARKER_FILE
//
// Writes MARKER_FILE when round ROUNDS/3 is reached (the script changes the address
// then). Prints "ROUND n" every 50 rounds, then "REFUSED n" (enqueues refused while the
// server was offline), "RESULT ok|mismatch" and "MESSAGES sent=X run=Y". Exits 0 when the
// result is right and every message sent was run exactly once; 1 on any failure; 2 on
// bad arguments.
#include <CL/cl.h>
#include <CL/cl_ext_ferry.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

const char* source = R"CLC(
__kernel void fold(__global uint* acc, __global const uint* src, uint f) {
  size_t i = get_global_id(0);
  acc[i] = acc[i] * 3u + src[i] * f;
}
)CLC";

constexpr size_t items = 256;

int failed(const char* what, cl_int code) {
  std::fprintf(stderr, "roaming_probe: %s failed with %d\n", what, code);
  return 1;
}

void usage(FILE* to) {
  std::fprintf(to,
               "usage: ferry_netns_roaming_probe ROUNDS MARKER_FILE\n"
               "Runs ROUNDS write+kernel rounds on the first Ferry device, retrying enqueues the\n"
               "server refuses while it is offline; writes MARKER_FILE at round ROUNDS/3.\n");
}

// Enqueues refused with CL_DEVICE_NOT_AVAILABLE (the server was offline when asked).
unsigned long refused = 0;

// Runs `enqueue` until the server accepts it: a refusal means the link is down, so wait
// for the device to come back (the reconnection is libferry's job, not ours) and ask
// again. Gives up 60 s after the first refusal, which is a hang guard, not a timing
// claim; the deadline is not renewed by later refusals, so a device that reports itself
// available but refuses every command (a session replaced, not resumed) ends the run.
template <typename F>
cl_int until_accepted(cl_device_id device, F&& enqueue) {
  std::chrono::steady_clock::time_point deadline{};
  for (;;) {
    cl_int rc = enqueue();
    if (rc != CL_DEVICE_NOT_AVAILABLE) return rc;
    ++refused;
    if (deadline == std::chrono::steady_clock::time_point{})
      deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      if (std::chrono::steady_clock::now() >= deadline) {
        std::fprintf(stderr, "roaming_probe: the server refused the command or stayed unavailable for 60 s\n");
        return CL_DEVICE_NOT_AVAILABLE;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      cl_bool available = CL_FALSE;
      cl_int q = clGetDeviceInfo(device, CL_DEVICE_AVAILABLE, sizeof available, &available, nullptr);
      if (q != CL_SUCCESS) return q;
      if (available) break;
    }
  }
}

// The source value of item i in round r: differs between rounds and items so that a
// write applied to the wrong round changes the result.
cl_uint source_value(unsigned r, size_t i) { return r * 2654435761u ^ static_cast<cl_uint>(i * 40503u + 1u); }

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    usage(stdout);
    return 0;
  }
  if (argc != 3) {
    usage(stderr);
    return 2;
  }
  char* end = nullptr;
  const long parsed = std::strtol(argv[1], &end, 10);
  if (end == argv[1] || *end != '\0' || parsed < 3 || parsed > 1000000) {
    std::fprintf(stderr, "roaming_probe: ROUNDS must be a whole number from 3 to 1000000, not '%s'\n", argv[1]);
    return 2;
  }
  const unsigned rounds = static_cast<unsigned>(parsed);
  const std::string marker = argv[2];
  if (marker.empty()) {
    std::fprintf(stderr, "roaming_probe: MARKER_FILE must not be empty\n");
    return 2;
  }

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
  cl_device_id device = nullptr;
  cl_int rc = clGetDeviceIDs(ferry, CL_DEVICE_TYPE_ALL, 1, &device, nullptr);
  if (rc != CL_SUCCESS) return failed("clGetDeviceIDs", rc);
  auto message_counts = reinterpret_cast<clFerryGetMessageCounts_fn>(
      clGetExtensionFunctionAddressForPlatform(ferry, "clFerryGetMessageCounts"));
  if (message_counts == nullptr) return failed("finding clFerryGetMessageCounts", CL_INVALID_VALUE);

  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  if (rc != CL_SUCCESS) return failed("clCreateContext", rc);
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &rc);
  if (rc != CL_SUCCESS) return failed("clCreateCommandQueueWithProperties", rc);
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &rc);
  if (rc != CL_SUCCESS || (rc = clBuildProgram(program, 0, nullptr, "", nullptr, nullptr)) != CL_SUCCESS)
    return failed("building the program", rc);
  cl_kernel kernel = clCreateKernel(program, "fold", &rc);
  if (rc != CL_SUCCESS) return failed("clCreateKernel", rc);

  std::vector<cl_uint> expected(items, 0u);
  cl_mem acc = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, items * sizeof(cl_uint),
                              expected.data(), &rc);
  if (rc != CL_SUCCESS) return failed("clCreateBuffer acc", rc);
  cl_mem src = clCreateBuffer(context, CL_MEM_READ_ONLY, items * sizeof(cl_uint), nullptr, &rc);
  if (rc != CL_SUCCESS) return failed("clCreateBuffer src", rc);
  if ((rc = clSetKernelArg(kernel, 0, sizeof acc, &acc)) != CL_SUCCESS ||
      (rc = clSetKernelArg(kernel, 1, sizeof src, &src)) != CL_SUCCESS)
    return failed("clSetKernelArg", rc);

  std::vector<cl_uint> host(items);
  for (unsigned r = 0; r < rounds; ++r) {
    if (r == rounds / 3) {
      // Written before this round's commands, so the address changes while rounds remain.
      if (FILE* f = std::fopen(marker.c_str(), "w")) {
        std::fprintf(f, "%u\n", r);
        std::fclose(f);
      } else {
        std::fprintf(stderr, "roaming_probe: cannot write %s\n", marker.c_str());
        return 1;
      }
    }
    for (size_t i = 0; i < items; ++i) host[i] = source_value(r, i);
    // A factor that changes every round: an argument captured at the wrong time shows.
    const cl_uint f = 2u * r + 1u;
    rc = until_accepted(device, [&] {
      return clEnqueueWriteBuffer(queue, src, CL_TRUE, 0, items * sizeof(cl_uint), host.data(), 0, nullptr,
                                  nullptr);
    });
    if (rc != CL_SUCCESS) return failed("clEnqueueWriteBuffer", rc);
    rc = until_accepted(device, [&] { return clSetKernelArg(kernel, 2, sizeof f, &f); });
    if (rc != CL_SUCCESS) return failed("clSetKernelArg f", rc);
    rc = until_accepted(device, [&] {
      return clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &items, nullptr, 0, nullptr, nullptr);
    });
    if (rc != CL_SUCCESS) return failed("clEnqueueNDRangeKernel", rc);
    for (size_t i = 0; i < items; ++i) expected[i] = expected[i] * 3u + host[i] * f;
    if ((r + 1) % 50 == 0) {
      std::printf("ROUND %u\n", r + 1);
      std::fflush(stdout);
    }
    // Stretches the run over a few seconds so the address change lands mid-run.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  std::vector<cl_uint> got(items);
  rc = until_accepted(device, [&] {
    return clEnqueueReadBuffer(queue, acc, CL_TRUE, 0, items * sizeof(cl_uint), got.data(), 0, nullptr, nullptr);
  });
  if (rc != CL_SUCCESS) return failed("clEnqueueReadBuffer", rc);
  size_t wrong = 0;
  for (size_t i = 0; i < items; ++i) {
    if (got[i] != expected[i]) {
      if (wrong == 0) std::fprintf(stderr, "roaming_probe: acc[%zu] is %u, not %u\n", i, got[i], expected[i]);
      ++wrong;
    }
  }
  std::printf("REFUSED %lu\n", refused);
  std::printf("RESULT %s\n", wrong == 0 ? "ok" : "mismatch");

  cl_ulong sent = 0, run = 0;
  rc = until_accepted(device, [&] { return message_counts(device, &sent, &run); });
  if (rc != CL_SUCCESS) return failed("clFerryGetMessageCounts", rc);
  std::printf("MESSAGES sent=%llu run=%llu\n", static_cast<unsigned long long>(sent),
              static_cast<unsigned long long>(run));
  std::fflush(stdout);

  clReleaseMemObject(src);
  clReleaseMemObject(acc);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  if (wrong != 0) return 1;
  if (sent != run) {
    std::fprintf(stderr, "roaming_probe: %llu messages sent but %llu run\n", static_cast<unsigned long long>(sent),
                 static_cast<unsigned long long>(run));
    return 1;
  }
  return 0;
}
