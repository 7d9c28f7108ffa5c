#include "cuda/client/round_trips.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace ferry::cuda {

namespace {

bool counting_on() {
  const char* v = std::getenv("FERRY_CUDA_ROUND_TRIPS");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

struct counts {
  const bool on = counting_on();
  std::mutex mutex;  // guards by_call
  std::map<std::string, unsigned long long> by_call;
  /// Written when the library is unloaded (the program's exit).
  ~counts() {
    if (on) std::fprintf(stderr, "ferry libcuda round trips:\n%s", round_trip_report().c_str());
  }
};

counts& round_trip_counts() {
  static counts c;
  return c;
}

}  // namespace

void count_round_trip(const char* call) {
  counts& c = round_trip_counts();
  if (!c.on) return;
  std::lock_guard lock(c.mutex);
  ++c.by_call[call];
}

std::string round_trip_report() {
  counts& c = round_trip_counts();
  std::vector<std::pair<std::string, unsigned long long>> sorted;
  unsigned long long total = 0;
  {
    std::lock_guard lock(c.mutex);
    sorted.assign(c.by_call.begin(), c.by_call.end());
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [name, n] : sorted) {
    out += "  " + name + " " + std::to_string(n) + "\n";
    total += n;
  }
  out += "  total " + std::to_string(total) + "\n";
  return out;
}

}  // namespace ferry::cuda
