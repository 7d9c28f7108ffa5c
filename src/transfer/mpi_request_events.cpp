// clCreateEventFromMPIRequest: a user event that completes when a
// non-blocking MPI request does. One thread watches every such request
// (MPI_Test), briefly spinning, then sleeping longer between looks while
// nothing completes, and ends when none is left.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "ferry/cl_data_transfer.h"
#include "transfer/mpi_checks.hpp"

namespace ferry::transfer {
namespace {

class request_watcher {
 public:
  void watch(MPI_Request request, cl_event event) {
    std::lock_guard lock(mutex_);
    incoming_.push_back({request, event});
    if (!running_) {
      running_ = true;
      std::thread([this] { run(); }).detach();
    }
  }

 private:
  struct watched {
    MPI_Request request;
    cl_event event;
  };

  void run() {
    name_this_thread("ferry-mpi-wait");
    using namespace std::chrono;
    std::vector<watched> active;
    microseconds pause{0};
    for (;;) {
      {
        std::lock_guard lock(mutex_);
        active.insert(active.end(), incoming_.begin(), incoming_.end());
        if (!incoming_.empty()) pause = microseconds{0};
        incoming_.clear();
        if (active.empty()) {
          running_ = false;
          return;
        }
      }
      bool any = false;
      for (auto it = active.begin(); it != active.end();) {
        int done = 0;
        MPI_Status status;
        const int rc = MPI_Test(&it->request, &done, &status);
        if (rc != MPI_SUCCESS || done) {
          if (rc != MPI_SUCCESS) FERRY_WARN("transfer", "an MPI request of an event failed (MPI error %d)", rc);
          clSetUserEventStatus(it->event, rc == MPI_SUCCESS ? CL_COMPLETE : CL_OUT_OF_RESOURCES);
          clReleaseEvent(it->event);
          it = active.erase(it);
          any = true;
        } else {
          ++it;
        }
      }
      // Prompt while requests complete; at most a millisecond late once they have stopped.
      pause = any ? microseconds{0} : std::min(microseconds{1000}, std::max(microseconds{10}, pause * 2));
      if (pause.count() > 0) std::this_thread::sleep_for(pause);
    }
  }

  std::mutex mutex_;
  std::vector<watched> incoming_;
  bool running_ = false;
};

request_watcher& watcher() {
  static auto* w = new request_watcher;  // its thread may outlive static destruction
  return *w;
}

}  // namespace
}  // namespace ferry::transfer

using namespace ferry::transfer;

extern "C" cl_event clCreateEventFromMPIRequest(cl_context context, MPI_Request* request, cl_int* errcode_ret) {
  auto fail = [&](cl_int code) -> cl_event {
    if (errcode_ret) *errcode_ret = code;
    return nullptr;
  };
  cl_uint references = 0;
  if (context == nullptr ||
      clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof references, &references, nullptr) != CL_SUCCESS)
    return fail(CL_INVALID_CONTEXT);
  if (request == nullptr || *request == MPI_REQUEST_NULL) return fail(CL_INVALID_VALUE);
  if (cl_int rc = check_mpi_running("clCreateEventFromMPIRequest"); rc != CL_SUCCESS) return fail(rc);
  cl_int rc = CL_SUCCESS;
  cl_event event = clCreateUserEvent(context, &rc);
  if (event == nullptr) return fail(rc);
  clRetainEvent(event);  // the watcher's
  watcher().watch(*request, event);
  *request = MPI_REQUEST_NULL;  // the event's now
  if (errcode_ret) *errcode_ret = CL_SUCCESS;
  return event;
}
