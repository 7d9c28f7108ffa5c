#include "client/core/servers/config.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/log.hpp"
#include "common/tls.hpp"
#include "protocol/auth.hpp"

namespace ferry::client {

std::vector<std::string> split_server_list(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  for (char c : text) {
    if (c == ',' || c == ' ' || c == '\t' || c == '\n') {
      if (!current.empty()) out.push_back(std::move(current));
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

namespace {

/// Lines "KEY VALUE" of a config file ('#' starts a comment).
template <class OnLine>
bool read_config_file(const std::string& path, OnLine&& on_line) {
  std::ifstream file(path);
  if (!file) return false;
  std::string line;
  while (std::getline(file, line)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string key, value;
    if ((words >> key) && (words >> value)) on_line(key, value);
  }
  return true;
}

/// FERRY_CONFIG, $XDG_CONFIG_HOME/ferry/config or ~/.config/ferry/config.
std::string config_file_path() {
  if (const char* path = std::getenv("FERRY_CONFIG"); path && *path) return path;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return std::string(xdg) + "/ferry/config";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.config/ferry/config";
  return {};
}

}  // namespace

server_list configured_servers() {
  server_list list;
  if (const char* env = std::getenv("FERRY_SERVERS"); env && *env) {
    list.addresses = split_server_list(env);
    list.source = "FERRY_SERVERS";
    return list;
  }
  std::string path = config_file_path();
  if (!path.empty() && read_config_file(path, [&](const std::string& key, const std::string& value) {
        if (key == "server") list.addresses.push_back(value);
      }))
    list.source = path;
  return list;
}

security_files configured_security() {
  security_files files;
  std::string path = config_file_path();
  if (!path.empty()) {
    read_config_file(path, [&](const std::string& key, const std::string& value) {
      if (key == "token-file") files.token_file = value;
      else if (key == "tls-ca") files.tls_ca = value;
    });
  }
  if (const char* env = std::getenv("FERRY_TOKEN_FILE"); env && *env) files.token_file = env;
  if (const char* env = std::getenv("FERRY_TLS_CA"); env && *env) files.tls_ca = env;
  return files;
}

bool load_credentials(protocol::credentials& who, std::string& error) {
  security_files files = configured_security();
  if (!files.token_file.empty()) {
    std::string warning;
    if (!protocol::load_token(files.token_file, who.token, warning, error)) return false;
    if (!warning.empty()) FERRY_WARN("config", "%s", warning.c_str());
  }
  if (!files.tls_ca.empty()) {
    who.tls = tls::context::for_client(files.tls_ca, error);
    if (!who.tls) return false;
  }
  return true;
}

}  // namespace ferry::client
