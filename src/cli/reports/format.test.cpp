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

TEST(format, durations_show_their_two_largest_units_truncated) {
  EXPECT_EQ(format_duration_ms(0), "0 ms");
  EXPECT_EQ(format_duration_ms(999), "999 ms");
  EXPECT_EQ(format_duration_ms(1000), "1.0 s");
  EXPECT_EQ(format_duration_ms(12345), "12.3 s");
  EXPECT_EQ(format_duration_ms(59999), "59.9 s");
  EXPECT_EQ(format_duration_ms(60000), "1 min 00 s");
  EXPECT_EQ(format_duration_ms(303000), "5 min 03 s");
  EXPECT_EQ(format_duration_ms(2 * 3600000ull + 5 * 60000), "2 h 05 min");
  EXPECT_EQ(format_duration_ms(3 * 86400000ull + 4 * 3600000ull + 59 * 60000), "3 d 04 h");
  EXPECT_EQ(format_duration_ms(18446744073709551615ull), "213503982334 d 14 h");
}

}  // namespace
}  // namespace ferry::cli
