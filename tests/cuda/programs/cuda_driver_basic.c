// The CUDA driver API by hand, as a client of libcuda.so.1 sees it: dlopen("libcuda.so.1")
// and dlsym of each entry point under its exported name (as GCC's libgomp plugin and
// cuda-bindings do), so that the same binary runs on NVIDIA's driver and on Ferry's
// libcuda.so.1, whichever LD_LIBRARY_PATH finds first.
//
// It initialises the driver, lists the devices, creates a context, loads a hand-written PTX
// module, launches its kernel with kernelParams and with the packed "extra" buffer, runs a
// stream with events and a host callback, reads cuMemGetInfo, and checks the codes of calls
// that must fail. One line per check on stdout ("cuda_driver_basic CHECK ok ..." or
// "... FAIL: ..."), then a summary line; exit status 0 only when every check passed.
//
// The kernel is saxpy(u32 n, f32 a, u64 x, u64 y): y[i] = a*x[i] + y[i]. Ferry's CPU fake
// driver (CI) recognises kernels by the name on their ".entry NAME(" line and runs its own
// saxpy, so this program runs there too.
//
// Build: gcc -O2 -I/usr/local/cuda/include cuda_driver_basic.c -o cuda_driver_basic -ldl
// (only cuda.h's types and constants are used; nothing links against libcuda).
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ptx[] =
    ".version 7.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    "\n"
    "// y[i] = a * x[i] + y[i] for i < n, one thread per element.\n"
    ".visible .entry saxpy(\n"
    "\t.param .u32 n,\n"
    "\t.param .f32 a,\n"
    "\t.param .u64 x,\n"
    "\t.param .u64 y\n"
    ")\n"
    "{\n"
    "\t.reg .pred\t%out;\n"
    "\t.reg .u32\t%n, %i, %block, %width, %lane;\n"
    "\t.reg .f32\t%a, %xi, %yi;\n"
    "\t.reg .u64\t%x, %y, %offset;\n"
    "\n"
    "\tld.param.u32\t%n, [n];\n"
    "\tmov.u32\t%block, %ctaid.x;\n"
    "\tmov.u32\t%width, %ntid.x;\n"
    "\tmov.u32\t%lane, %tid.x;\n"
    "\tmad.lo.u32\t%i, %block, %width, %lane;\n"
    "\tsetp.ge.u32\t%out, %i, %n;\n"
    "\t@%out bra\tdone;\n"
    "\tld.param.f32\t%a, [a];\n"
    "\tld.param.u64\t%x, [x];\n"
    "\tld.param.u64\t%y, [y];\n"
    "\tcvta.to.global.u64\t%x, %x;\n"
    "\tcvta.to.global.u64\t%y, %y;\n"
    "\tmul.wide.u32\t%offset, %i, 4;\n"
    "\tadd.u64\t%x, %x, %offset;\n"
    "\tadd.u64\t%y, %y, %offset;\n"
    "\tld.global.f32\t%xi, [%x];\n"
    "\tld.global.f32\t%yi, [%y];\n"
    "\tfma.rn.f32\t%yi, %a, %xi, %yi;\n"
    "\tst.global.f32\t[%y], %yi;\n"
    "done:\n"
    "\tret;\n"
    "}\n";

// The entry points, typed by hand with the exported symbol's own signature: cuda.h maps
// some names to newer versions (CUDA 13's cuCtxCreate is cuCtxCreate_v4, with another
// signature), while clients such as libgomp look up the _v2 symbols named here.
static struct {
  CUresult (*init)(unsigned int);
  CUresult (*driver_get_version)(int *);
  CUresult (*device_get_count)(int *);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*device_get_name)(char *, int, CUdevice);
  CUresult (*device_get_attribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*device_total_mem)(size_t *, CUdevice);
  CUresult (*ctx_create)(CUcontext *, unsigned int, CUdevice);
  CUresult (*ctx_destroy)(CUcontext);
  CUresult (*ctx_synchronize)(void);
  CUresult (*module_load_data)(CUmodule *, const void *);
  CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
  CUresult (*module_unload)(CUmodule);
  CUresult (*mem_alloc)(CUdeviceptr *, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*mem_get_info)(size_t *, size_t *);
  CUresult (*memcpy_htod)(CUdeviceptr, const void *, size_t);
  CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t);
  CUresult (*memcpy_htod_async)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*memcpy_dtoh_async)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*launch_kernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
                            unsigned int, unsigned int, CUstream, void **, void **);
  CUresult (*stream_create)(CUstream *, unsigned int);
  CUresult (*stream_destroy)(CUstream);
  CUresult (*stream_synchronize)(CUstream);
  CUresult (*stream_add_callback)(CUstream, CUstreamCallback, void *, unsigned int);
  CUresult (*event_create)(CUevent *, unsigned int);
  CUresult (*event_record)(CUevent, CUstream);
  CUresult (*event_query)(CUevent);
  CUresult (*event_synchronize)(CUevent);
  CUresult (*event_elapsed_time)(float *, CUevent, CUevent);
  CUresult (*event_destroy)(CUevent);
  CUresult (*get_error_name)(CUresult, const char **);
} cu;

