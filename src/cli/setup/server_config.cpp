#include "cli/setup/server_config.hpp"

#include <fstream>
#include <sstream>

namespace ferry::cli {

std::optional<std::filesystem::path> config_file_path(const environment& env) {
  if (env.has_non_empty("FERRY_CONFIG")) return std::filesystem::path(*env.get("FERRY_CONFIG"));
  if (env.has_non_empty("XDG_CONFIG_HOME")) {
    return std::filesystem::path(*env.get("XDG_CONFIG_HOME")) / "ferry" / "config";
  }
  if (env.has_non_empty("HOME")) {
    return std::filesystem::path(*env.get("HOME")) / ".config" / "ferry" / "config";
  }
  return std::nullopt;
}

std::size_t count_server_lines(std::istream& in) {
  std::size_t count = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string keyword, address;
    if (words >> keyword >> address && keyword == "server") ++count;
  }
  return count;
}

server_configuration find_server_configuration(const environment& env) {
  if (env.has_non_empty("FERRY_SERVERS")) {
    return {server_source::servers_variable, std::string(*env.get("FERRY_SERVERS"))};
  }
  auto path = config_file_path(env);
  if (!path) return {server_source::none, ""};
  std::ifstream file(*path);
  if (file && count_server_lines(file) > 0) return {server_source::config_file, path->string()};
  return {server_source::none, path->string()};
}

}  // namespace ferry::cli
