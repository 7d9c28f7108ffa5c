#include "client/core/memory/host_ptr_mode.hpp"

#include <gtest/gtest.h>

namespace ferry::client {
namespace {

TEST(host_ptr_mode, parses_the_three_modes_and_nothing_else) {
  host_ptr_mode mode = host_ptr_mode::cached;
  ASSERT_TRUE(parse_host_ptr_mode("auto", mode));
  EXPECT_EQ(mode, host_ptr_mode::automatic);
  ASSERT_TRUE(parse_host_ptr_mode("coherent", mode));
  EXPECT_EQ(mode, host_ptr_mode::coherent);
  ASSERT_TRUE(parse_host_ptr_mode("cached", mode));
  EXPECT_EQ(mode, host_ptr_mode::cached);
  EXPECT_FALSE(parse_host_ptr_mode("Cached", mode));
  EXPECT_FALSE(parse_host_ptr_mode("", mode));
  EXPECT_FALSE(parse_host_ptr_mode("coherent ", mode));
  EXPECT_EQ(mode, host_ptr_mode::cached) << "unchanged by a refused value";
}

}  // namespace
}  // namespace ferry::client
