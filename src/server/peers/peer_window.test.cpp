// The source's side of a peer link's shared-memory window, against the bulk
// reader that the destination's peer reader hands window messages to, over a
// real Unix socket pair.
#include "server/peers/peer_window.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <cstring>
#include <future>
#include <vector>

#include "common/test_stream_pair.hpp"
#include "protocol/limits.hpp"
#include "protocol/version.hpp"
#include "server/native/api.hpp"
#include "server/transport/bulk_reader.hpp"

namespace ferry::server {
namespace {

namespace p = protocol;

TEST(peer_window, only_plain_unix_sockets_of_version_8_carry_one) {
  test_stream_pair pair;
  ASSERT_TRUE(make_test_stream_pair(pair));
  EXPECT_TRUE(peer_window::possible(*pair.server, p::local_route_version));
  EXPECT_FALSE(peer_window::possible(*pair.server, p::local_route_version - 1));
  EXPECT_FALSE(peer_window::takes(peer_window::min_chunk));
  EXPECT_TRUE(peer_window::takes(peer_window::min_chunk + 1));
}

TEST(peer_window, chunks_land_in_the_destinations_transfer_and_are_counted) {
  test_stream_pair pair;
  ASSERT_TRUE(make_test_stream_pair(pair));
  stream_ptr source = plain_stream(std::move(pair.client));
  transfer_table transfers{native::dry_api()};
  std::atomic<uint64_t> received{0};
  auto destination = std::async(std::launch::async, [&] {
    bulk_reader reader(pair.server.get(), transfers, nullptr, &received);
    reader.set_windows(bulk_reader::windows_for(*pair.server), "test", "a peer");
    std::string why;
    const bulk_reader::end end = reader.run(why);
    return std::make_pair(end, why);
  });
  link_counter counter;
  std::string why;
  std::unique_ptr<peer_window> window = peer_window::offer(*source, &counter, why);
  ASSERT_TRUE(window) << why;
  // More chunks than slots: the source waits for the destination to free them.
  const uint64_t chunk = p::max_bulk_chunk, total = 6 * chunk + 12345;
  std::vector<uint8_t> bytes(total);
  for (uint64_t i = 0; i < total; ++i) bytes[i] = static_cast<uint8_t>(i * 13 + i / 4093);
  uint64_t frames = 0;
  for (uint64_t offset = 0; offset < total; offset += chunk, ++frames) {
    const uint64_t size = std::min(chunk, total - offset);
    ASSERT_TRUE(window->send_chunk(source.get(), 7, offset, total, bytes.data() + offset, size, &counter,
                                   [] { return true; }));
  }
  ::shutdown(source->fd(), SHUT_WR);
  ASSERT_EQ(destination.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  auto [end, reason] = destination.get();
  EXPECT_EQ(end, bulk_reader::end::closed) << reason;
  // The offer belongs to the connection; only chunks count as the link's frames.
  EXPECT_EQ(received.load(), frames);
  EXPECT_EQ(counter.messages_out.load(), frames + 1);
  EXPECT_GE(counter.bytes_out.load(), total);
  uint8_t* data = nullptr;
  cl_int status = CL_SUCCESS;
  ASSERT_EQ(transfers.claim(7, total, data, status, why), transfer_table::claim_result::complete) << why;
  EXPECT_EQ(std::memcmp(data, bytes.data(), total), 0);
}

TEST(peer_window, a_destination_that_frees_no_slot_is_given_up_when_the_link_says_so) {
  test_stream_pair pair;
  ASSERT_TRUE(make_test_stream_pair(pair));
  stream_ptr source = plain_stream(std::move(pair.client));
  std::string why;
  // Nobody reads: the offer and the chunk frames wait in the socket's buffer.
  std::unique_ptr<peer_window> window = peer_window::offer(*source, nullptr, why);
  ASSERT_TRUE(window) << why;
  std::vector<uint8_t> bytes(peer_window::min_chunk + 1, 0x33);
  for (uint32_t i = 0; i < peer_window::slots; ++i)
    ASSERT_TRUE(window->send_chunk(source.get(), 1, 0, bytes.size(), bytes.data(), bytes.size(), nullptr,
                                   [] { return true; }));
  // Every slot is taken: the next chunk asks the link between waits, which
  // says the connection is gone the third time.
  int asked = 0;
  EXPECT_FALSE(window->send_chunk(source.get(), 1, 0, bytes.size(), bytes.data(), bytes.size(), nullptr,
                                  [&] { return ++asked < 3; }));
  EXPECT_EQ(asked, 3);
}

}  // namespace
}  // namespace ferry::server
