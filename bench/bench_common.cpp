#include "bench_common.hpp"

#include <CL/cl_ext_ferry.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <limits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <thread>

#include "common/socket.hpp"  // tune_stream_socket
#include "common/test_certificates.hpp"  // --security tls
#include "process.hpp"  // tests/integration: ferryd and the loader environment, no gtest

namespace ferry::bench {
namespace {

constexpr const char* ferry_platform_name = CL_FERRY_PLATFORM_NAME;

// What POCL_DEVICES must say for PoCL to show `count` CPU devices in one platform.
std::string repeated_pthread(std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) text += i ? " pthread" : "pthread";
  return text;
}

[[noreturn]] void usage(const bench_info& info, int status) {
  std::FILE* out = status == 0 ? stdout : stderr;
  std::fprintf(out,
               "usage: ferry_bench_%s [options]\n"
               "%s\n"
               "Runs on the native platform and on Ferry in one process and prints both.\n",
               info.name, info.summary);
  if (info.devices > 1)
    std::fprintf(out,
                 "Uses %zu devices: on Ferry the first device of each of %zu servers, natively\n"
                 "the first %zu devices of the platform, each set in one context.\n",
                 info.devices, info.devices, info.devices);
  std::fprintf(out,
               "\noptions:\n"
               "  --repeats N              %s (default: %s)\n",
               info.repeats_meaning,
               info.default_repeats > 0 ? std::to_string(info.default_repeats).c_str() : "per case");
  if (info.takes_commands)
    std::fprintf(out, "  --commands N             %s (default: %zu)\n", info.commands_meaning, info.default_commands);
  if (info.takes_size && info.default_size > 0)
    std::fprintf(out, "  --size N                 %s (default: %zu)\n", info.size_meaning, info.default_size);
  else if (info.takes_size)
    std::fprintf(out, "  --size N                 %s\n", info.size_meaning);
  std::fprintf(out,
               "  --only native|ferry      run one half only (native needs no ferryd)\n"
               "  --native-platform TEXT   native platform whose name contains TEXT (default:\n"
               "                           \"Portable Computing Language\" if present, else the\n"
               "                           first platform that is not Ferry)\n"
               "  --bin-dir DIR            build tree with bin/ferryd and lib/libferry.so\n"
               "                           (default: $FERRY_BINARY_DIR, else %s)\n"
               "  --security none|token|tls  what the started ferryd demands: nothing (default), a\n"
               "                           token, or a token and TLS 1.3 (throw-away token and CA)\n"
               "  --help                   this text\n\n"
               "environment: FERRY_SERVERS set means \"use these servers\" (no ferryd is started).\n",
               FERRY_BINARY_DIR);
  if (info.devices > 1)
    std::fprintf(out,
                 "POCL_DEVICES unset: it is set to \"%s\" for this process (not for the\n"
                 "daemons), so that PoCL shows %zu CPU devices in one platform.\n",
                 repeated_pthread(info.devices).c_str(), info.devices);
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

template <class Handle, class Param, class Getter>
std::string info_string(Getter getter, Handle handle, Param param) {
  size_t size = 0;
  if (getter(handle, param, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string s(size, '\0');
  if (getter(handle, param, size, s.data(), nullptr) != CL_SUCCESS) return {};
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string platform_string(cl_platform_id p, cl_platform_info param) {
  return info_string(clGetPlatformInfo, p, param);
}

std::string device_string(cl_device_id d, cl_device_info param) { return info_string(clGetDeviceInfo, d, param); }

std::vector<cl_platform_id> platforms() {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_platform_id> out(count);
  clGetPlatformIDs(count, out.data(), nullptr);
  return out;
}

std::vector<cl_device_id> all_devices(cl_platform_id platform) {
  cl_uint count = 0;
  check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count), "clGetDeviceIDs");
  std::vector<cl_device_id> out(count);
  check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, out.data(), &count), "clGetDeviceIDs");
  out.resize(count);
  return out;
}

}  // namespace

