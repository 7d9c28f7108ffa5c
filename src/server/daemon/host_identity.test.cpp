#include "server/daemon/host_identity.hpp"

#include <gtest/gtest.h>

namespace ferry::server {
namespace {

TEST(host_identity, this_host_is_known_and_stable) {
  const std::string first = this_host_identity();
  ASSERT_FALSE(first.empty()) << "Linux has /proc/sys/kernel/random/boot_id and /proc/self/ns/mnt";
  EXPECT_EQ(this_host_identity(), first);
  EXPECT_TRUE(same_host(first, this_host_identity()));
}

TEST(host_identity, every_part_tells_hosts_apart) {
  const host_facts here{"6f1c2b8e-0000-4000-8000-000000000001", "gpu-node", "mnt:[4026531841]"};
  const std::string ours = host_identity(here);
  host_facts other_boot = here;
  other_boot.boot_id = "6f1c2b8e-0000-4000-8000-000000000002";
  host_facts other_name = here;
  other_name.hostname = "gpu-node-2";
  host_facts other_mounts = here;
  other_mounts.mount_namespace = "mnt:[4026532000]";
  EXPECT_TRUE(same_host(ours, host_identity(here)));
  EXPECT_FALSE(same_host(ours, host_identity(other_boot)));
  EXPECT_FALSE(same_host(ours, host_identity(other_name)));
  EXPECT_FALSE(same_host(ours, host_identity(other_mounts)));
}

TEST(host_identity, an_unknown_part_matches_nothing) {
  EXPECT_EQ(host_identity(host_facts{"", "gpu-node", "mnt:[1]"}), "");
  EXPECT_EQ(host_identity(host_facts{"b", "gpu-node", ""}), "");
  // Two daemons that both could not read their facts are not on one host.
  EXPECT_FALSE(same_host("", ""));
  EXPECT_FALSE(same_host("", host_identity(host_facts{"b", "h", "mnt:[1]"})));
}

}  // namespace
}  // namespace ferry::server
