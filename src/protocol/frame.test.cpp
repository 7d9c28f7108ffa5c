// The frame header layout and frame_assembler: whole frames out of a byte
// stream, and hostile headers rejected before their payload is buffered.
#include "protocol/frame.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ferry::protocol {
namespace {

std::vector<uint8_t> header_bytes(uint32_t payload_size, uint16_t message_id, uint16_t flags = 0) {
  std::vector<uint8_t> out(frame_header_size);
  store_header(out.data(), frame_header{payload_size, message_id, flags});
  return out;
}

/// Frame bytes with a payload of `payload_size` bytes counting up from `seed`.
std::vector<uint8_t> frame_bytes(uint32_t payload_size, uint16_t message_id, uint8_t seed = 0) {
  std::vector<uint8_t> out = header_bytes(payload_size, message_id);
  for (uint32_t i = 0; i < payload_size; ++i) out.push_back(static_cast<uint8_t>(seed + i));
  return out;
}

/// Capacity left in the assembler's buffer without growing it: write_area
/// with a 1-byte request never grows a buffer that has any room left, so
/// `pending() + free_space()` stays at most the buffer size.
size_t free_space(frame_assembler& assembler) {
  size_t available = 0;
  assembler.write_area(1, available);
  return available;
}

TEST(frame_header, is_eight_little_endian_bytes_size_then_id_then_flags) {
  EXPECT_EQ(frame_header_size, 8u);
  std::vector<uint8_t> bytes = header_bytes(0x04030201, 0x0605, 0x0807);
  EXPECT_EQ(bytes, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  frame_header back = load_header(bytes.data());
  EXPECT_EQ(back.payload_size, 0x04030201u);
  EXPECT_EQ(back.message_id, 0x0605);
  EXPECT_EQ(back.flags, 0x0807);
}

TEST(frame_assembler, waits_for_the_whole_header_and_the_whole_payload) {
  std::vector<uint8_t> wire = frame_bytes(5, 10);
  frame_assembler assembler(64);
  frame_view frame;
  std::string why;
  for (size_t i = 0; i + 1 < wire.size(); ++i) {
    assembler.feed(&wire[i], 1);
    ASSERT_EQ(assembler.next(frame, why), frame_assembler::result::need_more) << "after " << i + 1 << " bytes";
    EXPECT_EQ(assembler.pending(), i + 1);
  }
  assembler.feed(&wire.back(), 1);
  ASSERT_EQ(assembler.next(frame, why), frame_assembler::result::frame);
  EXPECT_EQ(frame.header.message_id, 10);
  EXPECT_EQ(frame.header.payload_size, 5u);
  EXPECT_EQ(std::vector<uint8_t>(frame.payload, frame.payload + 5), (std::vector<uint8_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(assembler.pending(), 0u);
}

TEST(frame_assembler, returns_back_to_back_frames_one_at_a_time_including_empty_payloads) {
  struct sized {
    uint32_t size;
    uint16_t id;
  };
  const sized frames[] = {{0, 10}, {3, 11}, {0, 12}, {0, 14}, {17, 70}, {0, 16}};
  std::vector<uint8_t> wire;
  for (const sized& f : frames) {
    std::vector<uint8_t> one = frame_bytes(f.size, f.id, static_cast<uint8_t>(f.size));
    wire.insert(wire.end(), one.begin(), one.end());
  }
  frame_assembler assembler(64, 8);  // smaller than the stream: forces growth
  assembler.feed(wire.data(), wire.size());
  frame_view frame;
  std::string why;
  for (const sized& f : frames) {
    ASSERT_EQ(assembler.next(frame, why), frame_assembler::result::frame) << why;
    EXPECT_EQ(frame.header.payload_size, f.size);
    EXPECT_EQ(frame.header.message_id, f.id);
    for (uint32_t i = 0; i < f.size; ++i) EXPECT_EQ(frame.payload[i], static_cast<uint8_t>(f.size + i));
  }
  EXPECT_EQ(assembler.next(frame, why), frame_assembler::result::need_more);
  EXPECT_EQ(assembler.pending(), 0u);
}

TEST(frame_assembler, accepts_a_payload_exactly_at_its_limit) {
  constexpr uint32_t limit = 1000;
  std::vector<uint8_t> wire = frame_bytes(limit, 13);
  frame_assembler assembler(limit, 64);
  assembler.feed(wire.data(), frame_header_size);
  frame_view frame;
  std::string why;
  ASSERT_EQ(assembler.next(frame, why), frame_assembler::result::need_more) << why;
  assembler.feed(wire.data() + frame_header_size, limit);
  ASSERT_EQ(assembler.next(frame, why), frame_assembler::result::frame) << why;
  EXPECT_EQ(frame.header.payload_size, limit);
}

TEST(frame_assembler, rejects_payload_size_uint32_max_from_the_header_alone_without_growing) {
  constexpr size_t capacity = 64;
  frame_assembler assembler(64u << 20, capacity);
  std::vector<uint8_t> header = header_bytes(std::numeric_limits<uint32_t>::max(), 30);
  assembler.feed(header.data(), header.size());
  frame_view frame;
  std::string why;
  ASSERT_EQ(assembler.next(frame, why), frame_assembler::result::error);
  EXPECT_EQ(why, "frame payload of 4294967295 bytes exceeds the limit of 67108864");
  EXPECT_EQ(assembler.pending(), frame_header_size);
  EXPECT_LE(assembler.pending() + free_space(assembler), capacity);
}

TEST(frame_assembler, rejects_a_payload_one_byte_above_its_limit_without_growing) {
  constexpr uint32_t limit = 1000;
  constexpr size_t capacity = 64;
  frame_assembler assembler(limit, capacity);
  std::vector<uint8_t> header = header_bytes(limit + 1, 30);
  assembler.feed(header.data(), header.size());
  frame_view frame;
  std::string why;
  ASSERT_EQ(assembler.next(frame, why), frame_assembler::result::error);
  EXPECT_EQ(why, "frame payload of 1001 bytes exceeds the limit of 1000");
  EXPECT_LE(assembler.pending() + free_space(assembler), capacity);
}

TEST(frame_assembler, rejects_non_zero_flags) {
  for (uint16_t flags : {uint16_t{1}, uint16_t{0x8000}, uint16_t{0xFFFF}}) {
    frame_assembler assembler(64, 64);
    std::vector<uint8_t> wire = header_bytes(0, 10, flags);
    assembler.feed(wire.data(), wire.size());
    frame_view frame;
    std::string why;
    ASSERT_EQ(assembler.next(frame, why), frame_assembler::result::error) << flags;
    EXPECT_EQ(why, "frame flags " + std::to_string(flags) + " are reserved in protocol version 1");
  }
}

TEST(frame_assembler, keeps_reporting_the_error_once_a_header_was_rejected) {
  frame_assembler assembler(64, 64);
  std::vector<uint8_t> wire = header_bytes(65, 10);
  assembler.feed(wire.data(), wire.size());
  frame_view frame;
  std::string why;
  ASSERT_EQ(assembler.next(frame, why), frame_assembler::result::error);
  std::vector<uint8_t> more = frame_bytes(1, 10);
  assembler.feed(more.data(), more.size());
  std::string again;
  EXPECT_EQ(assembler.next(frame, again), frame_assembler::result::error);
  EXPECT_EQ(again, why);
}

TEST(frame_assembler, rejects_a_bad_header_that_follows_good_frames) {
  std::vector<uint8_t> wire = frame_bytes(4, 10);
  std::vector<uint8_t> bad = header_bytes(std::numeric_limits<uint32_t>::max(), 10);
  wire.insert(wire.end(), bad.begin(), bad.end());
  frame_assembler assembler(64, 64);
  assembler.feed(wire.data(), wire.size());
  frame_view frame;
  std::string why;
  ASSERT_EQ(assembler.next(frame, why), frame_assembler::result::frame);
  EXPECT_EQ(assembler.next(frame, why), frame_assembler::result::error);
}

TEST(frame_assembler, grows_only_to_the_size_of_a_valid_announced_frame) {
  constexpr uint32_t payload = 10000;
  frame_assembler assembler(1u << 20, 64);
  std::vector<uint8_t> wire = frame_bytes(payload, 13);
  assembler.feed(wire.data(), frame_header_size);
  frame_view frame;
  std::string why;
  ASSERT_EQ(assembler.next(frame, why), frame_assembler::result::need_more);
  // Room for the announced frame, and not more than that.
  EXPECT_EQ(assembler.pending() + free_space(assembler), frame_header_size + payload);
}

TEST(frame_assembler, take_hands_out_buffered_bytes_after_a_frame) {
  std::vector<uint8_t> wire = frame_bytes(2, 10);
  std::vector<uint8_t> raw = {9, 8, 7, 6, 5};
  wire.insert(wire.end(), raw.begin(), raw.end());
  frame_assembler assembler(64);
  assembler.feed(wire.data(), wire.size());
  frame_view frame;
  std::string why;
  ASSERT_EQ(assembler.next(frame, why), frame_assembler::result::frame);
  std::vector<uint8_t> out(8, 0);
  EXPECT_EQ(assembler.take(out.data(), 3), 3u);
  EXPECT_EQ(assembler.take(out.data() + 3, 8), 2u);
  out.resize(5);
  EXPECT_EQ(out, raw);
  EXPECT_EQ(assembler.pending(), 0u);
}

// Known gap (see the protocol review): the per-message limit is only checked
// by dispatch_frame, after the whole frame was buffered. Enable once the
// assembler checks message_limit(id) from the header.
TEST(frame_assembler, rejects_a_header_above_its_message_limit_before_buffering) {
  constexpr size_t capacity = 64;
  frame_assembler assembler(64u << 20, capacity);
  std::vector<uint8_t> header = header_bytes(60u << 20, 10);  // a 60 MiB ping (limit 64 bytes)
  assembler.feed(header.data(), header.size());
  frame_view frame;
  std::string why;
  EXPECT_EQ(assembler.next(frame, why), frame_assembler::result::error);
  EXPECT_LE(assembler.pending() + free_space(assembler), capacity);
}

}  // namespace
}  // namespace ferry::protocol
