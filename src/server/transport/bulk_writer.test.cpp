// A bulk stream's writer ends when its stream is dropped: the session retires
// the writer's generation, and a writer of a retired generation pops nothing.
// The writer takes its generation from the session, read when the stream
// became the session's; a writer that read it at its own start could miss a
// retirement that came first and wait for jobs forever (a session whose
// connection broke at once then never let go of its control stream).
#include "server/transport/bulk_writer.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>

#include "common/test_stream_pair.hpp"
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
  /// once run() returned.
  std::future<void> run_writer(uint64_t generation) {
    return std::async(std::launch::async, [this, generation] {
      bulk_writer writer(streams_.server.get(), jobs_, generation, control_, native::dry_api(),
                         [this](const std::string& why) { broken_ = why; });
      writer.run();
    });
  }

  test_stream_pair streams_;
  bulk_outbox jobs_{native::dry_api()};
  control_outbox control_{native::dry_api()};
  std::string broken_;
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

}  // namespace
}  // namespace ferry::server
