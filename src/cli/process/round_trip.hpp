// Round-trip statistics for `ferry devices`.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ferry::cli {

/// The median of the samples (the mean of the middle two for an even count); nothing
/// for no samples.
std::optional<double> median(std::vector<std::uint64_t> samples);

}  // namespace ferry::cli
