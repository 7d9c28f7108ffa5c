// A bulk stream's writer ends when its stream is dropped: the session retires
// the writer's generation, and a writer of a retired generation pops nothing.
// The writer takes its generation from the session, read when the stream
// became the session's; a writer that read it at its own start could miss a
// retirement that came first and wait for jobs forever (a session whose
// connection broke at once then never let go of its control stream).
#include "server/transport/bulk_writer.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "common/test_stream_pair.hpp"
#include "protocol/bulk_head.hpp"
#include "protocol/codec.hpp"
#include "protocol/frame.hpp"
#include "server/native/api.hpp"
#include "server/transport/control_writer.hpp"

namespace ferry::server {
namespace {

class bulk_writer_test : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(make_test_stream_pair(streams_)); }
  void TearDown() override {
    jobs_.close();  // a writer still waiting returns
    control_.close();
  }

  /// Runs a writer of `generation` on its own thread; the future is ready
  /// once run() returned. With `handoff`, it takes read windows from there.
  std::future<void> run_writer(uint64_t generation, std::shared_ptr<read_window_handoff> handoff = nullptr) {
    return std::async(std::launch::async, [this, generation, handoff] {
      bulk_writer writer(streams_.server.get(), jobs_, generation, control_, native::dry_api(),
                         [this](const std::string& why) { broken_ = why; });
      if (handoff) writer.use_read_windows(handoff, [this](const std::string& why) { violated_ = why; });
      writer.run();
    });
  }

