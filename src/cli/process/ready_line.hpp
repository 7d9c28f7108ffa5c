// The line ferryd prints on stdout once it listens: "READY <port>".
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ferry::cli {

/// The port of a "READY <port>" line (without its newline; a trailing '\r' is allowed),
/// or nothing for any other line.
std::optional<std::uint16_t> parse_ready_line(std::string_view line);

}  // namespace ferry::cli
