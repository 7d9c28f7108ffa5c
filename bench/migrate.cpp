// Migration latency: a 4-byte counter alternates between the devices of two servers
// (natively two devices of one context) and is incremented on each after it arrives;
// each clEnqueueMigrateMemObjects is timed from enqueue to completion. Ferry's own noop
// round trip, measured in the same run (one after each migration, so that both see the
// same load on a shared machine), is the yardstick: a migration between servers should
// cost at most two of them.
#include <algorithm>
#include <cstdio>

#include "bench_common.hpp"

namespace {

constexpr const char* increment_source = "kernel void increment(global uint* x) { x[0] += 1; }";
// Untimed rounds first (they also increment): first-use costs stay out of the figures.
constexpr int warmup_rounds = 10;
constexpr int noop_warmup_rounds = 100;

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::bench;
  bench_info info{"migrate",
                  "Latency of clEnqueueMigrateMemObjects of a 4-byte buffer between two servers\n"
                  "(natively two devices of one context), an increment kernel after each.",
                  1000, "timed migrations"};
  info.devices = 2;
  const options opts = parse_options(argc, argv, info);
  session s(opts, info);
  const int rounds = opts.repeats > 0 ? opts.repeats : info.default_repeats;
  return s.run([&](target& t) {
    cl_kernel increment = t.kernel(increment_source, "increment");
    cl_kernel empty = t.kernel(empty_kernel_source, "empty");
    empty_kernel_round_trips_us(t.queues[0], empty, noop_warmup_rounds, 0);
    const mem_object counter(t.context, CL_MEM_READ_WRITE, sizeof(cl_uint));
    check(clSetKernelArg(increment, 0, sizeof(cl_mem), counter.address()), "clSetKernelArg");
    const cl_uint zero = 0;
    check(clEnqueueWriteBuffer(t.queues[0], counter.get(), CL_TRUE, 0, sizeof zero, &zero, 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");

    const size_t global = 1;
    const int total = warmup_rounds + rounds;
    event previous;  // the last increment, on the other queue
    std::vector<double> us, noop_us;
    us.reserve(static_cast<size_t>(rounds));
    noop_us.reserve(static_cast<size_t>(rounds));
    for (int i = 0; i < total; ++i) {
      cl_command_queue queue = t.queues[static_cast<size_t>(i % 2)];
      event migrated;
      const auto start = clock::now();
      // The previous increment ran on the other device's queue, so it is named in the
      // wait list: in-order queues order nothing across queues.
      check(clEnqueueMigrateMemObjects(queue, 1, counter.address(), 0, previous.count(), previous.list(),
                                       migrated.out()),
            "clEnqueueMigrateMemObjects");
      // Timed until the migration's own event completes (clWaitForEvents), not clFinish:
      // the queue holds nothing else, and the event is what an application waits on.
      check(clWaitForEvents(1, migrated.list()), "clWaitForEvents (migration)");
      if (i >= warmup_rounds) us.push_back(microseconds_since(start));
      check(clEnqueueNDRangeKernel(queue, increment, 1, nullptr, &global, nullptr, 1, migrated.list(), previous.out()),
            "clEnqueueNDRangeKernel");
      // Outside the clock, so that the next migration's time is its own, not this kernel's.
      check(clWaitForEvents(1, previous.list()), "clWaitForEvents (increment)");
      // The yardstick: one empty kernel + clFinish on the first device.
      if (i >= warmup_rounds) {
        std::vector<double> one = empty_kernel_round_trips_us(t.queues[0], empty, 0, 1);
        noop_us.insert(noop_us.end(), one.begin(), one.end());
      }
    }

    // Every increment saw the one before it, wherever it ran.
    cl_uint value = 0;
    check(clEnqueueReadBuffer(t.queues[static_cast<size_t>((total - 1) % 2)], counter.get(), CL_TRUE, 0, sizeof value,
                              &value, previous.count(), previous.list(), nullptr),
          "clEnqueueReadBuffer");
    if (value != static_cast<cl_uint>(total))
      throw bench_error("wrong result: the counter is " + std::to_string(value) + " after " + std::to_string(total) +
                        " increments");

    const double med = median(us), avg = mean(us);
    results::instance().record(t.label, "median_us", med);
    results::instance().record(t.label, "mean_us", avg);
    print_line("migrate", t.label,
               "median_us=" + format(med) + " mean_us=" + format(avg) +
                   " min_us=" + format(*std::min_element(us.begin(), us.end())) +
                   " migrations=" + std::to_string(rounds) + " counter=" + std::to_string(value) +
                   " peer_link=" + peer_path(t));

    const double noop = median(noop_us);
    print_line("migrate", t.label,
               "noop_median_us=" + format(noop) + " migrate/noop=" + format(med / noop, 2) +
                   (t.label == "ferry" ? " (target <= 2)" : ""));
  });
}
