#include "cli/setup/ferry_servers.hpp"

#include <gtest/gtest.h>

#include <map>

namespace ferry::cli {
namespace {

// Device handles are only compared here, never dereferenced.
cl_device_id fake_device(std::uintptr_t n) { return reinterpret_cast<cl_device_id>(n); }

TEST(ferry_servers, devices_are_grouped_by_server_in_the_order_of_their_first_device) {
  const std::map<cl_device_id, std::string> where = {
      {fake_device(1), "b:1"}, {fake_device(2), "a:1"}, {fake_device(3), "b:1"}};
  auto servers = group_by_server({fake_device(1), fake_device(2), fake_device(3)},
                                 [&](cl_device_id d) { return std::optional<std::string>(where.at(d)); });
  ASSERT_EQ(servers.size(), 2u);
  EXPECT_EQ(servers[0].address, "b:1");
  EXPECT_EQ(servers[0].devices, (std::vector<cl_device_id>{fake_device(1), fake_device(3)}));
  EXPECT_EQ(servers[1].address, "a:1");
  EXPECT_EQ(servers[1].devices, (std::vector<cl_device_id>{fake_device(2)}));
}

TEST(ferry_servers, devices_whose_server_is_unknown_share_one_group) {
  auto servers = group_by_server({fake_device(1), fake_device(2)},
                                 [](cl_device_id) { return std::optional<std::string>(); });
  ASSERT_EQ(servers.size(), 1u);
  EXPECT_EQ(servers[0].address, "(unknown server)");
  EXPECT_EQ(servers[0].devices.size(), 2u);
}

}  // namespace
}  // namespace ferry::cli
