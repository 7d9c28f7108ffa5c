// OpenACC data management: a structured data region (copyin, copyout, create) holding several
// kernels and update host/device; enter data/exit data; acc_malloc with
// acc_memcpy_to_device/from_device and the deviceptr clause; acc_map_data; acc_deviceptr of
// mapped data. argv[1] sets n (default 1M).
//
// On a GPU the host's and the device's copies are separate: some checks rely on that (a stale
// device copy until "update device", a host array untouched until copyout). On the host
// (FERRY_ALLOW_HOST_FALLBACK=1) there is one copy, and those checks expect that instead.
#include <openacc.h>

#include "common.h"

static int probe_gpu(void) {
  int on = 0;
#pragma acc parallel num_gangs(1) copy(on)
  on = acc_on_device(acc_device_nvidia);
  return on;
}

#define CHECK_ALL(array, expr, what)                                                                    \
  for (long i_ = 0; i_ < n; ++i_) {                                                                     \
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
  program_name = "acc_data";
  const long n = arg_long(argc, argv, 1, 1024L * 1024);
  const size_t bytes = n * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *tmp = malloc(bytes), *c = malloc(bytes), *d = malloc(bytes),
        *e = malloc(bytes), *f = malloc(bytes), *out = malloc(bytes);
  if (!a || !b || !tmp || !c || !d || !e || !f || !out) fail("out of host memory for n=%ld", n);
  const int devices = acc_get_num_devices(acc_device_nvidia);
  const int on_gpu = probe_gpu();
  const char *where = check_offloaded(on_gpu, "acc_get_num_devices(acc_device_nvidia)", devices);

  // 1. A structured data region with four kernels and two updates.
  for (long i = 0; i < n; ++i) {
    a[i] = (float)(i % 100);
    b[i] = -1.0f;
    tmp[i] = -2.0f;
  }
#pragma acc data copyin(a[0:n]) copyout(b[0:n]) create(tmp[0:n])
  {
#pragma acc parallel loop present(a[0:n], tmp[0:n])
    for (long i = 0; i < n; ++i) tmp[i] = 2.0f * a[i];
#pragma acc parallel loop present(tmp[0:n], b[0:n])
    for (long i = 0; i < n; ++i) b[i] = tmp[i] + 1.0f;
    // copyout happens at the region's end: the host's b is still what it was.
    if (on_gpu) CHECK_ALL(b, -1.0f, "host array inside a copyout region");

    // The host changes a; the device keeps the copy it got until "update device".
    for (long i = 0; i < n; ++i) a[i] += 1000.0f;
#pragma acc parallel loop present(a[0:n], tmp[0:n])
    for (long i = 0; i < n; ++i) tmp[i] = a[i];
#pragma acc update host(tmp[0:n])
    CHECK_ALL(tmp, on_gpu ? (float)(i % 100) : (float)(i % 100) + 1000.0f, "update host after a host-side change");

#pragma acc update device(a[0:n])
#pragma acc parallel loop present(a[0:n], b[0:n])
    for (long i = 0; i < n; ++i) b[i] += a[i];
  }
  CHECK_ALL(b, 3.0f * (float)(i % 100) + 1001.0f, "copyout of a data region");

  // 2. Unstructured data: enter data, a kernel, exit data.
  for (long i = 0; i < n; ++i) {
    c[i] = (float)(i % 50);
    d[i] = 0.0f;
  }
#pragma acc enter data copyin(c[0:n]) create(d[0:n])
  if (!acc_is_present(c, bytes) || !acc_is_present(d, bytes)) fail("enter data: c or d is not present");
#pragma acc parallel loop present(c[0:n], d[0:n])
  for (long i = 0; i < n; ++i) d[i] = c[i] * c[i] + 0.5f;
#pragma acc exit data copyout(d[0:n]) delete(c[0:n])
  CHECK_ALL(d, (float)((i % 50) * (i % 50)) + 0.5f, "exit data copyout");
  if (on_gpu && (acc_is_present(c, bytes) || acc_is_present(d, bytes)))
    fail("exit data: c or d is still present on the device");

  // 3. Device memory of our own: acc_malloc, acc_memcpy_to_device, deviceptr, acc_memcpy_from_device.
  float *dp = acc_malloc(bytes);
  if (dp == NULL) fail("acc_malloc(%zu) returned NULL", bytes);
  acc_memcpy_to_device(dp, a, bytes);
#pragma acc parallel loop deviceptr(dp)
  for (long i = 0; i < n; ++i) dp[i] = dp[i] * 0.5f;
  acc_memcpy_from_device(out, dp, bytes);
  CHECK_ALL(out, ((float)(i % 100) + 1000.0f) * 0.5f, "acc_malloc'd memory after a deviceptr kernel");

  // acc_map_data makes dp the device copy of e (a GPU only: on the host the two cannot differ).
  if (on_gpu) {
    for (long i = 0; i < n; ++i) e[i] = -3.0f;
    acc_map_data(e, dp, bytes);
#pragma acc parallel loop present(e[0:n])
    for (long i = 0; i < n; ++i) e[i] += 1.0f;
#pragma acc update host(e[0:n])
    acc_unmap_data(e);
  } else {
    for (long i = 0; i < n; ++i) e[i] = out[i] + 1.0f;
  }
  CHECK_ALL(e, ((float)(i % 100) + 1000.0f) * 0.5f + 1.0f, "acc_map_data onto acc_malloc'd memory");
  acc_free(dp);

  // 4. acc_deviceptr of mapped data, used through the deviceptr clause.
  for (long i = 0; i < n; ++i) f[i] = (float)(i % 10);
#pragma acc enter data copyin(f[0:n])
  float *fd = acc_deviceptr(f);
  if (fd == NULL) fail("acc_deviceptr of mapped data returned NULL");
  if (on_gpu && (fd == f || acc_hostptr(fd) != f))
    fail("acc_deviceptr/acc_hostptr: device %p for host %p, back to %p", (void *)fd, (void *)f, acc_hostptr(fd));
#pragma acc parallel loop deviceptr(fd)
  for (long i = 0; i < n; ++i) fd[i] = fd[i] + 7.0f;
#pragma acc exit data copyout(f[0:n])
  CHECK_ALL(f, (float)(i % 10) + 7.0f, "a kernel through acc_deviceptr");

  printf("acc_data n=%ld device=%s b_sum=%.1f d_sum=%.1f out_sum=%.1f e_sum=%.1f f_sum=%.1f\n", n, where, sum_of(b, n),
         sum_of(d, n), sum_of(out, n), sum_of(e, n), sum_of(f, n));
  free(a), free(b), free(tmp), free(c), free(d), free(e), free(f), free(out);
  return 0;
}