  /// One frame the writer sent, as the client reads it: a bulk_data chunk
  /// (its bytes follow) or a read_window_chunk (its bytes in a slot).
  struct frame {
    uint16_t id = 0;
    uint64_t transfer = 0, offset = 0, total = 0;
    uint32_t slot = 0;
    std::vector<uint8_t> bytes;  // bulk_data's chunk
    uint64_t size = 0;           // read_window_chunk's
  };
  frame next_frame() {
    frame f;
    uint8_t header[protocol::frame_header_size];
    EXPECT_TRUE(read_exact(streams_.client.get(), header, sizeof header));
    const protocol::frame_header h = protocol::load_header(header);
    f.id = h.message_id;
    std::vector<uint8_t> payload(h.payload_size);
    EXPECT_TRUE(read_exact(streams_.client.get(), payload.data(), payload.size()));
    const char* error = "";
    if (f.id == static_cast<uint16_t>(protocol::message_id::read_window_chunk)) {
      protocol::read_window_chunk c;
      EXPECT_TRUE(protocol::decode_payload(payload.data(), payload.size(), c, error)) << error;
      f.transfer = c.transfer, f.offset = c.offset, f.total = c.total, f.slot = c.slot, f.size = c.size;
    } else {
      protocol::bulk_data prefix;
      EXPECT_TRUE(protocol::decode_payload(payload.data(), protocol::bulk_prefix_size, prefix, error)) << error;
      f.transfer = prefix.transfer, f.offset = prefix.offset, f.total = prefix.total;
      f.bytes.assign(payload.begin() + protocol::bulk_prefix_size, payload.end());
    }
    return f;
  }
  /// Whether the writer sent nothing more (so far).
  bool nothing_sent() {
    pollfd p{streams_.client.get(), POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
  }
  /// Waits (bounded) until the control outbox holds `count` records.
  bool completions_become(size_t count) {
    for (int i = 0; i < 2000 && control_.pending() != count; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return control_.pending() == count;
  }

  /// A read of `size` bytes in pieces of max_bulk_chunk, its staging filled with a pattern.
  std::shared_ptr<pipelined_read> read_of(uint64_t command, uint64_t size) {
    auto read = std::make_shared<pipelined_read>();
    read->command = command;
    read->data.reset(acquire_staging(size));
    read->size = size;
    read->pieces_left = (size + protocol::max_bulk_chunk - 1) / protocol::max_bulk_chunk;
    for (uint64_t i = 0; i < size; ++i) read->data[i] = static_cast<uint8_t>(i * 7 + (i >> 20));
    return read;
  }
  bulk_job piece(const std::shared_ptr<pipelined_read>& read, uint64_t index, cl_int status = CL_COMPLETE) {
    bulk_job job;
    job.command = read->command;
    job.whole = read;
    job.piece_offset = index * protocol::max_bulk_chunk;
    job.size = std::min<uint64_t>(protocol::max_bulk_chunk, read->size - job.piece_offset);
    job.status = status;
    return job;
  }

  test_stream_pair streams_;
  bulk_outbox jobs_{native::dry_api()};
  control_outbox control_{native::dry_api()};
  std::string broken_;
  std::string violated_;
};

TEST_F(bulk_writer_test, a_writer_retired_before_it_runs_returns_at_once) {
  const uint64_t generation = jobs_.writer_generation();  // read when the stream attached
  jobs_.retire_writer();                                  // the stream broke before the thread ran
  auto done = run_writer(generation);
  ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "the writer of a dropped stream is still waiting for jobs";
  EXPECT_EQ(broken_, "") << "a retired writer is not a broken stream";
}

TEST_F(bulk_writer_test, a_waiting_writer_returns_when_retired) {
  auto done = run_writer(jobs_.writer_generation());
  EXPECT_EQ(done.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout)
      << "the writer of a live stream waits for jobs";
  jobs_.retire_writer();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(broken_, "");
}

TEST_F(bulk_writer_test, the_next_streams_writer_is_not_stopped_by_the_old_ones_retirement) {
  jobs_.retire_writer();
  auto next = run_writer(jobs_.writer_generation());
  EXPECT_EQ(next.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout)
      << "the new stream's writer must go on waiting for jobs";
  jobs_.close();
  ASSERT_EQ(next.wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

TEST_F(bulk_writer_test, each_piece_of_a_read_goes_out_as_it_comes_and_the_read_completes_once_after_the_last) {
  const uint64_t size = protocol::max_bulk_chunk + 100;
  auto read = read_of(7, size);
  auto writer = run_writer(jobs_.writer_generation());
  // The last piece first: an out-of-order queue may finish it first.
  jobs_.push(piece(read, 1));
  frame f = next_frame();
  EXPECT_EQ(f.id, static_cast<uint16_t>(protocol::message_id::bulk_data));
  EXPECT_EQ(f.transfer, 7u);
  EXPECT_EQ(f.offset, protocol::max_bulk_chunk);
  EXPECT_EQ(f.total, size);
  ASSERT_EQ(f.bytes.size(), 100u);
  EXPECT_EQ(std::memcmp(f.bytes.data(), read->data.get() + protocol::max_bulk_chunk, 100), 0);
  EXPECT_EQ(control_.pending(), 0u) << "the read completed before its first piece was sent";
  jobs_.push(piece(read, 0));
  f = next_frame();
  EXPECT_EQ(f.offset, 0u);
  EXPECT_EQ(f.total, size);
  ASSERT_EQ(f.bytes.size(), protocol::max_bulk_chunk);
  EXPECT_EQ(std::memcmp(f.bytes.data(), read->data.get(), protocol::max_bulk_chunk), 0);
  EXPECT_TRUE(completions_become(1)) << "the read's completion never came";
  read.reset();
  jobs_.close();
  ASSERT_EQ(writer.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(control_.pending(), 1u) << "one read, one completion";
}

TEST_F(bulk_writer_test, a_failed_piece_fails_the_read_once_and_no_later_piece_is_sent) {
  auto read = read_of(8, 2 * protocol::max_bulk_chunk + 10);
  auto writer = run_writer(jobs_.writer_generation());
  jobs_.push(piece(read, 1, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST));
  jobs_.push(piece(read, 0));
  EXPECT_EQ(control_.pending(), 0u);
  jobs_.push(piece(read, 2, CL_OUT_OF_RESOURCES));
  EXPECT_TRUE(completions_become(1));
  EXPECT_EQ(read->status, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) << "the first failure is the read's";
  jobs_.close();
  ASSERT_EQ(writer.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(nothing_sent()) << "bytes of a failed read went out";
  EXPECT_EQ(control_.pending(), 1u);
}

TEST_F(bulk_writer_test, a_read_whose_later_pieces_could_not_be_enqueued_fails_once_after_its_first) {
  // Three pieces; the second could not be enqueued, so the third never was either.
  auto read = read_of(9, 2 * protocol::max_bulk_chunk + 1);
  read->pieces_left = 4;  // three pieces and the seal
  auto writer = run_writer(jobs_.writer_generation());
  bulk_job seal;
  seal.command = 9;
  seal.whole = read;
  seal.status = CL_OUT_OF_RESOURCES;
  seal.seal = true;
  seal.never_enqueued = 2;
  jobs_.push(std::move(seal));
  EXPECT_TRUE(nothing_sent());
  EXPECT_EQ(control_.pending(), 0u) << "reported before the enqueued piece was done";
  jobs_.push(piece(read, 0));
  EXPECT_TRUE(completions_become(1));
  EXPECT_EQ(read->status, CL_OUT_OF_RESOURCES);
  jobs_.close();
  ASSERT_EQ(writer.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(read->pieces_left, 0u);
  EXPECT_TRUE(nothing_sent()) << "bytes of a failed read went out";
  EXPECT_EQ(control_.pending(), 1u);
}

TEST_F(bulk_writer_test, a_read_is_reported_after_its_seal_even_when_every_piece_came_first) {
  auto read = read_of(10, protocol::max_bulk_chunk + 1);
  read->pieces_left = 3;  // two pieces and the seal
  auto writer = run_writer(jobs_.writer_generation());
  jobs_.push(piece(read, 0));
  jobs_.push(piece(read, 1));
  (void)next_frame();
  (void)next_frame();
  for (int i = 0; i < 50; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(control_.pending(), 0u) << "reported before the executor sealed the read";
  bulk_job seal;
  seal.command = 10;
  seal.whole = read;
  seal.seal = true;
  jobs_.push(std::move(seal));
  EXPECT_TRUE(completions_become(1));
  EXPECT_EQ(read->status, CL_COMPLETE);
  jobs_.close();
  ASSERT_EQ(writer.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(nothing_sent());
}

TEST_F(bulk_writer_test, kept_pieces_go_again_where_they_belong_in_their_read) {
  const uint64_t size = protocol::max_bulk_chunk + 50;
  auto read = read_of(11, size);
  // Kept as the writer keeps them: the second piece sent first.
  const uint64_t second = jobs_.kept().keep(11, read, read->data.get() + protocol::max_bulk_chunk, protocol::max_bulk_chunk,
                                     50, size);
  jobs_.kept().keep(11, read, read->data.get(), 0, protocol::max_bulk_chunk, size);
  jobs_.kept().written(second + 1);
  EXPECT_EQ(second, 1u);
  // The client had the first frame (the second piece): only the first piece goes again.
  auto resent = std::async(std::launch::async, [this] { return jobs_.kept().resend(streams_.server.get(), 1, nullptr); });
  frame f = next_frame();
  EXPECT_EQ(f.transfer, 11u);
  EXPECT_EQ(f.offset, 0u);
  EXPECT_EQ(f.total, size);
  ASSERT_EQ(f.bytes.size(), protocol::max_bulk_chunk);
  EXPECT_EQ(std::memcmp(f.bytes.data(), read->data.get(), protocol::max_bulk_chunk), 0);
  EXPECT_TRUE(resent.get());
  EXPECT_TRUE(nothing_sent());
}

TEST_F(bulk_writer_test, large_chunks_go_through_the_read_window_once_the_client_offered_one) {
  std::string why;
  auto client_window = bulk_window::create(1, 1 << 20, why);
  ASSERT_TRUE(client_window) << why;
  auto handoff = std::make_shared<read_window_handoff>();
  handoff->offer(bulk_window::adopt(unique_fd(::dup(client_window->fd())), 1, 1 << 20, protocol::max_bulk_chunk, why));
  auto writer = run_writer(jobs_.writer_generation(), handoff);
  auto read = read_of(12, 2 * bulk_writer::window_chunk_from);
  read->pieces_left = 1;
  bulk_job job = piece(read, 0);
  jobs_.push(std::move(job));
  frame f = next_frame();
  ASSERT_EQ(f.id, static_cast<uint16_t>(protocol::message_id::read_window_chunk));
  EXPECT_EQ(f.transfer, 12u);
  EXPECT_EQ(f.offset, 0u);
  EXPECT_EQ(f.total, read->size);
  EXPECT_EQ(f.slot, 0u);
  ASSERT_EQ(f.size, read->size);
  EXPECT_EQ(std::memcmp(client_window->slot(0), read->data.get(), read->size), 0);
  client_window->release_slot();
  EXPECT_TRUE(completions_become(1));
  // A small read stays on the socket.
  auto small = read_of(13, 100);
  small->pieces_left = 1;
  jobs_.push(piece(small, 0));
  f = next_frame();
  EXPECT_EQ(f.id, static_cast<uint16_t>(protocol::message_id::bulk_data));
  EXPECT_EQ(f.bytes.size(), 100u);
  jobs_.close();
  ASSERT_EQ(writer.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(violated_, "");
}

TEST_F(bulk_writer_test, a_client_that_releases_read_window_slots_it_never_got_is_reported) {
  std::string why;
  auto client_window = bulk_window::create(1, 1 << 20, why);
  ASSERT_TRUE(client_window) << why;
  auto handoff = std::make_shared<read_window_handoff>();
  handoff->offer(bulk_window::adopt(unique_fd(::dup(client_window->fd())), 1, 1 << 20, protocol::max_bulk_chunk, why));
  auto writer = run_writer(jobs_.writer_generation(), handoff);
  auto first = read_of(14, bulk_writer::window_chunk_from), second = read_of(15, bulk_writer::window_chunk_from);
  first->pieces_left = second->pieces_left = 1;
  jobs_.push(piece(first, 0));
  EXPECT_EQ(next_frame().slot, 0u);
  // The client keeps its one slot, and writes a count of releases beyond the one chunk sent.
  for (int i = 0; i < 5; ++i) client_window->release_slot();
  jobs_.push(piece(second, 0));
  ASSERT_EQ(writer.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "the writer still waits on a client that broke the window's rules";
  EXPECT_NE(violated_.find("released read window slots"), std::string::npos) << violated_;
}

TEST_F(bulk_writer_test, a_writer_waiting_for_a_read_window_slot_stops_when_its_stream_is_dropped) {
  std::string why;
  auto client_window = bulk_window::create(1, 1 << 20, why);
  ASSERT_TRUE(client_window) << why;
  auto handoff = std::make_shared<read_window_handoff>();
  handoff->offer(bulk_window::adopt(unique_fd(::dup(client_window->fd())), 1, 1 << 20, protocol::max_bulk_chunk, why));
  auto writer = run_writer(jobs_.writer_generation(), handoff);
  auto first = read_of(16, bulk_writer::window_chunk_from), second = read_of(17, bulk_writer::window_chunk_from);
  first->pieces_left = second->pieces_left = 1;
  jobs_.push(piece(first, 0));
  EXPECT_EQ(next_frame().slot, 0u);
  jobs_.push(piece(second, 0));  // waits: the client never releases its one slot
  EXPECT_EQ(writer.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  jobs_.retire_writer();  // the session drops the stream (the client went away)
  ASSERT_EQ(writer.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "the writer waits forever for a slot of a stream that is gone";
  EXPECT_EQ(violated_, "");
}

}  // namespace
}  // namespace ferry::server
