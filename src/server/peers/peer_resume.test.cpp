// Peer links that lose their connection (docs/protocol.md, "Peer links"):
// the destination counts and acknowledges what it applied and tells a
// reconnecting link how much it has; the source keeps what it sent, connects
// again within the grace period and sends only the rest, or fails the
// commands when the link cannot come back. Two daemons run in this process
// against the host's real OpenCL (PoCL in CI), with the fault proxy
// (tools/faultproxy) on the link, or a hand-made peer speaking the protocol.
#include <gtest/gtest.h>

#include <CL/cl.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "faultproxy/fault_proxy.hpp"
#include "server/daemon/handshake.hpp"
#include "server/daemon/server.hpp"
#include "server/native/api.hpp"
#include "server/native/catalog.hpp"
#include "server/testing/host_catalog.hpp"
#include "server/testing/test_client.hpp"

namespace ferry::server {
namespace {

namespace p = protocol;
using testing::client;
using testing::chunk_frame;
using testing::connection;
using testing::host_catalog;

p::command_header header(p::object_id command, p::object_id queue, uint32_t flags = p::notify,
                         std::vector<p::object_id> wait = {}) {
  p::command_header h;
  h.command = command;
  h.queue = queue;
  h.flags = flags;
  h.wait_list.assign(wait.begin(), wait.end());
  return h;
}

// The status `c` was told for `command`, or a value no command reports when none came.
cl_int status_of(client& c, p::object_id command) {
  auto done = c.wait_completion(command);
  return done ? done->status : 1;
}

// Waits for `condition`, checking it every few milliseconds, for at most 20 s.
template <class Condition>
bool eventually(Condition condition) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

class peer_resume_test : public ::testing::Test {
 protected:
  void SetUp() override {
    catalog_ = host_catalog();
    if (catalog_ == nullptr) GTEST_SKIP() << "no native OpenCL device";
    destination_ = start_server(60);
    ASSERT_TRUE(destination_);
    ASSERT_TRUE(b_.open(destination_->port()));
    make_context_and_queue(b_);
  }
  void TearDown() override {
    if (proxy_) proxy_->stop();
    if (source_) source_->stop();
    if (destination_) destination_->stop();
  }

  std::unique_ptr<server> start_server(double grace_s) {
    server_config config;
    config.port = 0;
    config.handshake_timeout_s = 2;
    config.session_grace_s = grace_s;
    auto s = std::make_unique<server>(config, session_services{*catalog_, native::real_api(), nullptr, nullptr, {}});
    std::string error;
    if (!s->start(error)) {
      ADD_FAILURE() << error;
      return nullptr;
    }
    return s;
  }

  /// The source daemon, with `grace_s`, whose peer 1 is the destination
  /// through the fault proxy.
  // A user event of A's session, imported into B's under the same id, where a
  // marker (command `marker`) waits for it; A exports it (export command
  // `export_command`) and sets `status`, which crosses the peer link.
  void send_status_across(p::object_id event, p::object_id marker, p::object_id export_command, cl_int status) {
    ASSERT_TRUE(a_.send(p::create_user_event{event, 1}));
    ASSERT_TRUE(b_.send(p::import_event{event, 1}));
    ASSERT_TRUE(b_.send(p::enqueue_marker{header(marker, 2, p::notify, {event})}));
    ASSERT_TRUE(a_.send(p::export_event{event, 1, export_command}));
    ASSERT_TRUE(a_.send(p::set_user_event_status{event, status}));
  }

  void start_source(double grace_s) {
    source_ = start_server(grace_s);
    ASSERT_TRUE(source_);
    proxy_ = std::make_unique<tools::fault_proxy>("127.0.0.1", destination_->port());
    std::string error;
    ASSERT_TRUE(proxy_->start(error)) << error;
    ASSERT_TRUE(a_.open(source_->port()));
    make_context_and_queue(a_);
    ASSERT_TRUE(a_.send(p::add_peer{1, "127.0.0.1:" + std::to_string(proxy_->port()), b_.welcome.session,
                                    b_.welcome.peer_key}));
  }

