// Compute-bound work end to end: C = A x B (square float matrices, row-major) on one
// device, --commands kernels back to back and one clFinish per timed run. At the
// default size a run takes tens of milliseconds on a GPU, long enough for Ferry's
// per-command and round-trip costs to vanish into it: the figure to hold within 2% of
// native.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>

#include "bench_common.hpp"

namespace {

// A work-group of group x group work-items computes a tile x tile block of C, each
// work-item an 8 x 8 block of it. The host pads the matrices with zeros to a multiple
// of `tile`, so the kernel needs no edge checks and every row starts float4-aligned.
constexpr size_t group = 16;
constexpr size_t tile = 128;

// Register blocking: per step of 16 along K a work-item reads 8 floats of A and 8 of B
// from local memory (four float4 loads) and does 64 multiply-adds with them, so the
// arithmetic, not local memory, sets the pace. Its 8 rows are two runs of 4 that lie
// HALF apart (and likewise its columns), so that neighbouring work-items read
// neighbouring float4 of local memory and write neighbouring float4 of C.
// The next step's tiles are loaded from global memory into registers while the current
// step computes: with 64 accumulators per work-item few work-groups fit on a GPU core
// at once, too few to hide that latency by switching between them.
constexpr const char* sgemm_source = R"CLC(
#define GROUP 16
#define TILE 128
#define HALF 64
#define STEP 16

// Row i of a work-item's block: a_value times its 8 columns of B.
#define ROW(i, a_value)                                       \
  acc[i][0] = mad((float4)(a_value), b_near, acc[i][0]);      \
  acc[i][1] = mad((float4)(a_value), b_far, acc[i][1]);

kernel __attribute__((reqd_work_group_size(GROUP, GROUP, 1)))
void sgemm(global const float4* a, global const float4* b, global float4* c, uint n) {
  // A's tile is kept k-major (transposed) so that a work-item's 4 consecutive rows are
  // one float4; one float4 of padding per k spreads the transposing stores over the
  // local memory banks.
  local float4 a_tile[STEP][TILE / 4 + 1];
  local float4 b_tile[STEP][TILE / 4];
  // The transposing stores go through a float view; a barrier separates them from the
  // float4 reads.
  local float* a_floats = (local float*)a_tile;

  const uint tx = get_local_id(0), ty = get_local_id(1);
  const uint id = ty * GROUP + tx;
  const uint n4 = n / 4;  // float4 per row
  const uint row0 = get_group_id(1) * TILE, col0 = get_group_id(0) * TILE;

  // The 256 work-items load each step's tiles with contiguous float4 reads: A as rows
  // id/4 and id/4 + HALF, float4 id%4 along K; B as rows id/32 and id/32 + 8 of the
  // step, float4 id%32 along the columns.
  const uint a_row = id / 4, a_k4 = id % 4;
  const uint b_k = id / 32, b_c4 = id % 32;
  global const float4* a_next = a + (row0 + a_row) * n4 + a_k4;
  global const float4* b_next = b + b_k * n4 + col0 / 4 + b_c4;
  float4 a_low = a_next[0], a_high = a_next[HALF * n4];
  float4 b_low = b_next[0], b_high = b_next[8 * n4];

  // acc[i][0]: row i, columns tx*4..+3; acc[i][1]: the same row, columns HALF further.
  // Rows 0..3 are ty*4..+3 of the tile, rows 4..7 lie HALF further.
  float4 acc[8][2];
  for (int i = 0; i < 8; ++i) acc[i][0] = acc[i][1] = (float4)(0.0f);

  for (uint k0 = 0; k0 < n; k0 += STEP) {
    // Every work-item is done reading the previous step's tiles.
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint k = a_k4 * 4;
    const uint pitch = TILE + 4;  // floats per k of a_tile
    a_floats[(k + 0) * pitch + a_row] = a_low.x;
    a_floats[(k + 1) * pitch + a_row] = a_low.y;
    a_floats[(k + 2) * pitch + a_row] = a_low.z;
    a_floats[(k + 3) * pitch + a_row] = a_low.w;
    a_floats[(k + 0) * pitch + a_row + HALF] = a_high.x;
    a_floats[(k + 1) * pitch + a_row + HALF] = a_high.y;
    a_floats[(k + 2) * pitch + a_row + HALF] = a_high.z;
    a_floats[(k + 3) * pitch + a_row + HALF] = a_high.w;
    b_tile[b_k][b_c4] = b_low;
    b_tile[b_k + 8][b_c4] = b_high;
    barrier(CLK_LOCAL_MEM_FENCE);

    if (k0 + STEP < n) {
      a_next += STEP / 4;
      b_next += STEP * n4;
      a_low = a_next[0];
      a_high = a_next[HALF * n4];
      b_low = b_next[0];
      b_high = b_next[8 * n4];
    }

#pragma unroll
    for (uint kk = 0; kk < STEP; ++kk) {
      const float4 a_near = a_tile[kk][ty], a_far = a_tile[kk][GROUP + ty];
      const float4 b_near = b_tile[kk][tx], b_far = b_tile[kk][GROUP + tx];
      ROW(0, a_near.x) ROW(1, a_near.y) ROW(2, a_near.z) ROW(3, a_near.w)
      ROW(4, a_far.x) ROW(5, a_far.y) ROW(6, a_far.z) ROW(7, a_far.w)
    }
  }

  global float4* out = c + (row0 + ty * 4) * n4 + col0 / 4 + tx;
  for (uint i = 0; i < 4; ++i) {
    out[i * n4] = acc[i][0];
    out[i * n4 + GROUP] = acc[i][1];
    out[(HALF + i) * n4] = acc[4 + i][0];
    out[(HALF + i) * n4 + GROUP] = acc[4 + i][1];
  }
}
)CLC";

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::bench;
  bench_info info{"sgemm",
                  "Compute-bound SGEMM: C = A x B (float, N x N, row-major) on one device; per timed run\n"
                  "--commands kernels back to back and one clFinish, wall time, GFLOP/s = 2 N^3 per kernel.",
                  5, "timed runs, median",
                  /*takes_commands=*/true, /*default_commands=*/10};
  info.takes_size = true;
  info.default_size = 4096;
  info.size_meaning = "N, the matrices' side; padded with zeros to a multiple of 128";
  const options opts = parse_options(argc, argv, info);
  const size_t n = opts.size;
  const size_t padded = round_up(n, tile);
  const size_t kernels = opts.commands;
  const int repeats = opts.repeats > 0 ? opts.repeats : info.default_repeats;
  // The kernel indexes float4 with 32-bit unsigned arithmetic.
  if (padded * (padded / 4) > std::numeric_limits<cl_uint>::max()) {
    std::fprintf(stderr, "ferry_bench_sgemm: --size %zu is too large for 32-bit indices\n", n);
    return 2;
  }
  session s(opts, info);

  // Zeros outside the n x n corner add nothing to the product.
  std::vector<float> a(padded * padded, 0.0f), b(padded * padded, 0.0f), c(padded * padded);
  std::mt19937 random(7);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) a[i * padded + j] = value(random);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) b[i * padded + j] = value(random);

  return s.run([&](target& t) {
    cl_kernel kernel = t.kernel(sgemm_source, "sgemm");
    const size_t bytes = padded * padded * sizeof(float);
    const mem_object a_mem(t.context, CL_MEM_READ_ONLY, bytes);
    const mem_object b_mem(t.context, CL_MEM_READ_ONLY, bytes);
    const mem_object c_mem(t.context, CL_MEM_WRITE_ONLY, bytes);
    check(clEnqueueWriteBuffer(t.queue, a_mem.get(), CL_TRUE, 0, bytes, a.data(), 0, nullptr, nullptr),
          "clEnqueueWriteBuffer (A)");
    check(clEnqueueWriteBuffer(t.queue, b_mem.get(), CL_TRUE, 0, bytes, b.data(), 0, nullptr, nullptr),
          "clEnqueueWriteBuffer (B)");
    const cl_uint side = static_cast<cl_uint>(padded);
    check(clSetKernelArg(kernel, 0, sizeof(cl_mem), a_mem.address()), "clSetKernelArg");
    check(clSetKernelArg(kernel, 1, sizeof(cl_mem), b_mem.address()), "clSetKernelArg");
    check(clSetKernelArg(kernel, 2, sizeof(cl_mem), c_mem.address()), "clSetKernelArg");
    check(clSetKernelArg(kernel, 3, sizeof side, &side), "clSetKernelArg");
    const size_t global[2] = {padded / tile * group, padded / tile * group};
    const size_t local[2] = {group, group};
    auto enqueue_kernels = [&](size_t count) {
      for (size_t i = 0; i < count; ++i)
        check(clEnqueueNDRangeKernel(t.queue, kernel, 2, nullptr, global, local, 0, nullptr, nullptr),
              "clEnqueueNDRangeKernel");
    };

    // Untimed: PoCL compiles the kernel for its work-group size on first use, and a GPU
    // leaves its idle clocks.
    enqueue_kernels(1);
    check(clFinish(t.queue), "clFinish");

    std::vector<double> seconds;
    for (int r = 0; r < repeats; ++r) {
      if (r == repeats - 1) {
        // Only the last run's C is read back: an entry it left unwritten stays NaN and
        // fails the check. Finished before the clock starts.
        const float nan = std::numeric_limits<float>::quiet_NaN();
        check(clEnqueueFillBuffer(t.queue, c_mem.get(), &nan, sizeof nan, 0, bytes, 0, nullptr, nullptr),
              "clEnqueueFillBuffer (C)");
        check(clFinish(t.queue), "clFinish");
      }
      const auto start = clock::now();
      enqueue_kernels(kernels);
      check(clFinish(t.queue), "clFinish");
      seconds.push_back(seconds_since(start));
    }
    check(clEnqueueReadBuffer(t.queue, c_mem.get(), CL_TRUE, 0, bytes, c.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer (C)");
    check_matrix_product(a, b, c, n, padded);

    const double med = median(seconds);
    const double flop = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    const double gflop_s = flop * static_cast<double>(kernels) / med / 1e9;
    results::instance().record(t.label, "gflop_s", gflop_s);
    print_line("sgemm", t.label,
               "n=" + std::to_string(n) + " gflop_s=" + format(gflop_s) +
                   " ms_per_kernel=" + format(med * 1e3 / static_cast<double>(kernels), 2) +
                   " kernels=" + std::to_string(kernels) + " repeats=" + std::to_string(repeats) +
                   " checked=" + (checks_every_entry(n) ? "all" : "sampled") +
                   (padded != n ? " padded=" + std::to_string(padded) : std::string()));
  });
}
