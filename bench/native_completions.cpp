// How a native platform reports that a command has ended: the figures behind ferryd's
// --completions choice. For a short kernel, a longer kernel (about 0.2 ms on an H100)
// and a 1 MiB write it measures, from the enqueue, when
//   wait      clWaitForEvents returns,
//   poll      clGetEventInfo first says CL_COMPLETE (asked in a loop),
//   callback  the CL_COMPLETE callback runs.
// On NVIDIA's OpenCL (driver 580) the callback of a command that runs longer than about
// 0.1 ms comes on a 20 ms tick; that is why ferryd polls there. Native only: Ferry is
// not involved, and no daemon is started.
//
//   ferry_bench_native_completions [--platform NAME] [--repeats N] [--spin N]
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "native_device.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double us_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

using ferry::bench::native::check;
using ferry::bench::native::failure;

// Set from the platform's callback thread; the measuring thread waits on it.
struct callback_signal {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  clock_type::time_point at;
};

void CL_CALLBACK on_complete(cl_event, cl_int, void* user) {
  auto* s = static_cast<callback_signal*>(user);
  std::lock_guard lock(s->mutex);
  s->at = clock_type::now();
  s->done = true;
  s->changed.notify_one();
}

// paced: polling with a 100 µs sleep between looks, as a poller that backs off does.
enum class how { wait, poll, paced, callback };
const char* name_of(how h) {
  return h == how::wait ? "wait" : h == how::poll ? "poll" : h == how::paced ? "paced" : "callback";
}

// Microseconds from enqueue until the command is seen ended, `how` says how.
double one_round(cl_command_queue queue, const std::function<void(cl_event*)>& enqueue, how h) {
  cl_event event = nullptr;
  callback_signal signal;
  const auto start = clock_type::now();
  enqueue(&event);
  if (h == how::callback) check(clSetEventCallback(event, CL_COMPLETE, &on_complete, &signal), "clSetEventCallback");
  check(clFlush(queue), "clFlush");
  clock_type::time_point seen;
  if (h == how::wait) {
    check(clWaitForEvents(1, &event), "clWaitForEvents");
    seen = clock_type::now();
  } else if (h == how::poll || h == how::paced) {
    cl_int status = CL_QUEUED;
    for (;;) {
      check(clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr),
            "clGetEventInfo");
      if (status <= CL_COMPLETE) break;
      if (h == how::paced) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    seen = clock_type::now();
  } else {
    std::unique_lock lock(signal.mutex);
    signal.changed.wait(lock, [&] { return signal.done; });
    seen = signal.at;
  }
  // The callback may still be returning: the event is released once it is done.
  clWaitForEvents(1, &event);
  clReleaseEvent(event);
  return us_between(start, seen);
}


