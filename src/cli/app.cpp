#include "cli/app.hpp"

#include <algorithm>
#include <array>
#include <ostream>

#include "cli/args.hpp"
#include "cli/commands/counters_command.hpp"
#include "cli/commands/devices_command.hpp"
#include "cli/commands/run_command.hpp"
#include "cli/version.hpp"

namespace ferry::cli {

namespace {

struct subcommand {
  std::string_view name;
  std::string_view summary;
  int (*run)(command_args, const command_io&);
  std::string (*usage)();
};

int help_command(command_args args, const command_io& io);
std::string help_usage() {
  return "Usage: ferry help [COMMAND]\n\nShows the help of ferry or of COMMAND.\n";
}

constexpr std::array<subcommand, 4> subcommands = {{
    {"devices", "List servers, their devices and round-trip times", devices_command, devices_usage},
    {"counters", "Show each server's link counters (messages and bytes per link) and workers", counters_command,
     counters_usage},
    {"run", "Run a program with Ferry set up (a local ferryd when none is configured)", run_command,
     run_usage},
    {"help", "Show the help of ferry or of a command", help_command, help_usage},
}};

constexpr option_spec global_options[] = {
    {"help", 'h', option_kind::flag, "", "Show this help"},
    {"version", 0, option_kind::flag, "", "Show the version"},
};

const subcommand* find_subcommand(std::string_view name) {
  auto it = std::find_if(subcommands.begin(), subcommands.end(),
                         [&](const subcommand& c) { return c.name == name; });
  return it == subcommands.end() ? nullptr : &*it;
}

int help_command(command_args args, const command_io& io) {
  if (args.empty()) {
    io.out << ferry_usage();
    return 0;
  }
  if (args.size() > 1) return usage_error(io, "help", "too many arguments");
  if (args[0] == "--help" || args[0] == "-h") {
    io.out << help_usage();
    return 0;
  }
  const subcommand* command = find_subcommand(args[0]);
  if (command == nullptr) return usage_error(io, "", "unknown command '" + args[0] + "'");
  io.out << command->usage();
  return 0;
}

}  // namespace

std::string ferry_usage() {
  std::string out =
      "Usage: ferry [--help] [--version] COMMAND [ARGS...]\n"
      "\n"
      "Ferry runs unmodified OpenCL programs on the devices of remote servers (ferryd).\n"
      "\n"
      "Commands:\n";
  for (const subcommand& c : subcommands) {
    out += "  " + std::string(c.name) + std::string(10 - c.name.size(), ' ') +
           std::string(c.summary) + "\n";
  }
  out +=
      "\n"
      "Options:\n" +
      format_options(global_options) +
      "\n"
      "Environment:\n"
      "  FERRY_SERVERS       host[:port][,...] or unix:/path; default port 7780\n"
      "  FERRY_CONFIG        config file with lines \"server host:port\"\n"
      "                      (default $XDG_CONFIG_HOME/ferry/config or ~/.config/ferry/config)\n"
      "  FERRY_LOG           error|warn|info|debug|trace (default warn); FERRY_LOG_FILE=path\n"
      "  FERRY_KEEP_ICD_ENV  1: leave OCL_ICD_VENDORS and OCL_ICD_FILENAMES as they are\n"
      "\n"
      "Run 'ferry COMMAND --help' for a command's options.\n";
  return out;
}

int ferry_main(command_args args, const command_io& io) {
  auto parsed = parse_args(args, global_options, positionals::rest);
  if (!parsed) return usage_error(io, "", parsed.error());
  const parsed_args& options = parsed.value();
  if (options.has("help")) {
    io.out << ferry_usage();
    return 0;
  }
  if (options.has("version")) {
    io.out << "ferry " << ferry_version() << "\n";
    return 0;
  }
  if (options.positional.empty()) {
    io.err << ferry_usage();
    return usage_exit_status;
  }
  const subcommand* command = find_subcommand(options.positional.front());
  if (command == nullptr) {
    return usage_error(io, "", "unknown command '" + options.positional.front() + "'");
  }
  return command->run(command_args(options.positional).subspan(1), io);
}

}  // namespace ferry::cli
