#include "client/core/memory/host_mirror.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace ferry::client {
namespace {

using range = host_mirror::range;
constexpr size_t page = host_mirror::page_size;

TEST(host_mirror, nothing_changed_means_nothing_to_send) {
  std::vector<uint8_t> host(10 * page + 100, 7);
  host_mirror mirror(host.data(), host.size());
  EXPECT_TRUE(mirror.take_host_changes().empty());
}

TEST(host_mirror, a_changed_byte_sends_its_page_once) {
  std::vector<uint8_t> host(10 * page, 0);
  host_mirror mirror(host.data(), host.size());
  host[3 * page + 17] = 1;
  auto changes = mirror.take_host_changes();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].offset, 3 * page);
  EXPECT_EQ(changes[0].size, page);
  EXPECT_EQ(mirror.shadow()[3 * page + 17], 1);
  EXPECT_TRUE(mirror.take_host_changes().empty()) << "the shadow took the change";
}

TEST(host_mirror, the_last_partial_page_is_compared_to_its_end) {
  std::vector<uint8_t> host(2 * page + 10, 0);
  host_mirror mirror(host.data(), host.size());
  host.back() = 9;
  auto changes = mirror.take_host_changes();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].offset, 2 * page);
  EXPECT_EQ(changes[0].size, 10u);
}

TEST(host_mirror, far_apart_changes_stay_apart_and_near_ones_merge) {
  std::vector<uint8_t> host(200 * page, 0);
  host_mirror mirror(host.data(), host.size());
  host[0] = 1;
  host[2 * page] = 1;    // gap of one page: merged
  host[100 * page] = 1;  // far: its own range
  auto changes = mirror.take_host_changes();
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].offset, 0u);
  EXPECT_EQ(changes[0].size, 3 * page);
  EXPECT_EQ(changes[1].offset, 100 * page);
  EXPECT_EQ(changes[1].size, page);
}

TEST(host_mirror, many_scattered_changes_are_capped) {
  const size_t pages = (host_mirror::max_ranges * 4) * (host_mirror::merge_gap / page + 2);
  std::vector<uint8_t> host(pages * page, 0);
  host_mirror mirror(host.data(), host.size());
  for (size_t p = 0; p < pages; p += host_mirror::merge_gap / page + 2) host[p * page] = 1;
  auto changes = mirror.take_host_changes();
  EXPECT_EQ(changes.size(), host_mirror::max_ranges);
  // Every changed byte is still covered.
  for (size_t p = 0; p < pages; p += host_mirror::merge_gap / page + 2) {
    const size_t at = p * page;
    EXPECT_TRUE(std::any_of(changes.begin(), changes.end(),
                            [&](const range& r) { return at >= r.offset && at < r.offset + r.size; }))
        << at;
  }
}

TEST(host_mirror, server_changes_reach_the_host_and_keep_the_hosts_own_pages) {
  std::vector<uint8_t> host(4 * page, 0);
  host_mirror mirror(host.data(), host.size());
  std::vector<uint8_t> server(host);
  server[page + 5] = 42;   // the server wrote page 1
  host[3 * page + 1] = 9;  // the application wrote page 3 meanwhile
  EXPECT_EQ(mirror.merge_server_bytes(server), page);
  EXPECT_EQ(host[page + 5], 42);
  EXPECT_EQ(host[3 * page + 1], 9) << "a page only the application changed is kept";
  // ... and still goes to the server at the next push.
  auto changes = mirror.take_host_changes();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].offset, 3 * page);
}

TEST(host_mirror, merged_server_bytes_become_the_shadow) {
  std::vector<uint8_t> host(3 * page, 1);
  host_mirror mirror(host.data(), host.size());
  std::vector<uint8_t> server(host);
  server[2 * page] = 5;
  mirror.merge_server_bytes(server);
  EXPECT_EQ(mirror.shadow()[2 * page], 5);
  EXPECT_EQ(mirror.shadow()[0], 1);
  EXPECT_TRUE(mirror.take_host_changes().empty()) << "host and shadow agree";
  std::vector<uint8_t> wrong(7, 0);
  EXPECT_EQ(mirror.merge_server_bytes(wrong), 0u) << "bytes of another size are ignored";
  EXPECT_EQ(host[2 * page], 5);
}

TEST(coalesce_ranges, merges_below_the_gap_only) {
  std::vector<range> in{{0, 10}, {20, 10}, {100, 10}};
  auto out = coalesce_ranges(in, 11, 10);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].offset, 0u);
  EXPECT_EQ(out[0].size, 30u);
  EXPECT_EQ(out[1].offset, 100u);
}

}  // namespace
}  // namespace ferry::client
