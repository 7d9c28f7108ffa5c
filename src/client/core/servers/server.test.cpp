// What work in a context answers once the session it lives in on a server
// is over: CL_OUT_OF_RESOURCES when the server stopped the session's worker
// for exceeding a limit (refusal code 13), CL_DEVICE_NOT_AVAILABLE for any
// other end, and that also after a new session replaced the lost one.
#include "client/core/servers/server.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include "client/core/diagnostics.hpp"
#include "client/net/resumer.hpp"
#include "client/net/test_parts.hpp"

namespace ferry::client {
namespace {

using testing::fake_daemon;
using testing::recording_sink;
using testing::server_end;

/// One server reached through a fake daemon, and a context that lives in
/// its first session.
class lost_session_test : public ::testing::Test {
 protected:
  lost_session_test() {
    std::thread admitting([&] { daemon_.admit(first_, {0, 0, 5000, 0}); });
    std::string error;
    server_.link = connection::open(daemon_.where(), {}, error, sink_);
    admitting.join();
    EXPECT_NE(server_.link, nullptr) << error;
    server_.address_text = "fake";
    context_->servers.push_back(&server_);
    context_->epochs.push_back(1);
  }
  ~lost_session_test() override {
    release_internal(context_);
    server_.link.reset();  // stops its threads before the daemon and the sink go
  }

  /// The session's worker is gone: its streams break and the daemon
  /// refuses the resumption with `refusal`; then it admits a new session.
  void lose_the_session(const protocol::refused& refusal) {
    first_.control->shutdown();
    daemon_.refuse(refusal);
    EXPECT_TRUE(testing::eventually([&] { return server_.link->ended() || server_.link->epoch() > 1; }));
    ended_status_ = unavailable_status(context_);
    ended_reachable_ = reachable(context_);
    daemon_.admit(second_, {0, 0, 5000, 0});
    EXPECT_TRUE(testing::eventually([&] { return server_.link->epoch() == 2 && server_.link->accepting(); }));
  }

  recording_sink sink_;
  fake_daemon daemon_;
  server_end first_, second_;
  server server_;
  context* context_ = new context;
  cl_int ended_status_ = CL_SUCCESS;
  bool ended_reachable_ = true;
};

TEST_F(lost_session_test, a_session_whose_worker_exceeded_a_limit_leaves_its_context_out_of_resources) {
  ASSERT_NE(server_.link, nullptr);
  EXPECT_TRUE(reachable(context_));
  lose_the_session({static_cast<int32_t>(refusal_code::worker_over_quota), "worker over --worker-memory"});
  EXPECT_FALSE(ended_reachable_);
  EXPECT_EQ(ended_status_, CL_OUT_OF_RESOURCES);
  // The server is usable again in a new session; the context's stays lost.
  clear_explanations();
  EXPECT_FALSE(reachable(context_));
  EXPECT_EQ(unavailable_status(context_), CL_OUT_OF_RESOURCES);
  ASSERT_NE(explanation_for(CL_OUT_OF_RESOURCES), nullptr);
  EXPECT_NE(std::string(explanation_for(CL_OUT_OF_RESOURCES)).find("exceeded a limit"), std::string::npos);
  context* fresh = new context;
  fresh->servers.push_back(&server_);
  fresh->epochs.push_back(2);
  EXPECT_TRUE(reachable(fresh));
  release_internal(fresh);
}

TEST_F(lost_session_test, a_session_whose_worker_crashed_leaves_its_context_not_available) {
  ASSERT_NE(server_.link, nullptr);
  lose_the_session({static_cast<int32_t>(refusal_code::worker_lost), "worker killed by signal 9 (SIGKILL)"});
  EXPECT_FALSE(ended_reachable_);
  EXPECT_EQ(ended_status_, CL_DEVICE_NOT_AVAILABLE);
  EXPECT_FALSE(reachable(context_));
  EXPECT_EQ(unavailable_status(context_), CL_DEVICE_NOT_AVAILABLE);
}

}  // namespace
}  // namespace ferry::client
