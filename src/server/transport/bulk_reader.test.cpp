// The bulk reader's shared-memory window (window_offer, window_chunk) over a
// real Unix socket pair; the bulk_data checks are in server/daemon/handshake.test.cpp.
#include "server/transport/bulk_reader.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "common/test_stream_pair.hpp"
#include "protocol/codec.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/frame.hpp"
#include "protocol/messages.hpp"
#include "protocol/outgoing.hpp"
#include "server/native/api.hpp"

namespace ferry::server {
namespace {

namespace p = protocol;

constexpr uint64_t slot_size = 64 * 1024;

// A bulk reader on one end of a socket pair; the test writes to the other.
class reader_on_a_socket_pair : public ::testing::Test {
 protected:
  void SetUp() override {
    test_stream_pair pair;
    ASSERT_TRUE(make_test_stream_pair(pair));
    client_ = std::move(pair.client);
    server_ = std::move(pair.server);
  }
  /// Runs a reader into `transfers` until the client's end closes or it
  /// refuses something.
  void start_reader(transfer_table& transfers, bulk_reader::windows allowed,
                    std::shared_ptr<read_window_handoff> read_windows = nullptr) {
    outcome_ = std::async(std::launch::async, [this, &transfers, allowed, read_windows] {
      bulk_reader reader(server_.get(), transfers);
      reader.set_windows(allowed, "test");
      reader.set_read_windows(read_windows);
      std::string why;
      bulk_reader::end end = reader.run(why);
      return std::make_pair(end, why);
    });
  }
  /// Closes the client's end and returns how the reader ended.
  std::pair<bulk_reader::end, std::string> finish() {
    ::shutdown(client_.get(), SHUT_WR);
    EXPECT_EQ(outcome_.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    return outcome_.get();
  }
  // The reader thread uses the derived fixture's table, which goes first.
  void TearDown() override {
    if (outcome_.valid()) finish();
  }

  unique_fd client_;
  stream_ptr server_;
  std::future<std::pair<bulk_reader::end, std::string>> outcome_;
};

class bulk_window_reader : public reader_on_a_socket_pair {
 protected:
  void start(bulk_reader::windows allowed = bulk_reader::windows::accepted) { start_reader(transfers_, allowed); }
  void offer(const bulk_window& window, uint32_t slots, uint64_t size) {
    ASSERT_TRUE(p::send_window_offer(client_.get(), p::window_offer{slots, size}, window.fd()));
  }
  /// Starts the reader and offers it window_, a new window of 2 slots.
  void start_with_window() {
    std::string why;
    window_ = bulk_window::create(2, slot_size, why);
    ASSERT_TRUE(window_) << why;
    start();
    offer(*window_, 2, slot_size);
  }
  void chunk(uint64_t transfer, uint64_t offset, uint64_t total, uint32_t slot, uint64_t size) {
    std::vector<uint8_t> frame;
    p::append_frame(frame, p::window_chunk{transfer, offset, total, slot, size});
    ASSERT_TRUE(write_all(client_.get(), frame.data(), frame.size()));
  }
  /// Waits for a free slot of window_, copies `size` bytes of `from` into it
  /// and sends the chunk, as the client does.
  void send_through_window(uint64_t transfer, uint64_t offset, uint64_t total, const uint8_t* from, uint64_t size) {
    uint32_t slot = 0;
    bool free = false;
    for (int i = 0; i < 200 && !free; ++i) free = window_->wait_for_slot(100, slot);
    ASSERT_TRUE(free) << "the reader never released a slot";
    std::memcpy(window_->slot(slot), from, size);
    chunk(transfer, offset, total, slot, size);
    window_->slot_sent();
  }
  void expect_refused(const std::string& reason) {
    auto [end, why] = finish();
    EXPECT_EQ(end, bulk_reader::end::violation) << why;
    EXPECT_NE(why.find(reason), std::string::npos) << why;
  }

