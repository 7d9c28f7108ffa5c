#include "cli/process/signal_relay.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <csignal>

#include "cli/process/child_process.hpp"

namespace ferry::cli {
namespace {

TEST(signal_relay, sent_signal_is_recorded_and_forwarded_to_the_child) {
  signal_relay relay;
  environment env = environment::current();
  pid_t child = -1;
  {
    signal_relay::hold hold;
    auto pid = spawn_program({"sleep", "300"}, env);
    ASSERT_TRUE(pid);
    child = pid.value();
    relay.forward_to(child);
  }
  ::kill(::getpid(), SIGTERM);

  pollfd p{relay.wake_fd(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 10000), 1);
  EXPECT_EQ(relay.received(), SIGTERM);
  EXPECT_EQ(shell_status(wait_for_exit(child)), 128 + SIGTERM);
}

TEST(signal_relay, signal_without_target_only_wakes) {
  signal_relay relay;
  ::kill(::getpid(), SIGINT);
  pollfd p{relay.wake_fd(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 10000), 1);
  EXPECT_EQ(relay.received(), SIGINT);
}

}  // namespace
}  // namespace ferry::cli
