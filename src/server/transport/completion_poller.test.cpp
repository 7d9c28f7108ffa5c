#include "server/transport/completion_poller.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "server/session/session_core.hpp"
#include "server/transport/callback_pool.hpp"

namespace ferry::server {
namespace {

// Events of the fake platform: a status each, set by the test; releases are
// recorded in order (the session's outbox releases its records' events in
// the order the records were delivered).
struct fake_events {
  std::mutex mutex;
  std::map<cl_event, cl_int> status;
  std::vector<cl_event> released;
  std::map<cl_event, int> queries;  // how often each event was asked
  /// Queried while still running: both of these end (a command and the one
  /// behind it ending between two queries of one round).
  cl_event ends_pair_when_queried = nullptr;
  cl_event pair_other = nullptr;
};
fake_events& events() {
  static fake_events instance;
  return instance;
}

cl_event fake_event(uintptr_t n) { return reinterpret_cast<cl_event>(0x7000 + 16 * n); }

const native::api& fake_api() {
  static const native::api table = [] {
    native::api t = native::dry_api();
    t.clGetEventInfo = [](cl_event event, cl_event_info param, size_t size, void* value, size_t*) -> cl_int {
      if (param != CL_EVENT_COMMAND_EXECUTION_STATUS || size < sizeof(cl_int)) return CL_INVALID_VALUE;
      fake_events& e = events();
      std::lock_guard lock(e.mutex);
      ++e.queries[event];
      auto it = e.status.find(event);
      if (it == e.status.end()) return CL_INVALID_EVENT;
      *static_cast<cl_int*>(value) = it->second;
      if (event == e.ends_pair_when_queried && it->second > CL_COMPLETE) {
        it->second = CL_COMPLETE;
        e.status[e.pair_other] = CL_COMPLETE;
      }
      return CL_SUCCESS;
    };
    t.clReleaseEvent = [](cl_event event) -> cl_int {
      fake_events& e = events();
      std::lock_guard lock(e.mutex);
      e.released.push_back(event);
      return CL_SUCCESS;
    };
    return t;
  }();
  return table;
}

class completion_poller_test : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_events& e = events();
    std::lock_guard lock(e.mutex);
    e.status.clear();
    e.released.clear();
    e.queries.clear();
    e.ends_pair_when_queried = e.pair_other = nullptr;
  }

  void set_status(cl_event event, cl_int status) {
    std::lock_guard lock(events().mutex);
    events().status[event] = status;
  }

  callback_slot* slot_for(uint64_t command, cl_event event) {
    callback_slot* slot = core_->callbacks.acquire();
    slot->core = core_;
    slot->command = command;
    slot->event = event;
    slot->notify = true;
    slot->polled = true;
    return slot;
  }

  // Waits (up to 5 s) until `done` holds.
  template <class Done>
  static bool becomes(Done&& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
  }
  bool outstanding_becomes(size_t count) {
    return becomes([&] { return core_->callbacks.outstanding() == count; });
  }
  int queries_of(cl_event event) {
    std::lock_guard lock(events().mutex);
    return events().queries[event];
  }

  // Ends the session state; returns the events of its delivered records, in delivery order.
  // The poller's thread may still hold the core for a moment after the last slot went back
  // (it drops its reference after releasing the slot, and keeps quiet sessions until it
  // wakes their writers), so the records are released once that reference is gone too.
  std::vector<cl_event> delivered_in_order() {
    std::weak_ptr<session_core> last = core_;
    core_.reset();
    EXPECT_TRUE(becomes([&] { return last.expired(); })) << "the poller kept the session state";
    std::lock_guard lock(events().mutex);
    return events().released;
  }

  std::shared_ptr<session_core> core_ = std::make_shared<session_core>(protocol::session_token{}, fake_api(), nullptr);
  completion_poller poller_;
};

TEST_F(completion_poller_test, a_command_is_reported_once_its_event_has_ended_or_failed) {
  const cl_event running = fake_event(1), failed = fake_event(2);
  set_status(running, CL_RUNNING);
  set_status(failed, CL_OUT_OF_RESOURCES);
  poller_.watch(fake_api(), slot_for(1, running));
  poller_.watch(fake_api(), slot_for(2, failed));
  ASSERT_TRUE(outstanding_becomes(1)) << "the failed command was not reported";
  // Asked again in later rounds, and still not reported.
  const int asked = queries_of(running);
  ASSERT_TRUE(becomes([&] { return queries_of(running) >= asked + 3; }));
  EXPECT_EQ(core_->callbacks.outstanding(), 1u) << "a running command was reported";
  EXPECT_EQ(poller_.watched(), 1u);
  set_status(running, CL_COMPLETE);
  ASSERT_TRUE(outstanding_becomes(0)) << "the completed command was not reported";
  EXPECT_EQ(poller_.watched(), 0u);
  EXPECT_EQ(core_->outbox.pending(), 2u);
  EXPECT_EQ(delivered_in_order(), (std::vector<cl_event>{failed, running}));
}

TEST_F(completion_poller_test, commands_that_end_between_two_queries_are_reported_oldest_first) {
  const cl_event first = fake_event(3), second = fake_event(4);
  set_status(first, CL_RUNNING);
  set_status(second, CL_QUEUED);
  {
    // Asking for `first` ends both: a round that asked `first` before
    // `second` would see only `second` ended and report it first.
    std::lock_guard lock(events().mutex);
    events().ends_pair_when_queried = first;
    events().pair_other = second;
  }
  poller_.watch(fake_api(), slot_for(3, first));
  poller_.watch(fake_api(), slot_for(4, second));
  ASSERT_TRUE(outstanding_becomes(0));
  EXPECT_EQ(delivered_in_order(), (std::vector<cl_event>{first, second}));
}

TEST_F(completion_poller_test, an_event_that_cannot_be_asked_is_reported_rather_than_waited_on) {
  const cl_event unknown = fake_event(5);  // the fake answers CL_INVALID_EVENT
  poller_.watch(fake_api(), slot_for(5, unknown));
  ASSERT_TRUE(outstanding_becomes(0)) << "an event whose status cannot be read was waited on forever";
  EXPECT_EQ(poller_.watched(), 0u);
  EXPECT_EQ(delivered_in_order(), (std::vector<cl_event>{unknown}));
}

}  // namespace
}  // namespace ferry::server
