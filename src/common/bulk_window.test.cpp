#include "common/bulk_window.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>

namespace ferry {
namespace {

constexpr uint64_t slot_size = 64 * 1024;

// A window the client made (`slots` of slot_size) and the daemon's view of
// it: a second mapping of the same memfd.
struct window_pair {
  std::unique_ptr<bulk_window> client, daemon;
};
window_pair make_pair_of_windows(uint32_t slots) {
  std::string why;
  window_pair pair;
  pair.client = bulk_window::create(slots, slot_size, why);
  EXPECT_TRUE(pair.client) << why;
  if (pair.client)
    pair.daemon = bulk_window::adopt(unique_fd(::dup(pair.client->fd())), slots, slot_size, 8u << 20, why);
  EXPECT_TRUE(pair.daemon) << why;
  return pair;
}

TEST(bulk_window, the_daemon_sees_what_the_client_writes_into_a_slot) {
  auto [client, daemon] = make_pair_of_windows(3);
  ASSERT_TRUE(client && daemon);
  EXPECT_EQ(daemon->fd(), -1) << "the daemon keeps the mapping, not the descriptor";
  std::memset(client->slot(2), 0x5a, slot_size);
  EXPECT_EQ(daemon->slot(2)[0], 0x5a);
  EXPECT_EQ(daemon->slot(2)[slot_size - 1], 0x5a);
}

TEST(bulk_window, fill_next_slot_copies_into_the_free_slot_and_stops_or_refuses_while_waiting) {
  auto [client, daemon] = make_pair_of_windows(1);
  ASSERT_TRUE(client && daemon);
  const uint8_t bytes[3] = {1, 2, 3};
  uint32_t slot = 99;
  ASSERT_EQ(client->fill_next_slot(bytes, sizeof bytes, [] { return true; }, slot), bulk_window::fill::filled);
  EXPECT_EQ(slot, 0u);
  EXPECT_EQ(std::memcmp(daemon->slot(0), bytes, sizeof bytes), 0);
  client->slot_sent();
  // The only slot is the daemon's: the sender is asked after each wait, and stops when told.
  int asked = 0;
  EXPECT_EQ(client->fill_next_slot(bytes, sizeof bytes, [&] { return ++asked < 2; }, slot),
            bulk_window::fill::stopped);
  EXPECT_EQ(asked, 2);
  // Two releases for the one slot sent: the daemon wrote the counter out of turn.
  daemon->release_slot();
  daemon->release_slot();
  EXPECT_EQ(client->fill_next_slot(bytes, sizeof bytes, [] { return true; }, slot), bulk_window::fill::out_of_turn);
}

TEST(bulk_window, slots_come_round_robin_and_wait_for_the_daemon) {
  auto [client, daemon] = make_pair_of_windows(2);
  ASSERT_TRUE(client && daemon);
  uint32_t slot = 99;
  ASSERT_TRUE(client->wait_for_slot(0, slot));
  EXPECT_EQ(slot, 0u);
  client->slot_sent();
  ASSERT_TRUE(client->wait_for_slot(0, slot));
  EXPECT_EQ(slot, 1u);
  client->slot_sent();
  // Both slots are the daemon's now.
  EXPECT_FALSE(client->wait_for_slot(10, slot));
  daemon->release_slot();
  ASSERT_TRUE(client->wait_for_slot(0, slot));
  EXPECT_EQ(slot, 0u);
  client->slot_sent();
  // A client asleep on the counter wakes when the daemon releases a slot.
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    daemon->release_slot();
  });
  bool got = false;
  for (int i = 0; i < 100 && !got; ++i) got = client->wait_for_slot(100, slot);
  releaser.join();
  ASSERT_TRUE(got);
  EXPECT_EQ(slot, 1u);
}

