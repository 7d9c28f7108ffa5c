#include "cli/command.hpp"

#include <ostream>

namespace ferry::cli {

int usage_error(const command_io& io, std::string_view command, std::string_view message) {
  std::string name = command.empty() ? "ferry" : "ferry " + std::string(command);
  io.err << name << ": " << message << "\nTry '" << name << " --help'.\n";
  return usage_exit_status;
}

}  // namespace ferry::cli
