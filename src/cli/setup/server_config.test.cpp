#include "cli/setup/server_config.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace ferry::cli {
namespace {

TEST(server_config, servers_variable_comes_first) {
  auto c =
      find_server_configuration(environment({"FERRY_SERVERS=a:1", "FERRY_CONFIG=/nonexistent"}));
  EXPECT_EQ(c.source, server_source::servers_variable);
  EXPECT_EQ(c.detail, "a:1");
}

TEST(server_config, empty_servers_variable_counts_as_unset) {
  auto c = find_server_configuration(environment({"FERRY_SERVERS=", "FERRY_CONFIG=/nonexistent"}));
  EXPECT_EQ(c.source, server_source::none);
  EXPECT_EQ(c.detail, "/nonexistent");
}

TEST(server_config, config_path_follows_ferry_config_then_xdg_then_home) {
  EXPECT_EQ(config_file_path(environment({"FERRY_CONFIG=/c", "XDG_CONFIG_HOME=/x", "HOME=/h"})),
            std::filesystem::path("/c"));
  EXPECT_EQ(config_file_path(environment({"XDG_CONFIG_HOME=/x", "HOME=/h"})),
            std::filesystem::path("/x/ferry/config"));
  EXPECT_EQ(config_file_path(environment({"HOME=/h"})),
            std::filesystem::path("/h/.config/ferry/config"));
  EXPECT_EQ(config_file_path(environment()), std::nullopt);
}

TEST(server_config, counts_server_lines_and_skips_comments) {
  std::istringstream in(
      "# servers\n"
      "server a:1\n"
      "  server   b   # trailing comment\n"
      "#server c:3\n"
      "server\n"
      "servers d\n"
      "\n");
  EXPECT_EQ(count_server_lines(in), 2u);
}

TEST(server_config, config_file_with_a_server_line_counts) {
  auto path = std::filesystem::temp_directory_path() /
              ("ferry_cli_server_config_test." + std::to_string(::getpid()));
  { std::ofstream(path) << "# nothing\n"; }
  environment env({"FERRY_CONFIG=" + path.string()});
  EXPECT_EQ(find_server_configuration(env).source, server_source::none);
  { std::ofstream(path) << "server 10.0.0.1:7780\n"; }
  auto c = find_server_configuration(env);
  EXPECT_EQ(c.source, server_source::config_file);
  EXPECT_EQ(c.detail, path.string());
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace ferry::cli