static const struct {
  const char *symbol;
  void **slot;
  int optional;
} entry_points[] = {
    {"cuInit", (void **)&cu.init, 0},
    {"cuDriverGetVersion", (void **)&cu.driver_get_version, 0},
    {"cuDeviceGetCount", (void **)&cu.device_get_count, 0},
    {"cuDeviceGet", (void **)&cu.device_get, 0},
    {"cuDeviceGetName", (void **)&cu.device_get_name, 0},
    {"cuDeviceGetAttribute", (void **)&cu.device_get_attribute, 0},
    {"cuDeviceTotalMem_v2", (void **)&cu.device_total_mem, 0},
    {"cuCtxCreate_v2", (void **)&cu.ctx_create, 0},
    {"cuCtxDestroy_v2", (void **)&cu.ctx_destroy, 0},
    {"cuCtxSynchronize", (void **)&cu.ctx_synchronize, 0},
    {"cuModuleLoadData", (void **)&cu.module_load_data, 0},
    {"cuModuleGetFunction", (void **)&cu.module_get_function, 0},
    {"cuModuleUnload", (void **)&cu.module_unload, 0},
    {"cuMemAlloc_v2", (void **)&cu.mem_alloc, 0},
    {"cuMemFree_v2", (void **)&cu.mem_free, 0},
    {"cuMemGetInfo_v2", (void **)&cu.mem_get_info, 0},
    {"cuMemcpyHtoD_v2", (void **)&cu.memcpy_htod, 0},
    {"cuMemcpyDtoH_v2", (void **)&cu.memcpy_dtoh, 0},
    {"cuMemcpyHtoDAsync_v2", (void **)&cu.memcpy_htod_async, 0},
    {"cuMemcpyDtoHAsync_v2", (void **)&cu.memcpy_dtoh_async, 0},
    {"cuLaunchKernel", (void **)&cu.launch_kernel, 0},
    {"cuStreamCreate", (void **)&cu.stream_create, 0},
    {"cuStreamDestroy_v2", (void **)&cu.stream_destroy, 0},
    {"cuStreamSynchronize", (void **)&cu.stream_synchronize, 0},
    {"cuStreamAddCallback", (void **)&cu.stream_add_callback, 0},
    {"cuEventCreate", (void **)&cu.event_create, 0},
    {"cuEventRecord", (void **)&cu.event_record, 0},
    {"cuEventQuery", (void **)&cu.event_query, 0},
    {"cuEventSynchronize", (void **)&cu.event_synchronize, 0},
    {"cuEventElapsedTime", (void **)&cu.event_elapsed_time, 0},
    {"cuEventDestroy_v2", (void **)&cu.event_destroy, 0},
    {"cuGetErrorName", (void **)&cu.get_error_name, 1},
};

static int checks, failures;

static const char *error_name(CUresult r) {
  const char *name = NULL;
  if (cu.get_error_name != NULL && cu.get_error_name(r, &name) == CUDA_SUCCESS && name != NULL) return name;
  return "?";
}

// pass/failed: one line for a check, with what it found (deterministic values only: the
// lines of a native run and a run through Ferry are compared). failed keeps going: later
// checks still tell something.
static void report(const char *check, const char *verdict, const char *fmt, va_list args) {
  char found[512];
  vsnprintf(found, sizeof found, fmt, args);
  ++checks;
  printf("cuda_driver_basic %s %s%s%s\n", check, verdict, found[0] ? " " : "", found);
}

__attribute__((format(printf, 2, 3))) static void pass(const char *check, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  report(check, "ok", fmt, args);
  va_end(args);
}

