// A new session's first command: a fresh client process opens the platform (through
// Ferry: connects, gets a session from a ready worker, reads the device list), makes a
// context and a queue, and writes 4 bytes with a blocking write; the time from the start
// of its main() to the write's return is one sample. Natively, the same on the native
// platform (the driver loads and initializes in the process).
//
// Each sample is its own process, since a process connects once. The ferryd keeps
// --spare-workers ready (default 2); the rounds are spaced out by a pause
// (FERRY_BENCH_PAUSE_MS, default 2500) so that the
// spare taken by one is replaced before the next, as for clients that come one by one
// (a session that finds no ready spare waits for a worker to start: the max shows it).
#include <CL/cl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.hpp"
#include "process.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

/// The child: prints the microseconds from its start to its first completed write, or
/// FAIL with a reason. `want_ferry`: the Ferry platform, else the first other one whose
/// name contains `native_name` (any, when empty).
int child(bool want_ferry, const std::string& native_name, clock_type::time_point started) {
  cl_uint count = 0;
  clGetPlatformIDs(0, nullptr, &count);
  std::vector<cl_platform_id> platforms(count);
  if (count == 0 || clGetPlatformIDs(count, platforms.data(), nullptr) != CL_SUCCESS) {
    std::printf("FAIL no platforms\n");
    return 1;
  }
  cl_platform_id chosen = nullptr;
  std::string seen;  // the platforms' names, for the failure line
  for (cl_platform_id p : platforms) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    seen += std::string(seen.empty() ? "" : ", ") + name;
    const bool ferry = std::strstr(name, "Ferry") != nullptr;
    if (ferry == want_ferry && (want_ferry || native_name.empty() || std::strstr(name, native_name.c_str()))) {
      chosen = p;
      break;
    }
  }
  const auto platform_done = clock_type::now();
  cl_device_id device = nullptr;
  if (chosen == nullptr) {
    std::printf("FAIL no %s platform named like '%s' among %u: %s (OCL_ICD_FILENAMES=%s)\n",
                want_ferry ? "Ferry" : "native", want_ferry ? "Ferry" : native_name.c_str(), count, seen.c_str(),
                std::getenv("OCL_ICD_FILENAMES") ? std::getenv("OCL_ICD_FILENAMES") : "");
    return 1;
  }
  if (cl_int rc = clGetDeviceIDs(chosen, CL_DEVICE_TYPE_ALL, 1, &device, nullptr); rc != CL_SUCCESS) {
    std::printf("FAIL no %s device (clGetDeviceIDs: %d)\n", want_ferry ? "Ferry" : "native", rc);
    return 1;
  }
  cl_int rc = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
  cl_command_queue queue = rc == CL_SUCCESS ? clCreateCommandQueueWithProperties(context, device, nullptr, &rc) : nullptr;
  // Through Ferry the context is made on the server without a round trip: a
  // finish here puts its cost into this phase instead of the write's.
  if (rc == CL_SUCCESS) rc = clFinish(queue);
  const auto context_done = clock_type::now();
  cl_mem buffer = rc == CL_SUCCESS ? clCreateBuffer(context, CL_MEM_READ_WRITE, 4, nullptr, &rc) : nullptr;
  const cl_uint value = 42;
  if (rc == CL_SUCCESS) rc = clEnqueueWriteBuffer(queue, buffer, CL_TRUE, 0, sizeof value, &value, 0, nullptr, nullptr);
  const double us = std::chrono::duration<double, std::micro>(clock_type::now() - started).count();
  if (rc != CL_SUCCESS) {
    std::printf("FAIL OpenCL error %d\n", rc);
    return 1;
  }
  auto since = [](clock_type::time_point a, clock_type::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
  };
  // Total, then the phases: platform (Ferry: connect, session, device list),
  // context and queue, buffer and write.
  std::printf("US %.1f %.1f %.1f %.1f\n", us, since(started, platform_done), since(platform_done, context_done),
              us - since(started, context_done));
  std::fflush(stdout);
  clReleaseMemObject(buffer);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto started = clock_type::now();
  if (argc == 4 && std::strcmp(argv[1], "--child") == 0)
    return child(std::strcmp(argv[2], "ferry") == 0, argv[3], started);

  using namespace ferry::bench;
  const bench_info info{"session_start",
                        "A fresh process's first command: platform open (Ferry: connect, a session from a "
                        "ready worker, the device list), context, queue and a 4-byte blocking write.",
                        20, "processes"};
  const options opts = parse_options(argc, argv, info);
  const int rounds = opts.repeats > 0 ? opts.repeats : info.default_repeats;
  const char* pause = std::getenv("FERRY_BENCH_PAUSE_MS");
  const int pause_ms = pause && *pause ? std::atoi(pause) : 2500;
  session s(opts, info);
  // The executable by its real path: a driver may look at argv[0] (application profiles).
  std::string self(4096, '\0');
  const ssize_t length = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  self = length > 0 ? self.substr(0, static_cast<size_t>(length)) : std::string("/proc/self/exe");
  return s.run([&](target& t) {
    std::vector<double> us, platform_us, context_us, write_us;
    for (int i = 0; i < rounds + 1; ++i) {
      ferry::test::spawn_options child;
      child.argv = {self, "--child", t.label == "native" ? "native" : "ferry", opts.native_platform};
      // This process's loader variables may name Ferry's library alone (the Khronos
      // loader reads OCL_ICD_FILENAMES only): a native child gets every platform.
      if (t.label == "native")
        child.env = ferry::test::loader_env(ferry::test::build_paths{opts.bin_dir},
                                            ferry::test::loader_mode::ferry_and_native, std::nullopt);
      ferry::test::child_process p = ferry::test::child_process::spawn(child);
      const std::string out = p.read_all(clock_type::now() + std::chrono::seconds(60));
      p.wait(clock_type::now() + std::chrono::seconds(10));
      if (out.rfind("US ", 0) != 0) throw bench_error("a client process failed: " + out);
      if (i > 0) {  // the first warms caches up
        double total = 0, platform = 0, context = 0, write = 0;
        std::sscanf(out.c_str() + 3, "%lf %lf %lf %lf", &total, &platform, &context, &write);
        us.push_back(total);
        platform_us.push_back(platform);
        context_us.push_back(context);
        write_us.push_back(write);
      }
      // Clients one by one: the daemon has replaced the spare the last one took (a
      // worker on NVIDIA's OpenCL takes about 1.5 s to get ready, PoCL's 0.05 s).
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    }
    const double med = median(us);
    results::instance().record(t.label, "median_us", med);
    print_line("session_start", t.label,
               "median_us=" + format(med) + " min_us=" + format(*std::min_element(us.begin(), us.end())) +
                   " max_us=" + format(*std::max_element(us.begin(), us.end())) + " platform_us=" +
                   format(median(platform_us)) + " context_us=" + format(median(context_us)) +
                   " write_us=" + format(median(write_us)) + " processes=" + std::to_string(rounds));
  });
}
