#include "protocol/replay_log.hpp"

#include <gtest/gtest.h>

#include "protocol/dispatch.hpp"

namespace ferry::protocol {
namespace {

// Frames of `n` pings numbered from `first` (the request id tells them apart).
std::vector<uint8_t> pings(uint64_t first, uint64_t n) {
  std::vector<uint8_t> out;
  for (uint64_t i = 0; i < n; ++i) append_frame(out, ping{first + i});
  return out;
}

// The request ids of the pings in `bytes`.
std::vector<uint64_t> ids(const std::vector<uint8_t>& bytes) {
  std::vector<uint64_t> out;
  size_t at = 0;
  while (at < bytes.size()) {
    frame_header h = load_header(bytes.data() + at);
    ping p;
    const char* why = "";
    EXPECT_TRUE(decode_payload(bytes.data() + at + frame_header_size, h.payload_size, p, why)) << why;
    out.push_back(p.request);
    at += frame_header_size + h.payload_size;
  }
  return out;
}

TEST(replay_log, replays_every_frame_after_what_the_other_side_received) {
  replay_log log;
  auto a = pings(1, 3);
  log.append(a, 3);
  EXPECT_TRUE(a.empty());
  auto b = pings(4, 2);
  log.append(b, 2);
  EXPECT_EQ(log.sent(), 5u);
  std::vector<uint8_t> out;
  ASSERT_TRUE(log.replay(0, out));
  EXPECT_EQ(ids(out), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  out.clear();
  ASSERT_TRUE(log.replay(2, out));
  EXPECT_EQ(ids(out), (std::vector<uint64_t>{3, 4, 5}));
  out.clear();
  ASSERT_TRUE(log.replay(5, out));
  EXPECT_TRUE(out.empty());
}

TEST(replay_log, acknowledged_frames_are_dropped_even_inside_a_batch) {
  replay_log log;
  auto a = pings(1, 4);
  const size_t frame = a.size() / 4;
  log.append(a, 4);
  ASSERT_TRUE(log.acknowledge(1));
  EXPECT_EQ(log.bytes(), 3 * frame);
  std::vector<uint8_t> out;
  EXPECT_FALSE(log.replay(0, out)) << "frame 1 is gone";
  ASSERT_TRUE(log.replay(1, out));
  EXPECT_EQ(ids(out), (std::vector<uint64_t>{2, 3, 4}));
  ASSERT_TRUE(log.acknowledge(4));
  EXPECT_EQ(log.bytes(), 0u);
  EXPECT_TRUE(log.acknowledge(2)) << "an older count changes nothing";
  EXPECT_EQ(log.acknowledged(), 4u);
}

TEST(replay_log, a_count_beyond_what_was_sent_is_refused) {
  replay_log log;
  auto a = pings(1, 2);
  log.append(a, 2);
  EXPECT_FALSE(log.acknowledge(3));
  EXPECT_EQ(log.acknowledged(), 0u);
  std::vector<uint8_t> out;
  EXPECT_FALSE(log.replay(3, out));
}

TEST(replay_log, batches_are_recycled) {
  replay_log log;
  auto a = pings(1, 100);
  log.append(a, 100);
  ASSERT_TRUE(log.acknowledge(100));
  std::vector<uint8_t> next;
  auto b = pings(101, 1);
  log.append(b, 1);
  EXPECT_GT(b.capacity(), 0u) << "the acknowledged batch's memory comes back";
  EXPECT_TRUE(b.empty());
}

}  // namespace
}  // namespace ferry::protocol
