#include "server/transport/callback_pool.hpp"

#include <algorithm>
#include <utility>

#include "common/log.hpp"
#include "server/session/session_core.hpp"
#include "server/transport/completion_poller.hpp"

namespace ferry::server {
namespace {

constexpr size_t slots_per_chunk = 128;
constexpr uint64_t claimed_bit = 1;
constexpr uint64_t missed_bit = 2;

}  // namespace

callback_pool::callback_pool() { head_.prev = head_.next = &head_; }

callback_pool::~callback_pool() = default;

callback_slot* callback_pool::acquire() {
  std::lock_guard lock(mutex_);
  if (free_ == nullptr) {
    chunks_.push_back(std::make_unique<callback_slot[]>(slots_per_chunk));
    callback_slot* chunk = chunks_.back().get();
    for (size_t i = 0; i < slots_per_chunk; ++i) {
      chunk[i].next = free_;
      free_ = &chunk[i];
    }
  }
  callback_slot* slot = free_;
  free_ = slot->next;
  slot->prev = &head_;
  slot->next = head_.next;
  head_.next->prev = slot;
  head_.next = slot;
  ++count_;
  slot->command = 0;
  slot->event = nullptr;
  slot->staging = nullptr;
  slot->size = 0;
  slot->transfer = 0;
  slot->offset = 0;
  slot->peer = 0;
  slot->mapped = {};
  slot->content_size = nullptr;
  slot->gate = nullptr;
  slot->then.reset();
  slot->outcome.reset();
  slot->kind = callback_kind::completion;
  slot->notify = slot->profiling = slot->printf = slot->sweepable = slot->verify_status = slot->polled = false;
  slot->missed_status = 0;
  return slot;
}

void callback_pool::release(callback_slot* slot) {
  delete std::exchange(slot->content_size, nullptr);
  slot->piece_of.reset();
  slot->outcome.reset();
  std::lock_guard lock(mutex_);
  slot->prev->next = slot->next;
  slot->next->prev = slot->prev;
  // A new generation: a sweep that still holds this slot from before cannot claim it.
  uint64_t generation = (slot->state.load(std::memory_order_relaxed) >> 2) + 1;
  slot->state.store(generation << 2, std::memory_order_release);
  slot->prev = nullptr;
  slot->next = free_;
  free_ = slot;
  --count_;
}

size_t callback_pool::outstanding() const {
  std::lock_guard lock(mutex_);
  return count_;
}


namespace {

const char* kind_name(callback_kind kind) {
  switch (kind) {
    case callback_kind::completion: return "completion";
    case callback_kind::write: return "write";
    case callback_kind::read: return "read";
    case callback_kind::read_piece: return "read piece";
    case callback_kind::migrate: return "migrate_out's read (or map)";
    case callback_kind::exported: return "exported event";
    case callback_kind::gate: return "landing";
    case callback_kind::step: return "landing's 'before'";
  }
  return "?";
}

}  // namespace

void callback_pool::deliver(callback_slot* slot, cl_int status, quiet_sessions* quiet) {
  // The timeline of a command, with the peer and landing lines (FERRY_LOG=trace).
  FERRY_TRACE("timeline", "command %llu: %s ended (%d)", static_cast<unsigned long long>(slot->command),
              kind_name(slot->kind), status);
  // Only queues a record: every OpenCL call it implies (true status,
  // profiling, releases) runs later on the session's writer threads.
  // `core` keeps the session's shared state alive until the slot is back.
  std::shared_ptr<session_core> core = std::move(slot->core);
  cl_event event = std::exchange(slot->event, nullptr);
  bool verify = slot->verify_status || slot->sweepable;
  if (slot->kind == callback_kind::migrate) {
    peer_migration item;
    item.command = slot->command;
    item.transfer = slot->transfer;
    item.content_size.reset(std::exchange(slot->staging, nullptr));
    item.source = std::exchange(slot->mapped, {});
    item.size = slot->size;
    item.offset = slot->offset;
    item.status = status;
    item.event = event;
    item.verify = verify;
    item.notify = slot->notify;
    core->peers.post(slot->peer, std::move(item));
  } else if (slot->kind == callback_kind::exported) {
    peer_status item;
    item.event = slot->transfer;
    item.command = slot->command;
    item.status = status;
    item.native = event;
    item.verify = verify;
    core->peers.post(slot->peer, std::move(item));
  } else if (slot->kind == callback_kind::read_piece) {
    bulk_job job;
    job.command = slot->command;
    job.whole = std::move(slot->piece_of);
    job.piece_offset = slot->offset;
    job.size = slot->size;
    job.status = status;
    job.event = event;
    job.verify = verify;
    core->bulk.push(std::move(job));
  } else if (slot->kind == callback_kind::read) {
    bulk_job job;
    job.command = slot->command;
    job.data.reset(std::exchange(slot->staging, nullptr));
    job.size = slot->size;
    job.status = status;
    job.event = event;
    job.profiling = slot->profiling;
    job.verify = slot->verify_status || slot->sweepable;
    job.content_size.reset(std::exchange(slot->content_size, nullptr));
    job.offset = slot->offset;
    core->bulk.push(std::move(job));
  } else {
    command_record r;
    r.command = slot->command;
    r.event = event;
    r.status = status;
    r.notify = slot->notify;
    r.profiling = slot->profiling;
    r.drain_printf = slot->printf;
    r.verify = slot->verify_status || slot->sweepable;
    r.write = slot->kind == callback_kind::write;
    r.transfer = slot->transfer;
    r.gate = std::exchange(slot->gate, nullptr);
    r.unmap = std::exchange(slot->mapped, {});  // a landing's pinned block
    r.then = std::move(slot->then);
    r.outcome = std::move(slot->outcome);
    if (quiet == nullptr) {
      core->outbox.push(r);
    } else {
      core->outbox.push_quietly(r);
      if (std::find(quiet->begin(), quiet->end(), core) == quiet->end()) quiet->push_back(core);
    }
  }
  core->callbacks.release(slot);
}

void CL_CALLBACK callback_pool::on_native_event(cl_event, cl_int status, void* user) {
  auto* slot = static_cast<callback_slot*>(user);
  // Published by the fetch_or below for a sweep that holds the slot right now.
  slot->missed_status = status;
  uint64_t before = slot->state.fetch_or(claimed_bit | missed_bit, std::memory_order_acq_rel);
  if (before & claimed_bit) return;  // the sweep delivers it with missed_status
  deliver(slot, status);
}

cl_int callback_pool::arm(const native::api& api, callback_slot* slot) {
  if (slot->polled) {
    completion_poller::instance().watch(api, slot);
    return CL_SUCCESS;
  }
  if (slot->sweepable) {
    // Such a platform never calls back for a command that has already failed
    // (or calls with CL_COMPLETE), so look first.
    cl_int status = CL_COMPLETE;
    if (api.clGetEventInfo(slot->event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) ==
            CL_SUCCESS &&
        status < 0) {
      deliver(slot, status);
      return CL_SUCCESS;
    }
  }
  cl_int rc = api.clSetEventCallback(slot->event, CL_COMPLETE, &callback_pool::on_native_event, slot);
  // The slot may be delivered and reused already; only on failure is it still ours.
  if (rc != CL_SUCCESS) deliver(slot, rc);
  return rc;
}

size_t callback_pool::sweep_failures(const native::api& api) {
  follow_ups_.store(follow_up_rounds, std::memory_order_relaxed);
  return sweep_now(api);
}

bool callback_pool::wants_follow_up() const {
  return follow_ups_.load(std::memory_order_relaxed) > 0 && outstanding() > 0;
}

void callback_pool::follow_up(const native::api& api) {
  follow_ups_.fetch_sub(1, std::memory_order_relaxed);
  sweep_now(api);
}

size_t callback_pool::sweep_now(const native::api& api) {
  std::vector<std::pair<callback_slot*, uint64_t>> candidates;
  {
    std::lock_guard lock(mutex_);
    for (callback_slot* s = head_.next; s != &head_; s = s->next) {
      if (s->sweepable) candidates.emplace_back(s, s->state.load(std::memory_order_acquire));
    }
  }
  size_t found = 0;
  for (auto [slot, seen] : candidates) {
    if (seen & (claimed_bit | missed_bit)) continue;
    uint64_t expected = seen;
    // Fails when the slot was delivered (and perhaps reused) since the snapshot.
    if (!slot->state.compare_exchange_strong(expected, seen | claimed_bit, std::memory_order_acq_rel)) continue;
    cl_int status = CL_COMPLETE;
    if (api.clGetEventInfo(slot->event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) !=
        CL_SUCCESS)
      status = CL_COMPLETE + 1;  // unknown: leave it to the callback
    if (status < 0) {
      deliver(slot, status);
      ++found;
      continue;
    }
    expected = seen | claimed_bit;
    if (!slot->state.compare_exchange_strong(expected, seen, std::memory_order_acq_rel)) {
      // Its callback ran while we held the slot and left the status to us.
      deliver(slot, slot->missed_status);
    }
  }
  return found;
}

}  // namespace ferry::server
