// A time step that waits for its kernel: one kernel of a chosen duration, then
// clFinish, many times over. This is how FluidX3D (the PoCL-R paper's own
// application) and most simulation loops run on one device: each step's
// kernel is long, and the host waits for it before the next. Through Ferry a
// step should cost the kernel plus one round trip (a noop's extra), no more:
// a completion that is noticed late adds to every step.
//
// The kernel spins a dependent chain of multiply-adds per work-item; its
// iteration count is calibrated on the first platform measured so that a
// batch of kernels takes the chosen time each, and the other platform runs
// the same count on the same device.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

using ferry::bench::bench_error;
using ferry::bench::check;
using ferry::bench::target;

constexpr const char* busy_source = R"CLC(
kernel void busy(global float* out, uint iterations) {
  float x = (float)get_global_id(0) * 1e-6f;
  for (uint i = 0; i < iterations; ++i) x = x * 0.9999999f + 1e-7f;
  out[get_global_id(0)] = x;
}
)CLC";

// Enough work-items to occupy every compute unit of a GPU a little and a CPU fully.
constexpr size_t work_items = 16384;
// Kernels per batch when calibrating: launches overlap, so a batch's time over
// its kernels is a kernel's duration.
constexpr int calibration_batch = 10;
// Untimed steps before each measured run.
constexpr int warmup_steps = 5;

struct busy_kernel {
  cl_kernel kernel = nullptr;
  cl_mem out = nullptr;
  ~busy_kernel() {
    if (out) clReleaseMemObject(out);
  }
};

void set_iterations(busy_kernel& k, cl_uint iterations) {
  check(clSetKernelArg(k.kernel, 1, sizeof iterations, &iterations), "clSetKernelArg");
}

