// Several servers: peers, cross-server events, buffer migration, link
// counters (docs/protocol.md, "Peer links").
//
// The source of a migration reads the range into pinned memory (or maps it,
// when larger than a pinned block) on a queue of the daemon's own (two per
// context, out of order where the device allows) and hands the bytes to the
// peer link from the read's callback; the control writer gives the block back
// (or unmaps) once they are sent. The destination receives them in the order of the
// client's queue: straight into the mapped buffer when that map is ready as
// they arrive, else into staging and written from there. Every native event
// these commands export or wait for is reported through callback slots, so
// the sweeps that repair platforms without failure callbacks cover them too.
#include "server/commands/executor.hpp"
#include "server/commands/executor_inline.hpp"

#include <sys/un.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <vector>

#include "common/log.hpp"
#include "server/daemon/host_identity.hpp"
#include "server/session/session.hpp"
#include "server/transport/staging.hpp"

namespace ferry::server {

namespace p = protocol;

namespace {

/// Content-size value: the first 8 bytes of the content-size buffer.
constexpr uint64_t content_size_bytes = sizeof(cl_ulong);

// Migrations up to this size whose native work can start at once are waited
// for on the spot (the map at the source, the write at the destination): each
// saves a trip through a native callback thread and the control writer, which
// is most of a small migration's latency. They wait for their own event, not
// with a blocking enqueue: PoCL implements those as clFinish, which would
// also wait for everything else on the queue.
constexpr uint64_t small_migration = 64 * 1024;

}  // namespace

// ---------------------------------------------------------------------------
// The daemon's own queues

executor::own_queue* executor::own_queue_of(cl_context context, cl_int& error) {
  auto it = own_queues_.find(context);
  if (it != own_queues_.end()) return &it->second;
  // The context's entry tells its first device and its platform's callback behaviour.
  const object_entry* entry = nullptr;
  objects_.for_each([&](p::object_id, object_entry& e) {
    if (e.kind == object_kind::context && e.handle == context) entry = &e;
  });
  if (entry == nullptr || entry->device == nullptr) {
    error = CL_INVALID_CONTEXT;  // the client released the context: no new work in it
    return nullptr;
  }
  own_queue q;
  q.callbacks = entry->callbacks;
  q.out_of_order = true;
  auto make = [&](cl_int& rc) {
    const cl_queue_properties out_of_order[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue made = api_.clCreateCommandQueueWithProperties(context, entry->device, out_of_order, &rc);
    if (made == nullptr && rc == CL_INVALID_QUEUE_PROPERTIES) {
      q.out_of_order = false;
      made = api_.clCreateCommandQueueWithProperties(context, entry->device, nullptr, &rc);
    }
    return made;
  };
  q.reads = make(error);
  if (q.reads == nullptr) return nullptr;
  q.writes = make(error);
  if (q.writes == nullptr) {
    api_.clReleaseCommandQueue(q.reads);
    return nullptr;
  }
  // Null when its queue cannot be made: migrations then map, and land through staging.
  q.pinned = native::pinned_pool::create(api_, context, entry->device);
  return &own_queues_.emplace(context, q).first->second;
}

void executor::release_own_queue(cl_context context) {
  auto it = own_queues_.find(context);
  if (it == own_queues_.end()) return;
  // A released queue still runs what it holds.
  for (cl_command_queue queue : {it->second.reads, it->second.writes}) {
    auto touched = std::find(touched_.begin(), touched_.end(), queue);
    if (touched != touched_.end()) touched_.erase(touched);
    api_.clReleaseCommandQueue(queue);
  }
  if (it->second.last_read) api_.clReleaseEvent(it->second.last_read);
  own_queues_.erase(it);
}

void executor::finish_own_queues() {
  for (auto& [context, q] : own_queues_) {
    api_.clFinish(q.reads);
    api_.clFinish(q.writes);
  }
  for (auto& [context, q] : own_queues_) {
    api_.clReleaseCommandQueue(q.reads);
    api_.clReleaseCommandQueue(q.writes);
    if (q.last_read) api_.clReleaseEvent(q.last_read);
  }
  own_queues_.clear();
}

// ---------------------------------------------------------------------------
// Peers and events

bool executor::on(const p::add_peer& m) {
  switch (core_->peers.add(m.peer, peer_target{m.address, m.session, m.key})) {
    case peer_directory::add_result::added:
      FERRY_DEBUG("peer", "session %s: peer %u is %s", core_->label.c_str(), m.peer, m.address.c_str());
      return true;
    case peer_directory::add_result::same: return true;
    case peer_directory::add_result::conflict: break;
  }
  return violate("add_peer names peer " + std::to_string(m.peer) + " again with other values");
}

bool executor::on(const p::get_local_route& m) {
  p::local_route reply{m.request, {}, {}};
  // Switched off, the daemon announces no route, so no peer dials one.
  if (core_->routes.enabled) {
    reply.unix_path = core_->routes.unix_path;
    reply.host = core_->routes.host;
  }
  return answer(reply);
}

bool executor::on(const p::add_peer_route& m) {
  // Only for a peer add_peer named: the route belongs to its address.
  if (!core_->peers.known(m.peer)) return violate("add_peer_route for peer " + std::to_string(m.peer) + ", never added");
  if (m.unix_path.empty()) return true;
  if (m.unix_path.front() != '/' || m.unix_path.size() >= sizeof(sockaddr_un::sun_path))
    return violate("add_peer_route with a socket path that is not absolute or too long for a Unix socket");
  if (!core_->routes.enabled) return true;  // --peer-shared-memory off: TCP only
  if (!same_host(core_->routes.host, m.host)) {
    FERRY_DEBUG("peer", "session %s: peer %u is on another host; its link uses TCP", core_->label.c_str(), m.peer);
    return true;
  }
  core_->peers.prefer_local(m.peer, "unix:" + m.unix_path);
  FERRY_DEBUG("peer", "session %s: peer %u shares this host; its link tries unix:%s first", core_->label.c_str(),
              m.peer, m.unix_path.c_str());
  return true;
}

bool executor::on(const p::export_event& m) {
  // An unknown peer index: the client's mistake, reported like any failure.
  if (!core_->peers.known(m.peer)) {
    core_->outbox.push_failure(m.command, CL_INVALID_VALUE);
    return true;
  }
  object_table::found event = objects_.find<object_kind::event>(m.event);
  if (!event) {
    if (event.error() == CL_INVALID_EVENT) {
      core_->outbox.push_failure(m.command, CL_INVALID_EVENT);
      return true;
    }
    // A command that failed to enqueue: the importer fails with its error.
    core_->peers.start(m.peer);
    peer_status item;
    item.event = m.event;
    item.command = m.command;
    item.status = event.error();
    core_->peers.post(m.peer, std::move(item));
    return true;
  }
  cl_event native = event->as_event();
  api_.clRetainEvent(native);
  callback_slot* slot = core_->callbacks.acquire();
  slot->core = core_;
  slot->command = m.command;
  slot->event = native;
  slot->kind = callback_kind::exported;
  slot->transfer = m.event;
  slot->peer = m.peer;
  slot->follow(event->callbacks);
  core_->peers.start(m.peer);
  callback_pool::arm(api_, slot);
  return true;
}

bool executor::on(const p::import_event& m) {
  if (duplicate(m.event)) return false;
  object_table::found context = objects_.find<object_kind::context>(m.context);
  if (!context) return record_failed(m.event, object_kind::event, context.error());
  // A user event: set_user_event_status may fail it (an undeliverable export).
  cl_int error;
  object_entry entry = new_user_event(*context, error);
  if (entry.handle == nullptr) return record_failed(m.event, object_kind::event, error);
  cl_int early = CL_COMPLETE;
  // The peer's status may have come first; it is set now then.
  entry.status_set = core_->imports.add(m.event, entry.as_event(), entry.context, early);
  objects_.insert(m.event, entry);
  if (entry.status_set && early < 0 && !entry.callbacks.runs_on_failure) sweep_after_failure();
  return true;
}

// ---------------------------------------------------------------------------
// Migration, source side

bool executor::on(const p::migrate_out& m) {
  const p::command_header& h = m.header;
  if (step s = prepare_wait_list(h); s != step::go) return s == step::failed;
  object_table::found buffer = objects_.find<object_kind::mem>(m.buffer);
  if (!buffer) return fail(h, buffer.error());
  if (!core_->peers.known(m.peer)) return fail(h, CL_INVALID_VALUE);
  // CL_INVALID_VALUE if the region being read is out of bounds.
  if (m.offset > buffer->size || m.size > buffer->size - m.offset) return fail(h, CL_INVALID_VALUE);
  const object_entry* content = nullptr;
  if (m.content_size) {
    object_table::found found = objects_.find<object_kind::mem>(m.content_size);
    if (!found) return fail(h, found.error());
    content = &*found;
    if (content->size < content_size_bytes || content->element_size != 0) return fail(h, CL_INVALID_VALUE);
    if (content->context != buffer->context) return fail(h, CL_INVALID_CONTEXT);
  }
  cl_int error;
  own_queue* own = own_queue_of(buffer->context, error);
  if (own == nullptr) return fail(h, error);
  // Nothing to wait for: the map runs at once, and the bytes go to the peer
  // link from here instead of from the map's callback. Not while an earlier
  // map may still wait: a queue that runs in order would hold this one
  // behind it, and the control reader with it (see own_queue).
  const bool now = !content && m.size > 0 && m.size <= small_migration && own->out_of_order && wait_list_complete() &&
                   (own->last_read == nullptr || event_status(api_, own->last_read, CL_QUEUED) == CL_COMPLETE);
  // The content size first (read: 8 bytes), then the range behind it, read
  // into a pinned block (pinned_pool.hpp says why not a map), or mapped when
  // larger than a block, so that the peer link sends the buffer's own bytes
  // without a copy. Only the bytes below the content size are sent.
  uint8_t* size_staging = nullptr;
  if (content) {
    size_staging = acquire_staging(content_size_bytes);
    if (size_staging == nullptr) return fail(h, CL_OUT_OF_HOST_MEMORY);
  }
  cl_event event = nullptr;
  cl_event size_read = nullptr;
  native::mapping mapped;
  cl_int rc = CL_SUCCESS;
  if (content) {
    rc = api_.clEnqueueReadBuffer(own->reads, content->as_mem(), CL_FALSE, 0, content_size_bytes, size_staging,
                                  wait_count(), wait_events(), &size_read);
  }
  // The range waits for the size (the queue may run out of order), which
  // waited for the wait list.
  const cl_uint behind_count = size_read ? 1 : wait_count();
  const cl_event* behind = size_read ? &size_read : wait_events();
  if (rc == CL_SUCCESS && m.size && m.size <= native::pinned_pool::largest_block) {
    if (own->pinned && own->pinned->take(static_cast<size_t>(m.size), mapped)) {
      rc = api_.clEnqueueReadBuffer(own->reads, buffer->as_mem(), CL_FALSE, static_cast<size_t>(m.offset),
                                    static_cast<size_t>(m.size), mapped.pointer, behind_count, behind, &event);
      if (rc != CL_SUCCESS) native::unmap(api_, mapped, 0, nullptr, nullptr);
    }
  }
  if (rc == CL_SUCCESS && m.size && !mapped) {
    rc = native::map(api_, own->reads, buffer->as_mem(), CL_MAP_READ, static_cast<size_t>(m.offset),
                     static_cast<size_t>(m.size), behind_count, behind, &event, mapped);
  } else if (rc == CL_SUCCESS && !m.size) {
    rc = api_.clEnqueueMarkerWithWaitList(own->reads, behind_count, behind, &event);
  }
  if (rc != CL_SUCCESS) {
    // The content-size read may hold its staging already.
    if (size_read) api_.clWaitForEvents(1, &size_read);
    if (size_read) api_.clReleaseEvent(size_read);
    release_staging(size_staging);
    return fail(h, rc);
  }
  hold_for_imports(size_read);
  hold_for_imports(event);
  if (size_read) api_.clReleaseEvent(size_read);
  api_.clRetainEvent(event);
  if (own->last_read) api_.clReleaseEvent(own->last_read);
  own->last_read = event;
  touch(own->reads);
  bool keep = (h.flags & p::keep_event) != 0;
  if (keep) {
    auto entry = object_entry::native(object_kind::event, event, buffer->context);
    entry.callbacks = own->callbacks;
    objects_.insert(h.command, entry);
    api_.clRetainEvent(event);  // the slot's
  }
  callback_slot* slot = core_->callbacks.acquire();
  slot->core = core_;
  slot->command = h.command;
  slot->event = event;
  slot->staging = size_staging;
  slot->mapped = mapped;
  slot->size = m.size;
  slot->offset = m.offset;
  slot->transfer = m.transfer;
  slot->peer = m.peer;
  slot->kind = callback_kind::migrate;
  slot->notify = (h.flags & p::notify) != 0;
  slot->follow(own->callbacks);
  core_->peers.start(m.peer);
  FERRY_TRACE("timeline", "command %llu: migrate_out of %llu bytes to peer %u, %s enqueued%s",
              static_cast<unsigned long long>(h.command), static_cast<unsigned long long>(m.size), m.peer,
              mapped.pool ? "read into a pinned block" : "map", now ? ", waited for here" : "");
  if (now && api_.clWaitForEvents(1, &event) == CL_SUCCESS) callback_pool::deliver(slot, CL_COMPLETE);
  else callback_pool::arm(api_, slot);
  return true;
}

// ---------------------------------------------------------------------------
// Migration, destination side

bool executor::on(const p::migrate_in& m) {
  const p::command_header& h = m.header;
  const object_entry *queue, *buffer;
  if (step s = prepare_write(h, m.transfer, m.buffer, queue, buffer); s != step::go) return s == step::failed;
  // CL_INVALID_VALUE if the region being written is out of bounds.
  if (buffer->element_size != 0 || m.offset > buffer->size || m.size > buffer->size - m.offset)
    return fail_write(h, m.transfer, CL_INVALID_VALUE);
  uint8_t* data = nullptr;
  uint64_t total = 0;
  cl_int status = CL_SUCCESS;
  std::string why;
  switch (core_->transfers.claim_at_most(m.transfer, m.size, data, total, status, why)) {
    case transfer_table::claim_result::complete:
      return write_landed(h, *queue, *buffer, m.offset, m.transfer, data, total);
    case transfer_table::claim_result::pending:
      return defer_write(h, *queue, *buffer, m.offset, m.size, m.transfer);
    case transfer_table::claim_result::aborted:
    case transfer_table::claim_result::refused: return fail(h, status);
    case transfer_table::claim_result::conflict:
      // The bytes come from another server: not this client stream's fault.
      FERRY_WARN("peer", "session %s: migrate_in %llu: %s", core_->label.c_str(),
                 static_cast<unsigned long long>(h.command), why.c_str());
      return fail(h, CL_INVALID_VALUE);
    case transfer_table::claim_result::no_memory: break;
  }
  return fail_write(h, m.transfer, CL_OUT_OF_HOST_MEMORY);
}

bool executor::write_landed(const p::command_header& h, const object_entry& queue, const object_entry& buffer,
                            uint64_t offset, uint64_t transfer, const uint8_t* data, uint64_t total) {
  cl_event event = nullptr;
  cl_int rc = total == 0 ? api_.clEnqueueMarkerWithWaitList(queue.as_queue(), wait_count(), wait_events(), &event)
                         : api_.clEnqueueWriteBuffer(queue.as_queue(), buffer.as_mem(), CL_FALSE,
                                                     static_cast<size_t>(offset), static_cast<size_t>(total), data,
                                                     wait_count(), wait_events(), &event);
  if (rc != CL_SUCCESS) return fail_write(h, transfer, rc);
  // The write's callback frees the staging.
  return finish(
      {.header = h, .queue = queue, .rc = rc, .event = event, .kind = callback_kind::write, .transfer = transfer});
}

namespace {

// Ranges from this size land straight in a pinned block and are written from
// there; smaller ones are written from staging, which costs less than a
// block's round trip through its pool.
constexpr uint64_t direct_landing_from = uint64_t{1} << 20;

// A migrate_in whose bytes were not here when it was enqueued: how many will
// come is unknown, so no native write can be enqueued yet. The command's
// queue gets a marker `before` (behind everything the write must follow) and
// then the command's own marker behind the user event `gate`. The chunks of a
// large range land straight in a pinned block (pinned_pool.hpp), taken when
// the first one comes; where none can be had, they wait in staging. Once all
// have landed, the write from the block (or staging) goes on the daemon's own
// queue, and its completion sets `gate` (on the control writer thread, or at
// once for a small write that could start at once), which lets the command
// and everything after it go on; the block goes back to its pool then. A
// range larger than a block is mapped (write-invalidate) behind `before`
// instead, chunks land in the map once it is ready (the earlier ones in
// staging), and the unmap takes the place of the block's write.
//
// Not a write-invalidate map of the range, as before: NVIDIA's unmap copies
// from pageable memory, so its enqueue returned only after the copy (1.2 ms
// for a 4 MiB halo, on the control writer), and each map cost another 1.2 ms
// to enqueue.
//
// One own queue serves every landing of a context. Where it runs in order
// (NVIDIA's does, though it accepts CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE),
// a command on it that waits for the client's queue blocks every landing
// behind it: the map for a later migrate_in waits for `before`, which waits
// (in the client's queue) for an earlier migrate_in's gate, whose unmap sits
// behind that map. The two-GPU stencil deadlocked so (issue 22). So nothing
// is enqueued on the own queue before `before` has ended: the map and the
// landing's commands wait for it on the host (a callback slot hands this
// object to the control writer), and every command on the own queue waits
// only for commands on it. (A block's map, when its pool grows, goes on the
// pool's own queue.)
/// The daemon's own queue that a deferred write lands through.
struct landing_queue {
  cl_command_queue queue;
  /// The device runs its commands out of order: a write with nothing to
  /// wait for starts at once.
  bool out_of_order;
  native::callback_behaviour callbacks;
  /// Where large ranges land (null: through staging).
  std::shared_ptr<native::pinned_pool> pinned;
};

class deferred_write final : public transfer_table::landing,
                             public deferred_step,
                             public std::enable_shared_from_this<deferred_write> {
 public:
  deferred_write(const native::api& api, std::weak_ptr<session_core> core, p::object_id command,
                 const landing_queue& own, cl_mem buffer, uint64_t offset, cl_event before, cl_event gate)
      : api_(api), core_(std::move(core)), command_(command), own_(own.queue), out_of_order_(own.out_of_order),
        callbacks_(own.callbacks), pinned_(own.pinned), buffer_(buffer), offset_(offset), before_(before),
        gate_(gate) {
    api_.clRetainCommandQueue(own_);
    api_.clRetainMemObject(buffer_);
    api_.clRetainEvent(before_);
    api_.clRetainEvent(gate_);
  }
  ~deferred_write() override {
    // Never landed nor failed (teardown): the block goes back, the map needs its unmap.
    if (zone_) native::unmap(api_, zone_, 1, &mapped_, nullptr);
    if (mapped_) api_.clReleaseEvent(mapped_);
    api_.clReleaseEvent(gate_);
    api_.clReleaseEvent(before_);
    api_.clReleaseMemObject(buffer_);
    api_.clReleaseCommandQueue(own_);
  }
  deferred_write(const deferred_write&) = delete;
  deferred_write& operator=(const deferred_write&) = delete;

  /// The command names `size` bytes; from direct_landing_from on they land
  /// in a pinned block, or a map when larger than one. Where neither can be
  /// had, every byte goes through staging. The landing, and a map, wait for
  /// `before` on the host (see above).
  void start(uint64_t size, session_core& core) {
    size_ = size;
    const cl_int status = event_status(api_, before_, CL_QUEUED);
    if (status <= CL_COMPLETE) {
      std::lock_guard lock(mutex_);
      before_ended_ = true;
      if (status == CL_COMPLETE) map_destination();
      return;
    }
    callback_slot* slot = core.callbacks.acquire();
    slot->core = core_.lock();
    slot->command = command_;
    api_.clRetainEvent(before_);
    slot->event = before_;
    slot->kind = callback_kind::step;
    slot->then = shared_from_this();
    slot->follow(callbacks_);
    callback_pool::arm(api_, slot);
  }

  uint8_t* direct(uint64_t at, uint64_t) override {
    std::lock_guard lock(mutex_);
    // Asked first for the first chunk (the transfer table asks until one is
    // taken): the block is held from the first byte to the write's end.
    if (!zone_ && !block_asked_ && !failed_ && size_ >= direct_landing_from &&
        size_ <= native::pinned_pool::largest_block && pinned_) {
      block_asked_ = true;
      const bool taken = pinned_->take(static_cast<size_t>(size_), zone_);
      FERRY_TRACE("timeline", "command %llu: %s", static_cast<unsigned long long>(command_),
                  taken ? "chunks land in a pinned block" : "no pinned block: chunks land in staging");
    }
    if (!zone_) return nullptr;
    if (!zone_.pool && !map_ready_) {
      if (event_status(api_, mapped_, CL_QUEUED) != CL_COMPLETE) return nullptr;
      map_ready_ = true;
      FERRY_TRACE("timeline", "command %llu: the landing's map is ready, chunks land directly",
                  static_cast<unsigned long long>(command_));
    }
    return zone_.bytes() + at;
  }

  void landed(uint8_t* staging, uint64_t staged, uint64_t total) override {
    {
      std::lock_guard lock(mutex_);
      if (failed_) return;
      if (!before_ended_) {
        // run() lands it once `before` has ended.
        waiting_ = landing_args{staging, staged, total};
        return;
      }
    }
    land(staging, staged, total);
  }

  /// Also the session's teardown (executor::shutdown), before it finishes
  /// the queues: a landing still waiting for `before` must not set its gate
  /// after they and their context are gone (PoCL then touches freed events).
  /// Once only; waits for a landing in progress to end.
  void failed(cl_int status) override {
    std::lock_guard op(op_mutex_);
    if (finished_) return;
    finished_ = true;
    fail_now(status);
  }

  /// `before` has ended (control writer thread).
  void run(cl_int status) override {
    std::optional<landing_args> landing;
    {
      std::lock_guard lock(mutex_);
      before_ended_ = true;
      if (failed_) return;
      landing = std::exchange(waiting_, std::nullopt);
      // The bytes are not all here yet: the rest may land directly.
      if (!landing && status == CL_COMPLETE) map_destination();
    }
    if (landing) land(landing->staging, landing->staged, landing->total);
  }

 private:
  struct landing_args {
    uint8_t* staging;
    uint64_t staged, total;
  };

  /// Maps a range larger than a block behind `before` (mutex_ held).
  void map_destination() {
    if (size_ <= native::pinned_pool::largest_block) return;
    if (native::map(api_, own_, buffer_, CL_MAP_WRITE_INVALIDATE_REGION, static_cast<size_t>(offset_),
                    static_cast<size_t>(size_), 1, &before_, &mapped_, zone_) != CL_SUCCESS)
      mapped_ = nullptr;
    FERRY_TRACE("timeline", "command %llu: the landing's map of %llu bytes %s", static_cast<unsigned long long>(command_),
                static_cast<unsigned long long>(size_), mapped_ ? "enqueued" : "refused: staging only");
  }

  /// Every byte is in and `before` has ended: the writes from the block (or
  /// the unmap) and from staging go on the own queue, and the gate opens once
  /// they are done.
  void land(uint8_t* staging, uint64_t staged, uint64_t total) {
    std::lock_guard op(op_mutex_);
    if (finished_) return;
    finished_ = true;
    std::shared_ptr<session_core> live = core_.lock();
    if (!live) return fail_now(CL_DEVICE_NOT_AVAILABLE);
    FERRY_TRACE("timeline", "command %llu: %llu bytes landed, %llu of them through staging; writing",
                static_cast<unsigned long long>(command_), static_cast<unsigned long long>(total),
                static_cast<unsigned long long>(staged));
    // A platform may never finish a command behind an event that failed already.
    const cl_int status = event_status(api_, before_, CL_COMPLETE);
    if (status < 0) return fail_now(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    // The staged bytes are the first `staged` (transfer_table::landing), the
    // rest are in the block or the map; each part goes to the buffer from
    // where it is, one behind the other so that one event ends them all. The
    // staged write follows an unmap (a write-invalidate unmap may have
    // overwritten its range).
    native::mapping block;
    cl_event last = nullptr;
    cl_int rc = CL_SUCCESS;
    {
      std::lock_guard lock(mutex_);
      if (zone_.pool) block = std::exchange(zone_, {});
      else if (zone_) rc = native::unmap(api_, zone_, 1, &mapped_, &last);
    }
    auto write = [&](uint64_t from, uint64_t bytes, const uint8_t* data) {
      if (rc != CL_SUCCESS || bytes == 0) return;
      cl_event after = last ? last : before_;
      cl_event written = nullptr;
      rc = api_.clEnqueueWriteBuffer(own_, buffer_, CL_FALSE, static_cast<size_t>(offset_ + from),
                                     static_cast<size_t>(bytes), data, 1, &after, &written);
      if (last) api_.clReleaseEvent(last);
      last = rc == CL_SUCCESS ? written : nullptr;
    };
    write(0, staged, staging);
    if (block) write(staged, total - staged, block.bytes() + staged);
    if (rc == CL_SUCCESS && last == nullptr) {
      // Zero bytes: nothing to write.
      native::unmap(api_, block, 0, nullptr, nullptr);
      api_.clSetUserEventStatus(gate_, CL_COMPLETE);
      return;
    }
    if (rc != CL_SUCCESS) {
      // (The block's write comes last: when anything failed, it was not enqueued.)
      native::unmap(api_, block, 0, nullptr, nullptr);
      return fail_gate(live.get(), rc);
    }
    if (status == CL_COMPLETE && out_of_order_ && total <= small_migration &&
        api_.clWaitForEvents(1, &last) == CL_SUCCESS) {
      // Nothing to wait for: the write ran at once, and the gate opens from
      // here rather than through a callback and the control writer.
      api_.clReleaseEvent(last);
      native::unmap(api_, block, 0, nullptr, nullptr);
      api_.clSetUserEventStatus(gate_, CL_COMPLETE);
      return;
    }
    api_.clFlush(own_);
    callback_slot* slot = live->callbacks.acquire();
    slot->core = live;
    slot->command = command_;
    slot->event = last;
    slot->kind = callback_kind::gate;
    api_.clRetainEvent(gate_);
    slot->gate = gate_;
    slot->mapped = std::move(block);  // back to its pool once the write has ended
    slot->follow(callbacks_);
    callback_pool::arm(api_, slot);
  }

  /// Fails the gate with `status` (op_mutex_ held, finished_ just set).
  void fail_now(cl_int status) {
    {
      std::lock_guard lock(mutex_);
      failed_ = true;
      waiting_.reset();
      if (zone_) native::unmap(api_, zone_, 1, &mapped_, nullptr);
    }
    std::shared_ptr<session_core> live = core_.lock();
    fail_gate(live.get(), status);
  }

  void fail_gate(session_core* live, cl_int status) {
    api_.clSetUserEventStatus(gate_, status);
    if (live) live->callbacks.sweep_failures(api_);
  }

  const native::api& api_;
  std::weak_ptr<session_core> core_;  // the transfer table holds this: no cycle
  p::object_id command_;              // the migrate_in, for the trace log
  cl_command_queue own_;
  bool out_of_order_;
  native::callback_behaviour callbacks_;
  std::shared_ptr<native::pinned_pool> pinned_;
  cl_mem buffer_;
  uint64_t offset_;
  cl_event before_;
  cl_event gate_;
  uint64_t size_ = 0;
  // Makes landing and failing one at a time and once (finished_): the
  // gate is set, or handed to a callback slot, by exactly one of them.
  std::mutex op_mutex_;
  bool finished_ = false;
  // Guards what the reader thread (direct, landed), the control writer
  // (run) and a failure may touch at once. A leaf: nothing is called under
  // it that takes another lock of the session.
  std::mutex mutex_;
  native::mapping zone_;       // a pinned block or a map the chunks land in (empty: staging only)
  bool block_asked_ = false;   // the pool was asked for the block
  cl_event mapped_ = nullptr;  // a map's event
  bool map_ready_ = false;     // the map has completed
  bool before_ended_ = false;  // `before` has ended
  bool failed_ = false;
  std::optional<landing_args> waiting_;  // landed before `before` ended
};

}  // namespace

bool executor::defer_write(const p::command_header& h, const object_entry& queue, const object_entry& buffer,
                           uint64_t offset, uint64_t size, uint64_t transfer) {
  cl_int error = CL_SUCCESS;
  own_queue* own = own_queue_of(queue.context, error);
  if (own == nullptr) return fail_write(h, transfer, error);
  cl_event gate = api_.clCreateUserEvent(queue.context, &error);
  if (gate == nullptr) return fail_write(h, transfer, error);
  cl_event before = nullptr, event = nullptr;
  cl_int rc = api_.clEnqueueMarkerWithWaitList(queue.as_queue(), wait_count(), wait_events(), &before);
  if (rc == CL_SUCCESS) {
    rc = api_.clEnqueueMarkerWithWaitList(queue.as_queue(), 1, &gate, &event);
    if (rc != CL_SUCCESS) api_.clReleaseEvent(before);
  }
  if (rc != CL_SUCCESS) {
    api_.clSetUserEventStatus(gate, rc);
    api_.clReleaseEvent(gate);
    return fail_write(h, transfer, rc);
  }
  hold_for_imports(before);
  const landing_queue landing{own->writes, own->out_of_order, own->callbacks, own->pinned};
  auto deferred = std::make_shared<deferred_write>(api_, core_, h.command, landing, buffer.as_mem(), offset, before, gate);
  // Known until it has landed or failed, so that the teardown can fail it (deferred_write::failed).
  std::erase_if(deferred_writes_, [](const std::weak_ptr<transfer_table::landing>& w) { return w.expired(); });
  deferred_writes_.push_back(deferred);
  api_.clReleaseEvent(before);
  api_.clReleaseEvent(gate);
  FERRY_TRACE("timeline", "command %llu: migrate_in of %llu bytes waits for them (transfer %llu)",
              static_cast<unsigned long long>(h.command), static_cast<unsigned long long>(size),
              static_cast<unsigned long long>(transfer));
  deferred->start(size, *core_);
  touch(own->writes);
  uint8_t* data = nullptr;
  uint64_t total = 0;
  // Every byte may have come in the meantime.
  if (!core_->transfers.attach_landing(transfer, deferred, data, total)) deferred->landed(data, total, total);
  // The command's marker frees the staging once the write behind `gate` is done.
  return finish({.header = h, .queue = queue, .event = event, .kind = callback_kind::write, .transfer = transfer});
}

bool executor::on(const p::abort_transfer& m) {
  cl_int status = m.status;
  if (status >= 0) {
    FERRY_WARN("peer", "session %s: abort_transfer %llu with status %d, which is no error; failing with %d",
               core_->label.c_str(), static_cast<unsigned long long>(m.transfer), status,
               CL_DEVICE_NOT_AVAILABLE);
    status = CL_DEVICE_NOT_AVAILABLE;
  }
  if (core_->transfers.fail(m.transfer, status)) sweep_after_failure();
  return true;
}

bool executor::on(const p::get_link_counters& m) {
  p::link_counters reply;
  reply.request = m.request;
  if (core_->daemon) reply.links = core_->daemon->link_counters();
  else if (core_->links) reply.links = core_->links->snapshot();
  return answer(reply);
}

bool executor::on(const p::get_workers& m) {
  p::workers reply;
  reply.request = m.request;
  // A daemon without worker processes (the unit tests' in-process server) has none to list.
  if (core_->daemon) reply.entries = core_->daemon->workers();
  return answer(reply);
}

}  // namespace ferry::server