  transfer_table transfers_{native::dry_api()};
  std::unique_ptr<bulk_window> window_;
};

TEST_F(bulk_window_reader, chunks_in_slots_land_in_their_transfer_and_free_the_slots) {
  ASSERT_NO_FATAL_FAILURE(start_with_window());
  // Five chunks through two slots: the client waits for the reader each time
  // it comes round, as libferry does.
  const uint64_t total = 4 * slot_size + 100;
  std::vector<uint8_t> bytes(total);
  for (uint64_t i = 0; i < total; ++i) bytes[i] = static_cast<uint8_t>(i * 7 + i / 251);
  for (uint64_t offset = 0; offset < total; offset += slot_size) {
    const uint64_t size = std::min(slot_size, total - offset);
    send_through_window(42, offset, total, bytes.data() + offset, size);
  }
  auto [end, reason] = finish();
  EXPECT_EQ(end, bulk_reader::end::closed) << reason;
  uint8_t* data = nullptr;
  std::string why;
  cl_int status = CL_SUCCESS;
  ASSERT_EQ(transfers_.claim(42, total, data, status, why), transfer_table::claim_result::complete) << why;
  EXPECT_EQ(std::memcmp(data, bytes.data(), total), 0);
}

TEST_F(bulk_window_reader, a_stream_that_is_no_plain_unix_socket_takes_no_window) {
  std::string why;
  auto window = bulk_window::create(2, slot_size, why);
  ASSERT_TRUE(window) << why;
  start(bulk_reader::windows::refused);
  offer(*window, 2, slot_size);
  expect_refused("not a plain Unix socket");
}

TEST_F(bulk_window_reader, a_chunk_before_the_offer_is_refused) {
  start();
  chunk(1, 0, 10, 0, 10);
  expect_refused("before any window_offer");
}

TEST_F(bulk_window_reader, a_slot_outside_the_window_is_refused) {
  ASSERT_NO_FATAL_FAILURE(start_with_window());
  chunk(1, 0, 10, 2, 10);
  expect_refused("in slot 2 of a window of 2 slots");
}

TEST_F(bulk_window_reader, a_chunk_larger_than_its_slot_is_refused) {
  ASSERT_NO_FATAL_FAILURE(start_with_window());
  chunk(1, 0, 2 * slot_size, 0, slot_size + 1);
  expect_refused("bytes in slot 0");
}

TEST_F(bulk_window_reader, a_chunk_past_its_transfer_is_refused) {
  ASSERT_NO_FATAL_FAILURE(start_with_window());
  chunk(1, 8, 10, 0, 4);
  expect_refused("runs past");
}

TEST_F(bulk_window_reader, a_second_offer_is_refused) {
  ASSERT_NO_FATAL_FAILURE(start_with_window());
  offer(*window_, 2, slot_size);
  expect_refused("a second window_offer");
}

TEST_F(bulk_window_reader, an_offer_without_its_memfd_is_refused) {
  start();
  std::vector<uint8_t> frame;
  p::append_frame(frame, p::window_offer{2, slot_size});
  ASSERT_TRUE(write_all(client_.get(), frame.data(), frame.size()));
  expect_refused("without its memfd");
}

TEST_F(bulk_window_reader, an_offer_of_an_unsealed_memfd_is_refused) {
  unique_fd memory(::memfd_create("unsealed", MFD_CLOEXEC));
  ASSERT_TRUE(memory.valid());
  ASSERT_EQ(::ftruncate(memory.get(), bulk_window::header_size + 2 * slot_size), 0);
  start();
  ASSERT_TRUE(p::send_window_offer(client_.get(), p::window_offer{2, slot_size}, memory.get()));
  expect_refused("not sealed");
}

TEST_F(bulk_window_reader, an_offer_larger_than_its_memfd_is_refused) {
  std::string why;
  auto window = bulk_window::create(2, slot_size, why);
  ASSERT_TRUE(window) << why;
  start();
  offer(*window, 4, slot_size);
  expect_refused("fewer than");
}

TEST_F(bulk_window_reader, a_chunk_whose_bytes_are_dropped_frees_its_slot) {
  transfers_.abandon(9);  // its write failed before its bytes came
  ASSERT_NO_FATAL_FAILURE(start_with_window());
  // One dropped chunk, then two chunks of another transfer: three through two slots.
  const std::vector<uint8_t> bytes = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  struct piece {
    uint64_t transfer, offset, size, total;
  };
  for (piece c : {piece{9, 0, 10, 10}, piece{43, 0, 5, 10}, piece{43, 5, 5, 10}})
    send_through_window(c.transfer, c.offset, c.total, bytes.data() + c.offset, c.size);
  auto [end, reason] = finish();
  EXPECT_EQ(end, bulk_reader::end::closed) << reason;
  uint8_t* data = nullptr;
  std::string why;
  cl_int status = CL_SUCCESS;
  ASSERT_EQ(transfers_.claim(43, 10, data, status, why), transfer_table::claim_result::complete) << why;
  EXPECT_EQ(std::vector<uint8_t>(data, data + 10), bytes);
  EXPECT_FALSE(transfers_.known(9)) << "the dropped transfer is gone once complete";
}

// bulk_data frames over a socket pair, into a table with an in-flight quota.
class bulk_stream_reader : public reader_on_a_socket_pair {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(reader_on_a_socket_pair::SetUp());
    start_reader(transfers_, bulk_reader::windows::refused);
  }
  static session_limits in_flight(uint64_t bytes) {
    session_limits limits;
    limits.in_flight = bytes;
    return limits;
  }
  void send(uint64_t transfer, uint64_t offset, const std::vector<uint8_t>& bytes, uint64_t total) {
    std::vector<uint8_t> frame(p::frame_header_size);
    p::writer w(frame);
    p::encode_value(w, p::bulk_data{transfer, offset, total});
    frame.insert(frame.end(), bytes.begin(), bytes.end());
    p::store_header(frame.data(), p::frame_header{static_cast<uint32_t>(frame.size() - p::frame_header_size),
                                                  static_cast<uint16_t>(p::message_id::bulk_data), 0});
    ASSERT_TRUE(write_all(client_.get(), frame.data(), frame.size()));
  }

