#include "bench_common.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <sstream>

#include "process.hpp"  // tests/integration: ferryd and the loader environment, no gtest

namespace ferry::bench {
namespace {

constexpr const char* ferry_platform_name = "Ferry";

[[noreturn]] void usage(const bench_info& info, int status) {
  std::FILE* out = status == 0 ? stdout : stderr;
  std::fprintf(out,
               "usage: ferry_bench_%s [options]\n"
               "%s\n"
               "Runs on the native platform and on Ferry in one process and prints both.\n\n"
               "options:\n"
               "  --repeats N              %s (default: %s)\n",
               info.name, info.summary, info.repeats_meaning,
               info.default_repeats > 0 ? std::to_string(info.default_repeats).c_str() : "per case");
  if (info.takes_commands)
    std::fprintf(out, "  --commands N             kernels per run (default: %zu)\n", info.default_commands);
  std::fprintf(out,
               "  --native-platform TEXT   native platform whose name contains TEXT (default:\n"
               "                           \"Portable Computing Language\" if present, else the\n"
               "                           first platform that is not Ferry)\n"
               "  --bin-dir DIR            build tree with bin/ferryd and lib/libferry.so\n"
               "                           (default: $FERRY_BINARY_DIR, else %s)\n"
               "  --help                   this text\n\n"
               "environment: FERRY_SERVERS set means \"use these servers\" (no ferryd is started).\n",
               FERRY_BINARY_DIR);
  std::exit(status);
}

long parse_count(const bench_info& info, const char* flag, const char* text) {
  char* end = nullptr;
  const long value = text ? std::strtol(text, &end, 10) : 0;
  if (text == nullptr || *end != '\0' || value <= 0) {
    std::fprintf(stderr, "ferry_bench_%s: %s needs a positive number\n", info.name, flag);
    usage(info, 2);
  }
  return value;
}

std::string info_string(cl_platform_id p, cl_platform_info param) {
  size_t size = 0;
  if (clGetPlatformInfo(p, param, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string s(size, '\0');
  clGetPlatformInfo(p, param, size, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string device_name(cl_device_id d) {
  size_t size = 0;
  if (clGetDeviceInfo(d, CL_DEVICE_NAME, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string s(size, '\0');
  clGetDeviceInfo(d, CL_DEVICE_NAME, size, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::vector<cl_platform_id> platforms() {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_platform_id> out(count);
  clGetPlatformIDs(count, out.data(), nullptr);
  return out;
}

}  // namespace

options parse_options(int argc, char** argv, const bench_info& info) {
  options opts;
  opts.commands = info.default_commands;
  const char* env_bin = std::getenv("FERRY_BINARY_DIR");
  opts.bin_dir = env_bin && *env_bin ? env_bin : FERRY_BINARY_DIR;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--help" || arg == "-h") {
      usage(info, 0);
    } else if (arg == "--repeats") {
      opts.repeats = static_cast<int>(parse_count(info, "--repeats", value()));
    } else if (arg == "--commands" && info.takes_commands) {
      opts.commands = static_cast<std::size_t>(parse_count(info, "--commands", value()));
    } else if (arg == "--native-platform") {
      const char* v = value();
      if (v == nullptr) usage(info, 2);
      opts.native_platform = v;
    } else if (arg == "--bin-dir") {
      const char* v = value();
      if (v == nullptr) usage(info, 2);
      opts.bin_dir = v;
    } else {
      std::fprintf(stderr, "ferry_bench_%s: unknown option '%s'\n", info.name, arg.c_str());
      usage(info, 2);
    }
  }
  return opts;
}

void check(cl_int rc, const char* what) {
  if (rc != CL_SUCCESS) throw bench_error(std::string(what) + " failed with " + std::to_string(rc));
}

target::~target() {
  for (cl_kernel k : kernels_) clReleaseKernel(k);
  for (cl_program p : programs_) clReleaseProgram(p);
  if (queue) clReleaseCommandQueue(queue);
  if (context) clReleaseContext(context);
}

cl_kernel target::kernel(const char* source, const char* name) {
  cl_int rc = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &rc);
  check(rc, "clCreateProgramWithSource");
  programs_.push_back(program);
  if (clBuildProgram(program, 1, &device, "", nullptr, nullptr) != CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    throw bench_error("clBuildProgram failed:\n" + log);
  }
  cl_kernel k = clCreateKernel(program, name, &rc);
  check(rc, "clCreateKernel");
  kernels_.push_back(k);
  return k;
}

struct session::daemon_holder {
  std::unique_ptr<test::daemon_process> process;
};

session::session(const options& opts, const bench_info& info)
    : opts_(opts), info_(info), daemon_(std::make_unique<daemon_holder>()) {
  const test::build_paths paths{opts.bin_dir};
  std::optional<std::string> servers;
  const char* configured = std::getenv("FERRY_SERVERS");
  if (configured == nullptr || *configured == '\0') {
    try {
      test::daemon_process::options d;
      d.binary = paths.ferryd();
      d.extra_args = {"--log-level", "warn"};
      daemon_->process = test::daemon_process::start(d);
      servers = daemon_->process->address();
    } catch (const test::process_error& e) {
      setup_error_ = std::string("cannot start ferryd: ") + e.what();
    }
  }
  try {
    test::apply_env(test::loader_env(paths, test::loader_mode::ferry_and_native, servers));
  } catch (const test::process_error& e) {
    if (setup_error_.empty()) setup_error_ = e.what();
  }
}

session::~session() {
  if (daemon_->process) {
    try {
      const int status = daemon_->process->stop();
      if (!test::exited_with(status, 0))
        std::fprintf(stderr, "ferry_bench_%s: ferryd %s\n", info_.name, test::describe_wait_status(status).c_str());
    } catch (const test::process_error& e) {
      std::fprintf(stderr, "ferry_bench_%s: %s\n", info_.name, e.what());
    }
  }
}

std::unique_ptr<target> session::open(cl_platform_id platform, const char* label) {
  auto t = std::make_unique<target>();
  t->label = label;
  t->platform = platform;
  t->platform_name = info_string(platform, CL_PLATFORM_NAME);
  cl_uint count = 0;
  check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &t->device, &count), "clGetDeviceIDs");
  t->device_name = device_name(t->device);
  cl_int rc = CL_SUCCESS;
  t->context = clCreateContext(nullptr, 1, &t->device, nullptr, nullptr, &rc);
  check(rc, "clCreateContext");
  t->queue = clCreateCommandQueue(t->context, t->device, 0, &rc);
  check(rc, "clCreateCommandQueue");
  return t;
}

int session::run(const std::function<void(target&)>& measure) {
  cl_platform_id native = nullptr, ferry = nullptr;
  std::vector<std::pair<cl_platform_id, std::string>> candidates;
  for (cl_platform_id p : platforms()) {
    std::string name = info_string(p, CL_PLATFORM_NAME);
    if (name == ferry_platform_name)
      ferry = p;
    else
      candidates.emplace_back(p, std::move(name));
  }
  auto pick = [&](auto matches) {
    for (const auto& [p, name] : candidates)
      if (matches(name)) return p;
    return static_cast<cl_platform_id>(nullptr);
  };
  if (!opts_.native_platform.empty()) {
    native = pick([&](const std::string& n) { return n.find(opts_.native_platform) != std::string::npos; });
  } else {
    native = pick([](const std::string& n) { return n == "Portable Computing Language"; });
    if (native == nullptr) native = pick([](const std::string&) { return true; });
  }
  int status = 0;
  if (native == nullptr) {
    std::fprintf(stderr, "ferry_bench_%s: no native platform%s\n", info_.name,
                 opts_.native_platform.empty() ? "" : (" matching \"" + opts_.native_platform + "\"").c_str());
    status = 1;
  }
  auto measure_on = [&](cl_platform_id p, const char* label) {
    try {
      auto t = open(p, label);
      std::fprintf(stderr, "ferry_bench_%s: %s: %s / %s\n", info_.name, label, t->platform_name.c_str(),
                   t->device_name.c_str());
      measure(*t);
      return true;
    } catch (const bench_error& e) {
      std::fprintf(stderr, "ferry_bench_%s: %s: %s\n", info_.name, label, e.what());
      return false;
    }
  };
  if (native != nullptr && !measure_on(native, "native")) status = 1;
  if (ferry == nullptr) {
    std::printf("Ferry platform not found\n");
    if (!setup_error_.empty()) std::fprintf(stderr, "ferry_bench_%s: %s\n", info_.name, setup_error_.c_str());
    std::fflush(stdout);
    return 1;
  }
  if (!measure_on(ferry, "ferry")) status = 1;
  // Ferry over native for every figure both produced.
  std::string ratios;
  for (const auto& key : results::instance().keys()) {
    auto n = results::instance().get("native", key);
    auto f = results::instance().get("ferry", key);
    if (n && f && *n != 0) ratios += (ratios.empty() ? "" : " ") + key + "=" + format(*f / *n, 3);
  }
  if (!ratios.empty()) print_line(info_.name, "ratio", ratios + " (ferry/native)");
  return status;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

results& results::instance() {
  static results r;
  return r;
}

void results::record(const std::string& label, const std::string& key, double value) {
  if (std::find(keys_.begin(), keys_.end(), key) == keys_.end()) keys_.push_back(key);
  values_.push_back({label, {key, value}});
}

std::optional<double> results::get(const std::string& label, const std::string& key) const {
  for (const auto& [l, kv] : values_)
    if (l == label && kv.first == key) return kv.second;
  return std::nullopt;
}

void print_line(const std::string& bench, const std::string& label, const std::string& text) {
  std::printf("%s %s %s\n", bench.c_str(), label.c_str(), text.c_str());
  std::fflush(stdout);
}

std::string format(double value, int precision) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", precision, value);
  return buffer;
}

}  // namespace ferry::bench
