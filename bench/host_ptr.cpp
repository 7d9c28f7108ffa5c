// CL_MEM_USE_HOST_PTR buffers of a lattice-Boltzmann-sized set (D3Q19, FP32, --size cells
// per side, 64 by default: 19.9 MB of distributions, 1 MB of densities, 3 MB of velocities,
// 0.26 MB of flags), one stand-in "stream_collide" kernel per step over all of them.
// Two programs:
//   shared: FluidX3D's pattern on CPU devices: kernel, clFinish, and the host reads the
//           results straight from host memory (no map). Through Ferry the client keeps the
//           host memory coherent (docs/extensions.md), which is what this measures.
//   mapped: the specification's pattern: kernel, map the densities for reading, unmap,
//           clFinish. Through Ferry its first map turns coherence off for the buffer, so it
//           should cost what it costs with FERRY_HOST_PTR=cached (run it both ways).
// Prints the median step in ms per program, native and Ferry from the same run.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

constexpr const char* lbm_source = R"CLC(
__kernel void stream_collide(__global float* fi, __global float* rho, __global float* u,
                             __global uchar* flags, uint n) {
  uint c = get_global_id(0);
  if (flags[c] & 1) return;
  float sum = 0.0f, ux = 0.0f, uy = 0.0f, uz = 0.0f;
  for (uint q = 0; q < 19; ++q) {
    float f = fi[q * n + c];
    sum += f;
    ux += f * (float)((int)(q % 3) - 1);
    uy += f * (float)((int)((q / 3) % 3) - 1);
    uz += f * (float)((int)(q / 9) - 1);
  }
  float w = sum / 19.0f;
  for (uint q = 0; q < 19; ++q) fi[q * n + c] += 0.1f * (w - fi[q * n + c]);
  rho[c] = sum;
  u[c] = ux / sum;
  u[n + c] = uy / sum;
  u[2 * n + c] = uz / sum;
}
)CLC";

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::bench;
  bench_info info{"host_ptr",
                  "A D3Q19 lattice-Boltzmann-sized set of CL_MEM_USE_HOST_PTR buffers, one kernel per step: "
                  "host memory read directly (shared) or through a map (mapped).",
                  20, "steps measured per program"};
  info.takes_size = true;
  info.default_size = 64;
  info.size_meaning = "lattice cells per side";
  const options opts = parse_options(argc, argv, info);
  const size_t side = opts.size > 0 ? opts.size : info.default_size;
  const int repeats = opts.repeats > 0 ? opts.repeats : info.default_repeats;
  const char* mode = std::getenv("FERRY_HOST_PTR");
  const std::string host_ptr_mode = mode && *mode ? mode : "auto";
  session s(opts, info);
  return s.run([&](target& t) {
    const cl_uint n = static_cast<cl_uint>(side * side * side);
    std::vector<host_bytes> memory;
    auto host = [&](size_t bytes) {
      memory.push_back(allocate_host(bytes));
      return memory.back().get();
    };
    auto* fi = reinterpret_cast<float*>(host(size_t{19} * n * sizeof(float)));
    auto* rho = reinterpret_cast<float*>(host(size_t{n} * sizeof(float)));
    auto* u = reinterpret_cast<float*>(host(size_t{3} * n * sizeof(float)));
    auto* flags = reinterpret_cast<unsigned char*>(host(n));
    cl_kernel k = t.kernel(lbm_source, "stream_collide");
    for (const char* program : {"shared", "mapped"}) {
      const bool mapped = std::strcmp(program, "mapped") == 0;
      for (size_t i = 0; i < size_t{19} * n; ++i) fi[i] = 1.0f + static_cast<float>((i * 7) % 13) / 13.0f;
      std::memset(rho, 0, size_t{n} * sizeof(float));
      std::memset(u, 0, size_t{3} * n * sizeof(float));
      for (cl_uint c = 0; c < n; ++c) flags[c] = c % 97 == 0 ? 1 : 0;  // a few solid cells
      const cl_mem_flags use = CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR;
      mem_object b_fi(t.context, use, size_t{19} * n * sizeof(float), fi);
      mem_object b_rho(t.context, use, size_t{n} * sizeof(float), rho);
      mem_object b_u(t.context, use, size_t{3} * n * sizeof(float), u);
      mem_object b_flags(t.context, use, n, flags);
      const cl_mem args[] = {b_fi.get(), b_rho.get(), b_u.get(), b_flags.get()};
      for (cl_uint a = 0; a < 4; ++a) check(clSetKernelArg(k, a, sizeof(cl_mem), &args[a]), "clSetKernelArg");
      check(clSetKernelArg(k, 4, sizeof n, &n), "clSetKernelArg");
      const size_t global = n;
      double checksum = 0;
      auto step = [&] {
        check(clEnqueueNDRangeKernel(t.queue, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
              "clEnqueueNDRangeKernel");
        if (mapped) {
          cl_int rc = CL_SUCCESS;
          auto* view = static_cast<float*>(clEnqueueMapBuffer(t.queue, b_rho.get(), CL_TRUE, CL_MAP_READ, 0,
                                                              size_t{n} * sizeof(float), 0, nullptr, nullptr, &rc));
          check(rc, "clEnqueueMapBuffer");
          checksum += view[1] + view[n / 2];
          check(clEnqueueUnmapMemObject(t.queue, b_rho.get(), view, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
          check(clFinish(t.queue), "clFinish");
        } else {
          check(clFinish(t.queue), "clFinish");
          checksum += rho[1] + rho[n / 2];  // straight from host memory
        }
      };
      step();  // warm-up: the first launch compiles, and the first map ends coherence
      std::vector<double> ms;
      for (int r = 0; r < repeats; ++r) {
        const auto start = clock::now();
        step();
        ms.push_back(microseconds_since(start) / 1000.0);
      }
      // The host memory holds the densities the device computed (checked against a read
      // into separate memory, which also ends Ferry's coherence for the buffer).
      std::vector<float> read(n);
      check(clEnqueueReadBuffer(t.queue, b_rho.get(), CL_TRUE, 0, size_t{n} * sizeof(float), read.data(), 0,
                                nullptr, nullptr),
            "clEnqueueReadBuffer");
      const bool expect_host_results = mapped || host_ptr_mode != "cached" || t.label == "native";
      if (expect_host_results && std::memcmp(read.data(), rho, size_t{n} * sizeof(float)) != 0)
        throw bench_error(std::string("wrong result: host memory of rho differs from the device's (") + program + ")");
      if (!(read[1] > 0.0f) || !std::isfinite(checksum)) throw bench_error("wrong result: no density computed");
      const double step_ms = median(ms);
      results::instance().record(t.label, std::string(program) + "_step_ms", step_ms);
      print_line("host_ptr", t.label,
                 std::string("program=") + program + " cells=" + std::to_string(n) + " host_ptr=" + host_ptr_mode +
                     " step_ms=" + format(step_ms) + " repeats=" + std::to_string(repeats));
    }
  });
}
