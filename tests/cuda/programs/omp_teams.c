// OpenMP teams: a 512x512 matrix product (argv[1] sets the size) with "target teams distribute
// parallel for collapse(2)", once with the runtime's choice of teams and threads and once with
// num_teams(64) thread_limit(128) writing the transposed product, both checked against the
// host's product.
//
// The inputs are small integers, so every product and sum is exact in double: the device's
// matrices must equal the host's exactly.
#include <omp.h>

#include "common.h"

int main(int argc, char **argv) {
  program_name = "omp_teams";
  const long n = arg_long(argc, argv, 1, 512);
  double *A = malloc(n * n * sizeof *A), *B = malloc(n * n * sizeof *B), *C = malloc(n * n * sizeof *C),
         *Ct = malloc(n * n * sizeof *Ct), *H = malloc(n * n * sizeof *H);
  if (!A || !B || !C || !Ct || !H) fail("out of host memory for %ldx%ld matrices", n, n);
  for (long k = 0; k < n * n; ++k) {
    A[k] = (double)(hash32((unsigned)k) % 17u) - 8.0;
    B[k] = (double)(hash32((unsigned)k + 0x9e3779b9u) % 13u) - 6.0;
  }
  const int devices = omp_get_num_devices();

  int on_host = 1, teams = 0, threads = 0;
#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:n * n], B[0:n * n]) map(from: C[0:n * n]) \
    map(tofrom: on_host, teams, threads)
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      if (i == 0 && j == 0) {
        on_host = omp_is_initial_device();
        teams = omp_get_num_teams();
        threads = omp_get_num_threads();
      }
      double s = 0.0;
      for (long k = 0; k < n; ++k) s += A[i * n + k] * B[k * n + j];
      C[i * n + j] = s;
    }
  const char *where = check_offloaded(!on_host, "omp_get_num_devices()", devices);

  int teams64 = 0, threads128 = 0;
#pragma omp target teams distribute parallel for collapse(2) num_teams(64) thread_limit(128) \
    map(to: A[0:n * n], B[0:n * n]) map(from: Ct[0:n * n]) map(tofrom: teams64, threads128)
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i) {
      if (i == 0 && j == 0) {
        teams64 = omp_get_num_teams();
        threads128 = omp_get_num_threads();
      }
      double s = 0.0;
      for (long k = 0; k < n; ++k) s += A[i * n + k] * B[k * n + j];
      Ct[j * n + i] = s;
    }
  fprintf(stderr, "omp_teams: default launch: %d teams of %d threads; num_teams(64) thread_limit(128): %d of %d\n",
          teams, threads, teams64, threads128);
  if (teams64 < 1 || teams64 > 64) fail("num_teams(64) gave %d teams", teams64);
  if (threads128 < 1 || threads128 > 128) fail("thread_limit(128) gave %d threads in team 0", threads128);
  if (!on_host && (teams < 2 || threads < 2))
    fail("the default launch on the GPU ran %d team(s) of %d thread(s): no parallelism", teams, threads);

  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      double s = 0.0;
      for (long k = 0; k < n; ++k) s += A[i * n + k] * B[k * n + j];
      H[i * n + j] = s;
    }
  double sum = 0.0, weighted = 0.0;
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      if (C[i * n + j] != H[i * n + j]) fail("C[%ld][%ld] is %.17g, the host's %.17g", i, j, C[i * n + j], H[i * n + j]);
      if (Ct[j * n + i] != H[i * n + j])
        fail("the transposed product's [%ld][%ld] is %.17g, the host's %.17g", j, i, Ct[j * n + i], H[i * n + j]);
      sum += C[i * n + j];
      weighted += C[i * n + j] * (double)(i + 2 * j + 1);
    }
  printf("omp_teams n=%ld device=%s max_err=0 sum=%.0f weighted=%.0f\n", n, where, sum, weighted);
  free(A), free(B), free(C), free(Ct), free(H);
  return 0;
}