  session_quota quota_{in_flight(100), "test"};
  transfer_table transfers_{native::dry_api(), &quota_};
};

TEST_F(bulk_stream_reader, bytes_of_a_transfer_over_the_quota_are_read_off_the_stream_and_dropped) {
  send(1, 0, std::vector<uint8_t>(60, 1), 60);
  // Over the quota while transfer 1 is held: more than the reader's scratch buffer, dropped.
  send(2, 0, std::vector<uint8_t>(30000, 2), 60000);
  send(2, 30000, std::vector<uint8_t>(30000, 2), 60000);
  send(3, 0, std::vector<uint8_t>(40, 3), 40);  // fits beside transfer 1
  auto [end, reason] = finish();
  EXPECT_EQ(end, bulk_reader::end::closed) << reason;
  EXPECT_LE(quota_.in_flight().bytes.load(), 100u);
  uint8_t* data = nullptr;
  std::string why;
  cl_int status = CL_SUCCESS;
  ASSERT_EQ(transfers_.claim(3, 40, data, status, why), transfer_table::claim_result::complete) << why;
  EXPECT_EQ(std::vector<uint8_t>(data, data + 40), std::vector<uint8_t>(40, 3)) << "the stream lost its place";
  EXPECT_EQ(transfers_.claim(2, 60000, data, status, why), transfer_table::claim_result::refused);
  EXPECT_EQ(status, CL_OUT_OF_RESOURCES);
}

TEST_F(bulk_stream_reader, a_chunk_over_bytes_already_sent_ends_the_stream_as_a_violation) {
  send(1, 0, std::vector<uint8_t>(30, 1), 60);
  send(1, 0, std::vector<uint8_t>(30, 1), 60);
  auto [end, reason] = finish();
  EXPECT_EQ(end, bulk_reader::end::violation) << reason;
  EXPECT_NE(reason.find("overlaps"), std::string::npos) << reason;
}

// Version 8: a second window, for reads, which the reader hands to the
// stream's bulk writer.
class read_window_reader : public reader_on_a_socket_pair {
 protected:
  void offer_read_window(const bulk_window& window, uint32_t slots, uint64_t size) {
    ASSERT_TRUE(p::send_read_window_offer(client_.get(), p::read_window_offer{slots, size}, window.fd()));
  }
  std::unique_ptr<bulk_window> new_window() {
    std::string why;
    auto window = bulk_window::create(2, slot_size, why);
    EXPECT_TRUE(window) << why;
    return window;
  }
  /// Waits (bounded) for the handoff to hold a window.
  std::unique_ptr<bulk_window> handed_over() {
    for (int i = 0; i < 2000; ++i) {
      if (auto window = handoff_->take()) return window;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return nullptr;
  }

  transfer_table transfers_{native::dry_api()};
  std::shared_ptr<read_window_handoff> handoff_ = std::make_shared<read_window_handoff>();
};

TEST_F(read_window_reader, an_offered_read_window_reaches_the_writer_mapped_as_the_client_made_it) {
  auto window = new_window();
  ASSERT_TRUE(window);
  start_reader(transfers_, bulk_reader::windows::accepted, handoff_);
  ASSERT_NO_FATAL_FAILURE(offer_read_window(*window, 2, slot_size));
  auto adopted = handed_over();
  ASSERT_TRUE(adopted) << "the reader kept the read window to itself";
  EXPECT_EQ(adopted->slots(), 2u);
  EXPECT_EQ(adopted->slot_size(), slot_size);
  // The same memory: what the daemon puts in a slot, the client sees.
  std::memset(adopted->slot(1), 0xa5, 16);
  EXPECT_EQ(window->slot(1)[15], 0xa5);
  auto [end, why] = finish();
  EXPECT_EQ(end, bulk_reader::end::closed) << why;
}

TEST_F(read_window_reader, a_read_window_offer_where_read_windows_are_not_taken_is_refused) {
  auto window = new_window();
  ASSERT_TRUE(window);
  start_reader(transfers_, bulk_reader::windows::accepted);  // an older client's version: no handoff
  ASSERT_NO_FATAL_FAILURE(offer_read_window(*window, 2, slot_size));
  auto [end, why] = finish();
  EXPECT_EQ(end, bulk_reader::end::violation) << why;
  EXPECT_NE(why.find("read_window_offer on a bulk stream"), std::string::npos) << why;
}

TEST_F(read_window_reader, a_read_window_offer_on_a_stream_that_refuses_windows_is_refused) {
  auto window = new_window();
  ASSERT_TRUE(window);
  start_reader(transfers_, bulk_reader::windows::refused, handoff_);
  ASSERT_NO_FATAL_FAILURE(offer_read_window(*window, 2, slot_size));
  auto [end, why] = finish();
  EXPECT_EQ(end, bulk_reader::end::violation) << why;
  EXPECT_EQ(handoff_->take(), nullptr);
}

TEST_F(read_window_reader, a_second_read_window_offer_is_refused) {
  auto first = new_window(), second = new_window();
  ASSERT_TRUE(first && second);
  start_reader(transfers_, bulk_reader::windows::accepted, handoff_);
  ASSERT_NO_FATAL_FAILURE(offer_read_window(*first, 2, slot_size));
  ASSERT_NO_FATAL_FAILURE(offer_read_window(*second, 2, slot_size));
  auto [end, why] = finish();
  EXPECT_EQ(end, bulk_reader::end::violation) << why;
  EXPECT_NE(why.find("a second read_window_offer"), std::string::npos) << why;
}

TEST_F(read_window_reader, a_read_window_of_too_many_slots_is_refused) {
  auto window = new_window();
  ASSERT_TRUE(window);
  start_reader(transfers_, bulk_reader::windows::accepted, handoff_);
  ASSERT_NO_FATAL_FAILURE(offer_read_window(*window, bulk_window::max_slots + 1, slot_size));
  auto [end, why] = finish();
  EXPECT_EQ(end, bulk_reader::end::violation) << why;
  EXPECT_EQ(handoff_->take(), nullptr);
}

}  // namespace
}  // namespace ferry::server
