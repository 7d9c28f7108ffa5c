// OpenMP Jacobi iteration for Laplace's equation on an n x n grid (the benchmark, the same
// problem as acc_jacobi.c): the top edge held at 1, the other edges at 0, the interior
// starting at 0. Usage: omp_jacobi [n [iterations]] (defaults 4096 and 100).
//
// Each iteration is two "target teams distribute parallel for collapse(2)" regions inside one
// target data region (the new values with a max reduction for the residual, then the copy
// back); the residual comes back to the host every iteration. It prints the residual every
// 10 iterations and, last, the time of the iteration loop (time_ms, without the copies in and
// out of the data region) and of the whole data region (region_ms).
//
// The host then runs the same iterations. An update is 0.25f*(sum of 4) and the residual a max
// of |new-old|: no operation a compiler may fuse, so the device must match the host exactly;
// the check allows 1e-6 all the same (values lie in [0,1]).
#include <math.h>
#include <omp.h>

#include "common.h"

static int probe_gpu(void) {
  int on_host = 1;
#pragma omp target map(tofrom: on_host)
  on_host = omp_is_initial_device();
  return !on_host;
}

static void init_grid(float *g, long n) {
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) g[i * n + j] = i == 0 ? 1.0f : 0.0f;
}

int main(int argc, char **argv) {
  program_name = "omp_jacobi";
  const long n = arg_long(argc, argv, 1, 4096);
  const long iterations = arg_long(argc, argv, 2, 100);
  if (n < 3) fail("the grid needs at least 3x3 points");
  float *A = malloc(n * n * sizeof *A), *Anew = malloc(n * n * sizeof *Anew);
  float *residuals = malloc(iterations * sizeof *residuals);
  if (!A || !Anew || !residuals) fail("out of host memory for a %ldx%ld grid", n, n);
  init_grid(A, n);
  init_grid(Anew, n);
  const int devices = omp_get_num_devices();
  const char *where = check_offloaded(probe_gpu(), "omp_get_num_devices()", devices);

  double elapsed = 0.0;
  const double region_start = now_ms();
#pragma omp target data map(tofrom: A[0:n * n]) map(to: Anew[0:n * n])
  {
    const double start = now_ms();
    for (long it = 0; it < iterations; ++it) {
      float err = 0.0f;
#pragma omp target teams distribute parallel for collapse(2) map(alloc: A[0:n * n], Anew[0:n * n]) \
    map(tofrom: err) reduction(max: err)
      for (long i = 1; i < n - 1; ++i)
        for (long j = 1; j < n - 1; ++j) {
          Anew[i * n + j] = 0.25f * (A[i * n + j + 1] + A[i * n + j - 1] + A[(i - 1) * n + j] + A[(i + 1) * n + j]);
          err = fmaxf(err, fabsf(Anew[i * n + j] - A[i * n + j]));
        }
#pragma omp target teams distribute parallel for collapse(2) map(alloc: A[0:n * n], Anew[0:n * n])
      for (long i = 1; i < n - 1; ++i)
        for (long j = 1; j < n - 1; ++j) A[i * n + j] = Anew[i * n + j];
      residuals[it] = err;
      if (it % 10 == 0) printf("omp_jacobi iteration=%ld residual=%.6e\n", it, err);
    }
    elapsed = now_ms() - start;
  }
  // The region's time with its copies in and out: a copy in that returns before its data
  // reached the device (CUDA allows it for pageable memory) is paid inside the loop instead,
  // so time_ms alone would not compare two drivers fairly.
  const double region_ms = now_ms() - region_start;

  // The same on the host.
  float *H = malloc(n * n * sizeof *H), *Hnew = malloc(n * n * sizeof *Hnew);
  if (!H || !Hnew) fail("out of host memory for the host's grid");
  init_grid(H, n);
  init_grid(Hnew, n);
  for (long it = 0; it < iterations; ++it) {
    float err = 0.0f;
    for (long i = 1; i < n - 1; ++i)
      for (long j = 1; j < n - 1; ++j) {
        Hnew[i * n + j] = 0.25f * (H[i * n + j + 1] + H[i * n + j - 1] + H[(i - 1) * n + j] + H[(i + 1) * n + j]);
        err = fmaxf(err, fabsf(Hnew[i * n + j] - H[i * n + j]));
      }
    for (long i = 1; i < n - 1; ++i)
      for (long j = 1; j < n - 1; ++j) H[i * n + j] = Hnew[i * n + j];
    if (fabsf(residuals[it] - err) > 1e-6f)
      fail("iteration %ld: the device's residual %.9g, the host's %.9g", it, residuals[it], err);
  }
  float max_err = 0.0f;
  double checksum = 0.0;
  for (long k = 0; k < n * n; ++k) {
    const float e = fabsf(A[k] - H[k]);
    if (!(e <= 1e-6f)) fail("A[%ld][%ld] is %.9g, the host's %.9g", k / n, k % n, A[k], H[k]);
    if (e > max_err) max_err = e;
    checksum += A[k];
  }
  printf("omp_jacobi n=%ld iterations=%ld device=%s residual=%.6e max_err=%g checksum=%.6f time_ms=%.3f "
         "region_ms=%.3f\n",
         n, iterations, where, residuals[iterations - 1], max_err, checksum, elapsed, region_ms);
  free(A), free(Anew), free(H), free(Hnew), free(residuals);
  return 0;
}
