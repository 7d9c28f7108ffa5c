// Time since a steady_clock point, in whole units, for log lines that say
// how long something took.
#pragma once

#include <chrono>

namespace ferry {

inline long long microseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace ferry
