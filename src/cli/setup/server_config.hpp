// Whether the environment already tells libferry which servers to use, following the
// client configuration order of docs/CONTRACT-dev.md.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

#include "cli/setup/environment.hpp"

namespace ferry::cli {

enum class server_source {
  servers_variable,  ///< FERRY_SERVERS is set and not empty
  config_file,       ///< a config file with at least one "server" line
  none,
};

struct server_configuration {
  server_source source = server_source::none;
  /// FERRY_SERVERS's value, or the config file's path (the path looked at, for `none`).
  std::string detail;
};

/// FERRY_CONFIG if set, else $XDG_CONFIG_HOME/ferry/config, else ~/.config/ferry/config;
/// nothing when none of these variables is usable.
std::optional<std::filesystem::path> config_file_path(const environment& env);

/// Counts "server ADDRESS" lines; blank lines and '#' comments are skipped.
std::size_t count_server_lines(std::istream& in);

/// Where libferry would take its servers from in `env`.
server_configuration find_server_configuration(const environment& env);

}  // namespace ferry::cli