  static void make_context_and_queue(client& c) {
    ASSERT_TRUE(c.send(p::create_context{1, {0}}));
    ASSERT_TRUE(c.send(p::create_queue{2, 1, 0, 0}));
  }

  /// Round trip: everything sent to `c` before has been handled.
  static void sync(client& c, uint64_t request) {
    ASSERT_TRUE(c.send(p::ping{request}));
    auto pong = c.wait_reply<p::pong>();
    ASSERT_TRUE(pong);
    ASSERT_EQ(pong->request, request);
  }

  static p::link_counter counter_of(client& c, p::link_kind kind, uint64_t request) {
    p::link_counter sum;
    if (!c.send(p::get_link_counters{request})) return sum;
    auto reply = c.wait_reply<p::link_counters>();
    if (!reply) return sum;
    for (const auto& l : reply->links) {
      if (l.kind != kind) continue;
      sum.bytes_in += l.bytes_in;
      sum.bytes_out += l.bytes_out;
      sum.messages_in += l.messages_in;
      sum.messages_out += l.messages_out;
    }
    return sum;
  }

  std::vector<uint8_t> read_back(client& c, p::object_id command, p::object_id buffer, uint64_t size) {
    EXPECT_TRUE(c.send(p::enqueue_read_buffer{header(command, 2), buffer, 0, size}));
    auto data = c.wait_bulk(command);
    EXPECT_TRUE(data);
    auto done = c.wait_completion(command);
    EXPECT_TRUE(done && done->status == CL_COMPLETE);
    return data ? *data : std::vector<uint8_t>{};
  }

  /// A hand-made source: a peer link into b_'s session with link id `link`.
  connection open_fake_link(const p::session_token& link) {
    connection c(testing::connect_loopback(destination_->port()));
    EXPECT_TRUE(c.send(p::make_hello(p::stream_kind::peer, b_.welcome.session, b_.welcome.peer_key, "fake", link)));
    return c;
  }

  /// Reads acks until one counts `frames`.
  static bool acked(connection& link, uint64_t frames) {
    for (;;) {
      auto ack = link.expect<p::ack>();
      if (!ack) return false;
      EXPECT_EQ(ack->bulk, 0u);
      if (ack->control == frames) return true;
      if (ack->control > frames) return false;
    }
  }

  const native::device_catalog* catalog_ = nullptr;
  std::unique_ptr<server> destination_, source_;
  std::unique_ptr<tools::fault_proxy> proxy_;
  client a_, b_;  // the client's sessions on the source and on the destination
};

// ---------------------------------------------------------------------------
// The destination, driven by a hand-made source

TEST_F(peer_resume_test, the_destination_acknowledges_applied_frames_and_a_reconnection_learns_the_count) {
  p::session_token link{};
  link[0] = 0x11;
  ASSERT_TRUE(b_.send(p::import_event{7, 1}));
  ASSERT_TRUE(b_.send(p::enqueue_marker{header(80, 2, p::notify, {7})}));
  ASSERT_TRUE(b_.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, 64, 0}));
  ASSERT_TRUE(b_.send(p::migrate_in{header(50, 2), 3, 0, 64, 500}));
  sync(b_, 1);

  connection first = open_fake_link(link);
  ASSERT_TRUE(first.expect<p::welcome>());
  auto state = first.expect<p::session_state>();
  ASSERT_TRUE(state);
  EXPECT_EQ(state->control, 0u) << "a new link has delivered nothing";
  ASSERT_TRUE(first.send(p::peer_event_status{7, CL_COMPLETE}));
  ASSERT_TRUE(acked(first, 1));
  EXPECT_EQ(status_of(b_, 80), CL_COMPLETE);

