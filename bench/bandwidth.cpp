// Transfer bandwidth: blocking writes and reads of 4 KiB, 1 MiB, 64 MiB and 1 GiB (or of
// one size, --size).
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "bench_common.hpp"

namespace {

struct transfer_case {
  size_t bytes;
  std::string name;
  int default_repeats;
};

std::vector<transfer_case> default_cases() {
  return {{size_t{4} << 10, "4KiB", 50}, {size_t{1} << 20, "1MiB", 20}, {size_t{64} << 20, "64MiB", 5},
          {size_t{1} << 30, "1GiB", 3}};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::bench;
  bench_info info{"bandwidth", "MB/s of blocking clEnqueueWriteBuffer (+ clFinish) / clEnqueueReadBuffer.", -1,
                  "transfers per size (default 50 / 20 / 5 / 3 for 4 KiB / 1 MiB / 64 MiB / 1 GiB)"};
  info.takes_size = true;
  info.size_meaning = "bytes of one transfer size to measure instead of 4 KiB, 1 MiB, 64 MiB and 1 GiB";
  const options opts = parse_options(argc, argv, info);
  std::vector<transfer_case> cases = default_cases();
  if (opts.size > 0) cases = {{opts.size, size_label(opts.size), 5}};
  session s(opts, info);
  const int rc = s.run([&](target& t) {
    for (const transfer_case& c : cases) {
      const int repeats = opts.repeats > 0 ? opts.repeats : c.default_repeats;
      host_bytes src = allocate_host(c.bytes), dst = allocate_host(c.bytes);
      for (size_t i = 0; i < c.bytes; ++i) src[i] = static_cast<unsigned char>(i * 7 + (i >> 12));
      const mem_object buffer(t.context, CL_MEM_READ_WRITE, c.bytes);
      const cl_mem mem = buffer.get();
      // Warm-up, and proof that the bytes arrive intact.
      check(clEnqueueWriteBuffer(t.queue, mem, CL_TRUE, 0, c.bytes, src.get(), 0, nullptr, nullptr), "clEnqueueWriteBuffer");
      check(clEnqueueReadBuffer(t.queue, mem, CL_TRUE, 0, c.bytes, dst.get(), 0, nullptr, nullptr), "clEnqueueReadBuffer");
      if (std::memcmp(src.get(), dst.get(), c.bytes) != 0) throw bench_error("wrong result: " + c.name + " came back different");
      std::vector<double> write_mb_s, read_mb_s;
      for (int i = 0; i < repeats; ++i) {
        auto start = clock::now();
        check(clEnqueueWriteBuffer(t.queue, mem, CL_TRUE, 0, c.bytes, src.get(), 0, nullptr, nullptr), "clEnqueueWriteBuffer");
        // A blocking write may return once the data is copied out of `src`
        // (Ferry returns when it is on the wire); the figure counts until the
        // bytes are in the buffer, for native and Ferry alike.
        check(clFinish(t.queue), "clFinish");
        write_mb_s.push_back(static_cast<double>(c.bytes) / seconds_since(start) / 1e6);
        start = clock::now();
        check(clEnqueueReadBuffer(t.queue, mem, CL_TRUE, 0, c.bytes, dst.get(), 0, nullptr, nullptr), "clEnqueueReadBuffer");
        read_mb_s.push_back(static_cast<double>(c.bytes) / seconds_since(start) / 1e6);
      }
      for (auto [direction, values] : {std::pair{"write", &write_mb_s}, std::pair{"read", &read_mb_s}}) {
        const double med = median(*values);
        results::instance().record(t.label, std::string(direction) + "_" + c.name + "_mb_s", med);
        print_line("bandwidth", t.label,
                   std::string(direction) + " size=" + std::to_string(c.bytes) + " mb_s=" + format(med) +
                       " repeats=" + std::to_string(repeats));
      }
    }
  });
  // The ceiling of one byte stream on this machine, in the same run: what a
  // read over TCP can at best reach (two threads of one process, 8 MiB writes).
  if (opts.only != halves::native) {
    for (const transfer_case& c : cases) {
      const int repeats = opts.repeats > 0 ? opts.repeats : c.default_repeats;
      const std::vector<double> samples = tcp_stream_mb_s(c.bytes, repeats);
      if (samples.empty()) continue;
      print_line("bandwidth", "tcp",
                 "stream size=" + std::to_string(c.bytes) + " mb_s=" + format(median(samples)) +
                     " repeats=" + std::to_string(samples.size()) + " (loopback TCP stream between two threads)");
    }
  }
  // The ceiling of a copy through shared memory (the Unix socket's window): one
  // thread's memcpy between two touched host buffers of the transfer's size.
  if (opts.only != halves::native) {
    for (const transfer_case& c : cases) {
      const int repeats = opts.repeats > 0 ? opts.repeats : c.default_repeats;
      host_bytes from = allocate_host(c.bytes), to = allocate_host(c.bytes);
      std::memset(from.get(), 0x5a, c.bytes);
      std::memset(to.get(), 0, c.bytes);
      std::vector<double> samples;
      for (int i = 0; i < repeats; ++i) {
        const auto start = clock::now();
        std::memcpy(to.get(), from.get(), c.bytes);
        samples.push_back(static_cast<double>(c.bytes) / seconds_since(start) / 1e6);
      }
      if (to[c.bytes - 1] != 0x5a) throw bench_error("memcpy did not copy");
      print_line("bandwidth", "memcpy",
                 "copy size=" + std::to_string(c.bytes) + " mb_s=" + format(median(samples)) +
                     " repeats=" + std::to_string(samples.size()) + " (one thread's memcpy between two host buffers)");
    }
  }
  return rc;
}
