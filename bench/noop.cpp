// Round-trip latency: one empty kernel and clFinish, timed per round.
#include <algorithm>
#include <cstdio>

#include "bench_common.hpp"

namespace {

constexpr int warmup_rounds = 100;

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::bench;
  const bench_info info{"noop", "Latency of one empty kernel + clFinish round trip.", 1000, "measured rounds"};
  const options opts = parse_options(argc, argv, info);
  session s(opts, info);
  const int rounds = opts.repeats > 0 ? opts.repeats : info.default_repeats;
  const int status = s.run([&](target& t) {
    const std::vector<double> us =
        empty_kernel_round_trips_us(t.queue, t.kernel(empty_kernel_source, "empty"), warmup_rounds, rounds);
    const double med = median(us), avg = mean(us);
    results::instance().record(t.label, "median_us", med);
    results::instance().record(t.label, "mean_us", avg);
    print_line("noop", t.label,
               "median_us=" + format(med) + " mean_us=" + format(avg) + " min_us=" +
                   format(*std::min_element(us.begin(), us.end())) + " rounds=" + std::to_string(rounds));
  });
  // On a virtual machine the floor swings with how deeply idle cores sleep, so it is
  // printed beside the figures it explains.
  print_line("noop", "tcp-loopback", "median_us=" + format(tcp_ping_pong_median_us(rounds)) +
                                         " (16-byte ping-pong between two threads, the floor of a round trip)");
  return status;
}
