#include "cuda/abi/address_ranges.hpp"

#include <gtest/gtest.h>

namespace ferry::cuda {
namespace {

TEST(address_ranges, a_range_must_lie_inside_one_allocation) {
  const address_ranges ranges{{0x1000, 0x100}, {0x1100, 0x100}};
  EXPECT_TRUE(within_one(ranges, 0x1000, 0x100));
  EXPECT_TRUE(within_one(ranges, 0x10ff, 1));
  EXPECT_TRUE(within_one(ranges, 0x1100, 0));
  EXPECT_FALSE(within_one(ranges, 0x10ff, 2));  // spans two allocations
  EXPECT_FALSE(within_one(ranges, 0xfff, 1));   // before the first
  EXPECT_FALSE(within_one(ranges, 0x1200, 1));  // after the last
  EXPECT_FALSE(within_one(ranges, 0x1000, UINT64_MAX));
  EXPECT_FALSE(within_one(ranges, UINT64_MAX, 2));
  EXPECT_FALSE(within_one({}, 0x1000, 1));
}

}  // namespace
}  // namespace ferry::cuda
