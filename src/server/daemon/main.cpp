// ferryd: serves this host's OpenCL devices to Ferry clients.
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/log.hpp"
#include "common/thread_stacks.hpp"
#include "common/tls.hpp"
#include "protocol/auth.hpp"
#include "protocol/outgoing.hpp"
#include "server/daemon/options.hpp"
#include "server/daemon/server.hpp"
#include "server/native/api.hpp"
#include "server/native/catalog.hpp"
#include "server/worker/confinement.hpp"
#include "server/worker/kernel_cache.hpp"
#include "server/worker/session_worker.hpp"

namespace {

bool write_fully(int fd, const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

/// Reads the token and the TLS files named on the command line: what every
/// connection must show (`rules`) and what peer links show other daemons.
bool load_security(const ferry::server::options& opts, ferry::server::admission& rules,
                   std::shared_ptr<const ferry::protocol::credentials>& peers, std::string& error) {
  using namespace ferry;
  auto shown = std::make_shared<protocol::credentials>();
  std::string warning;
  if (!opts.token_file.empty()) {
    if (!protocol::load_token(opts.token_file, rules.token, warning, error)) return false;
    if (!warning.empty()) FERRY_WARN("server", "%s", warning.c_str());
    shown->token = rules.token;
  } else if (!ferry::server::is_loopback(opts.listen)) {
    FERRY_WARN("server",
               "listening on %s without a token (--insecure-listen): anybody who reaches the port can run code on "
               "this host's devices",
               opts.listen.c_str());
  }
  if (!opts.tls_cert.empty()) {
    warning.clear();
    rules.tls = tls::context::for_server(opts.tls_cert, opts.tls_key, warning, error);
    if (!rules.tls) return false;
    if (!warning.empty()) FERRY_WARN("server", "%s", warning.c_str());
  }
  if (!opts.tls_cert.empty() || !opts.tls_ca.empty()) {
    shown->tls = tls::context::for_client(opts.tls_ca, error);
    if (!shown->tls) return false;
  }
  FERRY_INFO("server", "connections: %s, %s", rules.token.empty() ? "no token required" : "token required",
             rules.tls ? "TLS 1.3 on TCP" : "plain");
  peers = std::move(shown);
  return true;
}

/// What the session workers are told and how many are kept (docs/workers.md).
bool worker_settings(const ferry::server::options& opts, ferry::server::server_config& config, std::string& error) {
  using namespace ferry;
  server::worker_pool_config pool;
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    error = std::string("cannot find ferryd's own binary (/proc/self/exe): ") + std::strerror(errno);
    return false;
  }
  pool.program.assign(self, static_cast<size_t>(n));
  server::ipc::configure& w = pool.settings;
  w.platform = opts.platform;
  w.device_type = opts.device_type;
  w.devices = opts.devices;
  w.completions = static_cast<uint8_t>(opts.completions);
  w.log_level = static_cast<uint8_t>(current_log_level());
  w.grace_ms = static_cast<uint64_t>(opts.session_grace_s * 1000);
  w.bulk_lanes = opts.bulk_lanes;
  w.memory_limit = opts.limits.memory;
  w.objects_limit = opts.limits.objects;
  w.queued_limit = opts.limits.queued;
  w.in_flight_limit = opts.limits.in_flight;
  w.open_files = opts.worker_open_files;
  w.peer_address = opts.peer_address;
  if (!opts.file_root.empty()) {
    // Absolute, so that a worker finds it whatever its working directory.
    char* resolved = ::realpath(opts.file_root.c_str(), nullptr);
    struct stat info {};
    if (resolved == nullptr || ::stat(resolved, &info) != 0 || !S_ISDIR(info.st_mode)) {
      error = "--file-root " + opts.file_root + " is no directory" +
              (resolved == nullptr ? std::string(": ") + std::strerror(errno) : std::string());
      std::free(resolved);
      return false;
    }
    w.file_root = resolved;
    std::free(resolved);
    FERRY_INFO("server", "file commands may use the files below %s", w.file_root.c_str());
  }
  if (!opts.tls_ca.empty()) {
    std::ifstream ca(opts.tls_ca, std::ios::binary);
    std::ostringstream text;
    text << ca.rdbuf();
    if (!ca || text.str().empty()) {
      error = "cannot read the CA certificates " + opts.tls_ca + " (--tls-ca)";
      return false;
    }
    w.peer_ca_pem = text.str();
  }
  w.peer_tls = !opts.tls_cert.empty() || !opts.tls_ca.empty();
  w.peer_token = !config.rules.token.empty();
  w.worker_user = opts.worker_user;
  if (w.worker_user.empty() && ::geteuid() == 0) {
    // Root's workers would be root: they run as nobody unless told otherwise.
    if (auto nobody = server::worker::default_worker_user()) w.worker_user = *nobody;
    else FERRY_WARN("server", "no user 'nobody': session workers run as root (give --worker-user)");
  }
  w.kernel_cache = static_cast<uint8_t>(opts.kernel_cache);
  if (!w.worker_user.empty()) {
    struct passwd* who = ::getpwnam(w.worker_user.c_str());
    if (who == nullptr) {
      error = "no user '" + w.worker_user + "' (--worker-user)";
      return false;
    }
    pool.worker_uid = who->pw_uid;
    pool.worker_gid = who->pw_gid;
    if (opts.kernel_cache == server::worker::kernel_cache_mode::shared) {
      // The daemon's user's cache is not the workers' to write.
      auto dir = server::worker::shared_cache_for(who->pw_uid, who->pw_gid, error);
      if (!dir) return false;
      w.kernel_cache_dir = *dir;
    }
  }
  for (const std::string& secret : {opts.token_file, opts.tls_key})
    if (!secret.empty()) w.forbidden.push_back(secret);
  pool.spares = static_cast<size_t>(opts.spare_workers);
  pool.start_timeout = std::chrono::milliseconds(static_cast<int64_t>(opts.worker_start_timeout_s * 1000));
  pool.memory_limit = opts.worker_memory;
  pool.remember_lost = std::chrono::milliseconds(static_cast<int64_t>(opts.session_grace_s * 1000) + 60000);
  pool.token = config.rules.token;
  config.workers = std::move(pool);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry;
  using ferry::server::options;
  using ferry::server::parse_outcome;
  using ferry::server::server_config;
  using ferry::server::session_services;
  namespace native = ferry::server::native;
  // A session worker, started by a daemon's main process (server/worker/session_worker.hpp).
  if (argc == 3 && std::string(argv[1]) == "--session-worker") {
    char* end = nullptr;
    long fd = std::strtol(argv[2], &end, 10);
    if (end == argv[2] || *end != '\0' || fd < 0 || fd > 1 << 20) return 2;
    return ferry::server::run_session_worker(static_cast<int>(fd));
  }
  set_log_component("ferryd");

  // Before any thread exists (the OpenCL runtime starts its own): every
  // thread inherits this mask, so only sigwait below ever sees these signals.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigset_t quit_signal;  // not a stop: every thread's stack to the log
  sigemptyset(&quit_signal);
  sigaddset(&quit_signal, SIGQUIT);
  sigset_t blocked = stop_signals;
  sigaddset(&blocked, SIGQUIT);
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
  signal(SIGPIPE, SIG_IGN);

  options opts;
  std::string message;
  switch (ferry::server::parse_options(std::vector<std::string>(argv + 1, argv + argc), opts, message)) {
    case parse_outcome::help: std::fputs(ferry::server::usage_text().c_str(), stdout); return 0;
    case parse_outcome::error: std::fprintf(stderr, "ferryd: %s\n", message.c_str()); return 2;
    case parse_outcome::list:
    case parse_outcome::run: break;
  }
  if (opts.level_given) set_log_level(opts.level);
  else if (std::getenv("FERRY_LOG") == nullptr) set_log_level(log_level::info);

  // A libferry that the ICD loader loads into this process must stay inert.
  ::setenv("FERRY_IN_DAEMON", "1", 1);

  // This process holds the token and the TLS key: no process of the same
  // user (a session worker included) may read its memory.
  ferry::server::worker::make_undumpable();

  // The token and certificates first: a mistake there is found before devices are probed.
  std::shared_ptr<const protocol::credentials> peer_credentials;
  server_config config;
  if (!load_security(opts, config.rules, peer_credentials, message)) {
    std::fprintf(stderr, "ferryd: %s\n", message.c_str());
    return 1;
  }

  if (opts.list_devices) {
    // Not a daemon: nothing to isolate, so the platforms load here.
    native::device_catalog catalog;
    if (!native::device_catalog::discover({opts.platform, opts.device_type, {}}, catalog, message)) {
      std::fprintf(stderr, "ferryd: %s\n", message.c_str());
      return 1;
    }
    for (uint32_t i = 0; i < catalog.size(); ++i)
      std::printf("%s\n", native::describe_device(i, *catalog.find(i)).c_str());
    return 0;
  }

  config.listen = opts.listen;
  config.port = opts.port;
  config.unix_path = opts.unix_path;
  config.handshake_timeout_s = opts.handshake_timeout_s;
  config.session_grace_s = opts.session_grace_s;
  config.bulk_lanes = opts.bulk_lanes;
  config.peer_address = opts.peer_address;
  config.peer_shared_memory = opts.peer_shared_memory;
  config.max_sessions = static_cast<size_t>(opts.max_sessions);
  config.max_connections = static_cast<size_t>(opts.max_connections);
  if (!worker_settings(opts, config, message)) {
    std::fprintf(stderr, "ferryd: %s\n", message.c_str());
    return 1;
  }
  // The main process never loads a native driver: the workers do, each for
  // its own session, so a device list here would come from no one.
  static const native::device_catalog no_devices;
  session_services services{no_devices, native::dry_api(), nullptr, nullptr, {}};
  services.limits = opts.limits;
  services.peer_credentials = peer_credentials;
  server::server ferryd(config, services);
  if (!ferryd.start(message)) {
    std::fprintf(stderr, "ferryd: %s\n", message.c_str());
    return 1;
  }
  for (const std::string& line : ferryd.worker_devices()) FERRY_INFO("server", "device %s", line.c_str());
  if (!write_fully(STDOUT_FILENO, "READY " + std::to_string(ferryd.port()) + "\n"))
    FERRY_WARN("server", "cannot write the READY line to stdout");

  // Answered until the process ends, during a stop too: a stop that hangs is
  // what the stacks are for.
  std::thread([quit_signal] {
    for (;;) {
      int number = 0;
      if (sigwait(&quit_signal, &number) != 0) continue;
      FERRY_WARN("server", "SIGQUIT: the stacks of every thread follow");
      write_thread_stacks(STDERR_FILENO);
    }
  }).detach();
  int signal_number = 0;
  while (sigwait(&stop_signals, &signal_number) != 0) {
  }
  FERRY_INFO("server", "stopping on %s", signal_number == SIGINT ? "SIGINT" : "SIGTERM");
  ferryd.stop();
  FERRY_INFO("server", "stopped");
  return 0;
}
