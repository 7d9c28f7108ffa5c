// Inline definitions shared by the translation units that implement executor
// (executor.cpp, executor_images.cpp, executor_svm.cpp, executor_peers.cpp):
// the flag masks and size helpers they use, and the member templates they
// instantiate (write_from_bulk, write_claimed, enqueue_native).
#pragma once

#include <cstddef>
#include <cstdint>

#include "server/commands/executor.hpp"
#include "server/native/info.hpp"

namespace ferry::server::detail {

namespace p = protocol;

inline constexpr uint32_t needs_event_flags = p::keep_event | p::notify;

/// Memory flags the daemon drops when it creates a buffer or an image. Host
/// pointers of another process mean nothing here (the client resolved the
/// host-pointer flags). The host-access flags restrict the application, which
/// the client enforces; the daemon itself reads and writes any memory object:
/// to migrate it between servers, to fetch what a map shows the application
/// (also for CL_MAP_WRITE) and to write back an unmapped region.
inline constexpr cl_mem_flags daemon_ignored_flags = CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR |
                                                     CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY |
                                                     CL_MEM_HOST_NO_ACCESS;

inline bool multiply(uint64_t a, uint64_t b, uint64_t& out) { return !__builtin_mul_overflow(a, b, &out); }

/// Bytes of a packed rectangle, or false when it overflows.
inline bool region_bytes(const p::size3& region, uint64_t& out) {
  uint64_t rows;
  return multiply(region[0], region[1], rows) && multiply(rows, region[2], out);
}

inline void to_size_t(const p::size3& in, size_t (&out)[3]) {
  for (size_t i = 0; i < 3; ++i) out[i] = static_cast<size_t>(in[i]);
}

}  // namespace ferry::server::detail

namespace ferry::server {

using detail::daemon_ignored_flags;
using detail::needs_event_flags;
using detail::region_bytes;
using detail::to_size_t;

template <class Enqueue>
bool executor::write_from_bulk(const protocol::command_header& h, const object_entry& queue, uint64_t total,
                               Enqueue&& enqueue) {
  uint8_t* data = nullptr;
  bool result = true;
  bulk_bytes bytes = claim_bulk(h, total, data, result);
  if (bytes == bulk_bytes::ended) return result;
  return write_claimed(h, queue, total, bytes, data, enqueue);
}

template <class Enqueue>
bool executor::write_claimed(const protocol::command_header& h, const object_entry& queue, uint64_t total,
                             bulk_bytes bytes, uint8_t* data, Enqueue&& enqueue) {
  cl_event gate = nullptr;
  if (bytes == bulk_bytes::coming) {
    // Bytes still on their way: the write waits for them natively behind a
    // gate at the transfer's end, which the bulk reader opens when the last
    // byte lands (write_in_pieces does the same with a gate per piece).
    cl_int error = CL_SUCCESS;
    gate = api_.clCreateUserEvent(queue.context, &error);
    if (gate == nullptr) {
      core_->transfers.abandon(h.command);
      return fail(h, error);
    }
    wait_list_.push_back(gate);
  }
  cl_event event = nullptr;
  cl_int rc = enqueue(data, &event);
  if (rc != CL_SUCCESS) {
    if (gate) {
      api_.clSetUserEventStatus(gate, rc);
      api_.clReleaseEvent(gate);
    }
    core_->transfers.abandon(h.command);
    return fail(h, rc);
  }
  // The table owns the gate from here, and opens it at once if the bytes
  // came meanwhile.
  if (gate) core_->transfers.attach_piece_gates(h.command, {{total, gate}});
  return finish(h, queue, rc, event, callback_kind::write);
}

template <class Native>
bool executor::enqueue_native(const protocol::command_header& h, const object_entry& queue, Native&& native) {
  cl_event event = nullptr;
  bool want_event = (h.flags & needs_event_flags) != 0 || !pending_imports_.empty() || checkpoint_;
  cl_int rc = native(want_event ? &event : nullptr);
  return finish(h, queue, rc, event, callback_kind::completion);
}

}  // namespace ferry::server
