#include "cli/args.hpp"

#include <gtest/gtest.h>

namespace ferry::cli {
namespace {

constexpr option_spec test_specs[] = {
    {"help", 'h', option_kind::flag, "", "Show this help"},
    {"servers", 0, option_kind::value, "LIST", "Servers to use"},
    {"daemon-arg", 0, option_kind::repeated_value, "ARG", "Extra daemon argument"},
};

outcome<parsed_args> parse(std::vector<std::string> args, positionals policy = positionals::rest) {
  return parse_args(args, test_specs, policy);
}

TEST(args, flag_is_recognised_by_long_and_short_name) {
  EXPECT_TRUE(parse({"--help"}).value().has("help"));
  EXPECT_TRUE(parse({"-h"}).value().has("help"));
  EXPECT_FALSE(parse({}).value().has("help"));
}

TEST(args, value_option_takes_next_argument_or_inline_value) {
  EXPECT_EQ(parse({"--servers", "a:1,b"}).value().value("servers"), "a:1,b");
  EXPECT_EQ(parse({"--servers=a:1"}).value().value("servers"), "a:1");
  EXPECT_EQ(parse({"--servers="}).value().value("servers"), "");
}

TEST(args, value_option_keeps_the_last_value) {
  EXPECT_EQ(parse({"--servers", "a", "--servers", "b"}).value().value("servers"), "b");
}

TEST(args, repeated_option_keeps_every_value_in_order) {
  auto r = parse({"--daemon-arg", "--log-level", "--daemon-arg=debug"});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r.value().values("daemon-arg"), (std::vector<std::string>{"--log-level", "debug"}));
}

TEST(args, missing_value_is_an_error_naming_the_option) {
  auto r = parse({"--servers"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("--servers"), std::string::npos);
}

TEST(args, flag_with_inline_value_is_an_error) { EXPECT_FALSE(parse({"--help=yes"})); }

TEST(args, unknown_option_is_an_error_naming_it) {
  auto r = parse({"--bogus"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("--bogus"), std::string::npos);
  EXPECT_FALSE(parse({"-x"}));
  EXPECT_FALSE(parse({"-hh"}));
}

TEST(args, double_dash_ends_options) {
  auto r = parse({"--servers", "a", "--", "prog", "--help"});
  ASSERT_TRUE(r);
  EXPECT_FALSE(r.value().has("help"));
  EXPECT_EQ(r.value().positional, (std::vector<std::string>{"prog", "--help"}));
}

TEST(args, first_positional_ends_options_under_rest_policy) {
  auto r = parse({"prog", "--help", "-x"});
  ASSERT_TRUE(r);
  EXPECT_FALSE(r.value().has("help"));
  EXPECT_EQ(r.value().positional, (std::vector<std::string>{"prog", "--help", "-x"}));
}

TEST(args, lone_dash_is_positional) {
  auto r = parse({"-"});
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value().positional, (std::vector<std::string>{"-"}));
}

TEST(args, positional_is_an_error_under_forbidden_policy) {
  EXPECT_FALSE(parse({"extra"}, positionals::forbidden));
  EXPECT_FALSE(parse({"--", "extra"}, positionals::forbidden));
  EXPECT_TRUE(parse({"--"}, positionals::forbidden));
}

TEST(args, help_block_lists_every_option_with_its_value_name) {
  std::string text = format_options(test_specs);
  EXPECT_NE(text.find("-h, --help"), std::string::npos);
  EXPECT_NE(text.find("--servers LIST"), std::string::npos);
  EXPECT_NE(text.find("--daemon-arg ARG"), std::string::npos);
}

}  // namespace
}  // namespace ferry::cli
