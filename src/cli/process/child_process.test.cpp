#include "cli/process/child_process.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>

namespace ferry::cli {
namespace {

int run_shell(const std::string& script, environment env = environment::current()) {
  auto pid = spawn_program({"sh", "-c", script}, env);
  EXPECT_TRUE(pid) << (pid ? "" : pid.error().message);
  return pid ? shell_status(wait_for_exit(pid.value())) : -1;
}

TEST(child_process, exit_code_is_passed_through) {
  EXPECT_EQ(run_shell("exit 0"), 0);
  EXPECT_EQ(run_shell("exit 3"), 3);
}

TEST(child_process, death_by_signal_is_128_plus_signal) {
  EXPECT_EQ(run_shell("kill -TERM $$"), 128 + SIGTERM);
  EXPECT_EQ(run_shell("kill -KILL $$"), 128 + SIGKILL);
}

TEST(child_process, program_sees_the_given_environment) {
  environment env = environment::current();
  env.set("FERRY_CLI_CHILD_TEST", "yes");
  EXPECT_EQ(run_shell("test \"$FERRY_CLI_CHILD_TEST\" = yes", env), 0);
}

TEST(child_process, missing_program_is_reported) {
  environment env = environment::current();
  auto pid = spawn_program({"ferry-no-such-program-xyz"}, env);
  ASSERT_FALSE(pid);
  EXPECT_EQ(pid.error().errno_value, ENOENT);
  EXPECT_NE(pid.error().message.find("ferry-no-such-program-xyz"), std::string::npos);
}

TEST(child_process, bounded_wait_reports_a_running_process_then_its_end) {
  environment env = environment::current();
  auto pid = spawn_program({"sleep", "300"}, env);
  ASSERT_TRUE(pid);
  EXPECT_EQ(wait_for_exit(pid.value(), std::chrono::milliseconds(20)), std::nullopt);
  ::kill(pid.value(), SIGKILL);
  auto status = wait_for_exit(pid.value(), std::chrono::seconds(30));
  ASSERT_TRUE(status);
  EXPECT_EQ(shell_status(*status), 128 + SIGKILL);
}

TEST(child_process, wait_status_descriptions_name_code_or_signal) {
  EXPECT_EQ(describe_wait_status(3 << 8), "exited with status 3");
  EXPECT_NE(describe_wait_status(SIGKILL).find("signal 9"), std::string::npos);
}

}  // namespace
}  // namespace ferry::cli
