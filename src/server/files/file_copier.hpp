// A session's file thread: runs its file commands (file_to_buffer,
// buffer_to_file) once their wait lists have ended, one after the other.
//
// A job moves the bytes between a file below the root (file_root) and the
// buffer in blocks: while one block is read from the file, the device copies
// the one before (three blocks in flight, as the transfer library's FILE
// commands do), on a queue of the copier's own per context, so a job never
// waits behind the client's commands or the daemon's own queues. When it
// ends, the job stores its outcome (CL_COMPLETE or a negative code) where the
// command's completion reads it, then sets its gate to CL_COMPLETE: the gate
// never fails, so a failed file fails its command alone and nothing behind it
// in the queue (docs/transfer.md, "Files on the server").
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "server/files/file_root.hpp"
#include "server/native/api.hpp"

namespace ferry::server {

struct file_job {
  enum class way { file_to_buffer, buffer_to_file };
  way direction = way::file_to_buffer;
  uint64_t command = 0;  // for the log
  std::string path;
  uint64_t file_offset = 0;
  uint64_t offset = 0;  // in the buffer
  uint64_t size = 0;
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  cl_mem buffer = nullptr;  // a reference of the job's, released when it ends
  cl_event gate = nullptr;  // a reference of the job's: set CL_COMPLETE when it ends
  /// Where the command's completion finds the outcome.
  std::shared_ptr<std::atomic<cl_int>> outcome;
};

class file_copier {
 public:
  /// Bytes of each block a job moves at a time, and how many are in flight.
  static constexpr uint64_t block_bytes = uint64_t{8} << 20;
  static constexpr int blocks_in_flight = 3;

  file_copier(const native::api& api, std::shared_ptr<const file_root> root, std::string session_label);
  /// Runs the jobs already posted, then stops.
  ~file_copier();
  file_copier(const file_copier&) = delete;
  file_copier& operator=(const file_copier&) = delete;

  /// Runs `job` after those posted before it.
  void post(file_job job);
  /// Ends `job` with `status` without moving a byte (its wait list failed,
  /// the session is ending); callable from any thread.
  static void end(const native::api& api, file_job& job, cl_int status);

 private:
  struct result {
    cl_int status = CL_COMPLETE;
    std::string cause;
  };
  void run();
  result transfer(const file_job& job);
  result file_to_buffer(const file_job& job, int fd, cl_command_queue queue);
  result buffer_to_file(const file_job& job, int fd, cl_command_queue queue);
  /// The copier's queue for the job's context and device (made on first use).
  cl_command_queue queue_for(const file_job& job, cl_int& error);

  const native::api& api_;
  const std::shared_ptr<const file_root> root_;
  const std::string label_;
  std::map<std::pair<cl_context, cl_device_id>, cl_command_queue> queues_;  // the thread's alone
  std::mutex mutex_;  // guards jobs_, stop_
  std::condition_variable ready_;
  std::deque<file_job> jobs_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ferry::server
