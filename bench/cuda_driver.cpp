// CUDA remoting's figures (docs/cuda.md, issue 24): what a program pays through the
// driver API, natively or through Ferry's libcuda.so.1, whichever the loader finds.
// bench/gpu/cuda.sh runs it twice in one go (NVIDIA's driver, then Ferry's on
// LD_LIBRARY_PATH) and puts the figures side by side.
//   - launch_sync: an empty kernel launched and its stream synchronized, the median µs
//     (the round trip every GCC OpenACC kernel pays);
//   - h2d / d2h: cuMemcpyHtoD and cuMemcpyDtoH of pageable memory, 4 KiB to 1 GiB, MB/s;
//   - region: what a directive program's data region copies in a fresh context (two
//     copies in of --region-bytes, one copy back), each timed, then the same again (warm):
//     the first copies pay whatever a session's staging costs the first time;
//   - tcp_stream: the loopback TCP stream of the largest size in the same run, MB/s (the
//     ceiling of a copy through Ferry over TCP);
//   - sgemm: an N x N single-precision product from a PTX file (bench/cuda/sgemm.cu,
//     compiled by nvcc where the toolkit is), GFLOP/s, its wall time and its time on
//     the GPU (events around it).
// It takes the driver by dlopen, as GCC's libgomp does, so it builds without CUDA.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;
using handle = void*;

struct driver {
  void* library = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(int*, int);
  CUresult (*cuDeviceGetName)(char*, int, int);
  CUresult (*cuDevicePrimaryCtxRetain)(handle*, int);
  CUresult (*cuCtxSetCurrent)(handle);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuModuleLoadData)(handle*, const void*);
  CUresult (*cuModuleGetFunction)(handle*, handle, const char*);
  CUresult (*cuLaunchKernel)(handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, handle,
                             void**, void**);
  CUresult (*cuStreamSynchronize)(handle);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuEventCreate)(handle*, unsigned);
  CUresult (*cuEventRecord)(handle, handle);
  CUresult (*cuEventElapsedTime)(float*, handle, handle);

  template <class F>
  bool get(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(library, name));
    if (f == nullptr) std::fprintf(stderr, "cuda_driver: the driver lacks %s\n", name);
    return f != nullptr;
  }
  bool open() {
    library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      std::fprintf(stderr, "cuda_driver: cannot load libcuda.so.1: %s\n", dlerror());
      return false;
    }
    return get(cuInit, "cuInit") && get(cuDeviceGet, "cuDeviceGet") && get(cuDeviceGetName, "cuDeviceGetName") &&
           get(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") && get(cuCtxSetCurrent, "cuCtxSetCurrent") &&
           get(cuMemAlloc, "cuMemAlloc_v2") && get(cuMemFree, "cuMemFree_v2") &&
           get(cuMemcpyHtoD, "cuMemcpyHtoD_v2") && get(cuMemcpyDtoH, "cuMemcpyDtoH_v2") &&
           get(cuModuleLoadData, "cuModuleLoadData") && get(cuModuleGetFunction, "cuModuleGetFunction") &&
           get(cuLaunchKernel, "cuLaunchKernel") && get(cuStreamSynchronize, "cuStreamSynchronize") &&
           get(cuCtxSynchronize, "cuCtxSynchronize") && get(cuEventCreate, "cuEventCreate") &&
           get(cuEventRecord, "cuEventRecord") && get(cuEventElapsedTime, "cuEventElapsedTime");
  }
};

constexpr const char* noop_ptx = R"PTX(
.version 7.0
.target sm_80
.address_size 64
.visible .entry noop()
{
  ret;
}
)PTX";

bool check(CUresult rc, const char* what) {
  if (rc != 0) std::fprintf(stderr, "cuda_driver: %s failed with CUresult %d\n", what, rc);
  return rc == 0;
}

