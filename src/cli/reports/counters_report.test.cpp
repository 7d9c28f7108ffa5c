#include "cli/reports/counters_report.hpp"

#include <CL/cl_ext_ferry.h>
#include <gtest/gtest.h>

namespace ferry::cli {
namespace {

TEST(counters_report, link_kinds_have_names_and_unknown_ones_their_number) {
  EXPECT_EQ(link_kind_name(CL_FERRY_LINK_CLIENT_CONTROL), "client-control");
  EXPECT_EQ(link_kind_name(CL_FERRY_LINK_CLIENT_BULK), "client-bulk");
  EXPECT_EQ(link_kind_name(CL_FERRY_LINK_PEER_OUT), "peer-out");
  EXPECT_EQ(link_kind_name(CL_FERRY_LINK_PEER_IN), "peer-in");
  EXPECT_EQ(link_kind_name(9), "kind 9");
}

TEST(counters_report, bytes_are_human_readable_with_the_exact_count_beside) {
  EXPECT_EQ(format_bytes_exact(0), "0 B");
  EXPECT_EQ(format_bytes_exact(1023), "1023 B");
  EXPECT_EQ(format_bytes_exact(1024), "1.00 KiB (1024)");
  EXPECT_EQ(format_bytes_exact(64ull << 20), "64.0 MiB (67108864)");
  EXPECT_EQ(format_bytes_exact(18446744073709551615ull), "16384 PiB (18446744073709551615)");
}

TEST(counters_report, one_table_per_server_rows_by_kind_numbers_right_aligned) {
  std::vector<server_counters> servers = {
      {"127.0.0.1:4000",
       std::vector<link_entry>{
           {CL_FERRY_LINK_PEER_OUT, "127.0.0.1:4001", 3, 3, 300, 64ull << 20},
           {CL_FERRY_LINK_CLIENT_CONTROL, "127.0.0.1", 1200, 1199, 52428, 800},
       },
       ""},
  };
  const std::string text = render_counters_report(servers);
  EXPECT_EQ(text,
            "server 127.0.0.1:4000\n"
            "  kind            remote          messages in  messages out          bytes in            bytes out\n"
            "  client-control  127.0.0.1              1200          1199  51.2 KiB (52428)                800 B\n"
            "  peer-out        127.0.0.1:4001            3             3             300 B  64.0 MiB (67108864)\n"
            "1 of 1 server answered, 2 links\n");
}

TEST(counters_report, servers_without_links_or_without_answer_say_so) {
  std::vector<server_counters> servers = {
      {"127.0.0.1:4000", std::vector<link_entry>{}, ""},
      {"10.0.0.2:7780", std::nullopt, "CL_DEVICE_NOT_AVAILABLE"},
  };
  const std::string text = render_counters_report(servers);
  EXPECT_NE(text.find("server 127.0.0.1:4000\n  (no links yet)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("server 10.0.0.2:7780  counters unavailable (CL_DEVICE_NOT_AVAILABLE)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("1 of 2 servers answered, 0 links\n"), std::string::npos) << text;
}

TEST(counters_report, rows_of_one_kind_are_ordered_by_remote) {
  std::vector<server_counters> servers = {
      {"s",
       std::vector<link_entry>{{CL_FERRY_LINK_PEER_IN, "10.0.0.9", 1, 1, 1, 1},
                               {CL_FERRY_LINK_PEER_IN, "10.0.0.3", 1, 1, 1, 1},
                               {CL_FERRY_LINK_CLIENT_BULK, "10.0.0.5", 1, 1, 1, 1}},
       ""},
  };
  const std::string text = render_counters_report(servers);
  const auto bulk = text.find("client-bulk"), three = text.find("10.0.0.3"), nine = text.find("10.0.0.9");
  ASSERT_NE(nine, std::string::npos) << text;
  EXPECT_LT(bulk, three) << text;
  EXPECT_LT(three, nine) << text;
}

}  // namespace
}  // namespace ferry::cli
