// A connection end to end against a fake daemon on a Unix socket: the
// handshakes, a request answered, a session resumed after its streams broke,
// and one the daemon refuses to resume.
#include "client/net/connection.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "client/net/test_parts.hpp"
#include "protocol/version.hpp"

namespace ferry::client {
namespace {

using testing::fake_daemon;
using testing::fake_event;
using testing::recording_sink;
using testing::server_end;
using testing::session_id;
using testing::session_secret;

/// Opens a connection to `daemon`, which admits it into `server` meanwhile.
std::unique_ptr<connection> open_admitted(fake_daemon& daemon, server_end& server, completion_sink& sink) {
  std::thread admitting([&] { daemon.admit(server, {0, 0, 5000, 0}); });
  std::string error;
  std::unique_ptr<connection> c = connection::open(daemon.where(), {}, error, sink);
  admitting.join();
  EXPECT_NE(c, nullptr) << error;
  return c;
}

TEST(connection, open_shakes_hands_on_both_streams_and_a_request_is_answered) {
  fake_daemon daemon;
  server_end server;
  recording_sink sink;
  auto link = open_admitted(daemon, server, sink);
  ASSERT_NE(link, nullptr);
  EXPECT_TRUE(link->alive());
  EXPECT_EQ(link->session(), session_id);
  EXPECT_EQ(link->version(), protocol::max_version);

  std::thread answering([&] { server.send(protocol::pong{server.receive<protocol::ping>().request}); });
  EXPECT_TRUE(link->ping().ok());
  answering.join();
}

TEST(connection, after_its_streams_break_the_session_resumes_and_nothing_goes_twice) {
  fake_daemon daemon;
  server_end before, after;
  recording_sink sink;
  auto link = open_admitted(daemon, before, sink);
  ASSERT_NE(link, nullptr);
  std::mutex heard_mutex;
  std::vector<bool> heard;
  link->set_availability_listener([&](bool available) {
    std::lock_guard lock(heard_mutex);
    heard.push_back(available);
  });
  for (uint64_t i = 1; i <= 3; ++i) link->post(protocol::ping{i});
  link->flush();
  for (uint64_t i = 1; i <= 3; ++i) EXPECT_EQ(before.receive<protocol::ping>().request, i);

  // The daemon ran two of them when the connection broke.
  before.control->shutdown();
  const protocol::hello hello = daemon.admit(after, {2, 0, 5000, 0});
  EXPECT_EQ(hello.session, session_id);  // a resumption, not a new session
  EXPECT_EQ(hello.secret, session_secret);
  EXPECT_EQ(after.receive<protocol::ack>(), (protocol::ack{0, 0}));
  EXPECT_EQ(after.receive<protocol::ping>().request, 3u);
  EXPECT_TRUE(link->wait_online());

  link->post(protocol::ping{4});
  link->flush();
  EXPECT_EQ(after.receive<protocol::ping>().request, 4u);
  EXPECT_EQ(link->epoch(), 1u);  // the same session
  auto heard_so_far = [&] {
    std::lock_guard lock(heard_mutex);
    return heard;
  };
  EXPECT_TRUE(testing::eventually([&] { return heard_so_far().size() == 2; }));
  EXPECT_EQ(heard_so_far(), (std::vector<bool>{false, true}));
}

TEST(connection, a_session_the_daemon_refuses_to_resume_fails_what_is_outstanding) {
  fake_daemon daemon;
  server_end server;
  recording_sink sink;
  auto link = open_admitted(daemon, server, sink);
  ASSERT_NE(link, nullptr);
  fake_event command(70);
  link->track(recording_sink::handle(command));

  server.control->shutdown();
  daemon.refuse();
  daemon.close();  // the daemon is gone: no new session either
  EXPECT_FALSE(link->wait_online());
  EXPECT_TRUE(link->ended());
  EXPECT_FALSE(link->accepting());
  ASSERT_TRUE(sink.wait_for_completion(command));
  EXPECT_EQ(sink.snapshot(command).completed_with, CL_DEVICE_NOT_AVAILABLE);
  EXPECT_TRUE(testing::eventually([&] {
    const fake_event seen = sink.snapshot(command);
    return seen.releases == seen.holds;
  }));
  protocol::ping p;
  EXPECT_EQ(link->call<protocol::pong>(p).error(), CL_DEVICE_NOT_AVAILABLE);
}

}  // namespace
}  // namespace ferry::client
