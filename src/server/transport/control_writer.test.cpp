// The control writer's two senders: its own thread, and send_or_wake's
// caller (the completion poller), which must never wait on the socket.
#include "server/transport/control_writer.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "common/socket.hpp"
#include "common/test_stream_pair.hpp"
#include "protocol/codec.hpp"
#include "protocol/frame.hpp"
#include "protocol/limits.hpp"
#include "server/native/api.hpp"
#include "server/transport/transfer_table.hpp"

namespace ferry::server {
namespace {

namespace p = protocol;

class control_writer_test : public ::testing::Test {
 protected:
  void SetUp() override {
    test_stream_pair pair;
    ASSERT_TRUE(make_test_stream_pair(pair));
    client_ = std::move(pair.client);
    server_ = std::move(pair.server);
    int small = 16 * 1024;  // the kernel doubles it; still far below what the tests send
    ASSERT_EQ(::setsockopt(server_->fd(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
    writer_ = std::make_unique<control_writer>(server_.get(), outbox_, transfers_, nullptr,
                                               [this](const std::string&) { broken_ = true; });
  }
  /// The writer's own thread. Until it runs only send_or_wake's caller can
  /// have sent anything.
  void start_writer_thread() {
    thread_ = std::thread([this] { writer_->run(); });
  }
  void TearDown() override {
    server_->shutdown();  // a writer still blocked on the socket returns
    outbox_.close();
    if (thread_.joinable()) thread_.join();
  }

  void push_quietly(p::object_id command) {
    command_record r;
    r.command = command;
    r.notify = true;
    outbox_.push_quietly(r);
  }

  /// Reads frames until `count` completions came; returns their command ids in order.
  std::vector<p::object_id> receive_completions(size_t count) {
    std::vector<p::object_id> ids;
    p::frame_assembler assembler(p::max_control_payload);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (ids.size() < count && std::chrono::steady_clock::now() < deadline) {
      size_t available = 0;
      uint8_t* area = assembler.write_area(64 * 1024, available);
      ssize_t n = ::recv(client_.get(), area, available, 0);
      if (n <= 0) break;
      assembler.commit(static_cast<size_t>(n));
      p::frame_view frame;
      std::string why;
      while (assembler.next(frame, why) == p::frame_assembler::result::frame) {
        EXPECT_EQ(frame.header.message_id, static_cast<uint16_t>(p::message_id::completions));
        p::completions batch;
        const char* error = nullptr;
        EXPECT_TRUE(p::decode_payload(frame.payload, frame.header.payload_size, batch, error)) << error;
        for (const p::completion& c : batch.entries) {
          EXPECT_EQ(c.status, CL_COMPLETE);
          ids.push_back(c.command);
        }
      }
    }
    return ids;
  }

  unique_fd client_;
  stream_ptr server_;
  control_outbox outbox_{native::dry_api()};
  transfer_table transfers_{native::dry_api()};
  std::unique_ptr<control_writer> writer_;
  std::thread thread_;
  bool broken_ = false;
};

TEST_F(control_writer_test, send_or_wake_sends_what_was_queued_quietly_on_its_callers_thread) {
  for (p::object_id id = 1; id <= 3; ++id) push_quietly(id);
  outbox_.send_or_wake();
  // No writer thread yet: the bytes are there because the caller wrote them.
  uint8_t probe;
  EXPECT_EQ(::recv(client_.get(), &probe, 1, MSG_PEEK | MSG_DONTWAIT), 1);
  EXPECT_EQ(receive_completions(3), (std::vector<p::object_id>{1, 2, 3}));
  EXPECT_FALSE(broken_);
  start_writer_thread();
}

TEST_F(control_writer_test, a_full_socket_does_not_hold_the_caller_and_the_writer_sends_the_rest_in_order) {
  // Far more than the socket takes while the client reads nothing.
  constexpr p::object_id count = 40000;
  for (p::object_id id = 1; id <= count / 2; ++id) push_quietly(id);
  auto first = std::async(std::launch::async, [this] { outbox_.send_or_wake(); });
  ASSERT_EQ(first.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "send_or_wake waited for a client that reads nothing";
  start_writer_thread();  // it takes over what the socket did not take
  // Queued behind the bytes the socket did not take: they must come after them.
  for (p::object_id id = count / 2 + 1; id <= count; ++id) push_quietly(id);
  auto second = std::async(std::launch::async, [this] { outbox_.send_or_wake(); });
  ASSERT_EQ(second.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  std::vector<p::object_id> ids = receive_completions(count);
  ASSERT_EQ(ids.size(), count);
  for (p::object_id i = 0; i < count; ++i) ASSERT_EQ(ids[i], i + 1) << "out of order at " << i;
  EXPECT_FALSE(broken_);
}

TEST_F(control_writer_test, without_a_connection_the_writer_keeps_the_records_for_the_next_one) {
  start_writer_thread();
  writer_->detach();
  for (p::object_id id = 1; id <= 4; ++id) push_quietly(id);
  outbox_.send_or_wake();  // no connection: the writer thread takes them into its replay log
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (outbox_.pending() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(outbox_.pending(), 0u) << "nobody processed the records";
  ASSERT_EQ(writer_->attach(server_.get(), 0), control_writer::attach_result::attached);
  EXPECT_EQ(receive_completions(4), (std::vector<p::object_id>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace ferry::server
