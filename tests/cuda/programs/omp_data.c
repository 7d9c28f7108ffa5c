// OpenMP device data: a target data region (map to, from, alloc) holding several target
// regions and target update to/from; target enter data/exit data with omp_target_is_present;
// omp_target_alloc with omp_target_memcpy (offsets too) and is_device_ptr;
// omp_target_associate_ptr; use_device_ptr. argv[1] sets n (default 1M).
//
// On a GPU the host's and the device's copies are separate: some checks rely on that (a stale
// device copy until "target update to", a host array untouched until the region ends). On
// the host (FERRY_ALLOW_HOST_FALLBACK=1) there is one copy, and those checks expect that.
#include <omp.h>

#include "common.h"

static int probe_gpu(void) {
  int on_host = 1;
#pragma omp target map(tofrom: on_host)
  on_host = omp_is_initial_device();
  return !on_host;
}

#define CHECK_ALL(array, count, expr, what)                                                             \
  for (long i_ = 0; i_ < (count); ++i_) {                                                               \
    const long i = i_;                                                                                  \
    const float want_ = (expr);                                                                         \
    if ((array)[i] != want_) fail("%s: %s[%ld] is %.9g, want %.9g", what, #array, i, (array)[i], want_); \
  }

static double sum_of(const float *v, long n) {
  double s = 0.0;
  for (long i = 0; i < n; ++i) s += v[i];
  return s;
}

int main(int argc, char **argv) {
  program_name = "omp_data";
  const long n = arg_long(argc, argv, 1, 1024L * 1024);
  const size_t bytes = n * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *tmp = malloc(bytes), *c = malloc(bytes), *d = malloc(bytes),
        *e = malloc(bytes), *f = malloc(bytes), *out = malloc(bytes), *half = malloc(bytes / 2 + sizeof(float));
  if (!a || !b || !tmp || !c || !d || !e || !f || !out || !half) fail("out of host memory for n=%ld", n);
  const int devices = omp_get_num_devices();
  const int on_gpu = probe_gpu();
  const char *where = check_offloaded(on_gpu, "omp_get_num_devices()", devices);
  const int host = omp_get_initial_device();
  const int dev = on_gpu ? omp_get_default_device() : host;

  // 1. A target data region with four target regions and two updates.
  for (long i = 0; i < n; ++i) {
    a[i] = (float)(i % 100);
    b[i] = -1.0f;
    tmp[i] = -2.0f;
  }
#pragma omp target data map(to: a[0:n]) map(from: b[0:n]) map(alloc: tmp[0:n])
  {
#pragma omp target teams distribute parallel for map(alloc: a[0:n], tmp[0:n])
    for (long i = 0; i < n; ++i) tmp[i] = 2.0f * a[i];
#pragma omp target teams distribute parallel for map(alloc: tmp[0:n], b[0:n])
    for (long i = 0; i < n; ++i) b[i] = tmp[i] + 1.0f;
    // b comes back when the region ends: the host's b is still what it was.
    if (on_gpu) CHECK_ALL(b, n, -1.0f, "host array inside a map(from) region");

    // The host changes a; the device keeps the copy it got until "target update to".
    for (long i = 0; i < n; ++i) a[i] += 1000.0f;
#pragma omp target teams distribute parallel for map(alloc: a[0:n], tmp[0:n])
    for (long i = 0; i < n; ++i) tmp[i] = a[i];
#pragma omp target update from(tmp[0:n])
    CHECK_ALL(tmp, n, on_gpu ? (float)(i % 100) : (float)(i % 100) + 1000.0f, "target update from after a host-side change");

#pragma omp target update to(a[0:n])
#pragma omp target teams distribute parallel for map(alloc: a[0:n], b[0:n])
    for (long i = 0; i < n; ++i) b[i] += a[i];
  }
  CHECK_ALL(b, n, 3.0f * (float)(i % 100) + 1001.0f, "map(from) at the end of a target data region");

  // 2. Unstructured data: target enter data, a target region, target exit data.
  for (long i = 0; i < n; ++i) {
    c[i] = (float)(i % 50);
    d[i] = 0.0f;
  }
#pragma omp target enter data map(to: c[0:n]) map(alloc: d[0:n])
  if (!omp_target_is_present(c, dev) || !omp_target_is_present(d, dev)) fail("target enter data: c or d is not present");
#pragma omp target teams distribute parallel for map(alloc: c[0:n], d[0:n])
  for (long i = 0; i < n; ++i) d[i] = c[i] * c[i] + 0.5f;
#pragma omp target exit data map(from: d[0:n]) map(delete: c[0:n])
  CHECK_ALL(d, n, (float)((i % 50) * (i % 50)) + 0.5f, "target exit data map(from)");
  if (on_gpu && (omp_target_is_present(c, dev) || omp_target_is_present(d, dev)))
    fail("target exit data: c or d is still present on the device");

  // 3. Device memory of our own: omp_target_alloc, omp_target_memcpy both ways, is_device_ptr.
  float *dp = omp_target_alloc(bytes, dev);
  if (dp == NULL) fail("omp_target_alloc(%zu, %d) returned NULL", bytes, dev);
  if (omp_target_memcpy(dp, a, bytes, 0, 0, dev, host) != 0) fail("omp_target_memcpy to the device failed");
#pragma omp target teams distribute parallel for is_device_ptr(dp) device(dev)
  for (long i = 0; i < n; ++i) dp[i] = dp[i] * 0.5f;
  if (omp_target_memcpy(out, dp, bytes, 0, 0, host, dev) != 0) fail("omp_target_memcpy from the device failed");
  CHECK_ALL(out, n, ((float)(i % 100) + 1000.0f) * 0.5f, "omp_target_alloc'd memory after an is_device_ptr region");
  // The second half alone, with a source offset, into the start of another buffer (1 float on).
  const long h = n / 2;
  half[0] = -5.0f;
  if (omp_target_memcpy(half, dp, h * sizeof(float), sizeof(float), (n - h) * sizeof(float), host, dev) != 0)
    fail("omp_target_memcpy with offsets failed");
  if (half[0] != -5.0f) fail("omp_target_memcpy with a destination offset wrote before it");
  CHECK_ALL(half + 1, h, ((float)((n - h + i) % 100) + 1000.0f) * 0.5f, "omp_target_memcpy with offsets");

  // omp_target_associate_ptr makes dp the device copy of e (a GPU only: on the host the two
  // cannot differ).
  if (on_gpu) {
    for (long i = 0; i < n; ++i) e[i] = -3.0f;
    if (omp_target_associate_ptr(e, dp, bytes, 0, dev) != 0) fail("omp_target_associate_ptr failed");
#pragma omp target teams distribute parallel for map(alloc: e[0:n])
    for (long i = 0; i < n; ++i) e[i] += 1.0f;
#pragma omp target update from(e[0:n])
    if (omp_target_disassociate_ptr(e, dev) != 0) fail("omp_target_disassociate_ptr failed");
  } else {
    for (long i = 0; i < n; ++i) e[i] = out[i] + 1.0f;
  }
  CHECK_ALL(e, n, ((float)(i % 100) + 1000.0f) * 0.5f + 1.0f, "omp_target_associate_ptr onto omp_target_alloc'd memory");
  omp_target_free(dp, dev);

  // 4. use_device_ptr: the device address of mapped data, used through is_device_ptr.
  for (long i = 0; i < n; ++i) f[i] = (float)(i % 10);
  float *fd = NULL;
#pragma omp target data map(tofrom: f[0:n])
  {
#pragma omp target data use_device_ptr(f)
    fd = f;
    if (fd == NULL) fail("use_device_ptr gave NULL");
    if (on_gpu && fd == f) fail("use_device_ptr gave the host address %p", (void *)f);
#pragma omp target teams distribute parallel for is_device_ptr(fd)
    for (long i = 0; i < n; ++i) fd[i] = fd[i] + 7.0f;
  }
  CHECK_ALL(f, n, (float)(i % 10) + 7.0f, "a target region through use_device_ptr");

  printf("omp_data n=%ld device=%s b_sum=%.1f d_sum=%.1f out_sum=%.1f half_sum=%.1f e_sum=%.1f f_sum=%.1f\n", n, where,
         sum_of(b, n), sum_of(d, n), sum_of(out, n), sum_of(half + 1, h), sum_of(e, n), sum_of(f, n));
  free(a), free(b), free(tmp), free(c), free(d), free(e), free(f), free(out), free(half);
  return 0;
}
