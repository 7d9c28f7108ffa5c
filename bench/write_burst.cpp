// Back-to-back non-blocking writes: 8 buffers of 16 MiB each (or --size bytes), written
// with CL_FALSE one after another and then one clFinish. A non-blocking write must return
// once its bytes are queued; if each waited for the server's acknowledgement, the burst
// would pay a network round trip per write on the application's thread. Prints the time
// until the last enqueue returned (enqueue_ms) and until clFinish returned (MB/s), native
// and Ferry from the same run.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"

int main(int argc, char** argv) {
  using namespace ferry::bench;
  bench_info info{"write_burst", "8 non-blocking clEnqueueWriteBuffer of 16 MiB, then one clFinish.", 10,
                  "bursts measured"};
  info.takes_size = true;
  info.default_size = size_t{16} << 20;
  info.size_meaning = "bytes of each of the 8 writes";
  const options opts = parse_options(argc, argv, info);
  const size_t bytes = opts.size > 0 ? opts.size : info.default_size;
  constexpr int buffers = 8;
  const int repeats = opts.repeats > 0 ? opts.repeats : info.default_repeats;
  session s(opts, info);
  return s.run([&](target& t) {
    std::vector<host_bytes> sources;
    std::vector<std::unique_ptr<mem_object>> targets;
    for (int b = 0; b < buffers; ++b) {
      sources.push_back(allocate_host(bytes));
      for (size_t i = 0; i < bytes; ++i) sources.back()[i] = static_cast<unsigned char>(i * 7 + b * 31 + (i >> 12));
      targets.push_back(std::make_unique<mem_object>(t.context, CL_MEM_READ_WRITE, bytes));
    }
    auto burst = [&] {
      for (int b = 0; b < buffers; ++b)
        check(clEnqueueWriteBuffer(t.queue, targets[b]->get(), CL_FALSE, 0, bytes, sources[b].get(), 0, nullptr,
                                   nullptr),
              "clEnqueueWriteBuffer");
    };
    // Warm-up, and proof that every buffer holds its own bytes.
    burst();
    check(clFinish(t.queue), "clFinish");
    host_bytes back = allocate_host(bytes);
    for (int b = 0; b < buffers; ++b) {
      check(clEnqueueReadBuffer(t.queue, targets[b]->get(), CL_TRUE, 0, bytes, back.get(), 0, nullptr, nullptr),
            "clEnqueueReadBuffer");
      if (std::memcmp(back.get(), sources[b].get(), bytes) != 0)
        throw bench_error("wrong result: buffer " + std::to_string(b) + " came back different");
    }
    std::vector<double> enqueue_ms, mb_s;
    for (int r = 0; r < repeats; ++r) {
      const auto start = clock::now();
      burst();
      enqueue_ms.push_back(microseconds_since(start) / 1000.0);
      check(clFinish(t.queue), "clFinish");
      mb_s.push_back(static_cast<double>(bytes) * buffers / seconds_since(start) / 1e6);
    }
    const double enqueue = median(enqueue_ms), rate = median(mb_s);
    results::instance().record(t.label, "enqueue_ms", enqueue);
    results::instance().record(t.label, "mb_s", rate);
    print_line("write_burst", t.label,
               "writes=" + std::to_string(buffers) + " size=" + std::to_string(bytes) + " enqueue_ms=" +
                   format(enqueue) + " mb_s=" + format(rate) + " repeats=" + std::to_string(repeats));
  });
}
