// Round-trip latency: one empty kernel and clFinish, timed per round.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "bench_common.hpp"

namespace {

constexpr int warmup_rounds = 100;
constexpr const char* source = "kernel void empty(void) {}";

// The floor any remote round trip stands on: 16 bytes there and back over a
// loopback TCP connection between two threads, timed the same way. On a
// virtual machine it swings with how deeply idle cores sleep, so it is
// printed beside the figures it explains.
double tcp_ping_pong_median_us(int rounds) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener, 1) != 0 || ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return -1;
  std::thread echo([listener] {
    int peer = ::accept(listener, nullptr, nullptr);
    char buffer[16];
    while (peer >= 0 && ::recv(peer, buffer, sizeof buffer, MSG_WAITALL) == sizeof buffer)
      if (::send(peer, buffer, sizeof buffer, MSG_NOSIGNAL) != sizeof buffer) break;
    if (peer >= 0) ::close(peer);
  });
  int client = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::vector<double> us;
  if (::connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    char buffer[16] = {};
    for (int i = 0; i < rounds + warmup_rounds; ++i) {
      const auto start = ferry::bench::clock::now();
      if (::send(client, buffer, sizeof buffer, MSG_NOSIGNAL) != sizeof buffer ||
          ::recv(client, buffer, sizeof buffer, MSG_WAITALL) != sizeof buffer)
        break;
      if (i >= warmup_rounds)
        us.push_back(std::chrono::duration<double, std::micro>(ferry::bench::clock::now() - start).count());
    }
  }
  ::close(client);
  echo.join();
  ::close(listener);
  return us.empty() ? -1 : ferry::bench::median(us);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::bench;
  const bench_info info{"noop", "Latency of one empty kernel + clFinish round trip.", 1000, "measured rounds"};
  const options opts = parse_options(argc, argv, info);
  session s(opts, info);
  const int rounds = opts.repeats > 0 ? opts.repeats : info.default_repeats;
  const int status = s.run([&](target& t) {
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
  ferry::bench::print_line("noop", "tcp-loopback", "median_us=" + ferry::bench::format(tcp_ping_pong_median_us(rounds)) +
                                                       " (16-byte ping-pong between two threads, the floor of a round trip)");
  return status;
}
