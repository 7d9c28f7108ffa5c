// Command throughput: many small kernels into one in-order queue, then one clFinish.
#include <cstdio>

#include "bench_common.hpp"

namespace {

constexpr const char* source = "kernel void add_one(global int* x) { x[get_global_id(0)] += 1; }";

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::bench;
  bench_info info{"throughput", "Commands per second: N small kernels, one clFinish.", 5, "timed runs",
                  /*takes_commands=*/true, /*default_commands=*/100000};
  const options opts = parse_options(argc, argv, info);
  session s(opts, info);
  const int runs = opts.repeats > 0 ? opts.repeats : info.default_repeats;
  return s.run([&](target& t) {
    cl_kernel kernel = t.kernel(source, "add_one");
    const mem_object counter(t.context, CL_MEM_READ_WRITE, sizeof(cl_int));
    check(clSetKernelArg(kernel, 0, sizeof(cl_mem), counter.address()), "clSetKernelArg");
    const size_t global = 1;
    std::vector<double> per_second;
    for (int run = 0; run < runs; ++run) {
      const cl_int zero = 0;
      check(clEnqueueWriteBuffer(t.queue, counter.get(), CL_TRUE, 0, sizeof zero, &zero, 0, nullptr, nullptr),
            "clEnqueueWriteBuffer");
      const auto start = clock::now();
      for (size_t i = 0; i < opts.commands; ++i)
        check(clEnqueueNDRangeKernel(t.queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
              "clEnqueueNDRangeKernel");
      check(clFinish(t.queue), "clFinish");
      const double seconds = std::chrono::duration<double>(clock::now() - start).count();
      per_second.push_back(static_cast<double>(opts.commands) / seconds);
      // Every kernel ran, in order: the counter says so.
      cl_int value = -1;
      check(clEnqueueReadBuffer(t.queue, counter.get(), CL_TRUE, 0, sizeof value, &value, 0, nullptr, nullptr),
            "clEnqueueReadBuffer");
      if (value != static_cast<cl_int>(opts.commands))
        throw bench_error("counter is " + std::to_string(value) + " after " + std::to_string(opts.commands) +
                          " kernels");
    }
    const double med = median(per_second);
    results::instance().record(t.label, "commands_per_s", med);
    print_line("throughput", t.label,
               "commands_per_s=" + format(med, 0) + " commands=" + std::to_string(opts.commands) +
                   " runs=" + std::to_string(runs));
  });
}
