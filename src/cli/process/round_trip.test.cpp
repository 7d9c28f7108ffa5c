#include "cli/process/round_trip.hpp"

#include <gtest/gtest.h>

namespace ferry::cli {
namespace {

TEST(round_trip, median_of_odd_count_is_the_middle_sample) {
  EXPECT_EQ(median({30, 10, 20}), 20.0);
  EXPECT_EQ(median({7}), 7.0);
}

TEST(round_trip, median_of_even_count_is_the_mean_of_the_middle_two) {
  EXPECT_EQ(median({40, 10, 20, 30}), 25.0);
}

TEST(round_trip, median_ignores_one_outlier) { EXPECT_EQ(median({50, 51, 52, 90000}), 51.5); }

TEST(round_trip, no_samples_no_median) { EXPECT_EQ(median({}), std::nullopt); }

}  // namespace
}  // namespace ferry::cli