void enqueue(cl_command_queue queue, const busy_kernel& k) {
  const size_t global = work_items;
  check(clEnqueueNDRangeKernel(queue, k.kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
        "clEnqueueNDRangeKernel");
}

// Microseconds per kernel of a batch at `iterations`, median of three batches.
double batch_kernel_us(cl_command_queue queue, busy_kernel& k, cl_uint iterations) {
  using namespace ferry::bench;
  set_iterations(k, iterations);
  std::vector<double> us;
  for (int b = 0; b < 3; ++b) {
    const auto start = clock::now();
    for (int i = 0; i < calibration_batch; ++i) enqueue(queue, k);
    check(clFinish(queue), "clFinish");
    us.push_back(microseconds_since(start) / calibration_batch);
  }
  return median(us);
}

// The iteration count whose kernels take `target_us` each: scaled from a
// first guess until a batch is within 3% (or 6 tries).
cl_uint calibrate(cl_command_queue queue, busy_kernel& k, double target_us) {
  cl_uint iterations = 1000;
  for (int attempt = 0; attempt < 6; ++attempt) {
    const double us = batch_kernel_us(queue, k, iterations);
    if (std::fabs(us - target_us) <= 0.03 * target_us) break;
    const double scaled = static_cast<double>(iterations) * target_us / std::max(us, 1.0);
    iterations = static_cast<cl_uint>(std::clamp(scaled, 1.0, 4.0e9));
  }
  return iterations;
}

// What the device says of a batch of kernels on a profiling queue: the
// median kernel's duration (END - START) and the median idle time between
// one kernel's end and the next one's start. A kernel that runs longer through
// Ferry than natively, or gaps that only Ferry has, are the device's share of
// what a step costs; the rest is in noticing the end.
struct device_profile {
  double kernel_us = 0;
  double gap_us = 0;
};

device_profile profile_batch(target& t, busy_kernel& k) {
  cl_int rc = CL_SUCCESS;
  const cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_command_queue queue = clCreateCommandQueueWithProperties(t.context, t.device, properties, &rc);
  check(rc, "clCreateCommandQueueWithProperties (profiling)");
  std::vector<cl_event> events(calibration_batch, nullptr);
  const size_t global = work_items;
  device_profile p;
  try {
    for (cl_event& e : events)
      check(clEnqueueNDRangeKernel(queue, k.kernel, 1, nullptr, &global, nullptr, 0, nullptr, &e),
            "clEnqueueNDRangeKernel (profiled)");
    check(clFinish(queue), "clFinish");
    std::vector<double> durations, gaps;
    cl_ulong previous_end = 0;
    for (cl_event e : events) {
      cl_ulong start = 0, end = 0;
      check(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr),
            "clGetEventProfilingInfo");
      check(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
            "clGetEventProfilingInfo");
      durations.push_back(static_cast<double>(end - start) / 1000.0);
      if (previous_end != 0) gaps.push_back((static_cast<double>(start) - static_cast<double>(previous_end)) / 1000.0);
      previous_end = end;
    }
    p.kernel_us = ferry::bench::median(durations);
    p.gap_us = ferry::bench::median(gaps);
  } catch (...) {
    for (cl_event e : events)
      if (e) clReleaseEvent(e);
    clReleaseCommandQueue(queue);
    throw;
  }
  for (cl_event e : events) clReleaseEvent(e);
  clReleaseCommandQueue(queue);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::bench;
  bench_info info{"kernel_step",
                  "Time steps of one kernel of a chosen duration followed by clFinish (the loop of\n"
                  "FluidX3D and most simulations); us per step natively and through Ferry, and\n"
                  "what Ferry adds per step.",
                  5, "timed runs per duration, median"};
  info.takes_commands = true;
  info.default_commands = 200;
  info.commands_meaning = "steps per timed run";
  info.takes_size = true;
  info.default_size = 0;
  info.size_meaning = "the kernel's duration in us (default: 100, 700, 2000 and 5000)";
  const options opts = parse_options(argc, argv, info);
  const int repeats = opts.repeats > 0 ? opts.repeats : info.default_repeats;
  const int steps = static_cast<int>(opts.commands);
  std::vector<double> durations_us = {100, 700, 2000, 5000};
  if (opts.size > 0) durations_us = {static_cast<double>(opts.size)};
  session s(opts, info);

  // Per duration: the iteration count, found on the first platform measured.
  std::vector<cl_uint> iterations(durations_us.size(), 0);
  const int status = s.run([&](target& t) {
    busy_kernel k;
    k.kernel = t.kernel(busy_source, "busy");
    cl_int rc = CL_SUCCESS;
    k.out = clCreateBuffer(t.context, CL_MEM_READ_WRITE, work_items * sizeof(float), nullptr, &rc);
    check(rc, "clCreateBuffer");
    check(clSetKernelArg(k.kernel, 0, sizeof k.out, &k.out), "clSetKernelArg");
    for (size_t d = 0; d < durations_us.size(); ++d) {
      if (iterations[d] == 0) iterations[d] = calibrate(t.queue, k, durations_us[d]);
      const double kernel_us = batch_kernel_us(t.queue, k, iterations[d]);
      const device_profile device = profile_batch(t, k);
      std::vector<double> per_step;
      for (int r = 0; r < repeats; ++r) {
        for (int i = 0; i < warmup_steps; ++i) {
          enqueue(t.queue, k);
          check(clFinish(t.queue), "clFinish");
        }
        const auto start = clock::now();
        for (int i = 0; i < steps; ++i) {
          enqueue(t.queue, k);
          check(clFinish(t.queue), "clFinish");
        }
        per_step.push_back(microseconds_since(start) / steps);
      }
      const double step_us = median(per_step);
      const std::string key = std::to_string(static_cast<long>(durations_us[d]));
      results::instance().record(t.label, "step_us_" + key, step_us);
      print_line("kernel_step", t.label,
                 "kernel_us=" + key + " iterations=" + std::to_string(iterations[d]) + " batch_kernel_us=" +
                     format(kernel_us) + " step_us=" + format(step_us) + " wait_us=" + format(step_us - kernel_us) +
                     " device_kernel_us=" + format(device.kernel_us) + " device_gap_us=" + format(device.gap_us) +
                     " steps=" + std::to_string(steps) + " repeats=" + std::to_string(repeats));
    }
    // ferryd builds every program with -cl-kernel-arg-info (to answer
    // clGetKernelArgInfo): the same kernel built so natively shows whether
    // that option alone changes the device's time.
    if (t.label == "native") {
      busy_kernel with_arg_info;
      with_arg_info.kernel = t.kernel(busy_source, "busy", "-cl-kernel-arg-info");
      with_arg_info.out = clCreateBuffer(t.context, CL_MEM_READ_WRITE, work_items * sizeof(float), nullptr, &rc);
      check(rc, "clCreateBuffer");
      check(clSetKernelArg(with_arg_info.kernel, 0, sizeof with_arg_info.out, &with_arg_info.out), "clSetKernelArg");
      for (size_t d = 0; d < durations_us.size(); ++d) {
        set_iterations(with_arg_info, iterations[d]);
        set_iterations(k, iterations[d]);
        const device_profile plain = profile_batch(t, k), info_built = profile_batch(t, with_arg_info);
        print_line("kernel_step", "native",
                   "kernel_us=" + std::to_string(static_cast<long>(durations_us[d])) +
                       " device_kernel_us=" + format(plain.kernel_us) +
                       " device_kernel_us_with_arg_info=" + format(info_built.kernel_us));
      }
    }
  });

  // What Ferry adds to a step, and the throughput a step loop keeps.
  for (double duration : durations_us) {
    const std::string key = std::to_string(static_cast<long>(duration));
    auto native = results::instance().get("native", "step_us_" + key);
    auto ferry = results::instance().get("ferry", "step_us_" + key);
    if (native && ferry && *ferry > 0)
      print_line("kernel_step", "ratio",
                 "kernel_us=" + key + " extra_us=" + format(*ferry - *native) +
                     " throughput=" + format(*native / *ferry, 3) +
                     " (targets: extra <= 30 us, >= 0.97)");
  }
  return status;
}
