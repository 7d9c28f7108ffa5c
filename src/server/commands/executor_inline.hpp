// Inline definitions shared by the translation units that implement executor
// (executor.cpp and executor_*.cpp): the flag masks, size and event helpers
// they use, and the member templates they instantiate (find_for_creation,
// answer, enqueue_native, enqueue_on_mems, read_to_bulk, write_from_bulk,
// write_claimed).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

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

/// A size3 of the wire as the native calls take it: three size_t, passed
/// where they want a `const size_t*`.
class native_size3 {
 public:
  explicit native_size3(const p::size3& in)
      : values_{static_cast<size_t>(in[0]), static_cast<size_t>(in[1]), static_cast<size_t>(in[2])} {}
  operator const size_t*() const { return values_; }

 private:
  size_t values_[3];
};

/// The transfer that brings a write's `size` bytes on the bulk stream: the
/// command's own id, or none when no bytes come.
inline std::optional<uint64_t> bulk_transfer(const p::command_header& h, uint64_t size) {
  return size ? std::optional<uint64_t>(h.command) : std::nullopt;
}

/// The execution status of `event`, or `unknown` when the platform does not
/// answer.
inline cl_int event_status(const native::api& api, cl_event event, cl_int unknown) {
  cl_int status = unknown;
  if (api.clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) != CL_SUCCESS)
    return unknown;
  return status;
}

// Every build asks for kernel argument info: the daemon needs each
// argument's class to keep raw bytes away from handle arguments (some
// platforms, PoCL among them, keep none otherwise). The clause is taken off
// the options reported back (see query_value).
inline constexpr std::string_view arg_info_option = " -cl-kernel-arg-info";

}  // namespace ferry::server::detail

namespace ferry::server {

using detail::bulk_transfer;
using detail::daemon_ignored_flags;
using detail::event_status;
using detail::needs_event_flags;
using detail::region_bytes;
using detail::native_size3;

template <object_kind Kind>
object_table::found executor::find_for_creation(protocol::object_id id) {
  object_table::found found = objects_.find<Kind>(id);
  if (!found) return found;
  if (cl_int refused = admit_objects(); refused != CL_SUCCESS) return object_table::found(refused);
  return found;
}

template <class Reply>
bool executor::answer(const Reply& reply) {
  core_->outbox.push_message(reply);
  return true;
}

template <class Enqueue>
bool executor::write_from_bulk(const protocol::command_header& h, const object_entry& queue, uint64_t total,
                               Enqueue&& enqueue) {
  uint8_t* data = nullptr;
  bulk_bytes bytes = bulk_bytes::here;
  if (step s = claim_bulk(h, total, data, bytes); s != step::go) return s == step::failed;
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
    if (gate == nullptr) return fail_write(h, h.command, error);
    wait_list_.push_back(gate);
  }
  cl_event event = nullptr;
  cl_int rc = enqueue(data, &event);
  if (rc != CL_SUCCESS) {
    if (gate) {
      api_.clSetUserEventStatus(gate, rc);
      api_.clReleaseEvent(gate);
    }
    return fail_write(h, h.command, rc);
  }
  // The table owns the gate from here, and opens it at once if the bytes
  // came meanwhile.
  if (gate) core_->transfers.attach_piece_gates(h.command, {{total, gate}});
  return finish({.header = h, .queue = queue, .rc = rc, .event = event, .kind = callback_kind::write});
}

template <class Read>
bool executor::read_to_bulk(const protocol::command_header& h, const object_entry& queue, uint64_t size,
                            Read&& read) {
  cl_int error;
  uint8_t* staging = read_staging(size, error);
  if (staging == nullptr) return fail(h, error);
  cl_event event = nullptr;
  cl_int rc = read(staging, &event);
  return finish({.header = h,
                 .queue = queue,
                 .rc = rc,
                 .event = event,
                 .kind = callback_kind::read,
                 .staging = staging,
                 .size = size});
}

template <class Native>
bool executor::enqueue_native(const protocol::command_header& h, const object_entry& queue, Native&& native) {
  cl_event event = nullptr;
  cl_int rc = native(wants_event(h, queue) ? &event : nullptr);
  return finish({.header = h, .queue = queue, .rc = rc, .event = event});
}

template <size_t N, class Native>
bool executor::enqueue_on_mems(const protocol::command_header& h, const protocol::object_id (&mems)[N],
                               Native&& native) {
  const object_entry* queue;
  if (step s = prepare(h, queue); s != step::go) return s == step::failed;
  std::array<cl_mem, N> handles;
  for (size_t i = 0; i < N; ++i) {
    object_table::found mem = objects_.find<object_kind::mem>(mems[i]);
    if (!mem) return fail(h, mem.error());
    handles[i] = mem->as_mem();
  }
  return enqueue_native(h, *queue, [&](cl_event* event) { return native(queue->as_queue(), handles, event); });
}

}  // namespace ferry::server
