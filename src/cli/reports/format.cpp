#include "cli/reports/format.hpp"

#include <array>
#include <cstdio>

namespace ferry::cli {

std::string format_bytes(std::uint64_t bytes) {
  static constexpr std::array<const char*, 6> units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < units.size()) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  int decimals = value < 10.0 ? 2 : value < 100.0 ? 1 : 0;
  std::snprintf(text, sizeof text, "%.*f %s", decimals, value, units[unit]);
  return text;
}

std::string format_device_type(cl_device_type type) {
  struct named {
    cl_device_type bit;
    const char* name;
  };
  static constexpr std::array<named, 5> names = {{{CL_DEVICE_TYPE_CPU, "CPU"},
                                                  {CL_DEVICE_TYPE_GPU, "GPU"},
                                                  {CL_DEVICE_TYPE_ACCELERATOR, "accelerator"},
                                                  {CL_DEVICE_TYPE_CUSTOM, "custom"},
                                                  {CL_DEVICE_TYPE_DEFAULT, "default"}}};
  std::string out;
  for (const named& n : names) {
    if ((type & n.bit) == 0) continue;
    if (!out.empty()) out += '+';
    out += n.name;
  }
  return out.empty() ? "unknown" : out;
}

std::string format_microseconds(double nanoseconds) {
  double us = nanoseconds / 1000.0;
  char text[32];
  std::snprintf(text, sizeof text, us < 1000.0 ? "%.1f µs" : "%.0f µs", us);
  return text;
}

std::string format_duration_ms(std::uint64_t milliseconds) {
  constexpr std::uint64_t second = 1000, minute = 60 * second, hour = 60 * minute, day = 24 * hour;
  char text[48];
  const auto whole = [](std::uint64_t value) { return static_cast<unsigned long long>(value); };
  if (milliseconds < second) {
    std::snprintf(text, sizeof text, "%llu ms", whole(milliseconds));
  } else if (milliseconds < minute) {
    // Truncated, not rounded: 59.99 s must not read as "60.0 s".
    std::snprintf(text, sizeof text, "%llu.%llu s", whole(milliseconds / second), whole(milliseconds % second / 100));
  } else if (milliseconds < hour) {
    std::snprintf(text, sizeof text, "%llu min %02llu s", whole(milliseconds / minute),
                  whole(milliseconds % minute / second));
  } else if (milliseconds < day) {
    std::snprintf(text, sizeof text, "%llu h %02llu min", whole(milliseconds / hour),
                  whole(milliseconds % hour / minute));
  } else {
    std::snprintf(text, sizeof text, "%llu d %02llu h", whole(milliseconds / day), whole(milliseconds % day / hour));
  }
  return text;
}

}  // namespace ferry::cli
