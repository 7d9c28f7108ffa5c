// The round-trip counts of FERRY_CUDA_ROUND_TRIPS: by entry point, most first.
#include "cuda/client/round_trips.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace ferry::cuda {
namespace {

TEST(cuda_round_trips, are_counted_by_entry_point_most_first) {
  // Read once, at the first count: this test is the unit tests' only user.
  ::setenv("FERRY_CUDA_ROUND_TRIPS", "1", 1);
  count_round_trip("cuStreamSynchronize");
  count_round_trip("cuMemcpyDtoH");
  count_round_trip("cuStreamSynchronize");
  EXPECT_EQ(round_trip_report(), "  cuStreamSynchronize 2\n  cuMemcpyDtoH 1\n  total 3\n");
  ::unsetenv("FERRY_CUDA_ROUND_TRIPS");
}

}  // namespace
}  // namespace ferry::cuda
