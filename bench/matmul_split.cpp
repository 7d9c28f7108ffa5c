// Work split over servers: C = A x B (square float matrices), the rows of A and C split
// evenly over 1, 2 and 3 servers (natively 1, 2 and 3 devices of one context). Each
// device gets its rows of A and all of B, computes its rows of C, and the client reads
// them back; timed from the first write to the last read.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>

#include "bench_common.hpp"

namespace {

constexpr size_t tile = 16;

// Square tiles of A and B through local memory; rows and columns past the edge read as
// zero, so any size works with a global size rounded up to the tile.
constexpr const char* matmul_source = R"CLC(
#define TILE 16
kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void matmul(global const float* a, global const float* b, global float* c, uint rows, uint n) {
  local float a_tile[TILE][TILE];
  local float b_tile[TILE][TILE];
  const uint col = get_global_id(0), row = get_global_id(1);
  const uint lx = get_local_id(0), ly = get_local_id(1);
  float sum = 0.0f;
  for (uint t = 0; t < n; t += TILE) {
    a_tile[ly][lx] = (row < rows && t + lx < n) ? a[row * n + t + lx] : 0.0f;
    b_tile[ly][lx] = (t + ly < n && col < n) ? b[(t + ly) * n + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < TILE; ++k) sum += a_tile[ly][k] * b_tile[k][lx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < rows && col < n) c[row * n + col] = sum;
}
)CLC";

// One device's share: rows [first_row, first_row + rows) of A and C.
struct share {
  size_t first_row = 0;
  size_t rows = 0;
  std::unique_ptr<ferry::bench::mem_object> a, b, c;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::bench;
  bench_info info{"matmul_split",
                  "C = A x B (float, N x N) with the rows of A and C split over 1, 2 and 3 servers\n"
                  "(natively 1, 2 and 3 devices of one context); first write to last read.",
                  3, "timed runs per split, median"};
  info.devices = 3;
  info.takes_size = true;
  info.default_size = 2048;
  info.size_meaning = "N, the matrices' side";
  const options opts = parse_options(argc, argv, info);
  session s(opts, info);
  const size_t n = opts.size;
  const int repeats = opts.repeats > 0 ? opts.repeats : info.default_repeats;

  std::vector<float> a(n * n), b(n * n), c(n * n);
  std::mt19937 random(7);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (float& x : a) x = value(random);
  for (float& x : b) x = value(random);

  return s.run([&](target& whole) {
    const char* unit = whole.label == "ferry" ? "servers" : "devices";
    double single_ms = 0;
    for (size_t parts = 1; parts <= whole.devices.size(); ++parts) {
      std::unique_ptr<target> t = whole.first(parts);
      cl_kernel kernel = t->kernel(matmul_source, "matmul");
      std::vector<share> shares(parts);
      for (size_t d = 0, row = 0; d < parts; ++d) {
        share& sh = shares[d];
        sh.first_row = row;
        sh.rows = n / parts + (d < n % parts ? 1 : 0);
        row += sh.rows;
        // A device with no rows (N below the split) still gets a 1-float buffer: size 0 is an error.
        const size_t share_bytes = std::max<size_t>(sh.rows * n, 1) * sizeof(float);
        sh.a = std::make_unique<mem_object>(t->context, CL_MEM_READ_ONLY, share_bytes);
        sh.b = std::make_unique<mem_object>(t->context, CL_MEM_READ_ONLY, n * n * sizeof(float));
        sh.c = std::make_unique<mem_object>(t->context, CL_MEM_WRITE_ONLY, share_bytes);
      }
      auto run_once = [&] {
        for (size_t d = 0; d < parts; ++d) {
          const share& sh = shares[d];
          if (sh.rows == 0) continue;
          cl_command_queue queue = t->queues[d];
          const size_t bytes = sh.rows * n * sizeof(float);
          check(clEnqueueWriteBuffer(queue, sh.a->get(), CL_FALSE, 0, bytes, &a[sh.first_row * n], 0, nullptr,
                                     nullptr),
                "clEnqueueWriteBuffer (A)");
          check(clEnqueueWriteBuffer(queue, sh.b->get(), CL_FALSE, 0, n * n * sizeof(float), b.data(), 0, nullptr,
                                     nullptr),
                "clEnqueueWriteBuffer (B)");
          // Arguments are captured at enqueue, so one kernel serves every device in turn.
          const cl_uint rows = static_cast<cl_uint>(sh.rows), side = static_cast<cl_uint>(n);
          check(clSetKernelArg(kernel, 0, sizeof(cl_mem), sh.a->address()), "clSetKernelArg");
          check(clSetKernelArg(kernel, 1, sizeof(cl_mem), sh.b->address()), "clSetKernelArg");
          check(clSetKernelArg(kernel, 2, sizeof(cl_mem), sh.c->address()), "clSetKernelArg");
          check(clSetKernelArg(kernel, 3, sizeof rows, &rows), "clSetKernelArg");
          check(clSetKernelArg(kernel, 4, sizeof side, &side), "clSetKernelArg");
          const size_t global[2] = {round_up(n, tile), round_up(sh.rows, tile)};
          const size_t local[2] = {tile, tile};
          check(clEnqueueNDRangeKernel(queue, kernel, 2, nullptr, global, local, 0, nullptr, nullptr),
                "clEnqueueNDRangeKernel");
          check(clEnqueueReadBuffer(queue, sh.c->get(), CL_FALSE, 0, bytes, &c[sh.first_row * n], 0, nullptr,
                                    nullptr),
                "clEnqueueReadBuffer (C)");
          // Starts this device's work before the next device's is enqueued.
          check(clFlush(queue), "clFlush");
        }
        for (cl_command_queue queue : t->queues) check(clFinish(queue), "clFinish");
      };

      // One untimed run: PoCL compiles a kernel for its work-group size on first use.
      run_once();
      std::vector<double> ms;
      for (int r = 0; r < repeats; ++r) {
        // Outside the clock: an entry that no read filled stays NaN and fails the check.
        std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
        const auto start = clock::now();
        run_once();
        ms.push_back(seconds_since(start) * 1e3);
      }
      check_matrix_product(a, b, c, n, n);

      const double med = median(ms);
      if (parts == 1) single_ms = med;
      const double gflop_s = 2.0 * static_cast<double>(n) * n * n / (med * 1e-3) / 1e9;
      results::instance().record(whole.label, "ms_" + std::to_string(parts), med);
      print_line("matmul_split", whole.label,
                 std::string(unit) + "=" + std::to_string(parts) + " n=" + std::to_string(n) + " ms=" + format(med) +
                     " speedup=" + format(single_ms / med, 2) + " gflop_s=" + format(gflop_s, 2) +
                     " repeats=" + std::to_string(repeats) + " checked=" + (checks_every_entry(n) ? "all" : "sampled"));
    }
  });
}
