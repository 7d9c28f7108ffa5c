#include "common/parallel_copy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace ferry {
namespace {

std::vector<uint8_t> pattern(size_t size, uint32_t seed) {
  std::vector<uint8_t> bytes(size);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : bytes) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(x >> 24);
  }
  return bytes;
}

// Sizes around the split point and odd ones whose parts do not divide evenly.
const size_t sizes[] = {0, 1, 4095, parallel_copy::split_from - 1, parallel_copy::split_from,
                        parallel_copy::split_from + 1, (8u << 20) + 13, 3 * 1000 * 1000 + 7};

TEST(parallel_copy, copies_every_byte_with_any_number_of_helpers) {
  for (unsigned helpers : {0u, 1u, 3u, 7u}) {
    parallel_copy copier(helpers);
    EXPECT_EQ(copier.helpers(), helpers);
    for (size_t size : sizes) {
      const auto from = pattern(size, static_cast<uint32_t>(size + helpers));
      // One guard byte on each side shows a part that strays out of its range.
      std::vector<uint8_t> to(size + 2, 0xA5);
      copier.copy(to.data() + 1, from.data(), size);
      EXPECT_EQ(to.front(), 0xA5) << size << " bytes, " << helpers << " helpers";
      EXPECT_EQ(to.back(), 0xA5) << size << " bytes, " << helpers << " helpers";
      EXPECT_TRUE(std::equal(from.begin(), from.end(), to.begin() + 1)) << size << " bytes, " << helpers << " helpers";
    }
  }
}

TEST(parallel_copy, callers_at_once_each_get_their_own_bytes) {
  parallel_copy copier(2);
  constexpr int callers = 6;
  constexpr size_t size = (4u << 20) + 100;
  std::vector<std::vector<uint8_t>> from, to;
  for (int i = 0; i < callers; ++i) {
    from.push_back(pattern(size, static_cast<uint32_t>(i)));
    to.emplace_back(size, 0);
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < callers; ++i)
    threads.emplace_back([&, i] {
      for (int round = 0; round < 10; ++round) copier.copy(to[i].data(), from[i].data(), size);
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < callers; ++i) EXPECT_EQ(to[i], from[i]) << "caller " << i;
}

TEST(parallel_copy, helpers_depend_on_the_hosts_threads) {
  EXPECT_EQ(parallel_copy::default_helpers(2), 0u);
  EXPECT_EQ(parallel_copy::default_helpers(7), 0u);
  EXPECT_EQ(parallel_copy::default_helpers(8), 1u);
  EXPECT_EQ(parallel_copy::default_helpers(16), 3u);
  EXPECT_EQ(parallel_copy::default_helpers(128), 3u);
}

}  // namespace
}  // namespace ferry
