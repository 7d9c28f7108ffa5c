// A reader's wait: it sleeps until its socket is readable, and once a window
// opens (completions went out, a caller waits) it is woken at once and polls.
#include "common/reader_wake.hpp"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <future>
#include <thread>

namespace ferry {
namespace {

using namespace std::chrono_literals;

struct socket_pair {
  int ends[2] = {-1, -1};
  socket_pair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0); }
  ~socket_pair() {
    for (int fd : ends)
      if (fd >= 0) ::close(fd);
  }
  void send_byte() const { ASSERT_EQ(::write(ends[1], "x", 1), 1); }
};

/// Sends a byte and expects the wait to end, saying the socket is readable.
void expect_a_byte_ends_the_wait(std::future<bool>& waited, const socket_pair& pair) {
  pair.send_byte();
  ASSERT_EQ(waited.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(waited.get());
}

bool wait_until(const std::function<bool()>& done) {
  for (int i = 0; i < 2000 && !done(); ++i) std::this_thread::sleep_for(5ms);
  return done();
}

TEST(reader_wake, without_a_window_it_leaves_the_waiting_to_the_read) {
  reader_wake wake(0us);
  socket_pair pair;
  EXPECT_TRUE(wake.wait_readable(pair.ends[0])) << "returns at once: nothing is readable yet";
  wake.open_window();
  EXPECT_EQ(wake.wakes(), 0u);
}

TEST(reader_wake, a_sleeping_reader_is_woken_by_completions_and_then_sees_the_next_bytes) {
  reader_wake wake(50ms);  // long, so that the bytes below come inside it however slow this machine is
  socket_pair pair;
  auto waited = std::async(std::launch::async, [&] { return wake.wait_readable(pair.ends[0]); });
  EXPECT_EQ(waited.wait_for(50ms), std::future_status::timeout) << "nothing to read, no completions: it sleeps";
  // Sleeping since (no window yet): completions wake it, and it polls.
  ASSERT_TRUE(wait_until([&] {
    wake.open_window();
    return wake.wakes() > 0;
  })) << "completions sent did not wake the sleeping reader";
  EXPECT_EQ(waited.wait_for(10ms), std::future_status::timeout) << "woken, it waits on for the bytes";
  expect_a_byte_ends_the_wait(waited, pair);
}

TEST(reader_wake, bytes_wake_a_reader_that_sleeps_past_its_window) {
  reader_wake wake(1ms);
  socket_pair pair;
  wake.open_window();
  auto waited = std::async(std::launch::async, [&] { return wake.wait_readable(pair.ends[0]); });
  EXPECT_EQ(waited.wait_for(30ms), std::future_status::timeout) << "the window passed: it sleeps";
  expect_a_byte_ends_the_wait(waited, pair);
}

TEST(reader_wake, a_reader_nobody_needs_sleeps_inside_its_window_until_woken) {
  reader_wake wake(10s);
  socket_pair pair;
  std::atomic<bool> wanted{true};
  wake.open_window();
  auto waited = std::async(std::launch::async, [&] { return wake.wait_readable(pair.ends[0], [&] { return wanted.load(); }); });
  EXPECT_EQ(waited.wait_for(20ms), std::future_status::timeout) << "it polls";
  wanted = false;  // the waiter got its answer: the reader sleeps
  ASSERT_TRUE(wait_until([&] {
    wanted = true;
    wake.open_window();  // a new waiter
    const bool woke = wake.wakes() > 0;
    if (!woke) wanted = false;
    return woke;
  })) << "the reader went on polling with nobody waiting";
  expect_a_byte_ends_the_wait(waited, pair);
}

TEST(reader_wake, a_window_opened_quietly_wakes_a_sleeping_reader_only_when_asked) {
  reader_wake wake(10s);
  socket_pair pair;
  auto waited = std::async(std::launch::async, [&] { return wake.wait_readable(pair.ends[0]); });
  EXPECT_EQ(waited.wait_for(30ms), std::future_status::timeout) << "no window: it sleeps";
  wake.open_window(10s, false);  // a request is about to go out
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(wake.wakes(), 0u) << "woken before it was asked to";
  ASSERT_TRUE(wait_until([&] {
    wake.wake();  // the request went out
    return wake.wakes() > 0;
  }));
  EXPECT_EQ(wake.wakes(), 1u) << "one write per sleep";
  expect_a_byte_ends_the_wait(waited, pair);
}

TEST(reader_wake, a_closed_peer_ends_the_wait_so_that_the_read_can_say_so) {
  reader_wake wake(1ms);
  socket_pair pair;
  auto waited = std::async(std::launch::async, [&] { return wake.wait_readable(pair.ends[0]); });
  ::close(std::exchange(pair.ends[1], -1));
  ASSERT_EQ(waited.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(waited.get());
}

}  // namespace
}  // namespace ferry
