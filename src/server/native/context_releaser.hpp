// Releases native contexts on a thread of its own, for platforms whose
// clReleaseContext can block.
//
// NVIDIA's OpenCL (driver 580, H100) blocks in clReleaseContext, on a lock of
// its own, until the process creates another context (seen with ferryd's
// SIGQUIT stacks: a session's teardown waited for the next client to connect,
// and a daemon asked to stop after its last session never did). A session
// hands such contexts over and ends at once; the thread here takes the wait.
// When the daemon stops with releases still pending, main() ends the process
// without running exit handlers (context_releaser::pending()).
#pragma once

#include <CL/cl.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>

#include "server/native/api.hpp"

namespace ferry::server {

class context_releaser {
 public:
  /// Queues `context` (one reference) for clReleaseContext. The thread starts
  /// on first use and lives until the process ends.
  static void release(const native::api& api, cl_context context);
  /// Releases queued or under way.
  static size_t pending();

 private:
  context_releaser();
  static context_releaser& instance();
  void run();

  struct item {
    const native::api* api;
    cl_context context;
  };
  std::mutex mutex_;  // guards queue_, busy_
  std::condition_variable wake_;
  std::deque<item> queue_;
  size_t busy_ = 0;
  std::thread thread_;
};

}  // namespace ferry::server