int run(const std::string& platform_name, int repeats, int spin_rounds) {
  ferry::bench::native::device d(platform_name);
  std::fprintf(stderr, "ferry_bench_native_completions: %s / %s\n", d.platform_name.c_str(), d.device_name.c_str());
  cl_int error = CL_SUCCESS;
  cl_context context = d.context;
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, d.id, nullptr, &error);
  check(error, "clCreateCommandQueueWithProperties");
  cl_kernel kernel = d.kernel(ferry::bench::native::spin_kernel_source, "spin");
  const size_t items = 1 << 18, bytes = 1 << 20;
  cl_mem data = clCreateBuffer(context, CL_MEM_READ_WRITE, items * sizeof(float), nullptr, &error);
  check(error, "clCreateBuffer");
  std::vector<char> host(bytes, 1);
  check(clSetKernelArg(kernel, 0, sizeof data, &data), "clSetKernelArg");

  auto spin = [&](int rounds, size_t global) {
    return [&, rounds, global](cl_event* event) {
      check(clSetKernelArg(kernel, 1, sizeof rounds, &rounds), "clSetKernelArg");
      check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, event),
            "clEnqueueNDRangeKernel");
    };
  };
  auto write = [&](cl_event* event) {
    check(clEnqueueWriteBuffer(queue, data, CL_FALSE, 0, bytes, host.data(), 0, nullptr, event),
          "clEnqueueWriteBuffer");
  };
  struct command {
    const char* name;
    std::function<void(cl_event*)> enqueue;
  };
  // A marker behind a kernel, as a remote clFinish is: is it seen ended as
  // soon as the kernel is?
  auto marker_after = [&](int rounds) {
    return [&, rounds](cl_event* event) {
      spin(rounds, items)(nullptr);
      check(clEnqueueMarkerWithWaitList(queue, 0, nullptr, event), "clEnqueueMarkerWithWaitList");
    };
  };
  const command commands[] = {
      {"short_kernel", spin(1, 1)},
      {"long_kernel", spin(spin_rounds, items)},
      {"marker_after_long_kernel", marker_after(spin_rounds)},
      {"kernel_10x_longer", spin(10 * spin_rounds, items)},
      {"marker_after_10x_longer_kernel", marker_after(10 * spin_rounds)},
      {"write_1MiB", write},
  };
  for (const command& c : commands) {
    for (int i = 0; i < 3; ++i) one_round(queue, c.enqueue, how::wait);  // warm-up
    std::string line = std::string("completions native ") + c.name;
    for (how h : {how::wait, how::poll, how::paced, how::callback}) {
      std::vector<double> us;
      for (int i = 0; i < repeats; ++i) us.push_back(one_round(queue, c.enqueue, h));
      char figure[64];
      std::snprintf(figure, sizeof figure, " %s_us=%.1f", name_of(h), median_of(us));
      line += figure;
    }
    std::printf("%s repeats=%d\n", line.c_str(), repeats);
    std::fflush(stdout);
  }
  clReleaseMemObject(data);
  clReleaseCommandQueue(queue);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string platform;
  int repeats = 50, spin_rounds = 20000;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&] { return ferry::bench::native::option_value("ferry_bench_native_completions", argc, argv, i); };
    if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: ferry_bench_native_completions [--platform NAME] [--repeats N] [--spin N]\n"
          "How a native OpenCL platform reports a command's end: medians, in microseconds from\n"
          "the enqueue, of clWaitForEvents returning (wait), clGetEventInfo first saying\n"
          "CL_COMPLETE (poll) and the CL_COMPLETE callback running (callback), for a short\n"
          "kernel, a longer one and a 1 MiB write. Native only (no Ferry, no daemon).\n"
          "  --platform NAME   part of the platform's name (default: the first platform)\n"
          "  --repeats N       rounds of each (default 50)\n"
          "  --spin N          loop rounds per work-item of the longer kernel, 262,144 items\n"
          "                    (default 20000: about 0.2 ms on an H100)\n"
          "  --bin-dir DIR     accepted and ignored (bench/gpu/run.sh passes it to every benchmark)\n");
      return 0;
    } else if (arg == "--platform" || arg == "--native-platform") {
      platform = value();
    } else if (arg == "--repeats" || arg == "--spin") {
      const char* text = value();
      char* end = nullptr;
      long n = std::strtol(text, &end, 10);
      if (*text == '\0' || *end != '\0' || n < 1 || n > 1000000) {
        std::fprintf(stderr, "ferry_bench_native_completions: bad value '%s' for %s: expected 1-1000000\n", text,
                     arg.c_str());
        return 2;
      }
      (arg == "--repeats" ? repeats : spin_rounds) = static_cast<int>(n);
    } else if (arg == "--bin-dir") {
      value();
    } else {
      std::fprintf(stderr, "ferry_bench_native_completions: unknown option '%s' (see --help)\n", arg.c_str());
      return 2;
    }
  }
  try {
    return run(platform, repeats, spin_rounds);
  } catch (const failure& f) {
    std::fprintf(stderr, "ferry_bench_native_completions: %s\n", f.what.c_str());
    return 1;
  }
}
