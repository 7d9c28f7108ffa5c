// ferryd: serves this host's OpenCL devices to Ferry clients.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/log.hpp"
#include "common/thread_stacks.hpp"
#include "common/tls.hpp"
#include "protocol/auth.hpp"
#include "protocol/outgoing.hpp"
#include "server/daemon/options.hpp"
#include "server/daemon/printf_capture.hpp"
#include "server/daemon/server.hpp"
#include "server/native/api.hpp"
#include "server/native/catalog.hpp"
#include "server/native/context_releaser.hpp"

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

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry;
  using ferry::server::options;
  using ferry::server::parse_outcome;
  using ferry::server::printf_capture;
  using ferry::server::server_config;
  using ferry::server::session_services;
  namespace native = ferry::server::native;
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

  // The token and certificates first: a mistake there is found before devices are probed.
  std::shared_ptr<const protocol::credentials> peer_credentials;
  server_config config;
  if (!load_security(opts, config.rules, peer_credentials, message)) {
    std::fprintf(stderr, "ferryd: %s\n", message.c_str());
    return 1;
  }

  native::device_catalog catalog;
  // Listing numbers every matching device, as --device counts them.
  const std::vector<uint32_t> chosen = opts.list_devices ? std::vector<uint32_t>{} : opts.devices;
  if (!native::device_catalog::discover({opts.platform, opts.device_type, chosen}, catalog, message)) {
    std::fprintf(stderr, "ferryd: %s\n", message.c_str());
    return 1;
  }
  if (opts.list_devices) {
    for (uint32_t i = 0; i < catalog.size(); ++i)
      std::printf("%s\n", native::describe_device(i, *catalog.find(i)).c_str());
    return 0;
  }
  catalog.choose_completions(opts.completions);

  // Kernel printf output goes to fd 1; from here on that is a pipe we forward.
  unique_fd ready_out, printf_pipe;
  if (!printf_capture::redirect_stdout(ready_out, printf_pipe, message)) {
    std::fprintf(stderr, "ferryd: %s\n", message.c_str());
    return 1;
  }
  printf_capture capture(std::move(printf_pipe), STDERR_FILENO);
  capture.start();

  config.listen = opts.listen;
  config.port = opts.port;
  config.unix_path = opts.unix_path;
  config.handshake_timeout_s = opts.handshake_timeout_s;
  config.session_grace_s = opts.session_grace_s;
  config.peer_address = opts.peer_address;
  config.max_sessions = static_cast<size_t>(opts.max_sessions);
  config.max_connections = static_cast<size_t>(opts.max_connections);
  session_services services{catalog, native::real_api(), &capture, nullptr, {}};
  services.limits = opts.limits;
  services.peer_credentials = peer_credentials;
  server::server ferryd(config, services);
  if (!ferryd.start(message)) {
    std::fprintf(stderr, "ferryd: %s\n", message.c_str());
    capture.stop();
    return 1;
  }
  if (!write_fully(ready_out.get(), "READY " + std::to_string(ferryd.port()) + "\n"))
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
  capture.stop();
  if (size_t pending = ferry::server::context_releaser::pending(); pending > 0) {
    // The driver holds them (server/native/context_releaser.hpp); its exit handlers would wait too.
    FERRY_INFO("server", "stopped (%zu native contexts still being released: ending without exit handlers)",
               pending);
    std::_Exit(0);
  }
  FERRY_INFO("server", "stopped");
  return 0;
}