  // Half a chunk, and the connection breaks: the chunk is not counted.
  std::vector<uint8_t> bytes(64);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i + 100);
  std::vector<uint8_t> frame = chunk_frame(500, bytes);
  ASSERT_TRUE(first.send_raw(frame.data(), frame.size() / 2));
  first.reset();

  connection second = open_fake_link(link);
  ASSERT_TRUE(second.expect<p::welcome>());
  state = second.expect<p::session_state>();
  ASSERT_TRUE(state);
  EXPECT_EQ(state->control, 1u) << "the status counts, the cut chunk does not";
  // The whole chunk again: it lands once.
  ASSERT_TRUE(second.send_raw(frame.data(), frame.size()));
  ASSERT_TRUE(acked(second, 2));
  EXPECT_EQ(status_of(b_, 50), CL_COMPLETE);
  EXPECT_EQ(read_back(b_, 60, 3, bytes.size()), bytes);

  // Another link id is another link: it starts from zero.
  p::session_token other = link;
  other[0] = 0x22;
  connection third = open_fake_link(other);
  ASSERT_TRUE(third.expect<p::welcome>());
  state = third.expect<p::session_state>();
  ASSERT_TRUE(state);
  EXPECT_EQ(state->control, 0u);
}

TEST_F(peer_resume_test, a_link_closed_for_breaking_a_rule_is_refused_when_it_comes_back) {
  p::session_token link{};
  link[3] = 0x33;
  connection rogue = open_fake_link(link);
  ASSERT_TRUE(rogue.expect<p::welcome>());
  ASSERT_TRUE(rogue.expect<p::session_state>());
  ASSERT_TRUE(rogue.send(p::ping{1}));  // no peer message
  EXPECT_TRUE(rogue.closed_by_peer());
  connection again = open_fake_link(link);
  auto refused = again.expect<p::refused>();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code, static_cast<int32_t>(refusal::unknown_session));
  // The session goes on.
  sync(b_, 2);
}

// ---------------------------------------------------------------------------
// The source, with the fault proxy on its link

TEST_F(peer_resume_test, a_migration_cut_in_the_middle_completes_once_the_link_is_back) {
  start_source(30);
  constexpr uint64_t size = 3 * (1u << 20) + 123;
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 13 + 5);
  ASSERT_TRUE(a_.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, size, 0}));
  ASSERT_TRUE(a_.send(p::enqueue_write_buffer{header(20, 2, p::keep_event), 3, 0, size}));
  ASSERT_TRUE(a_.send_bulk(20, bytes.data(), size));
  ASSERT_TRUE(b_.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, size, 0}));
  ASSERT_TRUE(b_.send(p::migrate_in{header(50, 2), 3, 0, size, 500}));
  sync(b_, 1);

  // The link's first connection breaks a megabyte into the chunk.
  proxy_->cut_after(1u << 20, tools::direction::to_target);
  ASSERT_TRUE(a_.send(p::migrate_out{header(40, 0, p::notify, {20}), 3, 0, size, 1, 500, 0}));
  auto sent = a_.wait_completion(40);
  ASSERT_TRUE(sent);
  EXPECT_EQ(sent->status, CL_COMPLETE);
  auto landed = b_.wait_completion(50);
  ASSERT_TRUE(landed);
  EXPECT_EQ(landed->status, CL_COMPLETE);
  EXPECT_EQ(proxy_->cuts(), 1u);
  EXPECT_GE(proxy_->connections_accepted(), 2u) << "the link connected again";
  EXPECT_EQ(read_back(b_, 60, 3, size), bytes);

  // The link goes on: a status crosses it.
  ASSERT_NO_FATAL_FAILURE(send_status_across(7, 80, 90, CL_COMPLETE));
  EXPECT_EQ(status_of(b_, 80), CL_COMPLETE);
  sync(a_, 2);
  EXPECT_EQ(a_.completions.count(90), 0u) << "a delivered export reports nothing";
}

