// Server-to-server bandwidth: 64 MiB and 256 MiB buffers moved between the devices of
// two servers (natively two devices of one context) with clEnqueueMigrateMemObjects,
// beside a raw TCP stream over loopback that moves the same bytes between two threads.
// The TCP samples are taken between Ferry's rounds, so that both see the same load on a
// shared machine.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

struct size_case {
  size_t bytes;
  std::string name;
};

// The source device writes one word before each migration: the runtime cannot know
// which bytes a kernel changed, so the whole buffer is out of date on the other device
// and must move.
constexpr const char* touch_source = "kernel void touch(global uint* x, uint value) { x[0] = value; }";
// Untimed rounds first, so that each side has allocated its copy before the clock runs.
constexpr int warmup_rounds = 2;

std::string size_name(size_t bytes) {
  return bytes % (size_t{1} << 20) == 0 ? std::to_string(bytes >> 20) + "MiB" : std::to_string(bytes) + "B";
}

cl_uint pattern_word(size_t i) { return static_cast<cl_uint>(i * 2654435761u + 12345u); }

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::bench;
  bench_info info{"migrate_bandwidth",
                  "MB/s of clEnqueueMigrateMemObjects moving a buffer between two servers (natively\n"
                  "two devices of one context), and of a loopback TCP stream moving the same bytes.",
                  5, "timed migrations per size, median"};
  info.devices = 2;
  info.takes_size = true;
  info.size_meaning = "bytes of the one buffer to move, a multiple of 4 (default: 64 MiB and 256 MiB)";
  const options opts = parse_options(argc, argv, info);
  if (opts.size % sizeof(cl_uint) != 0) {
    std::fprintf(stderr, "ferry_bench_migrate_bandwidth: --size must be a multiple of 4\n");
    return 2;
  }
  std::vector<size_case> cases;
  if (opts.size > 0)
    cases.push_back({opts.size, size_name(opts.size)});
  else
    cases = {{size_t{64} << 20, "64MiB"}, {size_t{256} << 20, "256MiB"}};
  const int repeats = opts.repeats > 0 ? opts.repeats : info.default_repeats;

  // TCP samples per case, taken between Ferry's timed rounds.
  std::map<std::string, std::vector<double>> tcp_samples;
  session s(opts, info);
  const int status = s.run([&](target& t) {
    cl_kernel touch = t.kernel(touch_source, "touch");
    for (const size_case& c : cases) {
      const size_t words = c.bytes / sizeof(cl_uint);
      host_bytes pattern = allocate_host(c.bytes);
      auto* pattern_words = reinterpret_cast<cl_uint*>(pattern.get());
      for (size_t i = 0; i < words; ++i) pattern_words[i] = pattern_word(i);
      const mem_object buffer(t.context, CL_MEM_READ_WRITE, c.bytes);
      check(clEnqueueWriteBuffer(t.queues[0], buffer.get(), CL_TRUE, 0, c.bytes, pattern.get(), 0, nullptr, nullptr),
            "clEnqueueWriteBuffer");
      check(clSetKernelArg(touch, 0, sizeof(cl_mem), buffer.address()), "clSetKernelArg");

      const size_t global = 1;
      const int total = warmup_rounds + repeats;
      std::vector<double> mb_s, us;
      for (int r = 0; r < total; ++r) {
        // Round r moves the buffer from device r % 2 to the other one.
        cl_command_queue source = t.queues[static_cast<size_t>(r % 2)];
        cl_command_queue destination = t.queues[static_cast<size_t>(1 - r % 2)];
        const cl_uint stamp = static_cast<cl_uint>(r + 1);
        check(clSetKernelArg(touch, 1, sizeof stamp, &stamp), "clSetKernelArg");
        event touched, moved;
        // The previous round's migration to this device has completed (waited for below).
        check(clEnqueueNDRangeKernel(source, touch, 1, nullptr, &global, nullptr, 0, nullptr, touched.out()),
              "clEnqueueNDRangeKernel");
        check(clWaitForEvents(1, touched.list()), "clWaitForEvents (touch)");
        const auto start = clock::now();
        check(clEnqueueMigrateMemObjects(destination, 1, buffer.address(), 0, 1, touched.list(), moved.out()),
              "clEnqueueMigrateMemObjects");
        // Timed until the migration's own event completes: the bytes are on the other device.
        check(clWaitForEvents(1, moved.list()), "clWaitForEvents (migration)");
        const double seconds = seconds_since(start);
        if (r >= warmup_rounds) {
          mb_s.push_back(static_cast<double>(c.bytes) / seconds / 1e6);
          us.push_back(seconds * 1e6);
          if (t.label == "ferry") {
            std::vector<double> one = tcp_stream_mb_s(c.bytes, 1);
            tcp_samples[c.name].insert(tcp_samples[c.name].end(), one.begin(), one.end());
          }
        }
      }

      // The buffer arrived intact every time: the last stamp, then the pattern.
      host_bytes back = allocate_host(c.bytes);
      check(clEnqueueReadBuffer(t.queues[static_cast<size_t>(1 - (total - 1) % 2)], buffer.get(), CL_TRUE, 0,
                                c.bytes, back.get(), 0, nullptr, nullptr),
            "clEnqueueReadBuffer");
      auto* back_words = reinterpret_cast<const cl_uint*>(back.get());
      if (back_words[0] != static_cast<cl_uint>(total))
        throw bench_error("wrong result: word 0 is " + std::to_string(back_words[0]) + " after " +
                          std::to_string(total) + " migrations, expected " + std::to_string(total));
      if (std::memcmp(back.get() + sizeof(cl_uint), pattern.get() + sizeof(cl_uint), c.bytes - sizeof(cl_uint)) != 0)
        throw bench_error("wrong result: the " + c.name + " buffer came back different");

      const double med = median(mb_s);
      results::instance().record(t.label, "mb_s_" + c.name, med);
      print_line("migrate_bandwidth", t.label,
                 "size=" + std::to_string(c.bytes) + " mb_s=" + format(med) + " median_us=" + format(median(us)) +
                     " repeats=" + std::to_string(repeats) + " peer_link=" + peer_path(t));
    }
  });

  // The ceiling of a byte stream on this machine, in the same run.
  for (const size_case& c : cases) {
    std::vector<double>& samples = tcp_samples[c.name];
    const bool interleaved = !samples.empty();
    if (!interleaved) samples = tcp_stream_mb_s(c.bytes, repeats);
    const double tcp = median(samples);
    print_line("migrate_bandwidth", "tcp",
               "size=" + std::to_string(c.bytes) + " mb_s=" + format(tcp) + " repeats=" + std::to_string(samples.size()) +
                   " (loopback TCP stream between two threads, 8 MiB writes" +
                   (interleaved ? ", between Ferry's rounds)" : ")"));
    if (auto ferry = results::instance().get("ferry", "mb_s_" + c.name); ferry && tcp > 0)
      print_line("migrate_bandwidth", "ratio",
                 "size=" + std::to_string(c.bytes) + " ferry/tcp=" + format(*ferry / tcp, 3) + " (target >= 0.70)");
  }
  return status;
}
