// What every `ferry` subcommand gets, and how it reports a usage error.
#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

namespace ferry::cli {

/// Where a command writes: its results to `out`, messages to `err`.
struct command_io {
  std::ostream& out;
  std::ostream& err;
};

/// A subcommand's arguments, without "ferry" and the subcommand's name.
using command_args = std::span<const std::string>;

/// Exit status for wrong usage (unknown flag, missing operand).
inline constexpr int usage_exit_status = 2;

/// Prints "ferry COMMAND: MESSAGE" and a pointer to the help; returns usage_exit_status.
int usage_error(const command_io& io, std::string_view command, std::string_view message);

}  // namespace ferry::cli
