// What starts a file command's job once its `before` marker has ended
// (executor_files.cpp): the control writer runs it as a deferred step, or the
// session's teardown ends the job first. Exactly one of them acts.
#pragma once

#include <atomic>
#include <memory>
#include <utility>

#include "server/files/file_copier.hpp"
#include "server/transport/control_writer.hpp"

namespace ferry::server {

/// Starts a file command's job once its `before` marker has ended, unless
/// the teardown ended it first.
class file_start : public deferred_step {
 public:
  file_start(const native::api& api, file_job job, std::weak_ptr<file_copier> copier)
      : api_(api), job_(std::move(job)), copier_(std::move(copier)) {}
  ~file_start() override {
    // Never claimed (its slot was dropped): nothing may wait on the gate.
    if (claim()) file_copier::end(api_, job_, CL_DEVICE_NOT_AVAILABLE);
  }

  void run(cl_int status) override {
    if (!claim()) return;
    if (status < 0) return file_copier::end(api_, job_, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    std::shared_ptr<file_copier> copier = copier_.lock();
    if (!copier) return file_copier::end(api_, job_, CL_DEVICE_NOT_AVAILABLE);
    copier->post(std::move(job_));
  }

  /// The session ends before the wait list did: the command fails.
  void abandon() {
    if (claim()) file_copier::end(api_, job_, CL_DEVICE_NOT_AVAILABLE);
  }

 private:
  bool claim() { return !claimed_.exchange(true, std::memory_order_acq_rel); }

  const native::api& api_;
  file_job job_;
  std::weak_ptr<file_copier> copier_;
  std::atomic<bool> claimed_{false};
};

}  // namespace ferry::server