TEST_F(peer_resume_test, statuses_held_in_a_stalled_link_arrive_after_it_is_cut_and_comes_back) {
  start_source(30);
  // The link is up (the first status went through).
  ASSERT_NO_FATAL_FAILURE(send_status_across(7, 80, 90, CL_COMPLETE));
  EXPECT_EQ(status_of(b_, 80), CL_COMPLETE);

  proxy_->stall(true);
  const uint64_t before = counter_of(a_, p::link_kind::peer_out, 1).messages_out;
  ASSERT_NO_FATAL_FAILURE(send_status_across(8, 81, 91, -42));
  // Written into the stalled link, then lost with it.
  uint64_t request = 100;
  ASSERT_TRUE(eventually([&] { return counter_of(a_, p::link_kind::peer_out, ++request).messages_out > before; }));
  proxy_->cut();
  proxy_->stall(false);
  auto failed = b_.wait_completion(81);
  ASSERT_TRUE(failed) << "the status sent into the lost connection never arrived";
  EXPECT_LT(failed->status, 0);
  sync(a_, 3);
  EXPECT_EQ(a_.completions.count(91), 0u) << "the export was delivered, not failed";
}

TEST_F(peer_resume_test, a_link_that_stays_down_past_the_grace_period_fails_its_commands) {
  start_source(0.3);
  ASSERT_NO_FATAL_FAILURE(send_status_across(7, 80, 90, CL_COMPLETE));
  EXPECT_EQ(status_of(b_, 80), CL_COMPLETE);

  // Sent into a stalled link that then goes down for good.
  proxy_->stall(true);
  ASSERT_TRUE(a_.send(p::create_buffer{3, 1, CL_MEM_READ_WRITE, 64, 0}));
  ASSERT_TRUE(a_.send(p::create_user_event{8, 1}));
  ASSERT_TRUE(a_.send(p::export_event{8, 1, 91}));
  ASSERT_TRUE(a_.send(p::set_user_event_status{8, CL_COMPLETE}));
  ASSERT_TRUE(a_.send(p::migrate_out{header(40, 0, p::notify), 3, 0, 64, 1, 500, 0}));
  proxy_->refuse(true);
  proxy_->cut();
  auto export_failed = a_.wait_completion(91);
  ASSERT_TRUE(export_failed);
  EXPECT_EQ(export_failed->status, CL_DEVICE_NOT_AVAILABLE);
  auto migration_failed = a_.wait_completion(40);
  ASSERT_TRUE(migration_failed);
  EXPECT_EQ(migration_failed->status, CL_DEVICE_NOT_AVAILABLE);

  // A later command tries a new link, and gets through once the way is open.
  proxy_->refuse(false);
  proxy_->stall(false);
  ASSERT_NO_FATAL_FAILURE(send_status_across(9, 82, 92, CL_COMPLETE));
  EXPECT_EQ(status_of(b_, 82), CL_COMPLETE);
}

TEST_F(peer_resume_test, a_link_whose_destination_session_is_gone_fails_without_waiting_for_the_grace_period) {
  // The grace period (60 s) is longer than the completion's wait (20 s).
  start_source(60);
  ASSERT_NO_FATAL_FAILURE(send_status_across(7, 80, 90, CL_COMPLETE));
  EXPECT_EQ(status_of(b_, 80), CL_COMPLETE);

  proxy_->stall(true);
  const uint64_t before = counter_of(a_, p::link_kind::peer_out, 1).messages_out;
  ASSERT_TRUE(a_.send(p::create_user_event{8, 1}));
  ASSERT_TRUE(a_.send(p::export_event{8, 1, 91}));
  ASSERT_TRUE(a_.send(p::set_user_event_status{8, CL_COMPLETE}));
  uint64_t request = 100;
  ASSERT_TRUE(eventually([&] { return counter_of(a_, p::link_kind::peer_out, ++request).messages_out > before; }));
  // The destination's session ends (the destination has no grace for goodbye).
  ASSERT_TRUE(b_.send(p::goodbye{}));
  EXPECT_TRUE(b_.control.closed_by_peer());
  ASSERT_TRUE(eventually([&] { return destination_->session_count() == 0; }));
  proxy_->cut();
  proxy_->stall(false);
  auto failed = a_.wait_completion(91);
  ASSERT_TRUE(failed) << "the link waited instead of failing at the refusal";
  EXPECT_EQ(failed->status, CL_DEVICE_NOT_AVAILABLE);
}

}  // namespace
}  // namespace ferry::server
