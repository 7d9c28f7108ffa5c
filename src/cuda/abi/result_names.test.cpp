#include "cuda/abi/result_names.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace ferry::cuda {
namespace {

TEST(cuda_result_names, known_values_have_nvidia_names) {
  EXPECT_STREQ(result_name(CUDA_SUCCESS), "CUDA_SUCCESS");
  EXPECT_STREQ(result_name(CUDA_ERROR_INVALID_VALUE), "CUDA_ERROR_INVALID_VALUE");
  EXPECT_STREQ(result_name(CUDA_ERROR_NOT_READY), "CUDA_ERROR_NOT_READY");
  EXPECT_STREQ(result_name(CUDA_ERROR_ILLEGAL_ADDRESS), "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_STREQ(result_name(CUDA_ERROR_KEY_ROTATION), "CUDA_ERROR_KEY_ROTATION");
  EXPECT_STREQ(result_name(CUDA_ERROR_UNKNOWN), "CUDA_ERROR_UNKNOWN");
}

TEST(cuda_result_names, unknown_values_have_no_name_or_text) {
  for (CUresult v : {-1, 9, 35, 103, 227, 722, 917, 998, 1000, 100000}) {
    EXPECT_EQ(result_name(v), nullptr) << v;
    EXPECT_EQ(result_string(v), nullptr) << v;
  }
  EXPECT_STREQ(describe_result(12345), "CUresult 12345");
  EXPECT_STREQ(describe_result(CUDA_ERROR_NO_DEVICE), "CUDA_ERROR_NO_DEVICE");
}

TEST(cuda_result_names, every_known_value_has_a_distinct_name_and_a_text) {
  std::set<std::string> names;
  int known = 0;
  for (CUresult v = 0; v < 1000; ++v) {
    const char* name = result_name(v);
    if (!name) continue;
    ++known;
    ASSERT_NE(result_string(v), nullptr) << name;
    EXPECT_GT(std::string(result_string(v)).size(), 3u) << name;
    EXPECT_EQ(std::string(name).rfind("CUDA_", 0), 0u) << name;
    EXPECT_TRUE(names.insert(name).second) << name;
  }
  // CUDA 13.0's driver knows 101 values (asked of a 580 driver with cuGetErrorName).
  EXPECT_EQ(known, 101);
}

}  // namespace
}  // namespace ferry::cuda
