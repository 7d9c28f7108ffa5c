#include "server/session/session_quota.hpp"

#include "common/log.hpp"

namespace ferry::server {
namespace {

const char* quota_name(quota_kind kind) {
  switch (kind) {
    case quota_kind::memory: return "device memory (--session-memory)";
    case quota_kind::objects: return "objects (--session-objects)";
    case quota_kind::queued: return "queued commands (--session-queued)";
    case quota_kind::in_flight: return "bytes in flight (--session-in-flight)";
  }
  return "?";
}

uint64_t limit_of(const session_limits& limits, quota_kind kind) {
  switch (kind) {
    case quota_kind::memory: return limits.memory;
    case quota_kind::objects: return limits.objects;
    case quota_kind::queued: return limits.queued;
    case quota_kind::in_flight: return limits.in_flight;
  }
  return 0;
}

}  // namespace

session_quota::~session_quota() {
  for (size_t i = 0; i < refusals_.size(); ++i) {
    // The first refusal of each kind was logged as it happened.
    const uint64_t count = refusals_[i].load(std::memory_order_relaxed);
    if (count > 1)
      FERRY_INFO("session", "session %s: %llu requests in all were refused over the quota of %s", label_.c_str(),
                 static_cast<unsigned long long>(count), quota_name(static_cast<quota_kind>(i)));
  }
}

cl_int session_quota::refuse(quota_kind kind, uint64_t held, uint64_t asked, cl_int error) {
  // A client over its quota usually keeps trying: one warning per kind and
  // session, so that it cannot flood the daemon's log.
  if (refusals_[static_cast<size_t>(kind)].fetch_add(1, std::memory_order_relaxed) == 0) {
    FERRY_WARN("session", "session %s: over its quota of %s: holds %llu, asks %llu more, limit %llu; refused (%d)",
               label_.c_str(), quota_name(kind), static_cast<unsigned long long>(held),
               static_cast<unsigned long long>(asked), static_cast<unsigned long long>(limit_of(limits_, kind)),
               error);
  } else {
    FERRY_DEBUG("session", "session %s: over its quota of %s again (holds %llu, asks %llu)", label_.c_str(),
                quota_name(kind), static_cast<unsigned long long>(held), static_cast<unsigned long long>(asked));
  }
  return error;
}

cl_int session_quota::admit_memory(uint64_t held, uint64_t size) {
  if (limits_.memory == 0 || (held <= limits_.memory && size <= limits_.memory - held)) return CL_SUCCESS;
  return refuse(quota_kind::memory, held, size, CL_MEM_OBJECT_ALLOCATION_FAILURE);
}

cl_int session_quota::admit_object(uint64_t held) {
  if (limits_.objects == 0 || held < limits_.objects) return CL_SUCCESS;
  return refuse(quota_kind::objects, held, 1, CL_OUT_OF_RESOURCES);
}

cl_int session_quota::admit_command(uint64_t queued) {
  if (limits_.queued == 0 || queued < limits_.queued) return CL_SUCCESS;
  return refuse(quota_kind::queued, queued, 1, CL_OUT_OF_RESOURCES);
}

cl_int session_quota::admit_transfer(uint64_t size) {
  if (limits_.in_flight == 0) return CL_SUCCESS;
  uint64_t held = in_flight_.bytes.load(std::memory_order_acquire);
  if (held == 0 || (held <= limits_.in_flight && size <= limits_.in_flight - held)) return CL_SUCCESS;
  return refuse(quota_kind::in_flight, held, size, CL_OUT_OF_RESOURCES);
}

}  // namespace ferry::server
