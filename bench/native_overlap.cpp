// What a native platform runs at the same time: a long kernel on one queue and
// a transfer on a second queue of the same device. An overlapped halo exchange
// (bench/stencil.cpp, "overlap") and every migration ferryd lands through its
// own queue count on the copy running while the kernel does; this says, per
// kind of transfer, whether the platform lets it.
//
// For each transfer it measures, in microseconds from the first enqueue:
//   alone      the transfer by itself,
//   kernel     the kernel by itself,
//   together   kernel (queue A, flushed first) and transfer (queue B) both ended,
//   done       the transfer's end in that run: near `alone` when it ran beside
//              the kernel, near `kernel + alone` when it waited for it.
// Native only: Ferry is not involved, and no daemon is started.
//
//   ferry_bench_native_overlap [--platform NAME] [--repeats N] [--size BYTES] [--kernel-us US]
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "native_device.hpp"

namespace {

using ferry::bench::native::check;
using ferry::bench::native::failure;
using clock_type = std::chrono::steady_clock;

double us_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}


constexpr size_t kernel_items = 1 << 16;

struct figures {
  double alone = 0, kernel = 0, together = 0, done = 0;
};

int run(const std::string& platform_name, int repeats, size_t bytes, double kernel_target_us) {
  ferry::bench::native::device d(platform_name);
  std::fprintf(stderr, "ferry_bench_native_overlap: %s / %s\n", d.platform_name.c_str(), d.device_name.c_str());
  cl_int error = CL_SUCCESS;
  cl_command_queue kernels = clCreateCommandQueueWithProperties(d.context, d.id, nullptr, &error);
  check(error, "clCreateCommandQueueWithProperties");
  cl_command_queue copies = clCreateCommandQueueWithProperties(d.context, d.id, nullptr, &error);
  check(error, "clCreateCommandQueueWithProperties");
  cl_kernel kernel = d.kernel(ferry::bench::native::spin_kernel_source, "spin");
  cl_mem spun = clCreateBuffer(d.context, CL_MEM_READ_WRITE, kernel_items * sizeof(float), nullptr, &error);
  check(error, "clCreateBuffer");
  check(clSetKernelArg(kernel, 0, sizeof spun, &spun), "clSetKernelArg");
  cl_mem device_side = clCreateBuffer(d.context, CL_MEM_READ_WRITE, bytes, nullptr, &error);
  check(error, "clCreateBuffer");
  cl_mem device_copy = clCreateBuffer(d.context, CL_MEM_READ_WRITE, bytes, nullptr, &error);
  check(error, "clCreateBuffer");
  // Page-locked host memory, the way OpenCL gives it: a host-allocated buffer, mapped.
  cl_mem pinned_buffer = clCreateBuffer(d.context, CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &error);
  check(error, "clCreateBuffer (CL_MEM_ALLOC_HOST_PTR)");
  void* pinned = clEnqueueMapBuffer(copies, pinned_buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                    nullptr, nullptr, &error);
  check(error, "clEnqueueMapBuffer (pinned)");
  std::vector<char> pageable(bytes, 1);
  std::memset(pinned, 1, bytes);

  int rounds = 1000;
  auto enqueue_kernel = [&](cl_event* event) {
    check(clSetKernelArg(kernel, 1, sizeof rounds, &rounds), "clSetKernelArg");
    check(clEnqueueNDRangeKernel(kernels, kernel, 1, nullptr, &kernel_items, nullptr, 0, nullptr, event),
          "clEnqueueNDRangeKernel");
  };
  auto kernel_alone = [&] {
    const auto start = clock_type::now();
    enqueue_kernel(nullptr);
    check(clFinish(kernels), "clFinish");
    return us_since(start);
  };
  // The spin count whose kernel takes about kernel_target_us.
  for (int attempt = 0; attempt < 8; ++attempt) {
    kernel_alone();
    const double us = kernel_alone();
    if (std::abs(us - kernel_target_us) < 0.05 * kernel_target_us) break;
    rounds = static_cast<int>(std::clamp(rounds * kernel_target_us / std::max(us, 1.0), 1.0, 2.0e9));
  }

  using transfer = std::function<void(cl_event*)>;
  auto map_then_unmap = [&](cl_map_flags flags) {
    return [&, flags](cl_event* event) {
      cl_int rc = CL_SUCCESS;
      void* p = clEnqueueMapBuffer(copies, device_side, CL_FALSE, flags, 0, bytes, 0, nullptr, nullptr, &rc);
      check(rc, "clEnqueueMapBuffer");
      check(clEnqueueUnmapMemObject(copies, device_side, p, 0, nullptr, event), "clEnqueueUnmapMemObject");
    };
  };
  const std::pair<const char*, transfer> transfers[] = {
      {"read_pageable",
       [&](cl_event* e) {
         check(clEnqueueReadBuffer(copies, device_side, CL_FALSE, 0, bytes, pageable.data(), 0, nullptr, e),
               "clEnqueueReadBuffer");
       }},
      {"read_pinned",
       [&](cl_event* e) {
         check(clEnqueueReadBuffer(copies, device_side, CL_FALSE, 0, bytes, pinned, 0, nullptr, e),
               "clEnqueueReadBuffer");
       }},
      {"write_pageable",
       [&](cl_event* e) {
         check(clEnqueueWriteBuffer(copies, device_side, CL_FALSE, 0, bytes, pageable.data(), 0, nullptr, e),
               "clEnqueueWriteBuffer");
       }},
      {"write_pinned",
       [&](cl_event* e) {
         check(clEnqueueWriteBuffer(copies, device_side, CL_FALSE, 0, bytes, pinned, 0, nullptr, e),
               "clEnqueueWriteBuffer");
       }},
      {"map_read_unmap", map_then_unmap(CL_MAP_READ)},
      {"map_write_invalidate_unmap", map_then_unmap(CL_MAP_WRITE_INVALIDATE_REGION)},
      {"copy_buffer",
       [&](cl_event* e) {
         check(clEnqueueCopyBuffer(copies, device_side, device_copy, 0, 0, bytes, 0, nullptr, e),
               "clEnqueueCopyBuffer");
       }},
  };
  for (const auto& [name, enqueue_transfer] : transfers) {
    auto transfer_alone = [&] {
      const auto start = clock_type::now();
      enqueue_transfer(nullptr);
      check(clFinish(copies), "clFinish");
      return us_since(start);
    };
    auto both = [&](double& done) {
      const auto start = clock_type::now();
      enqueue_kernel(nullptr);
      check(clFlush(kernels), "clFlush");
      cl_event ended = nullptr;
      enqueue_transfer(&ended);
      check(clFlush(copies), "clFlush");
      check(clWaitForEvents(1, &ended), "clWaitForEvents");
      done = us_since(start);
      clReleaseEvent(ended);
      check(clFinish(kernels), "clFinish");
      return us_since(start);
    };
    transfer_alone();  // warm-up
    double ignored = 0;
    both(ignored);
    std::vector<double> alone, kernel_only, together, done;
    for (int i = 0; i < repeats; ++i) {
      alone.push_back(transfer_alone());
      kernel_only.push_back(kernel_alone());
      double d_us = 0;
      together.push_back(both(d_us));
      done.push_back(d_us);
    }
    figures f{median_of(alone), median_of(kernel_only), median_of(together), median_of(done)};
    // Ran beside the kernel: it ended nearer its own time than the kernel's plus its own.
    const bool overlapped = f.done < f.alone + 0.5 * f.kernel;
    std::printf("overlap native %s bytes=%zu alone_us=%.1f kernel_us=%.1f together_us=%.1f done_us=%.1f overlapped=%s "
                "repeats=%d\n",
                name, bytes, f.alone, f.kernel, f.together, f.done, overlapped ? "yes" : "no", repeats);
    std::fflush(stdout);
  }
  check(clEnqueueUnmapMemObject(copies, pinned_buffer, pinned, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
  check(clFinish(copies), "clFinish");
  clReleaseMemObject(pinned_buffer);
  clReleaseMemObject(device_copy);
  clReleaseMemObject(device_side);
  clReleaseMemObject(spun);
  clReleaseCommandQueue(copies);
  clReleaseCommandQueue(kernels);
  return 0;
}

void usage(FILE* to) {
  std::fprintf(to,
               "usage: ferry_bench_native_overlap [--platform NAME] [--repeats N] [--size BYTES] [--kernel-us US]\n"
               "Whether a transfer on a second queue runs while a kernel runs on the first (same device),\n"
               "for reads, writes (pageable and page-locked host memory), maps and a device copy.\n"
               "Native only. Defaults: the first platform other than Ferry, 10 repeats, 4194304 bytes\n"
               "(a 1024^2 halo plane), a kernel of 2000 us. --bin-dir DIR is accepted and ignored\n"
               "(bench/gpu/run.sh passes it to every benchmark).\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string platform;
  int repeats = 10;
  size_t bytes = size_t{4} << 20;
  double kernel_us = 2000;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&] { return ferry::bench::native::option_value("ferry_bench_native_overlap", argc, argv, i); };
    auto number = [&](const char* text, double low, double high) {
      char* end = nullptr;
      const double v = std::strtod(text, &end);
      if (end == text || *end != '\0' || !(v >= low && v <= high)) {
        std::fprintf(stderr, "ferry_bench_native_overlap: %s takes a number from %.0f to %.0f, not '%s'\n",
                     arg.c_str(), low, high, text);
        std::exit(2);
      }
      return v;
    };
    if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    } else if (arg == "--platform" || arg == "--native-platform") {
      platform = value();
    } else if (arg == "--bin-dir") {
      value();  // bench/gpu/run.sh passes it to every benchmark
    } else if (arg == "--repeats") {
      repeats = static_cast<int>(number(value(), 1, 100000));
    } else if (arg == "--size") {
      bytes = static_cast<size_t>(number(value(), 4, 4.0 * (1ull << 30)));
    } else if (arg == "--kernel-us") {
      kernel_us = number(value(), 10, 1e7);
    } else {
      std::fprintf(stderr, "ferry_bench_native_overlap: unknown argument '%s'\n", arg.c_str());
      usage(stderr);
      return 2;
    }
  }
  try {
    return run(platform, repeats, bytes, kernel_us);
  } catch (const failure& f) {
    std::fprintf(stderr, "ferry_bench_native_overlap: %s\n", f.what.c_str());
    return 1;
  }
}