__attribute__((format(printf, 2, 3))) static void failed(const char *check, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  ++failures;
  report(check, "FAIL:", fmt, args);
  va_end(args);
}

// expect: CHECK passes when the call returned WANT. Returns whether it did.
static int expect(const char *check, CUresult got, CUresult want) {
  if (got == want) {
    if (want == CUDA_SUCCESS)
      pass(check, "%s", "");
    else
      pass(check, "code=%d", (int)want);
    return 1;
  }
  failed(check, "returned %d (%s), want %d (%s)", (int)got, error_name(got), (int)want, error_name(want));
  return 0;
}

static void summary(void) { printf("cuda_driver_basic checks=%d failures=%d\n", checks, failures); }

// A call that later checks depend on: without it the program cannot go on.
#define require(check, call)                                                                   \
  do {                                                                                          \
    const CUresult r_ = (call);                                                                 \
    if (r_ != CUDA_SUCCESS) {                                                                   \
      failed(check, "%s returned %d (%s); cannot go on", #call, (int)r_, error_name(r_));       \
      summary();                                                                                \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

// What the stream callback saw: it runs after the work queued before it, so the copy back
// must be complete when it looks.
struct callback_state {
  atomic_int calls;
  CUstream stream;
  CUresult status;
  int saw_stream;
  int saw_copy;
  const float *out;
  size_t n;
  float want_first, want_last;
};

static void CUDA_CB on_stream_done(CUstream stream, CUresult status, void *user) {
  struct callback_state *s = user;
  s->status = status;
  s->saw_stream = stream == s->stream;
  s->saw_copy = s->out[0] == s->want_first && s->out[s->n - 1] == s->want_last;
  atomic_fetch_add(&s->calls, 1);
}

static float x_of(size_t i) { return (float)(i % 1000) * 0.5f; }
static float y_of(size_t i) { return (float)(i % 333) * 0.25f; }

// check_saxpy: y must be a*x + y0, applied TIMES times (exact: small multiples of 1/4).
static int check_saxpy(const char *check, const float *y, size_t n, float a, int times, double *checksum) {
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) {
    float want = y_of(i);
    for (int t = 0; t < times; ++t) want = a * x_of(i) + want;
    if (y[i] != want) {
      failed(check, "y[%zu] is %.9g, want %.9g", i, y[i], want);
      return 0;
    }
    sum += y[i];
  }
  *checksum = sum;
  return 1;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    failed("load", "dlopen(\"libcuda.so.1\"): %s", dlerror());
    summary();
    return 1;
  }
  struct link_map *map = NULL;
  if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map != NULL)
    fprintf(stderr, "cuda_driver_basic: libcuda.so.1 is %s\n", map->l_name);
  int missing = 0;
  for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; ++i) {
    *entry_points[i].slot = dlsym(lib, entry_points[i].symbol);
    if (*entry_points[i].slot == NULL && !entry_points[i].optional) {
      fprintf(stderr, "cuda_driver_basic: libcuda.so.1 has no %s\n", entry_points[i].symbol);
      ++missing;
    }
  }
  if (missing) {
    failed("load", "libcuda.so.1 lacks %d entry point(s) (named on stderr)", missing);
    summary();
    return 1;
  }
  pass("load", "entry_points=%zu", sizeof entry_points / sizeof entry_points[0]);

  // Before cuInit every call answers CUDA_ERROR_NOT_INITIALIZED.
  int count = -1;
  expect("count_before_init", cu.device_get_count(&count), CUDA_ERROR_NOT_INITIALIZED);
  require("init", cu.init(0));
  pass("init", "%s", "");
  int version = 0;
  require("driver_version", cu.driver_get_version(&version));
  pass("driver_version", "version=%d", version);

  require("device_count", cu.device_get_count(&count));
  if (count < 1) {
    failed("device_count", "count=%d: no device", count);
    summary();
    return 1;
  }
  pass("device_count", "count=%d", count);
  CUdevice dev = -1;
  for (int d = 0; d < count; ++d) {
    char name[256] = {0}, check[32];
    int major = 0, minor = 0, sms = 0, warp = 0, max_threads = 0;
    size_t total = 0;
    snprintf(check, sizeof check, "device_%d", d);
    require(check, cu.device_get(&dev, d));
    require(check, cu.device_get_name(name, (int)sizeof name, dev));
    require(check, cu.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    require(check, cu.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    require(check, cu.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    require(check, cu.device_get_attribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
    require(check, cu.device_get_attribute(&max_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev));
    require(check, cu.device_total_mem(&total, dev));
    if (name[0] == '\0' || major < 1 || sms < 1 || warp != 32 || max_threads < 32 || total == 0)
      failed(check, "name=\"%s\" cc=%d.%d sms=%d warp=%d max_threads_per_block=%d total_mem=%zu", name, major, minor,
             sms, warp, max_threads, total);
    else
      pass(check, "name=\"%s\" cc=%d.%d sms=%d max_threads_per_block=%d total_mib=%zu", name, major, minor, sms,
           max_threads, total >> 20);
  }
  expect("device_get_out_of_range", cu.device_get(&dev, count), CUDA_ERROR_INVALID_DEVICE);
  require("device_get", cu.device_get(&dev, 0));

  CUcontext ctx = NULL;
  require("ctx_create", cu.ctx_create(&ctx, 0, dev));
  pass("ctx_create", "%s", "");

  size_t free_mem = 0, total_mem = 0;
  require("mem_get_info", cu.mem_get_info(&free_mem, &total_mem));
  if (free_mem == 0 || free_mem > total_mem)
    failed("mem_get_info", "free=%zu total=%zu", free_mem, total_mem);
  else
    pass("mem_get_info", "free<=total");

  CUmodule module = NULL;
  CUfunction saxpy = NULL, missing_fn = NULL;
  require("module_load_data", cu.module_load_data(&module, ptx));
  pass("module_load_data", "%s", "");
  require("module_get_function", cu.module_get_function(&saxpy, module, "saxpy"));
  pass("module_get_function", "name=saxpy");
  expect("module_get_function_missing", cu.module_get_function(&missing_fn, module, "no_such_kernel"),
         CUDA_ERROR_NOT_FOUND);

  // Launch with kernelParams, then again with the packed parameter buffer.
  const unsigned n = 1u << 20, block = 256, grid = (n + block - 1) / block;
  float a = 1.5f;
  const size_t bytes = (size_t)n * sizeof(float);
  float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
  if (!x || !y || !out) {
    failed("host_memory", "out of host memory");
    summary();
    return 1;
  }
  for (size_t i = 0; i < n; ++i) {
    x[i] = x_of(i);
    y[i] = y_of(i);
  }
  CUdeviceptr dx = 0, dy = 0;
  require("mem_alloc", cu.mem_alloc(&dx, bytes));
  require("mem_alloc", cu.mem_alloc(&dy, bytes));
  require("memcpy_htod", cu.memcpy_htod(dx, x, bytes));
  require("memcpy_htod", cu.memcpy_htod(dy, y, bytes));
  unsigned n_arg = n;
  void *params[] = {&n_arg, &a, &dx, &dy};
  double checksum = 0.0;
  if (expect("launch_kernel_params", cu.launch_kernel(saxpy, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL),
             CUDA_SUCCESS)) {
    require("ctx_synchronize", cu.ctx_synchronize());
    require("memcpy_dtoh", cu.memcpy_dtoh(out, dy, bytes));
    if (check_saxpy("result_kernel_params", out, n, a, 1, &checksum))
      pass("result_kernel_params", "n=%u checksum=%.2f", n, checksum);
  }

  // The same kernel, parameters packed at their PTX offsets (u32 at 0, f32 at 4, u64s at 8 and 16).
  struct {
    uint32_t n;
    float a;
    CUdeviceptr x, y;
  } packed = {n, a, dx, dy};
  size_t packed_size = sizeof packed;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                   CU_LAUNCH_PARAM_END};
  if (expect("launch_extra", cu.launch_kernel(saxpy, grid, 1, 1, block, 1, 1, 0, NULL, NULL, extra), CUDA_SUCCESS)) {
    require("ctx_synchronize", cu.ctx_synchronize());
    require("memcpy_dtoh", cu.memcpy_dtoh(out, dy, bytes));
    if (check_saxpy("result_extra", out, n, a, 2, &checksum)) pass("result_extra", "n=%u checksum=%.2f", n, checksum);
  }

  // Calls that must fail, and leave the context usable.
  expect("launch_2048_threads", cu.launch_kernel(saxpy, 1, 1, 1, 2048, 1, 1, 0, NULL, params, NULL),
         CUDA_ERROR_INVALID_VALUE);
  expect("mem_free_bogus", cu.mem_free((CUdeviceptr)0xdead0000ull), CUDA_ERROR_INVALID_VALUE);

  // A stream: copy in, launch, copy back, events around it and a host callback at its end.
  CUstream stream = NULL;
  CUevent started = NULL, finished = NULL;
  require("stream_create", cu.stream_create(&stream, CU_STREAM_DEFAULT));
  require("event_create", cu.event_create(&started, CU_EVENT_DEFAULT));
  require("event_create", cu.event_create(&finished, CU_EVENT_DEFAULT));
  memset(out, 0, bytes);
  struct callback_state state = {.stream = stream,
                                 .status = CUDA_ERROR_UNKNOWN,
                                 .out = out,
                                 .n = n,
                                 .want_first = a * x_of(0) + y_of(0),
                                 .want_last = a * x_of(n - 1) + y_of(n - 1)};
  atomic_init(&state.calls, 0);
  require("stream_work", cu.event_record(started, stream));
  require("stream_work", cu.memcpy_htod_async(dy, y, bytes, stream));
  require("stream_work", cu.launch_kernel(saxpy, grid, 1, 1, block, 1, 1, 0, stream, params, NULL));
  require("stream_work", cu.memcpy_dtoh_async(out, dy, bytes, stream));
  require("stream_work", cu.event_record(finished, stream));
  require("stream_add_callback", cu.stream_add_callback(stream, on_stream_done, &state, 0));
  require("stream_synchronize", cu.stream_synchronize(stream));
  if (check_saxpy("stream_result", out, n, a, 1, &checksum)) pass("stream_result", "n=%u checksum=%.2f", n, checksum);
  const int calls = atomic_load(&state.calls);
  if (calls != 1 || state.status != CUDA_SUCCESS || !state.saw_stream || !state.saw_copy)
    failed("stream_callback", "calls=%d status=%d its_stream=%d copy_done=%d", calls, (int)state.status,
           state.saw_stream, state.saw_copy);
  else
    pass("stream_callback", "calls=1 after_copy=yes");
  expect("event_synchronize", cu.event_synchronize(finished), CUDA_SUCCESS);
  expect("event_query", cu.event_query(finished), CUDA_SUCCESS);
  float elapsed_ms = -1.0f;
  const CUresult elapsed = cu.event_elapsed_time(&elapsed_ms, started, finished);
  if (elapsed != CUDA_SUCCESS || !(elapsed_ms >= 0.0f))
    failed("event_elapsed_time", "returned %d (%s), %g ms", (int)elapsed, error_name(elapsed), elapsed_ms);
  else
    pass("event_elapsed_time", "nonnegative");
  fprintf(stderr, "cuda_driver_basic: the stream's work took %.3f ms between its events\n", elapsed_ms);

  // The context still works after the failed calls: one more launch.
  require("memcpy_htod", cu.memcpy_htod(dy, y, bytes));
  if (expect("launch_after_errors", cu.launch_kernel(saxpy, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL),
             CUDA_SUCCESS)) {
    require("ctx_synchronize", cu.ctx_synchronize());
    require("memcpy_dtoh", cu.memcpy_dtoh(out, dy, bytes));
    if (check_saxpy("result_after_errors", out, n, a, 1, &checksum)) pass("result_after_errors", "%s", "");
  }

  // Everything released, in order, each call answering CUDA_SUCCESS.
  struct {
    const char *what;
    CUresult result;
  } releases[7];
  int r = 0;
  releases[r].what = "cuEventDestroy", releases[r++].result = cu.event_destroy(started);
  releases[r].what = "cuEventDestroy", releases[r++].result = cu.event_destroy(finished);
  releases[r].what = "cuStreamDestroy", releases[r++].result = cu.stream_destroy(stream);
  releases[r].what = "cuMemFree", releases[r++].result = cu.mem_free(dx);
  releases[r].what = "cuMemFree", releases[r++].result = cu.mem_free(dy);
  releases[r].what = "cuModuleUnload", releases[r++].result = cu.module_unload(module);
  releases[r].what = "cuCtxDestroy", releases[r++].result = cu.ctx_destroy(ctx);
  int released = 1;
  for (int i = 0; i < r && released; ++i)
    if (releases[i].result != CUDA_SUCCESS) {
      failed("release", "%s returned %d (%s)", releases[i].what, (int)releases[i].result, error_name(releases[i].result));
      released = 0;
    }
  if (released) pass("release", "%s", "");

  free(x), free(y), free(out);
  summary();
  return failures == 0 ? 0 : 1;
}
