#include "cli/reports/device_report.hpp"

#include <gtest/gtest.h>

namespace ferry::cli {
namespace {

TEST(device_report, lists_servers_devices_and_round_trip) {
  std::vector<server_entry> servers = {
      {"127.0.0.1:4000",
       52300.0,
       "",
       20,
       {{0, "pocl-cpu", CL_DEVICE_TYPE_CPU, 2, 8ull << 30, true},
        {1, "other", CL_DEVICE_TYPE_GPU, 1, 1ull << 20, false}}},
      {"10.0.0.2:7780", std::nullopt, "CL_DEVICE_NOT_AVAILABLE", 0, {}},
  };
  std::string text = render_device_report(servers);
  EXPECT_NE(text.find("server 127.0.0.1:4000  round trip 52.3 µs (median of 20 pings)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  [0] pocl-cpu\n      CPU, 2 compute units, 8.00 GiB global memory\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("[1] other  (unavailable)"), std::string::npos) << text;
  EXPECT_NE(text.find("1 compute unit,"), std::string::npos) << text;
  EXPECT_NE(text.find("server 10.0.0.2:7780  round trip unknown (CL_DEVICE_NOT_AVAILABLE)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("2 servers, 2 devices\n"), std::string::npos) << text;
}

TEST(device_report, no_server_message_names_the_source_and_how_to_configure) {
  std::string none = no_server_message({server_source::none, ""});
  EXPECT_NE(none.find("no server is configured"), std::string::npos);
  EXPECT_NE(none.find("FERRY_SERVERS="), std::string::npos);
  EXPECT_NE(none.find("ferry run -- ferry devices"), std::string::npos);

  std::string tried = no_server_message({server_source::servers_variable, "h:1"});
  EXPECT_NE(tried.find("(FERRY_SERVERS=h:1)"), std::string::npos);
}

}  // namespace
}  // namespace ferry::cli
