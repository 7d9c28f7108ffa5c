#include "cli/app.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "cli/version.hpp"

namespace ferry::cli {
namespace {

struct result {
  int status;
  std::string out;
  std::string err;
};

result run(std::vector<std::string> args) {
  std::ostringstream out, err;
  int status = ferry_main(args, {out, err});
  return {status, out.str(), err.str()};
}

TEST(app, help_and_version_exit_zero_on_stdout) {
  auto help = run({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("Usage: ferry"), std::string::npos);
  EXPECT_NE(help.out.find("devices"), std::string::npos);
  EXPECT_NE(help.out.find("counters"), std::string::npos);

  auto version = run({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.out, "ferry " + std::string(ferry_version()) + "\n");
}

TEST(app, every_subcommand_has_help) {
  for (std::string command : {"devices", "counters", "run", "help"}) {
    auto r = run({command, "--help"});
    EXPECT_EQ(r.status, 0) << command;
    EXPECT_NE(r.out.find("Usage: ferry " + command), std::string::npos) << command;
    EXPECT_EQ(run({"help", command}).out, r.out) << command;
  }
}

TEST(app, no_command_prints_usage_and_exits_2) {
  auto r = run({});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("Usage: ferry"), std::string::npos);
}

TEST(app, unknown_command_or_flag_exits_2_with_a_message) {
  auto command = run({"frobnicate"});
  EXPECT_EQ(command.status, 2);
  EXPECT_NE(command.err.find("unknown command 'frobnicate'"), std::string::npos);

  auto global = run({"--frob"});
  EXPECT_EQ(global.status, 2);
  EXPECT_NE(global.err.find("unknown option '--frob'"), std::string::npos);

  auto devices = run({"devices", "--frob"});
  EXPECT_EQ(devices.status, 2);
  EXPECT_NE(devices.err.find("ferry devices: unknown option '--frob'"), std::string::npos);

  auto run_flag = run({"run", "--frob", "--", "true"});
  EXPECT_EQ(run_flag.status, 2);

  EXPECT_EQ(run({"devices", "extra"}).status, 2);
  EXPECT_EQ(run({"counters", "extra"}).status, 2);

  auto counters = run({"counters", "--servers="});
  EXPECT_EQ(counters.status, 2);
  EXPECT_NE(counters.err.find("ferry counters: --servers needs a non-empty list"), std::string::npos);
  EXPECT_EQ(run({"help", "frobnicate"}).status, 2);
}

TEST(app, run_without_program_is_a_usage_error) {
  auto r = run({"run"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("missing PROGRAM"), std::string::npos);
  EXPECT_EQ(run({"run", "--servers", "h:1", "--"}).status, 2);
}

TEST(app, run_with_servers_passes_status_and_environment_to_the_program) {
  // With --servers no daemon is started, so this works without ferryd.
  auto ok = run({"run", "--servers", "h:1", "--", "sh", "-c",
                 "test \"$FERRY_SERVERS\" = h:1 && test -n \"$OCL_ICD_VENDORS\" && exit 7"});
  EXPECT_EQ(ok.status, 7) << ok.err;
}

TEST(app, run_of_a_missing_program_exits_127) {
  auto r = run({"run", "--servers", "h:1", "--", "ferry-no-such-program-xyz"});
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("ferry-no-such-program-xyz"), std::string::npos);
}

}  // namespace
}  // namespace ferry::cli
