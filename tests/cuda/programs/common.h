// Shared by the CUDA test programs (issue 24): the result conventions, the host-fallback
// rule and a clock.
//
// Every program prints its results on stdout (one result line; the Jacobi programs also a
// residual line every 10 iterations), which bench/gpu/cuda.sh compares between a native run
// and a run through Ferry (fields ending in "_ms=" are timings and left out of the
// comparison), and exits 0 only when its results are right. Anything else, notes and reasons
// for a failure, goes to stderr.
//
// GCC runs an offload region on the host when libgomp finds no usable device (no plugin, no
// libcuda.so.1, no GPU), silently. A program that did so proves nothing about the GPU, so it
// fails unless FERRY_ALLOW_HOST_FALLBACK=1, which is for checking the programs themselves on
// a machine without a GPU.
#ifndef FERRY_TESTS_CUDA_PROGRAMS_COMMON_H
#define FERRY_TESTS_CUDA_PROGRAMS_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *program_name = "program";

// fail: the result is wrong (or the program could not run); says why and exits 1.
#define fail(...)                                                     \
  do {                                                                \
    fprintf(stderr, "%s FAIL: ", program_name);                       \
    fprintf(stderr, __VA_ARGS__);                                     \
    fputc('\n', stderr);                                              \
    printf("%s FAIL (reason on stderr)\n", program_name);             \
    exit(1);                                                          \
  } while (0)

static inline int host_fallback_allowed(void) {
  const char *v = getenv("FERRY_ALLOW_HOST_FALLBACK");
  return v != NULL && strcmp(v, "1") == 0;
}

// check_offloaded: ON_GPU says whether the work region ran on an NVIDIA GPU; COUNTER names
// the runtime's count of devices and DEVICES is what it said. Returns the word for the result
// line ("gpu" or "host"); a run on the host ends the program with status 2 unless host
// fallback is allowed.
static inline const char *check_offloaded(int on_gpu, const char *counter, int devices) {
  if (on_gpu) return "gpu";
  if (host_fallback_allowed()) {
    fprintf(stderr,
            "%s: note: ran on the host (%s is %d); FERRY_ALLOW_HOST_FALLBACK=1, "
            "so the results are checked all the same, but nothing ran on a GPU\n",
            program_name, counter, devices);
    return "host";
  }
  fprintf(stderr,
          "%s FAIL: the offload region ran on the host, not on an NVIDIA GPU (%s is %d). libgomp "
          "falls back to the host when it cannot load libgomp-plugin-nvptx.so.1 or libcuda.so.1 or "
          "finds no GPU: put the programs' lib/ directory (and, through Ferry, "
          "Ferry's lib/ferry-cuda) on LD_LIBRARY_PATH; GOMP_DEBUG=1 tells what libgomp tried. "
          "FERRY_ALLOW_HOST_FALLBACK=1 checks the results on the host instead.\n",
          program_name, counter, devices);
  printf("%s FAIL (ran on the host)\n", program_name);
  exit(2);
}

static inline double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

// hash32: a deterministic pseudo-random value, the same on the host and on the device.
#if defined(_OPENMP)
#pragma omp declare target
#endif
#if defined(_OPENACC)
#pragma acc routine seq
#endif
static inline unsigned hash32(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}
#if defined(_OPENMP)
#pragma omp end declare target
#endif

// arg_long: argv[i] as a positive number, or DEFAULT when absent.
static inline long arg_long(int argc, char **argv, int i, long def) {
  if (argc <= i) return def;
  char *end = NULL;
  long v = strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v <= 0) fail("argument %d ('%s') is not a positive number", i, argv[i]);
  return v;
}

#endif