options parse_options(int argc, char** argv, const bench_info& info) {
  options opts;
  opts.commands = info.default_commands;
  opts.size = info.default_size;
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
    } else if (arg == "--size" && info.takes_size) {
      opts.size = static_cast<std::size_t>(parse_count(info, "--size", value()));
    } else if (arg == "--only") {
      const char* v = value();
      const std::string half = v ? v : "";
      if (half == "native") {
        opts.only = halves::native;
      } else if (half == "ferry") {
        opts.only = halves::ferry;
      } else {
        std::fprintf(stderr, "ferry_bench_%s: --only needs \"native\" or \"ferry\"\n", info.name);
        usage(info, 2);
      }
    } else if (arg == "--native-platform") {
      const char* v = value();
      if (v == nullptr) usage(info, 2);
      opts.native_platform = v;
    } else if (arg == "--security") {
      const char* v = value();
      const std::string kind = v ? v : "";
      if (kind == "none") opts.secure = options::security::none;
      else if (kind == "token") opts.secure = options::security::token;
      else if (kind == "tls") opts.secure = options::security::tls;
      else {
        std::fprintf(stderr, "ferry_bench_%s: --security needs none, token or tls\n", info.name);
        usage(info, 2);
      }
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

target::target(std::string label_, cl_platform_id platform_, std::vector<cl_device_id> devices_,
               std::vector<std::string> locations_)
    : label(std::move(label_)), platform(platform_), devices(std::move(devices_)), locations(std::move(locations_)) {
  if (devices.empty()) throw bench_error("a target needs at least one device");
  device = devices.front();
  platform_name = platform_string(platform, CL_PLATFORM_NAME);
  device_name = device_string(device, CL_DEVICE_NAME);
  cl_int rc = CL_SUCCESS;
  context = clCreateContext(nullptr, static_cast<cl_uint>(devices.size()), devices.data(), nullptr, nullptr, &rc);
  check(rc, "clCreateContext");
  try {
    for (cl_device_id d : devices) {
      queues.push_back(clCreateCommandQueue(context, d, 0, &rc));
      if (rc != CL_SUCCESS) queues.pop_back();
      check(rc, "clCreateCommandQueue");
    }
  } catch (...) {
    for (cl_command_queue q : queues) clReleaseCommandQueue(q);
    clReleaseContext(context);
    throw;
  }
  queue = queues.front();
}

target::~target() {
  for (cl_kernel k : kernels_) clReleaseKernel(k);
  for (cl_program p : programs_) clReleaseProgram(p);
  for (cl_command_queue q : queues) clReleaseCommandQueue(q);
  if (context) clReleaseContext(context);
}

std::unique_ptr<target> target::first(std::size_t count) const {
  if (count == 0 || count > devices.size())
    throw bench_error("asked for " + std::to_string(count) + " of " + std::to_string(devices.size()) + " devices");
  return std::make_unique<target>(label, platform, std::vector<cl_device_id>(devices.begin(), devices.begin() + count),
                                  std::vector<std::string>(locations.begin(), locations.begin() + count));
}

cl_kernel target::kernel(const char* source, const char* name, const char* options) {
  cl_int rc = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &rc);
  check(rc, "clCreateProgramWithSource");
  programs_.push_back(program);
  if (clBuildProgram(program, static_cast<cl_uint>(devices.size()), devices.data(), options, nullptr, nullptr) !=
      CL_SUCCESS) {
    std::string logs;
    for (cl_device_id d : devices) {
      size_t size = 0;
      clGetProgramBuildInfo(program, d, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(program, d, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      logs += log;
    }
    throw bench_error("clBuildProgram failed:\n" + logs);
  }
  cl_kernel k = clCreateKernel(program, name, &rc);
  check(rc, "clCreateKernel");
  kernels_.push_back(k);
  return k;
}

struct session::daemons {
  std::vector<std::unique_ptr<test::daemon_process>> processes;
  std::string secrets_dir;  // token and certificates of --security; removed at the end
  std::string sockets_dir;  // the daemons' Unix sockets; removed at the end
  ~daemons() {
    processes.clear();
    if (!secrets_dir.empty()) std::filesystem::remove_all(secrets_dir);
    if (!sockets_dir.empty()) std::filesystem::remove_all(sockets_dir);
  }
};

namespace {

/// Writes a token (and for TLS a certificate authority and a certificate for
/// 127.0.0.1) into a fresh directory, adds the daemon flags that demand them to
/// `args` and points this process's libferry at them.
std::string prepare_security(options::security secure, std::vector<std::string>& args) {
  if (secure == options::security::none) return {};
  char pattern[] = "/tmp/ferry-bench-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) throw bench_error("cannot make a directory for the token");
  const std::string dir = pattern;
  const std::string token = dir + "/token";
  std::ofstream(token) << "bench-token-0123456789abcdef\n";
  ::chmod(token.c_str(), 0600);
  args.insert(args.end(), {"--token-file", token});
  ::setenv("FERRY_TOKEN_FILE", token.c_str(), 1);
  if (secure == options::security::tls) {
    tls_testing::test_pki pki;
    if (!tls_testing::make_test_pki(dir, tls_testing::certificate_validity::current, pki))
      throw bench_error("cannot make test certificates");
    args.insert(args.end(), {"--tls-cert", pki.server_cert, "--tls-key", pki.server_key});
    ::setenv("FERRY_TLS_CA", pki.ca_cert.c_str(), 1);
  }
  return dir;
}

}  // namespace

session::session(const options& opts, const bench_info& info)
    : opts_(opts), info_(info), daemons_(std::make_unique<daemons>()) {
  const test::build_paths paths{opts.bin_dir};
  std::optional<std::string> servers;
  const char* configured = std::getenv("FERRY_SERVERS");
  if (opts.only != halves::native && (configured == nullptr || *configured == '\0')) {
    try {
      test::daemon_process::options d;
      d.binary = paths.ferryd();
      // FERRY_BENCH_DAEMON_LOG raises the daemons' log level to see where time goes.
      const char* level = std::getenv("FERRY_BENCH_DAEMON_LOG");
      d.extra_args = {"--log-level", level && *level ? level : "warn", "--device-type", "cpu"};
      daemons_->secrets_dir = prepare_security(opts.secure, d.extra_args);
      d.extra_args.insert(d.extra_args.end(), info.daemon_args.begin(), info.daemon_args.end());
      // Several daemons of this host also listen on Unix sockets, as a GPU host's would
      // (one per GPU): their peer links then use the sockets and shared memory.
      // FERRY_BENCH_PEER_LINK=tcp keeps them on TCP, to compare.
      if (info.devices > 1) {
        char pattern[] = "/tmp/ferry-bench-sockets-XXXXXX";
        // 0755: session workers (nobody) dial the other daemon's socket.
        if (::mkdtemp(pattern) == nullptr || ::chmod(pattern, 0755) != 0)
          throw bench_error("cannot make a directory for the daemons' sockets");
        daemons_->sockets_dir = pattern;
        const char* link = std::getenv("FERRY_BENCH_PEER_LINK");
        if (link && std::string(link) == "tcp") d.extra_args.insert(d.extra_args.end(), {"--peer-shared-memory", "off"});
      }
      std::string list;
      for (std::size_t i = 0; i < info.devices; ++i) {
        test::daemon_process::options one = d;
        if (!daemons_->sockets_dir.empty())
          one.extra_args.insert(one.extra_args.end(),
                                {"--unix", daemons_->sockets_dir + "/ferryd-" + std::to_string(i) + ".sock"});
        daemons_->processes.push_back(test::daemon_process::start(one));
        list += (i ? "," : "") + daemons_->processes.back()->address();
      }
      servers = list;
    } catch (const test::process_error& e) {
      setup_error_ = std::string("cannot start ferryd: ") + e.what();
    }
  }
  // Only now: the daemons keep the environment they were started with, one CPU device
  // each, while this process's PoCL shows as many devices as the benchmark needs.
  if (info.devices > 1 && opts.only != halves::ferry && std::getenv("POCL_DEVICES") == nullptr)
    ::setenv("POCL_DEVICES", repeated_pthread(info.devices).c_str(), 1);
  // Native alone needs neither libferry nor Ferry's platform: the system's loader setup
  // offers the native platforms as they are.
  if (opts.only == halves::native) return;
  try {
    test::apply_env(test::loader_env(paths, test::loader_mode::ferry_and_native, servers));
  } catch (const test::process_error& e) {
    if (setup_error_.empty()) setup_error_ = e.what();
  }
}

std::string peer_path(const target& t) {
  if (t.label != "ferry" || t.devices.empty()) return "none";
  auto counters = reinterpret_cast<clFerryGetLinkCounters_fn>(
      clGetExtensionFunctionAddressForPlatform(t.platform, "clFerryGetLinkCounters"));
  if (counters == nullptr) return "unknown";
  std::string path;
  for (cl_device_id device : t.devices) {
    std::vector<cl_ferry_link_counters> links(64);
    cl_uint count = 0;
    if (counters(device, static_cast<cl_uint>(links.size()), links.data(), &count) != CL_SUCCESS) continue;
    for (cl_uint i = 0; i < std::min<cl_uint>(count, links.size()); ++i) {
      const cl_ferry_link_counters& l = links[i];
      if (l.kind != CL_FERRY_LINK_PEER_OUT || l.bytes_out == 0) continue;
      const std::string remote = l.remote;
      const char* kind = remote.rfind("shm:", 0) == 0    ? "shared-memory"
                         : remote.rfind("unix:", 0) == 0 ? "unix"
                                                         : "tcp";
      if (path.find(kind) == std::string::npos) path += (path.empty() ? "" : "+") + std::string(kind);
    }
  }
  return path.empty() ? "none" : path;
}

session::~session() {
  for (auto& process : daemons_->processes) {
    try {
      const int status = process->stop();
      if (!test::exited_with(status, 0))
        std::fprintf(stderr, "ferry_bench_%s: ferryd %s\n", info_.name, test::describe_wait_status(status).c_str());
    } catch (const test::process_error& e) {
      std::fprintf(stderr, "ferry_bench_%s: %s\n", info_.name, e.what());
    }
  }
}

std::unique_ptr<target> session::open_native(cl_platform_id platform) const {
  std::vector<cl_device_id> devices = all_devices(platform);
  if (devices.size() < info_.devices) {
    const char* pocl = std::getenv("POCL_DEVICES");
    throw bench_error("the native platform shows " + std::to_string(devices.size()) + " devices, " +
                      std::to_string(info_.devices) + " needed" +
                      (pocl ? " (POCL_DEVICES=\"" + std::string(pocl) + "\")" : std::string()));
  }
  devices.resize(info_.devices);
  std::vector<std::string> locations;
  for (std::size_t i = 0; i < devices.size(); ++i) locations.push_back("device " + std::to_string(i));
  return std::make_unique<target>("native", platform, std::move(devices), std::move(locations));
}

std::unique_ptr<target> session::open_ferry(cl_platform_id platform) const {
  // The first device of each server, servers in the order the platform lists them.
  std::vector<cl_device_id> devices;
  std::vector<std::string> locations;
  for (cl_device_id d : all_devices(platform)) {
    if (devices.size() == info_.devices) break;
    const std::string address = device_string(d, CL_DEVICE_FERRY_SERVER_ADDRESS);
    if (address.empty() && info_.devices > 1)
      throw bench_error("CL_DEVICE_FERRY_SERVER_ADDRESS is unavailable, so servers cannot be told apart");
    if (std::find(locations.begin(), locations.end(), address) != locations.end()) continue;
    devices.push_back(d);
    locations.push_back(address);
  }
  if (devices.size() < info_.devices) {
    const char* configured = std::getenv("FERRY_SERVERS");
    throw bench_error("Ferry shows devices of " + std::to_string(devices.size()) + " servers, " +
                      std::to_string(info_.devices) + " needed" +
                      (configured ? " (FERRY_SERVERS=" + std::string(configured) + ")" : std::string()));
  }
  return std::make_unique<target>("ferry", platform, std::move(devices), std::move(locations));
}

int session::run(const std::function<void(target&)>& measure) {
  cl_platform_id native = nullptr, ferry = nullptr;
  std::vector<std::pair<cl_platform_id, std::string>> candidates;
  for (cl_platform_id p : platforms()) {
    std::string name = platform_string(p, CL_PLATFORM_NAME);
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
  auto measure_on = [&](cl_platform_id p, const char* label) {
    try {
      auto t = std::string(label) == "native" ? open_native(p) : open_ferry(p);
      std::string where;
      for (std::size_t i = 0; i < t->devices.size(); ++i)
        where += (i ? ", " : "") + device_string(t->devices[i], CL_DEVICE_NAME) + " @ " + t->locations[i];
      std::fprintf(stderr, "ferry_bench_%s: %s: %s / %s\n", info_.name, label, t->platform_name.c_str(), where.c_str());
      measure(*t);
      return true;
    } catch (const bench_error& e) {
      std::fprintf(stderr, "ferry_bench_%s: %s: %s\n", info_.name, label, e.what());
      return false;
    }
  };
  if (opts_.only != halves::ferry) {
    if (native == nullptr) {
      std::fprintf(stderr, "ferry_bench_%s: no native platform%s\n", info_.name,
                   opts_.native_platform.empty() ? "" : (" matching \"" + opts_.native_platform + "\"").c_str());
      status = 1;
    } else if (!measure_on(native, "native")) {
      status = 1;
    }
  }
  if (opts_.only == halves::native) return status;
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

// ---------------------------------------------------------------------------------------

std::vector<double> empty_kernel_round_trips_us(cl_command_queue queue, cl_kernel kernel, int warmup, int rounds) {
  const size_t global = 1;
  auto round = [&] {
    check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
    check(clFinish(queue), "clFinish");
  };
  for (int i = 0; i < warmup; ++i) round();
  std::vector<double> us;
  us.reserve(static_cast<size_t>(rounds));
  for (int i = 0; i < rounds; ++i) {
    const auto start = clock::now();
    round();
    us.push_back(microseconds_since(start));
  }
  return us;
}

mem_object::mem_object(cl_context context, cl_mem_flags flags, std::size_t bytes, void* host) {
  cl_int rc = CL_SUCCESS;
  mem_ = clCreateBuffer(context, flags, bytes, host, &rc);
  check(rc, "clCreateBuffer");
}

mem_object::~mem_object() {
  if (mem_) clReleaseMemObject(mem_);
}

std::string size_label(std::size_t bytes) {
  for (auto [shift, unit] : {std::pair{30, "GiB"}, std::pair{20, "MiB"}, std::pair{10, "KiB"}})
    if (bytes % (std::size_t{1} << shift) == 0) return std::to_string(bytes >> shift) + unit;
  return std::to_string(bytes) + "B";
}

host_bytes allocate_host(std::size_t bytes) {
  constexpr std::size_t page = 4096;
  host_bytes p(static_cast<unsigned char*>(std::aligned_alloc(page, (bytes + page - 1) / page * page)));
  if (!p) throw bench_error("out of host memory (" + std::to_string(bytes) + " bytes)");
  return p;
}

loopback_pair::loopback_pair() {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener, 1) != 0 || ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int error = errno;
    if (listener >= 0) ::close(listener);
    throw bench_error(std::string("loopback listener: ") + std::strerror(error));
  }
  // connect() completes against the backlog, so one thread can make both ends.
  client = ::socket(AF_INET, SOCK_STREAM, 0);
  if (client < 0 || ::connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      (server = ::accept(listener, nullptr, nullptr)) < 0) {
    const int error = errno;
    ::close(listener);
    if (client >= 0) ::close(client);
    throw bench_error(std::string("loopback connection: ") + std::strerror(error));
  }
  ::close(listener);
  // Ferry's own options (no Nagle, large buffers), so that the figures are the floor
  // and the ceiling of Ferry's links, not of TCP's defaults.
  for (int fd : {client, server}) tune_stream_socket(fd);
}

loopback_pair::~loopback_pair() {
  ::close(client);
  ::close(server);
}

double tcp_ping_pong_median_us(int rounds) {
  constexpr int warmup = 100;
  std::vector<double> us;
  try {
    loopback_pair pair;
    std::thread echo([&pair] {
      char buffer[16];
      while (::recv(pair.server, buffer, sizeof buffer, MSG_WAITALL) == sizeof buffer)
        if (::send(pair.server, buffer, sizeof buffer, MSG_NOSIGNAL) != sizeof buffer) break;
    });
    char buffer[16] = {};
    for (int i = 0; i < rounds + warmup; ++i) {
      const auto start = clock::now();
      if (::send(pair.client, buffer, sizeof buffer, MSG_NOSIGNAL) != sizeof buffer ||
          ::recv(pair.client, buffer, sizeof buffer, MSG_WAITALL) != sizeof buffer)
        break;
      if (i >= warmup) us.push_back(microseconds_since(start));
    }
    ::shutdown(pair.client, SHUT_RDWR);  // ends the echo thread's recv
    echo.join();
  } catch (const bench_error&) {
    return -1;
  }
  return us.empty() ? -1 : median(us);
}

// Ferry's bulk stream moves buffer contents in chunks of this size.
constexpr std::size_t chunk = std::size_t{8} << 20;

std::vector<double> tcp_stream_mb_s(std::size_t bytes, int repeats) {
  std::vector<double> mb_s;
  try {
    std::vector<unsigned char> sink(chunk);
    loopback_pair pair;
    // The writer waits for a one-byte "go" before each repeat, so that no byte of a
    // repeat is on its way before the reader starts the clock.
    std::thread writer([&pair, bytes, repeats] {
      std::vector<unsigned char> data(chunk, 0x5a);
      for (int r = 0; r < repeats; ++r) {
        char go = 0;
        if (::recv(pair.server, &go, 1, MSG_WAITALL) != 1) return;
        for (std::size_t left = bytes; left > 0;) {
          const ssize_t sent = ::send(pair.server, data.data(), std::min(left, chunk), MSG_NOSIGNAL);
          if (sent < 0 && errno == EINTR) continue;
          if (sent <= 0) return;
          left -= static_cast<std::size_t>(sent);
        }
      }
    });
    for (int r = 0; r < repeats; ++r) {
      const auto start = clock::now();
      const char go = 1;
      if (::send(pair.client, &go, 1, MSG_NOSIGNAL) != 1) break;
      std::size_t left = bytes;
      while (left > 0) {
        const ssize_t got = ::recv(pair.client, sink.data(), std::min(left, chunk), 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        left -= static_cast<std::size_t>(got);
      }
      if (left > 0) break;
      mb_s.push_back(static_cast<double>(bytes) / seconds_since(start) / 1e6);
    }
    ::shutdown(pair.client, SHUT_RDWR);  // ends the writer wherever it is
    writer.join();
  } catch (const bench_error&) {
    return {};
  }
  return mb_s;
}

namespace {

// Entries compared with the CPU: all of C up to this size, else `sampled_entries` and
// the corners.
constexpr std::size_t full_check_limit = 256;
constexpr int sampled_entries = 64;
constexpr double max_relative_error = 1e-3;

}  // namespace

bool checks_every_entry(std::size_t n) { return n <= full_check_limit; }

void check_matrix_product(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c,
                          std::size_t n, std::size_t stride) {
  auto check_entry = [&](std::size_t i, std::size_t j) {
    double exact = 0, scale = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const double term = static_cast<double>(a[i * stride + k]) * b[k * stride + j];
      exact += term;
      scale += std::fabs(term);
    }
    const double got = c[i * stride + j];
    const double error = std::fabs(got - exact) / std::max(scale, std::numeric_limits<double>::min());
    if (!(error < max_relative_error))  // NaN (an entry never written) fails too
      throw bench_error("wrong result: C[" + std::to_string(i) + "][" + std::to_string(j) + "] = " +
                        std::to_string(got) + ", CPU says " + std::to_string(exact));
  };
  if (checks_every_entry(n)) {
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) check_entry(i, j);
    return;
  }
  std::mt19937_64 random(42);
  std::uniform_int_distribution<std::size_t> index(0, n - 1);
  for (int s = 0; s < sampled_entries; ++s) check_entry(index(random), index(random));
  // The corners too: the first and last work-groups, and the last row and column (next
  // to any padding or the edge of a tile).
  check_entry(0, 0);
  check_entry(0, n - 1);
  check_entry(n - 1, 0);
  check_entry(n - 1, n - 1);
}

// ---------------------------------------------------------------------------------------

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

double microseconds_since(clock::time_point start) {
  return std::chrono::duration<double, std::micro>(clock::now() - start).count();
}

double seconds_since(clock::time_point start) { return std::chrono::duration<double>(clock::now() - start).count(); }

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
