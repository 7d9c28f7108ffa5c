// Kernel printf output, forwarded to the client that ran the kernel.
//
// Native implementations write kernel printf output to the process's stdout
// (fd 1). At startup the daemon keeps a duplicate of the real stdout for the
// READY line and makes fd 1 a pipe; this class reads the pipe and sends the
// text as printf_output to the session that most recently enqueued a kernel
// that may print (its program's source mentions "printf", or it came from a
// binary).
//
// Each session runs in a worker process of its own (docs/workers.md), whose
// stdout is its own pipe: all of it belongs to that session. (A process
// serving several sessions could not tell whose kernel wrote a byte; the unit
// tests' in-process sessions still attribute to the last to enqueue.) Because a
// session's writer drains the pipe before it sends the completion of a kernel
// that may print, the text arrives before that completion.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/socket.hpp"

namespace ferry::server {

class control_outbox;

class printf_capture {
 public:
  /// Reads `read_end` (non-blocking is set here). Text no session claims is
  /// written to `fallback_fd` (the daemon's stderr).
  printf_capture(unique_fd read_end, int fallback_fd);
  ~printf_capture();
  printf_capture(const printf_capture&) = delete;
  printf_capture& operator=(const printf_capture&) = delete;

  /// Makes fd 1 a pipe: returns a duplicate of the original stdout (for the
  /// READY line) and the pipe's read end, and makes stdout unbuffered so that
  /// host-side printf output is not held back either.
  static bool redirect_stdout(unique_fd& original_stdout, unique_fd& read_end, std::string& error);

  void start();
  /// Stops and joins the reader thread; forwards what is left in the pipe.
  void stop();

  /// The session behind `outbox` (identified by `key`, unique per session)
  /// enqueued a kernel that may print: output goes there from now on.
  void attribute_to(const std::shared_ptr<control_outbox>& outbox, uint64_t key);
  /// Reads what the pipe holds now. Text for `caller` is appended to `out` as
  /// printf_output frames (the caller's writer sends it next); text for
  /// another session is queued on its outbox.
  void drain(control_outbox* caller, std::vector<uint8_t>& out);

 private:
  void run();
  // Reads until the pipe is empty and routes the text. Needs mutex_.
  void drain_locked(control_outbox* caller, std::vector<uint8_t>* out);

  unique_fd read_end_;
  int fallback_fd_;
  unique_fd wake_;  // eventfd: stop()
  std::thread thread_;
  std::mutex mutex_;  // guards reads of the pipe, target_, buffer_
  std::weak_ptr<control_outbox> target_;
  std::atomic<uint64_t> target_key_{0};
  std::vector<uint8_t> buffer_;
};

}  // namespace ferry::server
