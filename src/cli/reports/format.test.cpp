#include "cli/reports/format.hpp"

#include <gtest/gtest.h>

namespace ferry::cli {
namespace {

TEST(format, bytes_use_binary_units_with_three_significant_digits) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(format_bytes(64ull << 20), "64.0 MiB");
  EXPECT_EQ(format_bytes(512ull << 30), "512 GiB");
  EXPECT_EQ(format_bytes(8170000000ull), "7.61 GiB");
}

TEST(format, device_types_are_named_and_joined) {
  EXPECT_EQ(format_device_type(CL_DEVICE_TYPE_CPU), "CPU");
  EXPECT_EQ(format_device_type(CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT), "GPU+default");
  EXPECT_EQ(format_device_type(0), "unknown");
}

TEST(format, microseconds_keep_one_decimal_below_a_millisecond) {
  EXPECT_EQ(format_microseconds(48260), "48.3 µs");
  EXPECT_EQ(format_microseconds(1234000), "1234 µs");
}

}  // namespace
}  // namespace ferry::cli
