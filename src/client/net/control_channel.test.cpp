// The control channel: replies reach the caller that asked, completions
// reach the events they name, acks move the replay log.
#include "client/net/control_channel.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "client/net/test_parts.hpp"

namespace ferry::client {
namespace {

using testing::connection_parts;
using testing::fake_event;
using testing::recording_sink;

TEST(control_channel, a_reply_is_matched_to_its_request_whatever_order_replies_come_in) {
  connection_parts parts;
  auto server = parts.attach();
  protocol::ping first, second;
  std::atomic<bool> first_done{false};
  result<protocol::pong> first_reply = fail(CL_INVALID_VALUE), second_reply = fail(CL_INVALID_VALUE);
  std::thread a([&] {
    uint64_t frame;
    first_reply = parts.channel.call<protocol::pong>(first, [] {}, frame);
    first_done = true;
  });
  const uint64_t a_request = server.receive<protocol::ping>().request;
  std::thread b([&] {
    uint64_t frame;
    second_reply = parts.channel.call<protocol::pong>(second, [] {}, frame);
  });
  const uint64_t b_request = server.receive<protocol::ping>().request;
  ASSERT_NE(a_request, b_request);

  std::string why;
  ASSERT_TRUE(parts.deliver(protocol::pong{b_request}, why)) << why;
  b.join();
  ASSERT_TRUE(second_reply.ok());
  EXPECT_EQ(second_reply->request, b_request);
  EXPECT_FALSE(first_done);  // its reply has not come yet

  ASSERT_TRUE(parts.deliver(protocol::pong{a_request}, why)) << why;
  a.join();
  ASSERT_TRUE(first_reply.ok());
  EXPECT_EQ(first_reply->request, a_request);
}

TEST(control_channel, a_posted_request_hands_its_reply_to_its_handler_and_the_session_end_to_the_rest) {
  connection_parts parts;
  auto server = parts.attach();
  struct outcome {
    bool called = false, answered = false;
    uint16_t id = 0;
    uint64_t request = 0;
  };
  outcome first, second;
  auto handler = [](outcome& o) {
    return [&o](bool answered, uint16_t id, const uint8_t* payload, size_t size) {
      o.called = true;
      o.answered = answered;
      o.id = id;
      if (size >= 8) std::memcpy(&o.request, payload, 8);
    };
  };
  protocol::ping a, b;
  ASSERT_TRUE(parts.channel.post_request(a, handler(first)));
  ASSERT_TRUE(parts.channel.post_request(b, handler(second)));
  parts.channel.flush();
  EXPECT_EQ(server.receive<protocol::ping>().request, a.request);
  EXPECT_EQ(server.receive<protocol::ping>().request, b.request);

  std::string why;
  ASSERT_TRUE(parts.deliver(protocol::pong{a.request}, why)) << why;
  EXPECT_TRUE(first.called && first.answered);
  EXPECT_EQ(first.id, static_cast<uint16_t>(protocol::message_id::pong));
  EXPECT_EQ(first.request, a.request);
  EXPECT_FALSE(second.called);
  // Its reply went to the handler: a second one is a reply to no request.
  EXPECT_FALSE(parts.deliver(protocol::pong{a.request}, why));

  parts.link.end_session("test", CL_DEVICE_NOT_AVAILABLE);
  EXPECT_TRUE(second.called);
  EXPECT_FALSE(second.answered);
  // No new work once the session ended.
  protocol::ping c;
  EXPECT_FALSE(parts.channel.post_request(c, handler(first)));
}

TEST(control_channel, a_reply_to_no_request_breaks_the_protocol) {
  connection_parts parts;
  std::string why;
  EXPECT_FALSE(parts.deliver(protocol::pong{77}, why));
  EXPECT_EQ(why, "reply to unknown request 77");
}

TEST(control_channel, a_completion_batch_completes_each_event_with_its_own_status) {
  connection_parts parts;
  fake_event ok{11}, failed{12}, untouched{13};
  parts.tracker.track(recording_sink::handle(ok));
  parts.tracker.track(recording_sink::handle(failed));
  parts.tracker.track(recording_sink::handle(untouched));

  protocol::completions batch;
  batch.entries = {{12, CL_OUT_OF_RESOURCES, {}}, {11, CL_COMPLETE, {1, 2, 3, 4}}, {99, CL_INVALID_VALUE, {}}};
  std::string why;
  ASSERT_TRUE(parts.deliver(batch, why)) << why;

  EXPECT_EQ(ok.parts, std::vector<cl_int>{CL_COMPLETE});
  EXPECT_TRUE(ok.has_profiling);
  EXPECT_EQ(failed.parts, std::vector<cl_int>{CL_OUT_OF_RESOURCES});
  EXPECT_TRUE(untouched.parts.empty());
  // Each completed event gave back the reference tracking took.
  EXPECT_EQ(ok.releases, ok.holds);
  EXPECT_EQ(failed.releases, failed.holds);
  EXPECT_EQ(untouched.releases, 0);
  // Failures are reported, a command without an event too; successes are not.
  EXPECT_EQ(parts.sink.failed_commands.at(12), CL_OUT_OF_RESOURCES);
  EXPECT_EQ(parts.sink.failed_commands.at(99), CL_INVALID_VALUE);
  EXPECT_EQ(parts.sink.failed_commands.count(11), 0u);
}

TEST(control_channel, a_failure_hook_runs_only_when_its_command_fails) {
  connection_parts parts;
  std::vector<cl_int> succeeded, failed;
  parts.tracker.on_failure(21, [&](cl_int status) { succeeded.push_back(status); });
  parts.tracker.on_failure(22, [&](cl_int status) { failed.push_back(status); });
  protocol::completions batch;
  batch.entries = {{21, CL_COMPLETE, {}}, {22, CL_INVALID_KERNEL_ARGS, {}}};
  std::string why;
  ASSERT_TRUE(parts.deliver(batch, why)) << why;
  EXPECT_TRUE(succeeded.empty());
  EXPECT_EQ(failed, std::vector<cl_int>{CL_INVALID_KERNEL_ARGS});
  parts.tracker.settle();  // both hooks are gone: returns at once
  // A hooked failure is passed on, not reported here.
  EXPECT_TRUE(parts.sink.failed_commands.empty());
}

TEST(control_channel, an_ack_of_bulk_frames_never_sent_breaks_the_protocol) {
  connection_parts parts;
  std::string why;
  EXPECT_FALSE(parts.deliver(protocol::ack{0, 1}, why));
  EXPECT_EQ(why, "ack of bulk frames never sent");
}

TEST(control_channel, an_early_ack_beyond_what_was_flushed_ends_the_session) {
  connection_parts parts;
  auto server = parts.attach();
  std::string why;
  // An ack may overtake its frames' entry into the log, so it is kept...
  ASSERT_TRUE(parts.deliver(protocol::ack{3, 0}, why)) << why;
  parts.channel.post(protocol::ping{1});
  parts.channel.post(protocol::ping{2});
  // ...but once everything written is in the log it must fit.
  parts.channel.flush();
  EXPECT_TRUE(parts.link.ended);
}

TEST(control_channel, frames_posted_together_leave_in_one_batch_behind_the_ack_due) {
  connection_parts parts;
  auto server = parts.attach();
  parts.link.received_control = 5;  // what the client has received of the server's
  parts.channel.post(protocol::ping{1});
  parts.channel.post(protocol::ping{2});
  parts.channel.flush();
  // What the client has received rides ahead, so the server can let go of it.
  EXPECT_EQ(server.receive<protocol::ack>(), (protocol::ack{5, 0}));
  EXPECT_EQ(server.receive<protocol::ping>().request, 1u);
  EXPECT_EQ(server.receive<protocol::ping>().request, 2u);
  EXPECT_EQ(parts.link.acked_control, 5u);
}

}  // namespace
}  // namespace ferry::client
