// Where the client finds its servers: FERRY_SERVERS, else a config file.
#pragma once

#include <string>
#include <vector>

#include "protocol/outgoing.hpp"

namespace ferry::client {

struct server_list {
  std::vector<std::string> addresses;  // as written ("host:port", "unix:/path")
  std::string source;                  // where they came from, for logs
};

/// What the client shows servers: files named by FERRY_TOKEN_FILE and
/// FERRY_TLS_CA, else by the config file's "token-file PATH" and "tls-ca
/// PATH" lines (empty: none).
struct security_files {
  std::string token_file;
  std::string tls_ca;
};

/// Splits "a:1, b:2" into entries (commas and whitespace separate).
std::vector<std::string> split_server_list(const std::string& text);

/// Reads FERRY_SERVERS, then FERRY_CONFIG, $XDG_CONFIG_HOME/ferry/config or
/// ~/.config/ferry/config (lines "server host:port", '#' comments).
server_list configured_servers();
security_files configured_security();
/// Reads the token and the TLS CA the configuration names into `who`.
/// False, with `error`, when a named file cannot be used: connecting
/// without it would only be refused, or worse, go out unencrypted.
bool load_credentials(protocol::credentials& who, std::string& error);

}  // namespace ferry::client
