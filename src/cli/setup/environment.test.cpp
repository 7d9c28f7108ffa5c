#include "cli/setup/environment.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace ferry::cli {
namespace {

TEST(environment, get_finds_exact_names_only) {
  environment env({"FERRY_SERVERS=a:1", "FERRY_SERVERS_X=b", "EMPTY="});
  EXPECT_EQ(env.get("FERRY_SERVERS"), "a:1");
  EXPECT_EQ(env.get("FERRY"), std::nullopt);
  EXPECT_EQ(env.get("EMPTY"), "");
  EXPECT_FALSE(env.has_non_empty("EMPTY"));
  EXPECT_TRUE(env.has_non_empty("FERRY_SERVERS_X"));
}

TEST(environment, set_replaces_or_appends) {
  environment env({"A=1", "B=2"});
  env.set("A", "x=y");
  env.set("C", "3");
  EXPECT_EQ(env.entries(), (std::vector<std::string>{"A=x=y", "B=2", "C=3"}));
  EXPECT_EQ(env.get("A"), "x=y");
}

TEST(environment, unset_removes_every_entry_of_the_name) {
  environment env({"A=1", "B=2", "A=3"});
  env.unset("A");
  EXPECT_EQ(env.entries(), (std::vector<std::string>{"B=2"}));
}

TEST(environment, envp_is_null_terminated) {
  environment env({"A=1"});
  auto p = env.envp();
  ASSERT_EQ(p.size(), 2u);
  EXPECT_STREQ(p[0], "A=1");
  EXPECT_EQ(p[1], nullptr);
}

TEST(environment, current_sees_this_process_environment) {
  ::setenv("FERRY_CLI_ENV_TEST", "42", 1);
  EXPECT_EQ(environment::current().get("FERRY_CLI_ENV_TEST"), "42");
  ::unsetenv("FERRY_CLI_ENV_TEST");
}

}  // namespace
}  // namespace ferry::cli