TEST(bulk_window, the_daemon_refuses_windows_it_cannot_trust) {
  std::string why;
  auto good = bulk_window::create(2, slot_size, why);
  ASSERT_TRUE(good) << why;
  // More slots, or bigger ones, than the memfd holds.
  EXPECT_FALSE(bulk_window::adopt(unique_fd(::dup(good->fd())), 3, slot_size, 8u << 20, why));
  EXPECT_NE(why.find("fewer than"), std::string::npos) << why;
  EXPECT_FALSE(bulk_window::adopt(unique_fd(::dup(good->fd())), 2, 2 * slot_size, 8u << 20, why));
  // Shapes out of bounds.
  EXPECT_FALSE(bulk_window::adopt(unique_fd(::dup(good->fd())), 0, slot_size, 8u << 20, why));
  EXPECT_FALSE(bulk_window::adopt(unique_fd(::dup(good->fd())), bulk_window::max_slots + 1, slot_size, 8u << 20, why));
  EXPECT_FALSE(bulk_window::adopt(unique_fd(::dup(good->fd())), 2, 100, 8u << 20, why));
  EXPECT_FALSE(bulk_window::adopt(unique_fd(::dup(good->fd())), 2, slot_size, slot_size / 2, why));
  // A memfd the client could shrink under the daemon's copy.
  unique_fd unsealed(::memfd_create("unsealed", MFD_CLOEXEC));
  ASSERT_TRUE(unsealed.valid());
  ASSERT_EQ(::ftruncate(unsealed.get(), bulk_window::header_size + 2 * slot_size), 0);
  EXPECT_FALSE(bulk_window::adopt(std::move(unsealed), 2, slot_size, 8u << 20, why));
  EXPECT_NE(why.find("not sealed"), std::string::npos) << why;
  // Not a memfd at all.
  int pipe_ends[2];
  ASSERT_EQ(::pipe(pipe_ends), 0);
  unique_fd keep(pipe_ends[1]);
  EXPECT_FALSE(bulk_window::adopt(unique_fd(pipe_ends[0]), 2, slot_size, 8u << 20, why));
  EXPECT_NE(why.find("not a memfd"), std::string::npos) << why;
}

TEST(bulk_window, the_client_cannot_shrink_its_window) {
  std::string why;
  auto window = bulk_window::create(1, slot_size, why);
  ASSERT_TRUE(window) << why;
  EXPECT_NE(::ftruncate(window->fd(), 0), 0);
  EXPECT_EQ(errno, EPERM);
}

TEST(bulk_window, a_descriptor_travels_with_the_bytes) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  unique_fd a(pair[0]), b(pair[1]);
  std::string why;
  auto window = bulk_window::create(1, slot_size, why);
  ASSERT_TRUE(window) << why;
  const char text[] = "window";
  ASSERT_TRUE(write_with_fd(a.get(), text, sizeof text, window->fd()));
  char got[sizeof text] = {};
  unique_fd received;
  bool extra = true;
  ASSERT_TRUE(read_with_fd(b.get(), got, sizeof got, received, extra));
  EXPECT_STREQ(got, text);
  EXPECT_FALSE(extra);
  ASSERT_TRUE(received.valid());
  EXPECT_TRUE(bulk_window::adopt(std::move(received), 1, slot_size, 8u << 20, why)) << why;

  // Two descriptors at once: both closed, and said.
  const int two[2] = {window->fd(), window->fd()};
  ASSERT_TRUE(write_with_fds(a.get(), text, sizeof text, two, 2));
  ASSERT_TRUE(read_with_fd(b.get(), got, sizeof got, received, extra));
  EXPECT_TRUE(extra);
  EXPECT_FALSE(received.valid());

  // None at all.
  ASSERT_EQ(::send(a.get(), text, sizeof text, 0), static_cast<ssize_t>(sizeof text));
  ASSERT_TRUE(read_with_fd(b.get(), got, sizeof got, received, extra));
  EXPECT_FALSE(extra);
  EXPECT_FALSE(received.valid());
}

TEST(bulk_window, releases_beyond_what_was_sent_are_out_of_range) {
  std::string why;
  auto filler = bulk_window::create(2, bulk_window::min_slot_size, why);
  ASSERT_TRUE(filler) << why;
  auto emptier = bulk_window::adopt(unique_fd(::dup(filler->fd())), 2, bulk_window::min_slot_size,
                                    bulk_window::min_slot_size, why);
  ASSERT_TRUE(emptier) << why;
  uint32_t slot = 0;
  ASSERT_TRUE(filler->wait_for_slot(0, slot));
  filler->slot_sent();
  EXPECT_TRUE(filler->releases_in_range());
  emptier->release_slot();  // the one chunk sent: fine
  EXPECT_TRUE(filler->releases_in_range());
  emptier->release_slot();  // one more than was ever filled
  EXPECT_FALSE(filler->releases_in_range());
}

}  // namespace
}  // namespace ferry
