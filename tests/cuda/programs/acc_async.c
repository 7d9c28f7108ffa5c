// OpenACC async queues: work on several queues, queues that wait for others without the host
// waiting (the wait clause, acc_wait_async, the wait directive with async), acc_async_test,
// acc_wait/acc_wait_all, and a chain of steps that alternate between two queues, so that a
// step run out of order changes the result. argv[1] sets n (default 1M).
//
// Through the CUDA driver this is streams, events (cuStreamWaitEvent), cuStreamQuery and
// cuStreamAddCallback (libgomp frees each async launch's argument block in a callback).
#include <openacc.h>
#include <stdint.h>

#include "common.h"

static int probe_gpu(void) {
  int on = 0;
#pragma acc parallel num_gangs(1) copy(on)
  on = acc_on_device(acc_device_nvidia);
  return on;
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

// The spin kernel's step, x -> x*lcg_a + lcg_c (mod 2^32), and its N-fold composition on the
// host by squaring, so that a long device loop is checked in a few steps.
enum { lcg_a = 1664525u, lcg_c = 1013904223u };
static void lcg_power(uint64_t steps, uint32_t *mul, uint32_t *add) {
  uint32_t m = 1, a = 0;              // the result so far: x -> x*m + a
  uint32_t step_m = lcg_a, step_a = lcg_c;  // the step, squared each round
  for (; steps; steps >>= 1) {
    if (steps & 1) {
      m *= step_m;
      a = a * step_m + step_a;
    }
    step_a = step_a * step_m + step_a;
    step_m *= step_m;
  }
  *mul = m;
  *add = a;
}

int main(int argc, char **argv) {
  program_name = "acc_async";
  const long n = arg_long(argc, argv, 1, 1024L * 1024);
  const size_t bytes = n * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes), *x = malloc(bytes), *p = malloc(bytes);
  if (!a || !b || !c || !x || !p) fail("out of host memory for n=%ld", n);
  const int devices = acc_get_num_devices(acc_device_nvidia);
  const int on_gpu = probe_gpu();
  const char *where = check_offloaded(on_gpu, "acc_get_num_devices(acc_device_nvidia)", devices);

  // A queue never used has nothing pending.
  if (!acc_async_test(42)) fail("acc_async_test(42) on a queue never used says it is busy");

  // 1. Queues 1 and 2 work independently; queue 3 waits for both, then copies out.
  for (long i = 0; i < n; ++i) {
    a[i] = (float)(i % 100);
    b[i] = (float)(i % 37);
    c[i] = -1.0f;
  }
#pragma acc enter data copyin(a[0:n]) async(1)
#pragma acc enter data copyin(b[0:n]) async(2)
#pragma acc enter data create(c[0:n]) async(3)
#pragma acc parallel loop present(a[0:n]) async(1)
  for (long i = 0; i < n; ++i) a[i] = 2.0f * a[i] + 1.0f;
#pragma acc parallel loop present(b[0:n]) async(2)
  for (long i = 0; i < n; ++i) b[i] = b[i] + 3.0f;
#pragma acc parallel loop present(a[0:n], b[0:n], c[0:n]) wait(1, 2) async(3)
  for (long i = 0; i < n; ++i) c[i] = a[i] + b[i];
#pragma acc exit data copyout(c[0:n]) async(3)
  if (on_gpu && (acc_get_cuda_stream(1) == NULL || acc_get_cuda_stream(3) == NULL))
    fail("acc_get_cuda_stream: no CUDA stream behind queue 1 or 3");
#pragma acc wait(3)
  if (!acc_async_test(3)) fail("acc_async_test(3) says busy after wait(3)");
  CHECK_ALL(c, n, 2.0f * (float)(i % 100) + 1.0f + (float)(i % 37) + 3.0f, "queue 3 after waiting for 1 and 2");
#pragma acc exit data delete(a[0:n], b[0:n]) async(1)
  acc_wait(1);

  // 2. A chain whose steps alternate between queues 4 and 5, each waiting for the other.
  // x -> 3x + k is not commutative: steps out of order give another result.
  const int steps = 8;
  for (long i = 0; i < n; ++i) x[i] = (float)(i % 7);
#pragma acc enter data copyin(x[0:n]) async(5)
  for (int k = 0; k < steps; ++k) {
    const int q = 4 + k % 2, other = 5 - k % 2;
    (void)q, (void)other;  // used by the clauses below, which GCC 12's unused-variable warning misses
#pragma acc parallel loop present(x[0:n]) wait(other) async(q)
    for (long i = 0; i < n; ++i) x[i] = 3.0f * x[i] + (float)k;
  }
#pragma acc exit data copyout(x[0:n]) wait(4, 5) async(6)
  acc_wait(6);
  CHECK_ALL(x, n, ({
              float v = (float)(i % 7);
              for (int k = 0; k < steps; ++k) v = 3.0f * v + (float)k;
              v;
            }),
            "a chain alternating between queues 4 and 5");

  // 3. acc_wait_async (queue 8 waits for 7) and the wait directive with async (9 waits for 8).
  for (long i = 0; i < n; ++i) p[i] = (float)(i % 11);
#pragma acc enter data copyin(p[0:n]) async(7)
#pragma acc parallel loop present(p[0:n]) async(7)
  for (long i = 0; i < n; ++i) p[i] = p[i] + 1.0f;
  acc_wait_async(7, 8);
#pragma acc parallel loop present(p[0:n]) async(8)
  for (long i = 0; i < n; ++i) p[i] = p[i] * 2.0f;
#pragma acc wait(8) async(9)
#pragma acc exit data copyout(p[0:n]) async(9)
  acc_wait_all();
  if (!acc_async_test_all()) fail("acc_async_test_all says busy after acc_wait_all");
  CHECK_ALL(p, n, ((float)(i % 11) + 1.0f) * 2.0f, "acc_wait_async and wait(8) async(9)");

  // 4. A long kernel on queue 10 (about 40 ms on a GPU): acc_async_test while it runs
  // (cuStreamQuery answering CUDA_ERROR_NOT_READY), then after acc_wait.
  const long threads = 1024;
  const uint64_t spin = on_gpu ? (1u << 24) : (1u << 10);
  uint32_t *seeds = malloc(threads * sizeof *seeds);
  if (!seeds) fail("out of host memory");
#pragma acc parallel loop copyout(seeds[0:threads]) async(10)
  for (long i = 0; i < threads; ++i) {
    uint32_t s = (uint32_t)i;
    for (uint64_t k = 0; k < spin; ++k) s = s * lcg_a + lcg_c;
    seeds[i] = s;
  }
  const int done_at_once = acc_async_test(10);
  acc_wait(10);
  if (!acc_async_test(10)) fail("acc_async_test(10) says busy after acc_wait(10)");
  uint32_t mul, add;
  lcg_power(spin, &mul, &add);
  uint64_t spin_sum = 0;
  for (long i = 0; i < threads; ++i) {
    const uint32_t want = (uint32_t)i * mul + add;
    if (seeds[i] != want) fail("spin kernel on queue 10: seeds[%ld] is %u, want %u", i, seeds[i], want);
    spin_sum += seeds[i];
  }
  fprintf(stderr, "acc_async: acc_async_test(10) right after the launch: %s\n",
          done_at_once ? "done (the launch returned late, or the kernel was quick)" : "busy");

  printf("acc_async n=%ld device=%s c_sum=%.1f x_sum=%.1f p_sum=%.1f spin=%llu spin_sum=%llu\n", n, where,
         sum_of(c, n), sum_of(x, n), sum_of(p, n), (unsigned long long)spin, (unsigned long long)spin_sum);
  free(a), free(b), free(c), free(x), free(p), free(seeds);
  return 0;
}
