// The resumer: after the streams break, what the server has not received
// goes again, once and in order; a server whose counts cannot be true is
// refused; a session that cannot be resumed fails everything outstanding,
// with CL_OUT_OF_RESOURCES when the server stopped the session's worker for
// exceeding a limit (refusal code 13).
#include "client/net/resumer.hpp"

#include <gtest/gtest.h>
#include <poll.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/net/test_parts.hpp"
#include "server/daemon/handshake.hpp"

namespace ferry::client {
namespace {

using testing::connection_parts;
using testing::connect_pair;
using testing::fake_daemon;
using testing::fake_event;
using testing::recording_sink;
using testing::server_end;

/// New streams for a resumption: ours to hand over, theirs for the test.
struct fresh_streams {
  stream_ptr control, bulk;
  server_end server;
  fresh_streams() {
    connect_pair(control, server.control);
    connect_pair(bulk, server.bulk);
  }
};

TEST(resumer, after_the_streams_break_what_the_server_lacks_goes_again_once) {
  connection_parts parts;
  auto before = parts.attach();
  for (uint64_t i = 1; i <= 3; ++i) parts.channel.post(protocol::ping{i});
  parts.channel.flush();
  for (uint64_t i = 1; i <= 3; ++i) EXPECT_EQ(before.receive<protocol::ping>().request, i);
  const std::vector<uint8_t> first(10, 1), second(10, 2);
  ASSERT_TRUE(parts.sender.send_data(50, first.data(), first.size(), bytes_lifetime::until_return, 0));
  ASSERT_TRUE(parts.sender.send_data(51, second.data(), second.size(), bytes_lifetime::until_return, 0));
  std::string why;
  ASSERT_TRUE(parts.deliver(protocol::ack{1, 0}, why)) << why;

  // The streams break; a frame posted meanwhile waits in the log.
  parts.link.alive = false;
  parts.channel.post(protocol::ping{4});
  parts.channel.flush();

  // The server ran two control frames and has the first bulk frame.
  fresh_streams after;
  std::string error;
  ASSERT_EQ(parts.session.resume_streams({after.control, after.bulk, {}, {2, 1, 1000, 0}, {}}, error),
            resumer::resume_result::resumed)
      << error;
  EXPECT_TRUE(parts.link.alive);
  EXPECT_EQ(after.server.receive<protocol::ack>(), (protocol::ack{0, 0}));  // first, as the server waits for it
  EXPECT_EQ(after.server.receive<protocol::ping>().request, 3u);
  EXPECT_EQ(after.server.receive<protocol::ping>().request, 4u);
  std::vector<uint8_t> bytes;
  EXPECT_EQ(after.server.receive_bulk(bytes), (protocol::bulk_data{51, 0, 10}));
  EXPECT_EQ(bytes, second);

  // Nothing goes twice: the next frame is the next one posted.
  parts.channel.post(protocol::ping{5});
  parts.channel.flush();
  EXPECT_EQ(after.server.receive<protocol::ping>().request, 5u);
  EXPECT_TRUE(after.server.bulk_is_quiet());
}

// Each bulk lane's frames go again on that lane after a resumption, from where the
// lane's own session_state says the server is; a lane the server lost frames of refuses.
TEST(resumer, each_bulk_lane_sends_again_what_the_server_lacks_of_it_on_it) {
  connection_parts parts;
  auto before = parts.attach(2);
  const size_t chunk = protocol::max_bulk_chunk;
  std::vector<uint8_t> data(5 * chunk);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 5 + (i >> 20));
  // The server reads the lane first: the caller's thread blocks on its first chunk to
  // the bulk stream, so the lane's thread carries the others.
  std::vector<uint64_t> bulk_offsets, lane_offsets;
  std::atomic<uint64_t> total{0}, lane_frames{0};
  auto drain = [&](stream& from, std::vector<uint64_t>& offsets, std::atomic<uint64_t>* frames) {
    return std::thread([&, frames] {
      while (total < data.size()) {
        pollfd ready{from.fd(), POLLIN, 0};
        if (::poll(&ready, 1, 10) <= 0) continue;
        std::vector<uint8_t> bytes;
        offsets.push_back(server_end::receive_bulk_on(from, bytes).offset);
        total += bytes.size();
        if (frames) ++*frames;
      }
    });
  };
  std::thread writer(
      [&] { EXPECT_TRUE(parts.sender.send_data(60, data.data(), data.size(), bytes_lifetime::until_completion, 1)); });
  std::thread lane_reader = drain(*before.lanes[0], lane_offsets, &lane_frames);
  EXPECT_TRUE(testing::eventually([&] { return lane_frames >= 3; }));
  std::thread bulk_reader = drain(*before.bulk, bulk_offsets, nullptr);
  writer.join();
  bulk_reader.join();
  lane_reader.join();
  ASSERT_EQ(bulk_offsets.size() + lane_offsets.size(), 5u);
  ASSERT_GE(lane_offsets.size(), 3u);

