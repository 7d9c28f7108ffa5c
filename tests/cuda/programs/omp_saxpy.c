// OpenMP target saxpy over 16M floats (argv[1] sets n): y = a*x + y in one
// "target teams distribute parallel for".
//
// The inputs are small multiples of 1/2 and a is 2.5, so every product and sum is exact in
// float with or without a fused multiply-add: the device's y must equal the host's bit for
// bit (max_err=0), and the checksum (a sum in double on the host) is exact too.
#include <math.h>
#include <omp.h>

#include "common.h"

int main(int argc, char **argv) {
  program_name = "omp_saxpy";
  const long n = arg_long(argc, argv, 1, 16L * 1024 * 1024);
  const float a = 2.5f;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  if (!x || !y) fail("out of host memory for n=%ld", n);
  for (long i = 0; i < n; ++i) {
    x[i] = (float)(i % 1024) * 0.5f;
    y[i] = (float)(i % 977) * 0.5f;
  }
  const int devices = omp_get_num_devices();

  int on_host = 1;
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n], on_host)
  for (long i = 0; i < n; ++i) {
    if (i == 0) on_host = omp_is_initial_device();
    y[i] = a * x[i] + y[i];
  }
  const char *where = check_offloaded(!on_host, "omp_get_num_devices()", devices);

  float max_err = 0.0f;
  double checksum = 0.0;
  long first_bad = -1;
  for (long i = 0; i < n; ++i) {
    const float want = 2.5f * ((float)(i % 1024) * 0.5f) + (float)(i % 977) * 0.5f;
    const float err = fabsf(y[i] - want);
    if (err > max_err) max_err = err;
    if (err != 0.0f && first_bad < 0) first_bad = i;
    checksum += y[i];
  }
  if (first_bad >= 0)
    fail("max_err=%g: y differs from the host's a*x+y, exact by construction (first at i=%ld: %.9g, want %.9g)",
         max_err, first_bad, y[first_bad], 2.5f * ((float)(first_bad % 1024) * 0.5f) + (float)(first_bad % 977) * 0.5f);
  printf("omp_saxpy n=%ld device=%s max_err=%g checksum=%.2f\n", n, where, max_err, checksum);
  free(x);
  free(y);
  return 0;
}
