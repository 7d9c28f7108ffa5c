// What one session may hold on this daemon (ferryd --session-memory,
// --session-objects, --session-queued, --session-in-flight), and the checks
// that refuse more.
//
// A refusal is an OpenCL error for the offending session only: the creation
// is recorded as failed (its id then fails every later use with the same
// code), the command completes with it, or the reply carries it. The session
// goes on and nothing else is affected (docs/protocol.md, "Quotas"). Each
// kind of refusal is logged once per session at warn level; later ones only
// at debug, and their number when the session ends.
#pragma once

#include <CL/cl.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "server/transport/staging.hpp"

namespace ferry::server {

/// Per-session limits; 0 means unlimited.
struct session_limits {
  /// Bytes of device memory allocated by buffers, images and SVM allocations
  /// (sub-buffers and buffers over SVM memory allocate none).
  uint64_t memory = 0;
  /// Entries of the session's object table: objects, kept command events, and
  /// the records of failed creations (each costs the daemon memory too).
  uint64_t objects = 1'000'000;
  /// Commands enqueued on the client's queues and not yet complete.
  uint64_t queued = 1'000'000;
  /// Bytes of staging held for the session's transfers (writes waiting for or
  /// in their native write, bytes that came before their command, reads on
  /// their way to the client).
  uint64_t in_flight = uint64_t{4} << 30;
};

enum class quota_kind : uint8_t { memory, objects, queued, in_flight };

class session_quota {
 public:
  session_quota(const session_limits& limits, const std::string& label) : limits_(limits), label_(label) {}
  ~session_quota();
  session_quota(const session_quota&) = delete;
  session_quota& operator=(const session_quota&) = delete;

  const session_limits& limits() const { return limits_; }

  /// A new memory object of `size` bytes while `held` are allocated:
  /// CL_SUCCESS or CL_MEM_OBJECT_ALLOCATION_FAILURE.
  cl_int admit_memory(uint64_t held, uint64_t size);
  /// One more object while `held` exist: CL_SUCCESS or CL_OUT_OF_RESOURCES.
  cl_int admit_object(uint64_t held);
  /// One more command while `queued` are not complete: CL_SUCCESS or
  /// CL_OUT_OF_RESOURCES.
  cl_int admit_command(uint64_t queued);
  /// A transfer of `size` bytes: CL_SUCCESS or CL_OUT_OF_RESOURCES. A
  /// transfer is always admitted when nothing else is in flight, so that one
  /// larger than the quota still works alone (it waits for nothing else).
  /// Asked by the control reader for a command's staging and by the bulk
  /// readers for bytes that come before their command.
  cl_int admit_transfer(uint64_t size);

  /// Charged by the session's staging (acquire_staging); read from any thread.
  staging_account& in_flight() { return in_flight_; }
  /// How often `kind` was refused so far (tests, the summary at the end).
  uint64_t refusals(quota_kind kind) const {
    return refusals_[static_cast<size_t>(kind)].load(std::memory_order_relaxed);
  }

 private:
  cl_int refuse(quota_kind kind, uint64_t held, uint64_t asked, cl_int error);

  const session_limits limits_;
  const std::string label_;
  staging_account in_flight_;
  // Counted on the control reader and, for admit_transfer, the bulk readers
  // (client stream and peer links): atomic, so that exactly one refusal of
  // each kind logs its warning.
  std::array<std::atomic<uint64_t>, 4> refusals_{};
};

}  // namespace ferry::server
