// Round-trip latency: one empty kernel and clFinish, timed per round.
#include <algorithm>
#include <cstdio>

#include "bench_common.hpp"

namespace {

constexpr int warmup_rounds = 100;
constexpr const char* source = "kernel void empty(void) {}";

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::bench;
  const bench_info info{"noop", "Latency of one empty kernel + clFinish round trip.", 1000, "measured rounds"};
  const options opts = parse_options(argc, argv, info);
  session s(opts, info);
  const int rounds = opts.repeats > 0 ? opts.repeats : info.default_repeats;
  return s.run([&](target& t) {
    cl_kernel kernel = t.kernel(source, "empty");
    const size_t global = 1;
    auto round = [&] {
      check(clEnqueueNDRangeKernel(t.queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            "clEnqueueNDRangeKernel");
      check(clFinish(t.queue), "clFinish");
    };
    for (int i = 0; i < warmup_rounds; ++i) round();
    std::vector<double> us;
    us.reserve(static_cast<size_t>(rounds));
    for (int i = 0; i < rounds; ++i) {
      const auto start = clock::now();
      round();
      us.push_back(std::chrono::duration<double, std::micro>(clock::now() - start).count());
    }
    const double med = median(us), avg = mean(us);
    results::instance().record(t.label, "median_us", med);
    results::instance().record(t.label, "mean_us", avg);
    print_line("noop", t.label,
               "median_us=" + format(med) + " mean_us=" + format(avg) + " min_us=" +
                   format(*std::min_element(us.begin(), us.end())) + " rounds=" + std::to_string(rounds));
  });
}
