// Enqueue plumbing: what every command of a queue goes through, whatever its
// object family. prepare() checks the command's ids and quotas and maps its
// wait list to native events; the handler enqueues; finish() (or fail())
// reports the command: its event kept for the client, followed by a callback
// slot, or dropped. Also the flush list, read staging and the claim of a
// write's bulk bytes.
#include "server/commands/executor.hpp"
#include "server/commands/executor_inline.hpp"

#include <algorithm>
#include <string>

#include "common/cl_errors.hpp"
#include "common/log.hpp"
#include "server/transport/staging.hpp"

namespace ferry::server {

namespace p = protocol;

// ---------------------------------------------------------------------------
// Before the enqueue

executor::step executor::check_header(const p::command_header& h) {
  if ((h.flags & p::keep_event) && duplicate(h.command)) return step::violation;
  if (h.wait_list.size() > p::max_wait_list) {
    violation_ = "wait list of " + std::to_string(h.wait_list.size()) + " events exceeds the limit of " +
                 std::to_string(p::max_wait_list);
    return step::violation;
  }
  return step::go;
}

executor::step executor::prepare(const p::command_header& h, const object_entry*& queue) {
  if (step s = check_header(h); s != step::go) return s;
  object_table::found found = objects_.find<object_kind::queue>(h.queue);
  if (!found) {
    fail(h, found.error());
    return step::failed;
  }
  queue = &*found;
  // The session's quotas: commands not yet complete, and the event it keeps.
  cl_int error = core_->quota.admit_command(queued_.count());
  if (error == CL_SUCCESS && (h.flags & p::keep_event)) error = admit_objects();
  if (error != CL_SUCCESS) {
    fail(h, error);
    return step::failed;
  }
  return map_wait_list(h);
}

executor::step executor::prepare_write(const p::command_header& h, std::optional<uint64_t> transfer,
                                       const object_entry*& queue) {
  step s = prepare(h, queue);
  if (s == step::failed && transfer) core_->transfers.abandon(*transfer);
  return s;
}

executor::step executor::prepare_write(const p::command_header& h, std::optional<uint64_t> transfer,
                                       p::object_id target, const object_entry*& queue, const object_entry*& mem) {
  if (step s = prepare_write(h, transfer, queue); s != step::go) return s;
  object_table::found found = objects_.find<object_kind::mem>(target);
  if (!found) {
    fail_write(h, transfer, found.error());
    return step::failed;
  }
  mem = &*found;
  return step::go;
}

executor::step executor::prepare_wait_list(const p::command_header& h) {
  if (step s = check_header(h); s != step::go) return s;
  return map_wait_list(h);
}

executor::step executor::map_wait_list(const p::command_header& h) {
  wait_list_.clear();
  pending_imports_.clear();
  for (p::object_id id : h.wait_list) {
    object_table::found event = objects_.find<object_kind::event>(id, CL_INVALID_EVENT_WAIT_LIST);
    if (!event) {
      // A recorded event whose command failed to enqueue.
      fail(h, event.error() == CL_INVALID_EVENT_WAIT_LIST ? event.error()
                                                          : CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
      return step::failed;
    }
    // A command behind a failed event must not run, and some platforms
    // (PoCL 3.1) never finish such a command: report it failed at once.
    if (event_status(api_, event->as_event(), CL_COMPLETE) < 0) {
      fail(h, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
      return step::failed;
    }
    wait_list_.push_back(event->as_event());
    if (event->user_event && core_->imports.waiting(id)) pending_imports_.push_back(id);
  }
  return step::go;
}

bool executor::wait_list_complete() const {
  return std::all_of(wait_list_.begin(), wait_list_.end(),
                     [&](cl_event event) { return event_status(api_, event, CL_QUEUED) == CL_COMPLETE; });
}

bool executor::wants_event(const p::command_header& h, const object_entry& queue) const {
  return (h.flags & needs_event_flags) != 0 || !pending_imports_.empty() ||
         (!queue.out_of_order && queued_.wants_event(h.queue));
}

uint8_t* executor::read_staging(uint64_t size, cl_int& error) {
  error = core_->quota.admit_transfer(size);
  if (error != CL_SUCCESS) return nullptr;
  uint8_t* staging = acquire_staging(size, &core_->quota.in_flight());
  if (staging == nullptr) error = CL_OUT_OF_HOST_MEMORY;
  return staging;
}

executor::step executor::claim_bulk(const p::command_header& h, uint64_t total, uint8_t*& data,
                                    bulk_bytes& bytes) {
  const uint64_t transfer = h.command;
  std::string why;
  // Bytes that are here already were weighed against the quota when they
  // came (transfer_table::begin_chunk); only new staging is weighed here.
  if (!core_->transfers.known(transfer)) {
    if (cl_int refused = core_->quota.admit_transfer(total); refused != CL_SUCCESS) {
      core_->transfers.abandon(transfer);
      fail(h, refused);
      return step::failed;
    }
  }
  cl_int status = CL_SUCCESS;
  switch (core_->transfers.claim(transfer, total, data, status, why)) {
    case transfer_table::claim_result::conflict:
      violate(why);
      return step::violation;
    case transfer_table::claim_result::refused:
      // The quota refused its bytes, which came first; the table drops them.
      fail(h, status);
      return step::failed;
    case transfer_table::claim_result::aborted:  // claim_at_most only
    case transfer_table::claim_result::no_memory:
      core_->transfers.abandon(transfer);
      fail(h, CL_OUT_OF_HOST_MEMORY);
      return step::failed;
    case transfer_table::claim_result::complete:
      bytes = bulk_bytes::here;
      return step::go;
    case transfer_table::claim_result::pending: break;
  }
  bytes = bulk_bytes::coming;
  return step::go;
}

// ---------------------------------------------------------------------------
// After the enqueue

bool executor::fail(const p::command_header& h, cl_int error) {
  FERRY_DEBUG("session", "session %s: command %llu failed: %s", core_->label.c_str(),
              static_cast<unsigned long long>(h.command), cl_error_name(error).c_str());
  // Failures are always reported, asked for or not.
  core_->outbox.push_failure(h.command, error);
  record_failed_event(h, error);
  return true;
}

void executor::record_failed_event(const p::command_header& h, cl_int error) {
  // The client holds the event: record it so that waits on it fail and its
  // release balances.
  if ((h.flags & p::keep_event) && !objects_.contains(h.command)) {
    object_entry entry;
    entry.kind = object_kind::event;
    entry.error = error;
    objects_.insert(h.command, entry);
  }
}

bool executor::fail_write(const p::command_header& h, std::optional<uint64_t> transfer, cl_int error) {
  if (transfer) core_->transfers.abandon(*transfer);
  return fail(h, error);
}

bool executor::finish(enqueue_outcome done) {
  const p::command_header& h = done.header;
  const object_entry& queue = done.queue;
  if (done.rc != CL_SUCCESS) {
    release_staging(done.staging);
    return fail(h, done.rc);
  }
  touch(queue.as_queue());
  FERRY_TRACE("timeline", "command %llu: enqueued", static_cast<unsigned long long>(h.command));
  queued_.enqueued(h.queue, queue.as_queue(), queue.out_of_order, done.event);
  bool keep = (h.flags & p::keep_event) != 0;
  bool notify = (h.flags & p::notify) != 0;
  // A read in pieces reports through its pieces' callbacks, never its own event's.
  bool callback = done.kind != callback_kind::read_piece &&
                  (notify || done.kind != callback_kind::completion || done.outcome != nullptr);
  hold_for_imports(done.event);
  if (done.event && !keep && !callback) api_.clReleaseEvent(done.event);  // requested only for hold_for_imports
  if (keep) {
    auto entry = object_entry::native(object_kind::event, done.event, queue.context);
    entry.callbacks = queue.callbacks;
    objects_.insert(h.command, entry);
    if (callback) api_.clRetainEvent(done.event);
  }
  if (!callback) return true;
  callback_slot* slot = core_->callbacks.acquire();
  slot->core = core_;
  slot->command = h.command;
  slot->event = done.event;
  slot->staging = done.staging;
  slot->size = done.size;
  if (done.kind == callback_kind::read) {
    slot->content_size = done.content_size.release();
    slot->offset = done.offset;
  }
  slot->transfer = done.transfer ? done.transfer : h.command;
  slot->kind = done.kind;
  slot->outcome = std::move(done.outcome);
  slot->notify = notify;
  slot->profiling = queue.profiling;
  // Once a kernel that may print has run, every reported completion sends
  // the text waiting in the pipe first: the client may learn of the kernel's
  // end through a later command (clFinish's marker), and its output must
  // already be on the client's stdout by then.
  slot->printf = done.printf || may_print_;
  slot->follow(queue.callbacks);
  callback_pool::arm(api_, slot);
  return true;
}

void executor::hold_for_imports(cl_event event) {
  if (event == nullptr) return;
  for (p::object_id id : pending_imports_) core_->imports.hold(id, event);
}

void executor::sweep_after_failure() {
  // Harmless where callbacks do run on failure: no slot is sweepable there.
  flush_touched();
  core_->callbacks.sweep_failures(api_);
}

// ---------------------------------------------------------------------------
// Flushes

void executor::touch(cl_command_queue queue) {
  if (std::find(touched_.begin(), touched_.end(), queue) == touched_.end()) touched_.push_back(queue);
}

void executor::untouch(cl_command_queue queue) {
  auto it = std::find(touched_.begin(), touched_.end(), queue);
  if (it != touched_.end()) touched_.erase(it);
}

void executor::flush_touched() {
  for (cl_command_queue queue : touched_) api_.clFlush(queue);
  touched_.clear();
  if (!retired_svm_.empty() || !queue_fences_.empty()) reclaim_svm();
}

}  // namespace ferry::server
