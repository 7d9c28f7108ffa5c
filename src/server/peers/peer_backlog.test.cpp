#include "server/peers/peer_backlog.hpp"

#include "common/stream.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

#include "common/socket.hpp"
#include "protocol/codec.hpp"
#include "protocol/frame.hpp"

namespace ferry::server {
namespace {

namespace p = protocol;

peer_status status_of(p::object_id event, p::object_id command, cl_int status) {
  peer_status s;
  s.event = event;
  s.command = command;
  s.status = status;
  return s;
}

// A migration straight from `bytes` (standing in for a mapped range).
peer_migration migration_of(p::object_id command, uint64_t transfer, std::vector<uint8_t>& bytes) {
  peer_migration m;
  m.command = command;
  m.transfer = transfer;
  m.source.pointer = bytes.data();
  m.size = bytes.size();
  return m;
}

// Reads whole frames from a socket until `count` have come.
std::vector<std::pair<p::frame_header, std::vector<uint8_t>>> read_frames(int fd, size_t count) {
  std::vector<std::pair<p::frame_header, std::vector<uint8_t>>> frames;
  while (frames.size() < count) {
    uint8_t head[p::frame_header_size];
    if (!read_exact(fd, head, sizeof head)) break;
    p::frame_header h = p::load_header(head);
    std::vector<uint8_t> payload(h.payload_size);
    if (!payload.empty() && !read_exact(fd, payload.data(), payload.size())) break;
    frames.emplace_back(h, std::move(payload));
  }
  return frames;
}

class backlog_test : public ::testing::Test {
 protected:
  void SetUp() override {
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    out_ = plain_stream(unique_fd(pair[0]));
    in_.reset(pair[1]);
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    sink_ = plain_stream(unique_fd(pair[0]));
    unique_fd drained(pair[1]);
    // Chunks are larger than a socket buffer: something must read them.
    drain_ = std::thread([fd = std::move(drained)] {
      std::vector<uint8_t> scratch(1 << 16);
      while (::read(fd.get(), scratch.data(), scratch.size()) > 0) {
      }
    });
  }
  void TearDown() override {
    sink_.reset();  // the drain thread sees the end
    if (drain_.joinable()) drain_.join();
  }
  stream_ptr sink_;  // where first sends go: their bytes are not looked at
  std::thread drain_;
  stream_ptr out_;
  unique_fd in_;
};

TEST_F(backlog_test, frames_are_numbered_in_send_order_and_a_migration_completes_with_its_last_chunk) {
  peer_backlog backlog;
  std::vector<uint8_t> bytes(p::max_bulk_chunk + 100, 0x5a);
  std::vector<uint8_t> statuses;
  backlog.add_status(status_of(7, 70, CL_COMPLETE), statuses);  // 1
  backlog.begin(migration_of(40, 500, bytes), bytes.size());
  ASSERT_TRUE(backlog.has_current());
  ASSERT_TRUE(backlog.send_chunk(sink_.get(), nullptr));  // 2
  backlog.add_status(status_of(8, 80, -5), statuses);      // 3
  ASSERT_TRUE(backlog.send_chunk(sink_.get(), nullptr));  // 4: the last chunk
  EXPECT_FALSE(backlog.has_current());
  EXPECT_EQ(backlog.sent(), 4u);

  std::vector<peer_migration> done;
  ASSERT_EQ(backlog.acknowledge(3, done), peer_backlog::ack_result::ok);
  EXPECT_TRUE(done.empty()) << "a migration is not done before its last chunk is acknowledged";
  ASSERT_EQ(backlog.acknowledge(4, done), peer_backlog::ack_result::ok);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].command, 40u);
  EXPECT_TRUE(backlog.empty());
}

