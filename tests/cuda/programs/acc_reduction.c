// OpenACC reductions: + and max and min over integers and doubles in one loop, a dot
// product, and a two-level (gang over rows, vector over columns) sum. argv[1] sets n
// (default 4M).
//
// The doubles are multiples of 1/8 small enough that every partial sum is exact, so the
// device's results must equal the host's exactly, whatever order the reduction took.
#include <limits.h>
#include <openacc.h>

#include "common.h"

static double x_of(long i) { return (double)(i % 2048) * 0.25 - 100.0; }
static double y_of(long i) { return (double)((i * 7) % 1000) * 0.5; }

int main(int argc, char **argv) {
  program_name = "acc_reduction";
  const long n = arg_long(argc, argv, 1, 4L * 1024 * 1024);
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  if (!x || !y) fail("out of host memory for n=%ld", n);
  for (long i = 0; i < n; ++i) {
    x[i] = x_of(i);
    y[i] = y_of(i);
  }
  const int devices = acc_get_num_devices(acc_device_nvidia);

  // One loop, six reductions.
  long long isum = 0;
  int imax = INT_MIN, imin = INT_MAX;
  double dsum = 0.0, dot = 0.0, dmax = -1e300;
  int on_gpu = 0;
#pragma acc parallel loop copyin(x[0:n], y[0:n]) copy(on_gpu) \
    reduction(+:isum, dsum, dot) reduction(max:imax, dmax) reduction(min:imin)
  for (long i = 0; i < n; ++i) {
    if (i == 0) on_gpu = acc_on_device(acc_device_nvidia);
    const unsigned h = hash32((unsigned)i);
    const int v = (int)(h >> 1);
    isum += (long long)(h % 1000u);
    imax = v > imax ? v : imax;
    imin = v < imin ? v : imin;
    dsum += x[i];
    dot += x[i] * y[i];
    dmax = x[i] * y[i] > dmax ? x[i] * y[i] : dmax;
  }
  const char *where = check_offloaded(on_gpu, "acc_get_num_devices(acc_device_nvidia)", devices);

  long long want_isum = 0;
  int want_imax = INT_MIN, want_imin = INT_MAX;
  double want_dsum = 0.0, want_dot = 0.0, want_dmax = -1e300;
  for (long i = 0; i < n; ++i) {
    const unsigned h = hash32((unsigned)i);
    const int v = (int)(h >> 1);
    want_isum += (long long)(h % 1000u);
    if (v > want_imax) want_imax = v;
    if (v < want_imin) want_imin = v;
    want_dsum += x_of(i);
    want_dot += x_of(i) * y_of(i);
    if (x_of(i) * y_of(i) > want_dmax) want_dmax = x_of(i) * y_of(i);
  }
  if (isum != want_isum) fail("reduction(+) over integers: %lld, want %lld", isum, want_isum);
  if (imax != want_imax) fail("reduction(max) over integers: %d, want %d", imax, want_imax);
  if (imin != want_imin) fail("reduction(min) over integers: %d, want %d", imin, want_imin);
  if (dsum != want_dsum) fail("reduction(+) over doubles: %.17g, want %.17g", dsum, want_dsum);
  if (dot != want_dot) fail("dot product: %.17g, want %.17g", dot, want_dot);
  if (dmax != want_dmax) fail("reduction(max) over doubles: %.17g, want %.17g", dmax, want_dmax);

  // Gang-level and vector-level reductions nested: each row's sum, and the sum of them all.
  const long rows = 1024, cols = n / rows > 0 ? n / rows : 1;
  int *m = malloc(rows * cols * sizeof *m);
  long long *row_sum = malloc(rows * sizeof *row_sum);
  if (!m || !row_sum) fail("out of host memory for the %ldx%ld matrix", rows, cols);
  for (long i = 0; i < rows * cols; ++i) m[i] = (int)(hash32((unsigned)i ^ 0x5bd1e995u) % 2001u) - 1000;
  long long total = 0;
#pragma acc parallel loop gang copyin(m[0:rows * cols]) copyout(row_sum[0:rows]) reduction(+:total)
  for (long r = 0; r < rows; ++r) {
    long long s = 0;
#pragma acc loop vector reduction(+:s)
    for (long c = 0; c < cols; ++c) s += m[r * cols + c];
    row_sum[r] = s;
    total += s;
  }
  long long want_total = 0;
  for (long r = 0; r < rows; ++r) {
    long long s = 0;
    for (long c = 0; c < cols; ++c) s += m[r * cols + c];
    if (row_sum[r] != s) fail("row %ld's sum (vector reduction): %lld, want %lld", r, row_sum[r], s);
    want_total += s;
  }
  if (total != want_total) fail("sum of the row sums (gang reduction): %lld, want %lld", total, want_total);

  printf("acc_reduction n=%ld device=%s isum=%lld imax=%d imin=%d dsum=%.3f dot=%.3f dmax=%.3f rows=%ld cols=%ld "
         "total=%lld\n",
         n, where, isum, imax, imin, dsum, dot, dmax, rows, cols, total);
  free(m);
  free(row_sum);
  free(x);
  free(y);
  return 0;
}
