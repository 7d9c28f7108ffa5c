#include "cli/process/ready_line.hpp"

#include <gtest/gtest.h>

namespace ferry::cli {
namespace {

TEST(ready_line, parses_the_port) {
  EXPECT_EQ(parse_ready_line("READY 7780"), 7780);
  EXPECT_EQ(parse_ready_line("READY 65535\r"), 65535);
}

TEST(ready_line, rejects_anything_else) {
  EXPECT_EQ(parse_ready_line(""), std::nullopt);
  EXPECT_EQ(parse_ready_line("READY"), std::nullopt);
  EXPECT_EQ(parse_ready_line("READY "), std::nullopt);
  EXPECT_EQ(parse_ready_line("READY 0"), std::nullopt);
  EXPECT_EQ(parse_ready_line("READY 65536"), std::nullopt);
  EXPECT_EQ(parse_ready_line("READY 12x"), std::nullopt);
  EXPECT_EQ(parse_ready_line("READY -1"), std::nullopt);
  EXPECT_EQ(parse_ready_line("ready 80"), std::nullopt);
  EXPECT_EQ(parse_ready_line(" READY 80"), std::nullopt);
}

}  // namespace
}  // namespace ferry::cli
