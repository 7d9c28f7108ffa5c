// ferryd's command line (docs/CONTRACT-dev.md).
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "server/native/catalog.hpp"
#include "server/session/session_quota.hpp"
#include "server/worker/kernel_cache.hpp"

namespace ferry::server {

struct options {
  uint16_t port = 7780;
  std::string listen = "127.0.0.1";
  std::string unix_path;        // empty: no Unix socket
  std::string platform;         // substring of the native platform name; empty: any
  cl_device_type device_type = CL_DEVICE_TYPE_ALL;
  std::vector<uint32_t> devices; // --device: positions among the matching devices; empty: all
  bool list_devices = false;     // --list-devices: print the matching devices and exit
  native::completion_mode completions = native::completion_mode::automatic;  // --completions
  log_level level = log_level::info;
  bool level_given = false;     // false: FERRY_LOG (or the default) decides
  double handshake_timeout_s = 5.0;
  double session_grace_s = 60.0;
  uint32_t bulk_lanes = 4;      // --bulk-lanes: bulk connections a session takes, its bulk stream included
  std::string peer_address;     // --peer-address: announced to clients for peer links; empty: none
  bool peer_shared_memory = true;  // --peer-shared-memory: Unix sockets and shared memory between daemons of a host
  std::string token_file;       // --token-file: clients and peers must prove the token; empty: none
  std::string tls_cert;         // --tls-cert/--tls-key: TLS on TCP; empty: plain
  std::string tls_key;
  std::string tls_ca;           // --tls-ca: CA file for other daemons' certificates on peer links
  bool insecure_listen = false; // --insecure-listen: a non-loopback --listen without a token is meant
  uint64_t max_sessions = 256;     // 0: no limit
  uint64_t max_connections = 1024; // 0: no limit
  session_limits limits;           // --session-*: 0 is no limit
  // Session workers (docs/workers.md).
  uint64_t spare_workers = 2;      // --spare-workers: started ahead of need
  std::string worker_user;         // --worker-user: empty: "nobody" when root, else the daemon's own
  uint64_t worker_memory = 0;      // --worker-memory: resident bytes (0: no limit)
  uint64_t worker_open_files = 0;  // --worker-open-files: RLIMIT_NOFILE (0: as inherited)
  double worker_start_timeout_s = 30.0;  // --worker-start-timeout
  worker::kernel_cache_mode kernel_cache = worker::kernel_cache_mode::shared;  // --kernel-cache
  std::string file_root;           // --file-root: the directory file commands may use; empty: none
};

/// Whether `address` is a loopback address (127.0.0.0/8, ::1, localhost).
bool is_loopback(const std::string& address);

enum class parse_outcome {
  run,    ///< start the daemon with the parsed options
  help,   ///< --help: print usage_text() and exit 0
  list,   ///< --list-devices: print the devices that match and exit
  error,  ///< print the message and exit 2
};

/// Parses argv[1..]; "--flag value" and "--flag=value" are both accepted.
parse_outcome parse_options(const std::vector<std::string>& args, options& out, std::string& message);

/// The --help text.
std::string usage_text();

}  // namespace ferry::server
