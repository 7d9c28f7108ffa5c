// Recovery after a lost link: the fault proxy (tools/faultproxy) sits between libferry and
// its ferryd; each round cuts the link and keeps it down for a while (the proxy refuses
// connections), then lets connections through again and times how long it takes until a
// command completes: the client's next reconnection attempt, the resumption handshake,
// the replay, and one empty kernel with clFinish.
//
// The native half has no link to lose: it times one empty kernel + clFinish, the cost of
// that last step alone, so the ratio says how many plain round trips a recovery costs.
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.hpp"
#include "faultproxy/fault_proxy.hpp"
#include "process.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

constexpr auto link_down_for = std::chrono::milliseconds(50);

bool device_available(cl_device_id device) {
  cl_bool available = CL_FALSE;
  clGetDeviceInfo(device, CL_DEVICE_AVAILABLE, sizeof available, &available, nullptr);
  return available == CL_TRUE;
}

// One round: cut, wait until the client has noticed, keep the link down, restore it and
// time until an empty kernel completes. Microseconds.
double recovery_us(ferry::tools::fault_proxy& proxy, ferry::bench::target& t, cl_kernel kernel) {
  using ferry::bench::bench_error;
  proxy.refuse(true);
  proxy.cut();
  const auto noticed_by = clock_type::now() + std::chrono::seconds(10);
  while (device_available(t.device)) {
    if (clock_type::now() > noticed_by) throw bench_error("the client did not notice the cut");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::this_thread::sleep_for(link_down_for);
  const size_t one = 1;
  const auto restored = clock_type::now();
  proxy.refuse(false);
  const auto give_up = restored + std::chrono::seconds(30);
  for (;;) {
    // New commands are refused until the session is back; an application retries.
    const cl_int rc = clEnqueueNDRangeKernel(t.queue, kernel, 1, nullptr, &one, nullptr, 0, nullptr, nullptr);
    if (rc == CL_SUCCESS) break;
    if (rc != CL_DEVICE_NOT_AVAILABLE) ferry::bench::check(rc, "clEnqueueNDRangeKernel");
    if (clock_type::now() > give_up) throw bench_error("the session did not come back within 30 s");
    std::this_thread::yield();
  }
  ferry::bench::check(clFinish(t.queue), "clFinish");
  return std::chrono::duration<double, std::micro>(clock_type::now() - restored).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::bench;
  const bench_info info{"reconnect",
                        "Time from a lost link's return to the first completed command (fault proxy in "
                        "front of ferryd); natively, one empty kernel + clFinish.",
                        20, "cuts"};
  const options opts = parse_options(argc, argv, info);
  const int rounds = opts.repeats > 0 ? opts.repeats : info.default_repeats;

  // Our own daemon, behind the proxy; the session then finds FERRY_SERVERS set.
  std::unique_ptr<ferry::test::daemon_process> daemon;
  std::unique_ptr<ferry::tools::fault_proxy> proxy;
  if (opts.only != halves::native) {
    try {
      ferry::test::daemon_process::options d;
      d.binary = ferry::test::build_paths{opts.bin_dir}.ferryd();
      d.extra_args = {"--log-level", "error", "--device-type", "cpu"};
      daemon = ferry::test::daemon_process::start(d);
    } catch (const ferry::test::process_error& e) {
      std::fprintf(stderr, "reconnect: cannot start ferryd: %s\n", e.what());
      return 1;
    }
    proxy = std::make_unique<ferry::tools::fault_proxy>("127.0.0.1", daemon->port());
    std::string error;
    if (!proxy->start(error)) {
      std::fprintf(stderr, "reconnect: cannot start the fault proxy: %s\n", error.c_str());
      return 1;
    }
    ::setenv("FERRY_SERVERS", ("127.0.0.1:" + std::to_string(proxy->port())).c_str(), 1);
  }
  session s(opts, info);
  return s.run([&](target& t) {
    cl_kernel kernel = t.kernel(empty_kernel_source, "empty");
    std::vector<double> us;
    if (t.label == "native") {
      us = empty_kernel_round_trips_us(t.queue, kernel, 100, rounds);
    } else {
      // Warm the session up first: the measured recovery should not include a first build.
      empty_kernel_round_trips_us(t.queue, kernel, 10, 10);
      for (int i = 0; i < rounds; ++i) us.push_back(recovery_us(*proxy, t, kernel));
    }
    const double med = median(us);
    results::instance().record(t.label, "median_us", med);
    print_line("reconnect", t.label,
               "median_us=" + format(med) + " max_us=" + format(*std::max_element(us.begin(), us.end())) +
                   " rounds=" + std::to_string(rounds) +
                   (t.label == "native" ? " (one empty kernel + clFinish)"
                                        : " (link restored -> first completed command; link down " +
                                              std::to_string(link_down_for.count()) + " ms each)"));
  });
}