  // The streams break. The server has every bulk stream frame and none of the lane's.
  parts.link.alive = false;
  fresh_streams after;
  stream_ptr lane_ours, lane_theirs;
  connect_pair(lane_ours, lane_theirs);
  std::string error;
  resumer::stream_set streams{after.control, after.bulk, {lane_ours}, {0, bulk_offsets.size(), 1000, 2},
                              {{0, 0, 1000, 2}}};
  // The lane's frames go again while the resumption runs: read them meanwhile.
  std::vector<protocol::bulk_data> again;
  std::vector<std::vector<uint8_t>> again_bytes;
  std::thread lane_again([&] {
    for (size_t i = 0; i < lane_offsets.size(); ++i) {
      std::vector<uint8_t> bytes;
      again.push_back(server_end::receive_bulk_on(*lane_theirs, bytes));
      again_bytes.push_back(std::move(bytes));
    }
  });
  ASSERT_EQ(parts.session.resume_streams(streams, error), resumer::resume_result::resumed) << error;
  lane_again.join();
  EXPECT_EQ(after.server.receive<protocol::ack>(), (protocol::ack{0, 0}));
  ASSERT_EQ(again.size(), lane_offsets.size());
  for (size_t i = 0; i < again.size(); ++i) {
    EXPECT_EQ(again[i], (protocol::bulk_data{60, lane_offsets[i], data.size()}));
    EXPECT_TRUE(std::equal(again_bytes[i].begin(), again_bytes[i].end(),
                           data.begin() + static_cast<std::ptrdiff_t>(lane_offsets[i])));
  }
  EXPECT_TRUE(after.server.bulk_is_quiet()) << "nothing of the lane's on the bulk stream";
  uint8_t byte;
  EXPECT_TRUE(lane_theirs->try_read_some(&byte, 1) < 0 && errno == EAGAIN) << "each frame once";

