// Command line options: a small declarative parser shared by `ferry` and its subcommands.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/outcome.hpp"

namespace ferry::cli {

enum class option_kind {
  flag,            ///< present or not: --help
  value,           ///< takes one value, the last one given wins: --servers LIST
  repeated_value,  ///< takes one value each time, all are kept: --daemon-arg ARG
};

/// One option a command accepts.
struct option_spec {
  std::string_view long_name;  ///< without the leading "--"
  char short_name = 0;         ///< 'h' for -h, 0 for none
  option_kind kind = option_kind::flag;
  std::string_view value_name;  ///< shown in help: "LIST"
  std::string_view help;
};

/// What to do with arguments that are not options.
enum class positionals {
  forbidden,  ///< any non-option argument is a usage error
  rest,       ///< the first non-option argument and everything after it are positional,
              ///< so options meant for a wrapped program are left alone
};

/// The options found, by long name, and the positional arguments in order.
class parsed_args {
 public:
  bool has(std::string_view long_name) const;
  /// The last value given for an option, if any.
  std::optional<std::string> value(std::string_view long_name) const;
  /// Every value given for an option, in order.
  std::vector<std::string> values(std::string_view long_name) const;

  std::vector<std::string> positional;

 private:
  friend outcome<parsed_args> parse_args(std::span<const std::string>, std::span<const option_spec>,
                                         positionals);
  std::map<std::string, std::vector<std::string>, std::less<>> options_;
};

/// Parses `args` (without the program or subcommand name). Accepts "--name value",
/// "--name=value", "-x value" and "--" (ends the options). The error is a one-line message.
outcome<parsed_args> parse_args(std::span<const std::string> args,
                                std::span<const option_spec> specs, positionals policy);

/// The options as an aligned help block, one option per line, for a usage text.
std::string format_options(std::span<const option_spec> specs);

}  // namespace ferry::cli
