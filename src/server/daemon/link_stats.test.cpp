#include "server/daemon/link_stats.hpp"

#include <gtest/gtest.h>

#include "protocol/dispatch.hpp"

namespace ferry::server {
namespace {

namespace p = protocol;

TEST(link_stats, one_counter_per_kind_and_remote_summed_over_connections) {
  link_stats stats;
  link_counter* a = stats.find(p::link_kind::client_control, "10.0.0.1");
  link_counter* b = stats.find(p::link_kind::client_control, "10.0.0.1");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, stats.find(p::link_kind::client_bulk, "10.0.0.1"));
  a->count_in(2, 100);
  b->count_out(1, 30);
  count_in(nullptr, 1, 1);  // counts nothing, harmlessly
  auto all = stats.snapshot();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].kind, p::link_kind::client_control);
  EXPECT_EQ(all[0].remote, "10.0.0.1");
  EXPECT_EQ(all[0].messages_in, 2u);
  EXPECT_EQ(all[0].bytes_in, 100u);
  EXPECT_EQ(all[0].messages_out, 1u);
  EXPECT_EQ(all[0].bytes_out, 30u);
}

TEST(link_stats, remote_host_drops_the_port) {
  EXPECT_EQ(remote_host("127.0.0.1:4242"), "127.0.0.1");
  EXPECT_EQ(remote_host("[::1]:4242"), "::1");
  EXPECT_EQ(remote_host("unix"), "unix");
  EXPECT_EQ(remote_host("::1"), "::1");
}

TEST(link_stats, count_frames_walks_frame_headers) {
  std::vector<uint8_t> out;
  p::append_frame(out, p::ping{1});
  p::append_frame(out, p::completions{{{1, 0, {}}, {2, 0, {}}}});
  p::append_frame(out, p::pong{2});
  EXPECT_EQ(count_frames(out.data(), out.size()), 3u);
  EXPECT_EQ(count_frames(out.data(), 0), 0u);
}

}  // namespace
}  // namespace ferry::server
