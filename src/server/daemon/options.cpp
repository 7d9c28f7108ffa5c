#include "server/daemon/options.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "common/socket.hpp"
#include "protocol/messages.hpp"

namespace ferry::server {
namespace {

bool parse_port(const std::string& text, uint16_t& out) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value > 65535) return false;
  out = static_cast<uint16_t>(value);
  return true;
}

bool parse_seconds(const std::string& text, double& out) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) || value <= 0 ||
      value > 3600)
    return false;
  out = value;
  return true;
}

// 0 is allowed: a session then ends with its connection.
bool parse_grace(const std::string& text, double& out) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) || value < 0 ||
      value > 86400)
    return false;
  out = value;
  return true;
}

// A whole number, decimal digits only.
bool parse_count(const std::string& text, uint64_t& out) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return false;
  out = value;
  return true;
}

// Bytes: a whole number with an optional binary suffix K, M, G or T (any case).
bool parse_bytes(const std::string& text, uint64_t& out) {
  if (text.empty()) return false;
  unsigned shift = 0;
  std::string digits = text;
  switch (text.back()) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    default: break;
  }
  if (shift) digits.pop_back();
  uint64_t value = 0;
  if (!parse_count(digits, value) || (shift && value > (UINT64_MAX >> shift))) return false;
  out = value << shift;
  return true;
}

bool parse_device_type(const std::string& text, cl_device_type& out) {
  if (text == "cpu") out = CL_DEVICE_TYPE_CPU;
  else if (text == "gpu") out = CL_DEVICE_TYPE_GPU;
  else if (text == "accelerator") out = CL_DEVICE_TYPE_ACCELERATOR;
  else if (text == "all") out = CL_DEVICE_TYPE_ALL;
  else return false;
  return true;
}

bool parse_completions(const std::string& text, native::completion_mode& out) {
  if (text == "auto") out = native::completion_mode::automatic;
  else if (text == "callbacks") out = native::completion_mode::callbacks;
  else if (text == "polling") out = native::completion_mode::polling;
  else return false;
  return true;
}

// "0", "1,3": positions, each at most once.
bool parse_device_list(const std::string& text, std::vector<uint32_t>& out) {
  out.clear();
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    uint32_t index = 0;
    auto [end, ec] = std::from_chars(text.data() + start, text.data() + comma, index);
    if (ec != std::errc{} || end != text.data() + comma || comma == start) return false;
    if (std::find(out.begin(), out.end(), index) != out.end()) return false;
    out.push_back(index);
    start = comma + 1;
  }
  return !out.empty();
}

}  // namespace

