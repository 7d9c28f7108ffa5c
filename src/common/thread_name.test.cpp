#include "common/thread_name.hpp"

#include <gtest/gtest.h>
#include <pthread.h>

#include <thread>

namespace ferry {
namespace {

TEST(thread_name, role_and_peer_fit_whole) {
  EXPECT_EQ(thread_name("rd", "10.0.0.5:778"), "rd@10.0.0.5:778");
  EXPECT_EQ(thread_name("bulk", "gpu1:7780"), "bulk@gpu1:7780");
  EXPECT_EQ(thread_name("ferry-callbacks"), "ferry-callbacks");
}

TEST(thread_name, a_long_peer_keeps_its_end) {
  const std::string name = thread_name("rd", "127.0.0.1:41683");
  EXPECT_EQ(name.size(), max_thread_name);
  EXPECT_EQ(name, "rd@.0.0.1:41683");
}

TEST(thread_name, a_long_role_is_cut) {
  EXPECT_EQ(thread_name("a-very-long-role-name", "x"), "a-very-long-rol");
  EXPECT_EQ(thread_name("a-very-long-role-name"), "a-very-long-rol");
}

TEST(thread_name, the_thread_carries_it) {
  char got[32] = {};
  std::thread t([&] {
    name_this_thread(thread_name("test", "server-with-a-long-name:1234"));
    pthread_getname_np(pthread_self(), got, sizeof got);
  });
  t.join();
  EXPECT_EQ(std::string(got), "test@-name:1234");
}

}  // namespace
}  // namespace ferry
