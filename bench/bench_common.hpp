// Shared scaffolding of Ferry's benchmarks: options, the ferryd daemons of a process, the
// loader pointed at Ferry and the native platform side by side, targets over one or
// several devices, and result lines.
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
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ferry::bench {

/// What a benchmark accepts besides the common options, and what it needs.
struct bench_info {
  const char* name;            // "noop"
  const char* summary;         // one line for --help
  int default_repeats;         // what --repeats overrides (-1: per-case defaults)
  const char* repeats_meaning; // "measured rounds", ...
  bool takes_commands = false; // --commands N (throughput)
  std::size_t default_commands = 0;
  const char* commands_meaning = "kernels per run";  // what --commands counts, for --help
  /// Devices a target holds: on Ferry the first device of each of this many servers (as
  /// many ferryd are started), natively the first this many devices of the platform.
  std::size_t devices = 1;
  bool takes_size = false;     // --size N (matmul_split)
  std::size_t default_size = 0; // 0: the benchmark's own cases
  const char* size_meaning = "";
  /// More arguments for the ferryd it starts (transfer_file: --file-root DIR).
  std::vector<std::string> daemon_args{};
};

/// Which halves of a benchmark run (--only).
enum class halves { both, native, ferry };

struct options {
  int repeats = -1;            // -1: the benchmark's defaults
  std::size_t commands = 0;
  std::size_t size = 0;
  halves only = halves::both;
  std::string native_platform; // substring of the native platform's name
  std::string bin_dir;         // build/P
  /// --security: what the started ferryd demands (with a throw-away token and
  /// certificate authority), to measure what it costs.
  enum class security { none, token, tls } secure = security::none;
};

/// Parses argv; prints usage and exits on --help (0) or bad arguments (2).
options parse_options(int argc, char** argv, const bench_info& info);

/// One context over one or several devices of a platform, with an in-order queue per
/// device (all released on destruction). `device` and `queue` are the first ones, for
/// benchmarks that use one device.
struct target {
  std::string label;  // "native" or "ferry"
  cl_platform_id platform = nullptr;
  std::vector<cl_device_id> devices;
  std::vector<cl_command_queue> queues;  // queues[i] runs on devices[i]
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string platform_name;
  std::string device_name;  // of the first device
  /// Where each device lives, for the progress line: "127.0.0.1:4000" on Ferry
  /// (CL_DEVICE_FERRY_SERVER_ADDRESS), "device 1" natively.
  std::vector<std::string> locations;

  /// A context and queues over `devices` of `platform`; throws bench_error.
  target(std::string label, cl_platform_id platform, std::vector<cl_device_id> devices,
         std::vector<std::string> locations);
  target(const target&) = delete;
  target& operator=(const target&) = delete;
  ~target();

  /// A new target over the first `count` devices of this one (its own context).
  std::unique_ptr<target> first(std::size_t count) const;

  /// Builds `source` for every device (with build `options`) and returns the kernel
  /// `name`; throws bench_error on failure.
  cl_kernel kernel(const char* source, const char* name, const char* options = "");

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

/// The process-wide setup: bench_info::devices ferryd daemons (unless FERRY_SERVERS is
/// set already), FERRY_SERVERS listing all of them, the loader environment (vendors-all),
/// POCL_DEVICES for several native devices, then both platforms. Construct it before
/// any OpenCL call.
class session {
 public:
  session(const options& opts, const bench_info& info);
  ~session();

  /// Runs `measure` on the native platform and then on Ferry (or only the half --only
  /// names), printing each result line with the label, and finally the ratio line.
  /// Returns the process exit status: 0, or 1 when a platform is missing or a
  /// measurement failed.
  int run(const std::function<void(target&)>& measure);

 private:
  std::unique_ptr<target> open_native(cl_platform_id platform) const;
  std::unique_ptr<target> open_ferry(cl_platform_id platform) const;

  options opts_;
  bench_info info_;
  struct daemons;
  std::unique_ptr<daemons> daemons_;
  std::string setup_error_;
};

// ---------------------------------------------------------------------------------------
// Pieces several benchmarks measure with

/// Microseconds of `rounds` empty kernels, each followed by clFinish, on `queue` (after
/// `warmup` untimed ones). `kernel` takes no arguments.
std::vector<double> empty_kernel_round_trips_us(cl_command_queue queue, cl_kernel kernel, int warmup, int rounds);

constexpr const char* empty_kernel_source = "kernel void empty(void) {}";

/// A buffer released on destruction.
class mem_object {
 public:
  mem_object(cl_context context, cl_mem_flags flags, std::size_t bytes, void* host = nullptr);
  mem_object(const mem_object&) = delete;
  mem_object& operator=(const mem_object&) = delete;
  ~mem_object();
  cl_mem get() const { return mem_; }
  /// For clSetKernelArg and wait lists.
  const cl_mem* address() const { return &mem_; }

 private:
  cl_mem mem_ = nullptr;
};

/// An event released on destruction (or when replaced).
class event {
 public:
  event() = default;
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  ~event() { reset(); }
  /// Releases the event held and gives the slot for an enqueue to fill.
  cl_event* out() {
    reset();
    return &event_;
  }
  cl_event get() const { return event_; }
  /// As a wait list (with count()): nullptr when no event is held.
  const cl_event* list() const { return event_ ? &event_ : nullptr; }
  cl_uint count() const { return event_ ? 1 : 0; }
  void reset() {
    if (event_) clReleaseEvent(event_);
    event_ = nullptr;
  }

 private:
  cl_event event_ = nullptr;
};

/// Page-aligned host memory, freed on destruction.
struct free_deleter {
  void operator()(void* p) const { std::free(p); }
};
using host_bytes = std::unique_ptr<unsigned char[], free_deleter>;
/// Throws bench_error when the memory cannot be had.
host_bytes allocate_host(std::size_t bytes);

/// A connected TCP pair over 127.0.0.1 (a listener, connect, accept; not socketpair)
/// with the socket options Ferry's links use, closed on destruction. Throws bench_error
/// when the loopback cannot be set up.
struct loopback_pair {
  int client = -1;  // the connecting end
  int server = -1;  // the accepted end
  loopback_pair();
  loopback_pair(const loopback_pair&) = delete;
  loopback_pair& operator=(const loopback_pair&) = delete;
  ~loopback_pair();
};

/// The floor any remote round trip stands on: 16 bytes there and back over loopback TCP
/// between two threads, timed per round; median µs of `rounds` after 100 warm-up, or -1.
double tcp_ping_pong_median_us(int rounds);

/// MB/s of moving `bytes` over loopback TCP from one thread to another in large writes,
/// one figure per repeat; empty when the loopback cannot be set up.
std::vector<double> tcp_stream_mb_s(std::size_t bytes, int repeats);

/// Throws bench_error("wrong result: ...") naming the first entry of C = A x B (float,
/// row-major, the n x n corner of matrices `stride` floats wide) that differs from a
/// double-precision CPU product: every entry up to 256², else 64 random entries (fixed
/// seed) and the four corners. The error is |c - exact| over the sum of |a_ik * b_kj|,
/// which stays meaningful when the entry is near zero; it must stay below 1e-3, and a NaN
/// (an entry never written) fails.
void check_matrix_product(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c,
                          std::size_t n, std::size_t stride);
/// Whether check_matrix_product compares every entry for this n.
bool checks_every_entry(std::size_t n);

/// "4KiB", "64MiB", "1GiB", or "<n>B" when no unit divides `bytes`: a size in result keys.
std::string size_label(std::size_t bytes);

/// `value` rounded up to a multiple of `multiple` (a global size to a work-group size).
inline std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// ---------------------------------------------------------------------------------------
// Numbers

using clock = std::chrono::steady_clock;

double median(std::vector<double> values);
double mean(const std::vector<double>& values);
double microseconds_since(clock::time_point start);
double seconds_since(clock::time_point start);

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

/// How Ferry's peer links of `t` carried bytes so far, from the servers' link counters:
/// "shared-memory+unix" (daemons of one host on Unix sockets), "tcp", "none"; "none"
/// for a native target.
std::string peer_path(const target& t);
std::string format(double value, int precision = 1);

}  // namespace ferry::bench