bool is_loopback(const std::string& address) {
  if (address == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, address.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

std::string usage_text() {
  return "usage: ferryd [options]\n"
         "Serves this host's OpenCL devices to Ferry clients.\n"
         "\n"
         "  --port N                 TCP port (default 7780; 0 picks a free one)\n"
         "  --listen ADDR            address to listen on (default 127.0.0.1; any other than loopback\n"
         "                           needs --token-file or --insecure-listen)\n"
         "  --unix PATH              also listen on a Unix socket\n"
         "  --platform SUBSTRING     serve only platforms whose name contains SUBSTRING (any case)\n"
         "  --device-type TYPE       cpu, gpu, accelerator or all (default all)\n"
         "  --device N[,N...]        serve only these of the devices that match --platform and\n"
         "                           --device-type, counted from 0 (default: all of them); one\n"
         "                           daemon per GPU: --device-type gpu --device 0, --device 1, ...\n"
         "  --list-devices           print the devices that match --platform and --device-type, one per\n"
         "                           line numbered as --device counts them, and exit\n"
         "  --completions MODE       how the daemon learns that a native command ended: callbacks\n"
         "                           (clSetEventCallback), polling (a thread asks each event's status),\n"
         "                           or auto (default: polling on NVIDIA, whose callbacks of commands\n"
         "                           longer than about 0.1 ms come up to 20 ms late; callbacks elsewhere)\n"
         "  --log-level LEVEL        error, warn, info, debug or trace (default info, or FERRY_LOG)\n"
         "  --handshake-timeout SEC  close connections that send no hello within SEC seconds (default 5)\n"
         "  --session-grace SEC      keep a session whose client connection was lost for SEC seconds,\n"
         "                           for the client to resume it (default 60; 0: end it at once)\n"
         "  --bulk-lanes N           bulk connections a session may take, its bulk stream included:\n"
         "                           clients stripe transfers of 32 MiB or more over them, which TCP\n"
         "                           moves faster than over one connection (1 to 16, default 4; 1:\n"
         "                           no lanes)\n"
         "  --peer-address HOST[:PORT]  where other servers reach this one for peer links, told to\n"
         "                           clients (unix:/PATH too; the port defaults to the one listened on)\n"
         "  --peer-shared-memory on|off  peer links to a daemon on this host that listens on --unix go\n"
         "                           over its Unix socket, migrations through shared memory (default\n"
         "                           on; TCP whenever the socket cannot be reached). off: TCP only, and\n"
         "                           this daemon's socket is not announced to other daemons\n"
         "  --file-root DIR          serve files below DIR to clients' file commands\n"
         "                           (clEnqueueWriteBufferFromFileFERRY and clEnqueueReadBufferToFileFERRY\n"
         "                           with CL_FERRY_FILE_ON_SERVER), opened as the session's worker user;\n"
         "                           without it such commands fail with CL_INVALID_OPERATION\n"
         "  --token-file FILE        accept only clients and peers that prove they hold the token in FILE\n"
         "                           (challenge-response; the token is never sent). Without it ferryd\n"
         "                           listens on loopback only\n"
         "  --insecure-listen ADDR   listen on ADDR without a token anyway: anybody who reaches the port\n"
         "                           can run code on this host's devices\n"
         "  --tls-cert FILE          TLS 1.3 on TCP connections with this certificate chain (PEM);\n"
         "  --tls-key FILE           and its private key; plain connections are then refused\n"
         "  --tls-ca FILE            CA certificates (PEM) that other daemons' certificates must chain to\n"
         "                           on peer links (default: the system's); peer links use TLS when\n"
         "                           this or --tls-cert is given\n"
         "\n"
         "Limits (0: no limit). Beyond a daemon-wide one a new session or connection is refused;\n"
         "beyond a session's quota that session's request fails with an OpenCL error and it goes on.\n"
         "  --max-sessions N         sessions at once, detached ones included (default 256)\n"
         "  --max-connections N      open connections, pending handshakes included (default 1024)\n"
         "  --session-memory BYTES   device memory of a session's buffers, images and SVM\n"
         "                           allocations (default 0: no limit; CL_MEM_OBJECT_ALLOCATION_FAILURE)\n"
         "  --session-objects N      objects of a session, kept events included (default 1000000;\n"
         "                           CL_OUT_OF_RESOURCES)\n"
         "  --session-queued N       commands of a session enqueued and not complete (default 1000000;\n"
         "                           CL_OUT_OF_RESOURCES)\n"
         "  --session-in-flight BYTES  staging held for a session's reads and writes (default 4G;\n"
         "                           CL_OUT_OF_RESOURCES; one transfer alone may be larger)\n"
         "  BYTES take a suffix K, M, G or T (powers of 1024).\n"
         "\n"
         "Session workers: each session runs in a process of its own, which holds neither the token\n"
         "nor the TLS key; a crash ends that session alone (docs/workers.md).\n"
         "  --spare-workers N        workers started ahead of need, ready for new sessions (default 2)\n"
         "  --worker-user USER       the user workers run as when the daemon runs as root (default\n"
         "                           nobody); otherwise they run as the daemon's user\n"
         "  --worker-memory BYTES    end a worker whose resident memory exceeds BYTES; its client gets\n"
         "                           CL_OUT_OF_RESOURCES (default 0: no limit)\n"
         "  --worker-open-files N    open files of a worker (RLIMIT_NOFILE; default: as inherited)\n"
         "  --worker-start-timeout SEC  a worker not ready within SEC seconds is ended, and a session\n"
         "                           that waited for it refused (default 30)\n"
         "  --kernel-cache MODE      shared (default): compiled kernels are kept for every session, as\n"
         "                           one process would; private: each session compiles its own, so no\n"
         "                           session can plant a kernel binary that another one loads\n"
         "\n"
         "  --help                   show this text\n"
         "\n"
         "Prints \"READY <port>\" on stdout once it listens. Logs go to stderr. SIGTERM or SIGINT\n"
         "stops it; SIGQUIT writes the stack of every thread to the log and goes on.\n";
}

parse_outcome parse_options(const std::vector<std::string>& args, options& out, std::string& message) {
  out = options{};
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> value;
    if (flag.rfind("--", 0) != 0) {
      message = "unexpected argument '" + flag + "' (see --help)";
      return parse_outcome::error;
    }
    if (auto eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    if (flag == "--help") {
      if (value) {
        message = "--help takes no value";
        return parse_outcome::error;
      }
      return parse_outcome::help;
    }
    if (flag == "--list-devices") {
      if (value) {
        message = "--list-devices takes no value";
        return parse_outcome::error;
      }
      out.list_devices = true;
      continue;
    }
    static constexpr const char* valued[] = {"--port",     "--listen",    "--unix",
                                             "--platform", "--device-type", "--device", "--completions", "--log-level",
                                             "--handshake-timeout", "--peer-address", "--peer-shared-memory",
                                             "--session-grace", "--bulk-lanes", "--token-file", "--tls-cert",
                                             "--tls-key", "--tls-ca", "--insecure-listen", "--max-sessions",
                                             "--max-connections", "--session-memory",
                                             "--session-objects", "--session-queued",
                                             "--session-in-flight", "--spare-workers", "--worker-user",
                                             "--worker-memory", "--worker-open-files",
                                             "--worker-start-timeout", "--kernel-cache",
                                             "--file-root"};
    bool known = false;
    for (const char* name : valued) known = known || flag == name;
    if (!known) {
      message = "unknown option '" + flag + "' (see --help)";
      return parse_outcome::error;
    }
    if (!value) {
      if (i + 1 >= args.size()) {
        message = flag + " needs a value";
        return parse_outcome::error;
      }
      value = args[++i];
    }
    const std::string& v = *value;
    auto bad = [&](const char* expected) {
      message = "bad value '" + v + "' for " + flag + ": expected " + expected;
      return parse_outcome::error;
    };
    if (flag == "--port") {
      if (!parse_port(v, out.port)) return bad("a port number 0-65535");
    } else if (flag == "--listen") {
      if (v.empty()) return bad("an address");
      out.listen = v;
    } else if (flag == "--unix") {
      if (v.empty() || v.size() >= 108) return bad("a socket path shorter than 108 bytes");
      out.unix_path = v;
    } else if (flag == "--platform") {
      out.platform = v;
    } else if (flag == "--device-type") {
      if (!parse_device_type(v, out.device_type)) return bad("cpu, gpu, accelerator or all");
    } else if (flag == "--device") {
      if (!parse_device_list(v, out.devices)) return bad("device numbers from 0, separated by commas, each once");
    } else if (flag == "--completions") {
      if (!parse_completions(v, out.completions)) return bad("auto, callbacks or polling");
    } else if (flag == "--log-level") {
      if (!parse_log_level(v, out.level)) return bad("error, warn, info, debug or trace");
      out.level_given = true;
    } else if (flag == "--handshake-timeout") {
      if (!parse_seconds(v, out.handshake_timeout_s)) return bad("seconds, more than 0 and at most 3600");
    } else if (flag == "--session-grace") {
      if (!parse_grace(v, out.session_grace_s)) return bad("seconds, from 0 to 86400");
    } else if (flag == "--bulk-lanes") {
      uint64_t lanes = 0;
      if (!parse_count(v, lanes) || lanes < 1 || lanes > protocol::max_bulk_lanes)
        return bad("a number of connections, 1 to 16");
      out.bulk_lanes = static_cast<uint32_t>(lanes);
    } else if (flag == "--max-sessions") {
      if (!parse_count(v, out.max_sessions)) return bad("a number of sessions (0: no limit)");
    } else if (flag == "--max-connections") {
      if (!parse_count(v, out.max_connections)) return bad("a number of connections (0: no limit)");
    } else if (flag == "--session-memory") {
      if (!parse_bytes(v, out.limits.memory)) return bad("bytes, optionally with K, M, G or T (0: no limit)");
    } else if (flag == "--session-objects") {
      if (!parse_count(v, out.limits.objects)) return bad("a number of objects (0: no limit)");
    } else if (flag == "--session-queued") {
      if (!parse_count(v, out.limits.queued)) return bad("a number of commands (0: no limit)");
    } else if (flag == "--session-in-flight") {
      if (!parse_bytes(v, out.limits.in_flight)) return bad("bytes, optionally with K, M, G or T (0: no limit)");
    } else if (flag == "--spare-workers") {
      if (!parse_count(v, out.spare_workers) || out.spare_workers > 64) return bad("a number of workers, 0 to 64");
    } else if (flag == "--worker-user") {
      if (v.empty()) return bad("a user name");
      out.worker_user = v;
    } else if (flag == "--worker-memory") {
      if (!parse_bytes(v, out.worker_memory)) return bad("bytes, optionally with K, M, G or T (0: no limit)");
    } else if (flag == "--worker-open-files") {
      if (!parse_count(v, out.worker_open_files)) return bad("a number of files (0: as inherited)");
    } else if (flag == "--worker-start-timeout") {
      if (!parse_seconds(v, out.worker_start_timeout_s)) return bad("seconds, more than 0 and at most 3600");
    } else if (flag == "--kernel-cache") {
      if (!worker::parse_kernel_cache(v, out.kernel_cache)) return bad("shared or private");
    } else if (flag == "--file-root") {
      if (v.empty()) return bad("a directory");
      out.file_root = v;
    } else if (flag == "--peer-shared-memory") {
      if (v != "on" && v != "off") return bad("on or off");
      out.peer_shared_memory = v == "on";
    } else if (flag == "--peer-address") {
      endpoint where;
      std::string why;
      // Any port will do for the check; the real default is known once listening.
      if (!parse_endpoint(v, 1, where, why)) {
        message = "bad value '" + v + "' for --peer-address: " + why + " (expected HOST[:PORT] or unix:/PATH)";
        return parse_outcome::error;
      }
      out.peer_address = v;
    } else if (flag == "--token-file") {
      if (v.empty()) return bad("a file");
      out.token_file = v;
    } else if (flag == "--tls-cert") {
      if (v.empty()) return bad("a PEM file");
      out.tls_cert = v;
    } else if (flag == "--tls-key") {
      if (v.empty()) return bad("a PEM file");
      out.tls_key = v;
    } else if (flag == "--tls-ca") {
      if (v.empty()) return bad("a PEM file");
      out.tls_ca = v;
    } else if (flag == "--insecure-listen") {
      if (v.empty()) return bad("an address");
      out.listen = v;
      out.insecure_listen = true;
    }
  }
  if (out.tls_cert.empty() != out.tls_key.empty()) {
    message = out.tls_cert.empty() ? "--tls-key needs --tls-cert" : "--tls-cert needs --tls-key";
    return parse_outcome::error;
  }
  if (out.list_devices) return parse_outcome::list;
  // A daemon runs whatever code reaches it on this host's devices: open to
  // the network only when every client must prove a token, or when told so.
  if (out.token_file.empty() && !out.insecure_listen && !is_loopback(out.listen)) {
    message = "listening on " + out.listen +
              " without a token would let anybody who reaches the port run code on this host: give "
              "--token-file FILE, or --insecure-listen " + out.listen + " to do it anyway";
    return parse_outcome::error;
  }
  return parse_outcome::run;
}

}  // namespace ferry::server