TEST_F(backlog_test, resend_writes_exactly_the_frames_after_the_count_with_whole_chunks) {
  peer_backlog backlog;
  std::vector<uint8_t> bytes(p::max_bulk_chunk + 100);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  std::vector<uint8_t> statuses;
  backlog.add_status(status_of(7, 70, CL_COMPLETE), statuses);  // 1
  backlog.begin(migration_of(40, 500, bytes), bytes.size());
  ASSERT_TRUE(backlog.send_chunk(sink_.get(), nullptr));        // 2: offset 0
  backlog.add_status(status_of(8, 80, -5), statuses);            // 3
  ASSERT_TRUE(backlog.send_chunk(sink_.get(), nullptr));        // 4: offset max_bulk_chunk
  backlog.add_status(status_of(9, 90, CL_COMPLETE), statuses);  // 5

  std::vector<peer_migration> done;
  ASSERT_EQ(backlog.acknowledge(2, done), peer_backlog::ack_result::ok);
  ASSERT_TRUE(backlog.resend(out_.get(), nullptr));
  auto frames = read_frames(in_.get(), 3);
  ASSERT_EQ(frames.size(), 3u);
  const char* error = "";
  p::peer_event_status s;
  ASSERT_EQ(frames[0].first.message_id, static_cast<uint16_t>(p::message_id::peer_event_status));
  ASSERT_TRUE(p::decode_payload(frames[0].second.data(), frames[0].second.size(), s, error)) << error;
  EXPECT_EQ(s, (p::peer_event_status{8, -5}));
  ASSERT_EQ(frames[1].first.message_id, static_cast<uint16_t>(p::message_id::bulk_data));
  p::bulk_data prefix;
  ASSERT_TRUE(p::decode_payload(frames[1].second.data(), p::bulk_prefix_size, prefix, error)) << error;
  EXPECT_EQ(prefix.transfer, 500u);
  EXPECT_EQ(prefix.offset, p::max_bulk_chunk);
  EXPECT_EQ(prefix.total, bytes.size());
  ASSERT_EQ(frames[1].second.size(), p::bulk_prefix_size + 100);
  EXPECT_EQ(std::memcmp(frames[1].second.data() + p::bulk_prefix_size, bytes.data() + p::max_bulk_chunk, 100), 0);
  ASSERT_TRUE(p::decode_payload(frames[2].second.data(), frames[2].second.size(), s, error)) << error;
  EXPECT_EQ(s, (p::peer_event_status{9, CL_COMPLETE}));
  EXPECT_EQ(backlog.sent(), 5u) << "frames sent again keep their numbers";
}

TEST_F(backlog_test, an_empty_migration_is_one_empty_chunk) {
  peer_backlog backlog;
  std::vector<uint8_t> none;
  backlog.begin(migration_of(41, 501, none), 0);
  ASSERT_TRUE(backlog.send_chunk(out_.get(), nullptr));
  EXPECT_FALSE(backlog.has_current());
  auto frames = read_frames(in_.get(), 1);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].second.size(), p::bulk_prefix_size);
  std::vector<peer_migration> done;
  ASSERT_EQ(backlog.acknowledge(1, done), peer_backlog::ack_result::ok);
  EXPECT_EQ(done.size(), 1u);
}

TEST_F(backlog_test, a_count_beyond_what_was_sent_is_refused_and_changes_nothing) {
  peer_backlog backlog;
  std::vector<uint8_t> statuses;
  backlog.add_status(status_of(7, 70, CL_COMPLETE), statuses);
  std::vector<peer_migration> done;
  EXPECT_EQ(backlog.acknowledge(2, done), peer_backlog::ack_result::beyond_sent);
  EXPECT_EQ(backlog.acknowledged(), 0u);
  EXPECT_FALSE(backlog.empty());
  // An older count than one acknowledged before is harmless.
  ASSERT_EQ(backlog.acknowledge(1, done), peer_backlog::ack_result::ok);
  ASSERT_EQ(backlog.acknowledge(0, done), peer_backlog::ack_result::ok);
  EXPECT_EQ(backlog.acknowledged(), 1u);
}

TEST_F(backlog_test, take_all_hands_back_every_unacknowledged_item_and_numbering_starts_again) {
  peer_backlog backlog;
  std::vector<uint8_t> bytes(300, 1);
  std::vector<uint8_t> statuses;
  backlog.add_status(status_of(7, 70, CL_COMPLETE), statuses);
  backlog.add_status(status_of(8, 80, CL_COMPLETE), statuses);
  backlog.begin(migration_of(40, 500, bytes), bytes.size());  // opened, no chunk sent yet
  std::vector<peer_migration> done;
  ASSERT_EQ(backlog.acknowledge(1, done), peer_backlog::ack_result::ok);
  std::vector<peer_status> kept;
  std::vector<peer_migration> migrations;
  backlog.take_all(kept, migrations);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].command, 80u);
  ASSERT_EQ(migrations.size(), 1u);
  EXPECT_EQ(migrations[0].command, 40u);
  EXPECT_TRUE(backlog.empty());
  EXPECT_FALSE(backlog.has_current());
  EXPECT_EQ(backlog.sent(), 0u);
  EXPECT_EQ(backlog.acknowledged(), 0u);
}

}  // namespace
}  // namespace ferry::server