  // Broken again: a server that says it has more of the lane than was sent is refused.
  parts.link.alive = false;
  fresh_streams third;
  connect_pair(lane_ours, lane_theirs);
  resumer::stream_set claims{third.control, third.bulk, {lane_ours}, {0, bulk_offsets.size(), 1000, 2},
                             {{0, lane_offsets.size() + 1, 1000, 2}}};
  EXPECT_EQ(parts.session.resume_streams(claims, error), resumer::resume_result::refused);
  EXPECT_EQ(error, "the server claims frames never sent on bulk lane 1");
}

/// Why a resumption is refused after pings 1 to `sent` were flushed and the
/// server acknowledged `acknowledged` of them, when it says it has `claimed`.
std::string refusal(uint64_t sent, uint64_t acknowledged, uint64_t claimed) {
  connection_parts parts;
  auto before = parts.attach();
  for (uint64_t i = 1; i <= sent; ++i) parts.channel.post(protocol::ping{i});
  parts.channel.flush();
  std::string error;
  EXPECT_TRUE(parts.deliver(protocol::ack{acknowledged, 0}, error)) << error;
  fresh_streams after;
  if (parts.session.resume_streams({after.control, after.bulk, {}, {claimed, 0, 1000, 0}, {}}, error) !=
      resumer::resume_result::refused)
    return "not refused";
  return error;
}

TEST(resumer, a_server_that_claims_frames_never_sent_is_refused) {
  EXPECT_EQ(refusal(1, 0, 2), "the server claims frames never sent");
}

TEST(resumer, a_server_that_lost_acknowledged_frames_is_refused) {
  EXPECT_EQ(refusal(2, 2, 1), "the server lost frames it had acknowledged");
}

TEST(resumer, when_the_session_cannot_be_resumed_everything_outstanding_fails) {
  connection_parts parts;
  auto server = parts.attach();
  fake_event command{60}, read{61};
  std::vector<uint8_t> destination(8);
  parts.tracker.track(recording_sink::handle(command));
  parts.tracker.track(recording_sink::handle(read));
  parts.receiver.expect_data(61, destination.data(), destination.size(), recording_sink::handle(read));
  std::vector<cl_int> hook_heard;
  parts.tracker.on_failure(62, [&](cl_int status) { hook_heard.push_back(status); });
  result<protocol::pong> reply = protocol::pong{};
  std::thread caller([&] {
    protocol::ping p;
    uint64_t frame;
    reply = parts.channel.call<protocol::pong>(p, [] {}, frame);
  });
  server.receive<protocol::ping>();  // the caller waits for its reply now

  parts.link.end_session("refused by server: unknown session", CL_DEVICE_NOT_AVAILABLE);
  parts.session.fail_outstanding();
  caller.join();

  EXPECT_EQ(command.completed_with, CL_DEVICE_NOT_AVAILABLE);
  EXPECT_EQ(read.completed_with, CL_DEVICE_NOT_AVAILABLE);
  EXPECT_EQ(command.releases, command.holds);
  EXPECT_EQ(read.releases, read.holds);  // tracked and awaited: both references go
  EXPECT_EQ(read.holds, 2);
  EXPECT_EQ(hook_heard, std::vector<cl_int>{CL_DEVICE_NOT_AVAILABLE});
  EXPECT_EQ(reply.error(), CL_DEVICE_NOT_AVAILABLE);
  EXPECT_FALSE(parts.link.alive);

  // Nothing will ever arrive for work given afterwards: it fails at once.
  fake_event late{63};
  parts.tracker.track(recording_sink::handle(late));
  EXPECT_EQ(late.completed_with, CL_DEVICE_NOT_AVAILABLE);
  EXPECT_EQ(late.releases, late.holds);
}

// The client acts on the daemon's codes, which it cannot include (net/ and
// the daemon share only protocol/).
static_assert(static_cast<int32_t>(refusal_code::worker_lost) ==
              static_cast<int32_t>(server::refusal::worker_lost));
static_assert(static_cast<int32_t>(refusal_code::worker_over_quota) ==
              static_cast<int32_t>(server::refusal::worker_over_quota));

TEST(resumer, only_a_worker_over_its_limits_fails_the_session_with_out_of_resources) {
  EXPECT_EQ(failure_after_refusal(static_cast<int32_t>(refusal_code::worker_over_quota)), CL_OUT_OF_RESOURCES);
  EXPECT_EQ(failure_after_refusal(static_cast<int32_t>(refusal_code::worker_lost)), CL_DEVICE_NOT_AVAILABLE);
  EXPECT_EQ(failure_after_refusal(3), CL_DEVICE_NOT_AVAILABLE);  // unknown session
  EXPECT_EQ(failure_after_refusal(0), CL_DEVICE_NOT_AVAILABLE);  // no refused frame
}

/// What became of a session's work when its connection broke and the daemon
/// refused to resume it with `refusal`.
struct refused_work {
  cl_int outstanding_command = 1;  // a tracked command's forced completion
  cl_int blocking_reply = 1;       // a request waiting for its reply
  std::vector<cl_int> hook_heard;  // a failure hook's calls
  cl_int later_command = 1;        // a command tracked after the end
  cl_int later_hook = 1;           // a failure hook registered after the end
  cl_int later_request = 1;        // a request made after the end
  std::vector<std::string> explanations;
};

refused_work work_after_refusal(const protocol::refused& refusal) {
  fake_daemon daemon;
  refused_work out;
  std::mutex heard_mutex;  // guards out.hook_heard: the control reader runs the hook
  fake_event command{60}, later{63};
  connection_parts parts(daemon.where());
  auto server = parts.attach();
  parts.tracker.track(recording_sink::handle(command));
  parts.tracker.on_failure(62, [&](cl_int status) {
    std::lock_guard lock(heard_mutex);
    out.hook_heard.push_back(status);
  });
  parts.session.start();
  std::thread caller([&] {
    protocol::ping p;
    uint64_t frame;
    out.blocking_reply = parts.channel.call<protocol::pong>(p, [] {}, frame).error();
  });
  server.receive<protocol::ping>();  // the caller waits for its reply now

  // The session's worker is gone: its streams break, and the daemon refuses
  // the resumption; it takes no new session either.
  server.control->shutdown();
  daemon.refuse(refusal);
  daemon.close();
  caller.join();
  EXPECT_TRUE(parts.sink.wait_for_completion(command));
  EXPECT_TRUE(parts.link.ended);
  out.outstanding_command = parts.sink.snapshot(command).completed_with;

  // Nothing will ever arrive for work given afterwards: it fails at once.
  parts.tracker.track(recording_sink::handle(later));
  out.later_command = parts.sink.snapshot(later).completed_with;
  parts.tracker.on_failure(64, [&](cl_int status) { out.later_hook = status; });
  protocol::ping p;
  uint64_t frame;
  out.later_request = parts.channel.call<protocol::pong>(p, [] {}, frame).error();
  {
    std::lock_guard lock(heard_mutex);
    EXPECT_EQ(out.hook_heard.size(), 1u);
  }
  const fake_event seen = parts.sink.snapshot(command);
  EXPECT_EQ(seen.releases, seen.holds);
  parts.session.stop();
  out.explanations = parts.sink.explanations;
  return out;
}

TEST(resumer, a_session_whose_worker_exceeded_a_limit_fails_its_work_with_out_of_resources) {
  const refused_work work = work_after_refusal(
      {static_cast<int32_t>(refusal_code::worker_over_quota), "the session's worker exceeded --worker-memory"});
  EXPECT_EQ(work.outstanding_command, CL_OUT_OF_RESOURCES);
  EXPECT_EQ(work.blocking_reply, CL_OUT_OF_RESOURCES);
  EXPECT_EQ(work.hook_heard, std::vector<cl_int>{CL_OUT_OF_RESOURCES});
  EXPECT_EQ(work.later_command, CL_OUT_OF_RESOURCES);
  EXPECT_EQ(work.later_hook, CL_OUT_OF_RESOURCES);
  EXPECT_EQ(work.later_request, CL_OUT_OF_RESOURCES);
  ASSERT_FALSE(work.explanations.empty());
  EXPECT_NE(work.explanations.back().find("exceeding a limit"), std::string::npos) << work.explanations.back();
}

TEST(resumer, a_session_whose_worker_crashed_fails_its_work_with_device_not_available) {
  const refused_work work = work_after_refusal(
      {static_cast<int32_t>(refusal_code::worker_lost), "the session's worker was killed by signal 11 (SIGSEGV)"});
  EXPECT_EQ(work.outstanding_command, CL_DEVICE_NOT_AVAILABLE);
  EXPECT_EQ(work.blocking_reply, CL_DEVICE_NOT_AVAILABLE);
  EXPECT_EQ(work.hook_heard, std::vector<cl_int>{CL_DEVICE_NOT_AVAILABLE});
  EXPECT_EQ(work.later_command, CL_DEVICE_NOT_AVAILABLE);
  EXPECT_EQ(work.later_hook, CL_DEVICE_NOT_AVAILABLE);
  EXPECT_EQ(work.later_request, CL_DEVICE_NOT_AVAILABLE);
}

TEST(resumer, the_failure_a_session_ended_with_stays_with_that_session) {
  connection_parts parts;
  parts.link.end_session("cannot resume: refused by server: over its limit", CL_OUT_OF_RESOURCES);
  parts.link.end_session("a second end changes nothing", CL_DEVICE_NOT_AVAILABLE);
  EXPECT_EQ(parts.link.failure(), CL_OUT_OF_RESOURCES);
  // A new session (the resumer's start_new_session) begins with no failure;
  // the objects of the old one keep failing as that one did.
  parts.link.epoch.fetch_add(1);
  parts.link.ended = false;
  EXPECT_EQ(parts.link.failure(), CL_DEVICE_NOT_AVAILABLE);
  EXPECT_EQ(parts.link.failure_of(1), CL_OUT_OF_RESOURCES);
}

}  // namespace
}  // namespace ferry::client
