// Shared scaffolding of Ferry's benchmarks: options, one ferryd per process, the loader
// pointed at Ferry and the native platform side by side, and result lines.
//
// Every benchmark runs the same measurement on the native platform and on Ferry in one
// process and prints lines such as
//   noop native median_us=12.3 mean_us=13.0 ...
//   noop ferry median_us=45.6 mean_us=48.2 ...
//   noop ratio median=3.71 mean=3.71
// Benchmarks print numbers; nothing here judges them.
#pragma once

#include <CL/cl.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ferry::bench {

/// What a benchmark accepts besides the common options.
struct bench_info {
  const char* name;            // "noop"
  const char* summary;         // one line for --help
  int default_repeats;         // what --repeats overrides (-1: per-case defaults)
  const char* repeats_meaning; // "measured rounds", ...
  bool takes_commands = false; // --commands N (throughput)
  std::size_t default_commands = 0;
};

struct options {
  int repeats = -1;            // -1: the benchmark's defaults
  std::size_t commands = 0;
  std::string native_platform; // substring of the native platform's name
  std::string bin_dir;         // build/P
};

/// Parses argv; prints usage and exits on --help (0) or bad arguments (2).
options parse_options(int argc, char** argv, const bench_info& info);

/// One platform's first device, with a context and an in-order queue (released on
/// destruction).
struct target {
  std::string label;  // "native" or "ferry"
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string platform_name;
  std::string device_name;

  target() = default;
  target(const target&) = delete;
  target& operator=(const target&) = delete;
  ~target();

  /// Builds `source` and returns the kernel `name`; throws bench_error on failure.
  cl_kernel kernel(const char* source, const char* name);

 private:
  std::vector<cl_program> programs_;
  std::vector<cl_kernel> kernels_;
};

/// An OpenCL call failed, or the setup did.
struct bench_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Throws bench_error naming `what` unless rc is CL_SUCCESS.
void check(cl_int rc, const char* what);

/// The process-wide setup: ferryd (unless FERRY_SERVERS is set already), the loader
/// environment (vendors-all), then both platforms. Construct it before any OpenCL call.
class session {
 public:
  session(const options& opts, const bench_info& info);
  ~session();

  /// Runs `measure` on the native platform and then on Ferry, printing each result line
  /// with the label, and finally the ratio line. Returns the process exit status: 0, or 1
  /// when a platform is missing or a measurement failed.
  int run(const std::function<void(target&)>& measure);

 private:
  std::unique_ptr<target> open(cl_platform_id platform, const char* label);

  options opts_;
  bench_info info_;
  struct daemon_holder;
  std::unique_ptr<daemon_holder> daemon_;
  std::string setup_error_;
};

// ---------------------------------------------------------------------------------------
// Numbers

using clock = std::chrono::steady_clock;

double median(std::vector<double> values);
double mean(const std::vector<double>& values);

/// Collects "key=value" pairs of one target for the ratio line.
class results {
 public:
  static results& instance();
  void record(const std::string& label, const std::string& key, double value);
  std::optional<double> get(const std::string& label, const std::string& key) const;
  const std::vector<std::string>& keys() const { return keys_; }

 private:
  std::vector<std::string> keys_;
  std::vector<std::pair<std::string, std::pair<std::string, double>>> values_;
};

/// Prints "<bench> <label> <text>" and flushes (so partial results survive a crash).
void print_line(const std::string& bench, const std::string& label, const std::string& text);
std::string format(double value, int precision = 1);

}  // namespace ferry::bench
