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
       "", std::vector<worker_info>{}, ""},
  };
  const std::string text = render_counters_report(servers);
  EXPECT_EQ(text,
            "server 127.0.0.1:4000\n"
            "  kind            remote          messages in  messages out          bytes in            bytes out\n"
            "  client-control  127.0.0.1              1200          1199  51.2 KiB (52428)                800 B\n"
            "  peer-out        127.0.0.1:4001            3             3             300 B  64.0 MiB (67108864)\n"
            "  0 workers\n"
            "1 of 1 server answered, 2 links\n");
}

TEST(counters_report, workers_follow_the_links_by_pid_with_their_summary) {
  std::vector<server_counters> servers = {
      {"127.0.0.1:4000",
       std::vector<link_entry>{{CL_FERRY_LINK_CLIENT_CONTROL, "127.0.0.1", 12, 11, 800, 700}},
       "",
       std::vector<worker_info>{
           {4250, CL_FERRY_WORKER_SPARE, "", "", 42ull << 20, 12'345},
           {4242, CL_FERRY_WORKER_SERVING, "1a2b3c4d", "10.0.0.7:51234", 212ull << 20, 3'723'000},
           {4251, CL_FERRY_WORKER_SPARE, "", "", 41ull << 20, 850},
       },
       ""},
  };
  const std::string text = render_counters_report(servers);
  EXPECT_EQ(text,
            "server 127.0.0.1:4000\n"
            "  kind            remote     messages in  messages out  bytes in  bytes out\n"
            "  client-control  127.0.0.1           12            11     800 B      700 B\n"
            "   pid  state    session   client            memory         age\n"
            "  4242  serving  1a2b3c4d  10.0.0.7:51234   212 MiB  1 h 02 min\n"
            "  4250  spare    -         -               42.0 MiB      12.3 s\n"
            "  4251  spare    -         -               41.0 MiB      850 ms\n"
            "  3 workers: 1 serving, 2 spare\n"
            "1 of 1 server answered, 1 link\n");
}

TEST(counters_report, worker_states_have_names_and_unknown_ones_their_number) {
  EXPECT_EQ(worker_state_name(CL_FERRY_WORKER_STARTING), "starting");
  EXPECT_EQ(worker_state_name(CL_FERRY_WORKER_SPARE), "spare");
  EXPECT_EQ(worker_state_name(CL_FERRY_WORKER_SERVING), "serving");
  EXPECT_EQ(worker_state_name(CL_FERRY_WORKER_DETACHED), "detached");
  EXPECT_EQ(worker_state_name(CL_FERRY_WORKER_ENDING), "ending");
  EXPECT_EQ(worker_state_name(9), "state 9");
}

TEST(counters_report, the_workers_summary_counts_sessions_first_then_the_pool_then_the_rest) {
  auto summary = [](std::vector<cl_uint> states) {
    std::vector<worker_info> workers;
    for (cl_uint state : states) workers.push_back({1, state, "", "", 0, 0});
    return workers_summary(workers);
  };
  EXPECT_EQ(summary({}), "0 workers");
  EXPECT_EQ(summary({CL_FERRY_WORKER_SPARE}), "1 worker: 1 spare");
  EXPECT_EQ(summary({CL_FERRY_WORKER_ENDING, 9, CL_FERRY_WORKER_STARTING, CL_FERRY_WORKER_SPARE,
                     CL_FERRY_WORKER_DETACHED, CL_FERRY_WORKER_SERVING, CL_FERRY_WORKER_SERVING}),
            "7 workers: 2 serving, 1 detached, 1 spare, 1 starting, 1 ending, 1 state 9");
}

TEST(counters_report, workers_that_could_not_be_read_say_why_below_the_links) {
  std::vector<server_counters> servers = {
      {"127.0.0.1:4000", std::vector<link_entry>{}, "", std::nullopt,
       "this ferryd does not report workers: it predates protocol version 7"},
  };
  const std::string text = render_counters_report(servers);
  EXPECT_NE(text.find("server 127.0.0.1:4000\n  (no links yet)\n  workers unavailable (this ferryd does not report "
                      "workers: it predates protocol version 7)\n"),
            std::string::npos)
      << text;
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
