#include "cli/process/ready_line.hpp"

#include <charconv>

namespace ferry::cli {

std::optional<std::uint16_t> parse_ready_line(std::string_view line) {
  constexpr std::string_view prefix = "READY ";
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!line.starts_with(prefix)) return std::nullopt;
  std::string_view digits = line.substr(prefix.size());
  unsigned port = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  if (port == 0 || port > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(port);
}

}  // namespace ferry::cli
