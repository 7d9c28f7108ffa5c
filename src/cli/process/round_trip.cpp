#include "cli/process/round_trip.hpp"

#include <algorithm>

namespace ferry::cli {

std::optional<double> median(std::vector<std::uint64_t> samples) {
  if (samples.empty()) return std::nullopt;
  std::sort(samples.begin(), samples.end());
  std::size_t mid = samples.size() / 2;
  if (samples.size() % 2 == 1) return static_cast<double>(samples[mid]);
  return (static_cast<double>(samples[mid - 1]) + static_cast<double>(samples[mid])) / 2.0;
}

}  // namespace ferry::cli