using ferry::bench::median;
using ferry::bench::tcp_stream_mb_s;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void usage() {
  std::printf(
      "usage: ferry_bench_cuda_driver [options]\n"
      "Times the CUDA driver API of whichever libcuda.so.1 the loader finds (NVIDIA's, or\n"
      "Ferry's with LD_LIBRARY_PATH=<build>/lib/ferry-cuda) and prints one line per figure.\n\n"
      "options:\n"
      "  --label TEXT      the first word of each line (default: cuda)\n"
      "  --launches N      launch + synchronize rounds (default: 2000)\n"
      "  --max-size BYTES  largest copy (default: 1 GiB; sizes from 4 KiB, times 16)\n"
      "  --region-bytes N  each copy of the region figure (default: 64 MiB; 0: none)\n"
      "  --repeats N       timed runs per copy size and product, median (default: 5)\n"
      "  --sgemm-ptx FILE  PTX with the kernel sgemm(const float* a, const float* b, float* c, int n)\n"
      "  --sgemm-n N       the product's side (default: 4096)\n"
      "  --help            this text\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string label = "cuda", sgemm_ptx;
  int launches = 2000, repeats = 5, sgemm_n = 4096;
  size_t max_size = size_t{1} << 30, region_bytes = size_t{64} << 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ferry_bench_cuda_driver: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else if (a == "--label") {
      label = value();
    } else if (a == "--launches") {
      launches = std::atoi(value());
    } else if (a == "--max-size") {
      max_size = std::strtoull(value(), nullptr, 10);
    } else if (a == "--region-bytes") {
      const char* text = value();
      char* end = nullptr;
      region_bytes = std::strtoull(text, &end, 10);
      if (end == text || *end != '\0') {
        std::fprintf(stderr, "ferry_bench_cuda_driver: --region-bytes needs a byte count, not '%s'\n", text);
        return 2;
      }
    } else if (a == "--repeats") {
      repeats = std::atoi(value());
    } else if (a == "--sgemm-ptx") {
      sgemm_ptx = value();
    } else if (a == "--sgemm-n") {
      sgemm_n = std::atoi(value());
    } else {
      std::fprintf(stderr, "ferry_bench_cuda_driver: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  if (launches < 1 || repeats < 1 || sgemm_n < 16 || max_size < 4096) {
    std::fprintf(stderr, "ferry_bench_cuda_driver: counts and sizes must be positive (sizes at least 4096)\n");
    return 2;
  }
  driver d;
  if (!d.open()) return 1;
  int dev = 0;
  handle ctx = nullptr, module = nullptr, noop = nullptr;
  char name[256] = {};
  if (!check(d.cuInit(0), "cuInit") || !check(d.cuDeviceGet(&dev, 0), "cuDeviceGet") ||
      !check(d.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName") ||
      !check(d.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") ||
      !check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent") || !check(d.cuModuleLoadData(&module, noop_ptx), "cuModuleLoadData") ||
      !check(d.cuModuleGetFunction(&noop, module, "noop"), "cuModuleGetFunction"))
    return 1;
  Dl_info info{};
  dladdr(reinterpret_cast<void*>(d.cuInit), &info);
  std::printf("# %s: device \"%s\", driver %s\n", label.c_str(), name, info.dli_fname ? info.dli_fname : "?");

  // Launch + synchronize.
  std::vector<double> us;
  for (int i = 0; i < launches + 50; ++i) {
    auto t = std::chrono::steady_clock::now();
    if (!check(d.cuLaunchKernel(noop, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), "cuLaunchKernel") ||
        !check(d.cuStreamSynchronize(nullptr), "cuStreamSynchronize"))
      return 1;
    if (i >= 50) us.push_back(seconds_since(t) * 1e6);
  }
  std::printf("%s launch_sync_us=%.1f launches=%d\n", label.c_str(), median(us), launches);

  // A data region's copies in a fresh context, then again.
  if (region_bytes > 0) {
    std::vector<unsigned char> a(region_bytes), b(region_bytes), a_back(region_bytes);
    for (size_t i = 0; i < region_bytes; ++i) {
      a[i] = static_cast<unsigned char>(i * 7 + 1);
      b[i] = static_cast<unsigned char>(i * 13 + 5);
    }
    CUdeviceptr da = 0, db = 0;
    if (!check(d.cuMemAlloc(&da, region_bytes), "cuMemAlloc") || !check(d.cuMemAlloc(&db, region_bytes), "cuMemAlloc"))
      return 1;
    for (const char* round : {"first", "again"}) {
      std::fill(a_back.begin(), a_back.end(), 0);
      const auto start = std::chrono::steady_clock::now();
      auto t = start;
      double ms[3];
      if (!check(d.cuMemcpyHtoD(da, a.data(), region_bytes), "cuMemcpyHtoD")) return 1;
      ms[0] = seconds_since(t) * 1e3;
      t = std::chrono::steady_clock::now();
      if (!check(d.cuMemcpyHtoD(db, b.data(), region_bytes), "cuMemcpyHtoD")) return 1;
      ms[1] = seconds_since(t) * 1e3;
      t = std::chrono::steady_clock::now();
      if (!check(d.cuMemcpyDtoH(a_back.data(), da, region_bytes), "cuMemcpyDtoH")) return 1;
      ms[2] = seconds_since(t) * 1e3;
      const double total = seconds_since(start) * 1e3;
      if (a_back != a) {
        std::fprintf(stderr, "cuda_driver: the region's %zu bytes read back differ from those written\n", region_bytes);
        return 1;
      }
      std::printf("%s region round=%s bytes=%zu h2d_ms=%.2f h2d_second_ms=%.2f d2h_ms=%.2f total_ms=%.2f\n",
                  label.c_str(), round, region_bytes, ms[0], ms[1], ms[2], total);
    }
    d.cuMemFree(da);
    d.cuMemFree(db);
  }

  // Copies of pageable memory, both ways.
  std::vector<unsigned char> host(max_size), back(max_size);
  for (size_t i = 0; i < max_size; ++i) host[i] = static_cast<unsigned char>(i * 131 + 7);
  CUdeviceptr buffer = 0;
  if (!check(d.cuMemAlloc(&buffer, max_size), "cuMemAlloc")) return 1;
  for (size_t size = 4096; size <= max_size; size *= 16) {
    if (size * 16 > max_size && size != max_size) size = max_size;  // always end on the largest
    std::vector<double> h2d, d2h;
    const int rounds = size < (size_t{1} << 20) ? repeats * 20 : repeats;
    for (int r = 0; r < rounds; ++r) {
      auto t = std::chrono::steady_clock::now();
      if (!check(d.cuMemcpyHtoD(buffer, host.data(), size), "cuMemcpyHtoD")) return 1;
      h2d.push_back(size / seconds_since(t) / 1e6);
      t = std::chrono::steady_clock::now();
      if (!check(d.cuMemcpyDtoH(back.data(), buffer, size), "cuMemcpyDtoH")) return 1;
      d2h.push_back(size / seconds_since(t) / 1e6);
    }
    if (std::memcmp(host.data(), back.data(), size) != 0) {
      std::fprintf(stderr, "cuda_driver: the %zu bytes read back differ from those written\n", size);
      return 1;
    }
    std::printf("%s copy bytes=%zu h2d_mb_s=%.0f d2h_mb_s=%.0f\n", label.c_str(), size, median(h2d), median(d2h));
    if (size == max_size) break;
  }
  d.cuMemFree(buffer);
  // The loopback TCP stream of the same size in the same run: what a copy through
  // Ferry over TCP cannot beat (each byte is copied into and out of the kernel once).
  const std::vector<double> stream = tcp_stream_mb_s(max_size, repeats);
  if (!stream.empty()) std::printf("%s tcp_stream bytes=%zu mb_s=%.0f\n", label.c_str(), max_size, median(stream));

  // A compute-bound product from PTX.
  if (!sgemm_ptx.empty()) {
    std::ifstream in(sgemm_ptx, std::ios::binary);
    std::string ptx((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    handle sgemm_module = nullptr, sgemm = nullptr;
    if (ptx.empty()) {
      std::fprintf(stderr, "cuda_driver: cannot read %s\n", sgemm_ptx.c_str());
      return 1;
    }
    if (!check(d.cuModuleLoadData(&sgemm_module, ptx.c_str()), "cuModuleLoadData (sgemm)") ||
        !check(d.cuModuleGetFunction(&sgemm, sgemm_module, "sgemm"), "cuModuleGetFunction (sgemm)"))
      return 1;
    const size_t n = static_cast<size_t>(sgemm_n), bytes = n * n * sizeof(float);
    std::vector<float> a(n * n), b(n * n), c(n * n);
    for (size_t i = 0; i < n * n; ++i) {
      a[i] = static_cast<float>(i % 17) * 0.25f;
      b[i] = static_cast<float>(i % 13) * 0.5f;
    }
    CUdeviceptr da = 0, db = 0, dc = 0;
    if (!check(d.cuMemAlloc(&da, bytes), "cuMemAlloc") || !check(d.cuMemAlloc(&db, bytes), "cuMemAlloc") ||
        !check(d.cuMemAlloc(&dc, bytes), "cuMemAlloc") || !check(d.cuMemcpyHtoD(da, a.data(), bytes), "cuMemcpyHtoD") ||
        !check(d.cuMemcpyHtoD(db, b.data(), bytes), "cuMemcpyHtoD"))
      return 1;
    int side = sgemm_n;
    void* params[] = {&da, &db, &dc, &side};
    const unsigned grid = static_cast<unsigned>((n + 15) / 16);
    // The product's time on the GPU (events around it) beside the program's wall
    // time: through Ferry the difference is what waiting for the GPU adds.
    handle before = nullptr, after = nullptr;
    if (!check(d.cuEventCreate(&before, 0), "cuEventCreate") || !check(d.cuEventCreate(&after, 0), "cuEventCreate"))
      return 1;
    std::vector<double> seconds, gpu_ms;
    for (int r = 0; r < repeats + 1; ++r) {
      auto t = std::chrono::steady_clock::now();
      if (!check(d.cuEventRecord(before, nullptr), "cuEventRecord") ||
          !check(d.cuLaunchKernel(sgemm, grid, grid, 1, 16, 16, 1, 0, nullptr, params, nullptr), "cuLaunchKernel (sgemm)") ||
          !check(d.cuEventRecord(after, nullptr), "cuEventRecord") || !check(d.cuCtxSynchronize(), "cuCtxSynchronize"))
        return 1;
      if (r > 0) seconds.push_back(seconds_since(t));
      float ms = 0;
      if (!check(d.cuEventElapsedTime(&ms, before, after), "cuEventElapsedTime")) return 1;
      if (r > 0) gpu_ms.push_back(ms);
    }
    if (!check(d.cuMemcpyDtoH(c.data(), dc, bytes), "cuMemcpyDtoH")) return 1;
    // One element against the host's sum.
    const size_t row = n / 3, column = n / 5;
    double expected = 0;
    for (size_t k = 0; k < n; ++k) expected += static_cast<double>(a[row * n + k]) * b[k * n + column];
    if (std::abs(c[row * n + column] - expected) > 1e-3 * std::abs(expected) + 1e-3) {
      std::fprintf(stderr, "cuda_driver: sgemm gave %g at (%zu, %zu), expected %g\n", c[row * n + column], row, column,
                   expected);
      return 1;
    }
    const double flops = 2.0 * static_cast<double>(n) * n * n;
    std::printf("%s sgemm n=%zu gflop_s=%.0f ms=%.3f gpu_ms=%.3f\n", label.c_str(), n, flops / median(seconds) / 1e9,
                median(seconds) * 1e3, median(gpu_ms));
  }
  return 0;
}
