#include "client/core/config.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

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

bool read_config_file(const std::string& path, server_list& out) {
  std::ifstream file(path);
  if (!file) return false;
  std::string line;
  while (std::getline(file, line)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string key, value;
    if (!(words >> key)) continue;
    if (key == "server" && (words >> value)) out.addresses.push_back(value);
  }
  out.source = path;
  return true;
}

}  // namespace

server_list configured_servers() {
  server_list list;
  if (const char* env = std::getenv("FERRY_SERVERS"); env && *env) {
    list.addresses = split_server_list(env);
    list.source = "FERRY_SERVERS";
    return list;
  }
  if (const char* path = std::getenv("FERRY_CONFIG"); path && *path) {
    read_config_file(path, list);
    return list;
  }
  std::string base;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) base = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home) base = std::string(home) + "/.config";
  if (!base.empty()) read_config_file(base + "/ferry/config", list);
  return list;
}

}  // namespace ferry::client
