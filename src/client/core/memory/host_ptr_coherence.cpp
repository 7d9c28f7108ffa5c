#include "client/core/memory/host_ptr_coherence.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "client/core/command.hpp"
#include "client/core/event_state.hpp"
#include "client/core/servers/platform.hpp"
#include "client/core/servers/server.hpp"
#include "common/log.hpp"

namespace ferry::client {

namespace {

// Whether a program written for `c`'s devices may expect a CL_MEM_USE_HOST_PTR
// buffer to share the host's memory without maps: natively true of CPU
// devices and of devices that report unified host memory.
bool shares_host_memory(const context& c) {
  for (const device* d : c.devices) {
    if (d->type & CL_DEVICE_TYPE_CPU) return true;
    if (device_info_as<cl_bool>(*d, CL_DEVICE_HOST_UNIFIED_MEMORY)) return true;
  }
  return false;
}

// Enqueues on `q` the read that brings the server's bytes of `root` back into
// `state.staging`; called with state.mutex held. Returns the read's event
// (the state holds it) and its place in the queue, or nullptr when the read
// could not be enqueued.
event* enqueue_pull(memory* root, host_coherence& state, queue* q, uint64_t& sequence) {
  const size_t size = state.mirror.size();
  // The bytes of a previous read may still be held by its event.
  if (!state.staging || state.staging.use_count() > 1) state.staging = std::make_shared<std::vector<uint8_t>>(size);
  command read(q, CL_COMMAND_READ_BUFFER, 0, nullptr, nullptr, blocking::no, data_parts::status_and_data);
  read.without_host_sync();
  if (read.uses(root, access::read) != CL_SUCCESS) {
    read.abandon(CL_SUCCESS);
    return nullptr;
  }
  event* e = read.tracked();
  e->holds = state.staging;
  read.link().expect_data(read.header.command, state.staging->data(), size, e);
  retain_internal(e);
  if (state.pull) release_internal(state.pull);
  if (state.pull_follows) release_internal(state.pull_follows);
  state.pull = e;
  state.pull_follows = state.writer;
  if (state.pull_follows) retain_internal(state.pull_follows);
  state.pull_epoch = state.push_epoch;
  sequence = read.sequence();
  read.submit(protocol::enqueue_read_buffer{read.header, root->id, 0, size});
  return e;
}

// Applies a finished read (state.mutex held): the pages the server changed
// go to the host memory, unless a push since made the read stale.
void settle(host_coherence& state) {
  if (state.writer && state.writer->status.load() < CL_COMPLETE && state.pull_follows != state.writer) {
    // The writer failed: it changed nothing anybody may rely on.
    release_internal(state.writer);
    state.writer = nullptr;
  }
  if (state.pull == nullptr || state.pull->status.load() > CL_COMPLETE) return;
  if (state.pull->status.load() == CL_COMPLETE) {
    if (state.pull_epoch == state.push_epoch) {
      size_t written = state.mirror.merge_server_bytes(*state.staging);
      FERRY_TRACE("coherence", "%zu bytes of %zu came back into host memory", written, state.mirror.size());
    }
    if (state.pull_follows == state.writer && state.writer) {
      release_internal(state.writer);
      state.writer = nullptr;
    }
  }
  release_internal(state.pull);
  state.pull = nullptr;
  if (state.pull_follows) release_internal(state.pull_follows);
  state.pull_follows = nullptr;
}

// Whether `state` has server changes that no read has gone for yet.
bool needs_pull(const host_coherence& state) {
  return state.active && state.pull_allowed && state.writer != nullptr && state.pull_follows != state.writer;
}

}  // namespace

host_coherence::~host_coherence() {
  if (writer) release_internal(writer);
  if (pull) release_internal(pull);
  if (pull_follows) release_internal(pull_follows);
}

void start_coherence(memory* m) {
  if (configured_host_ptr_mode() == host_ptr_mode::cached) return;
  if (!(m->flags & CL_MEM_USE_HOST_PTR) || m->host_ptr == nullptr || m->parent || m->svm || m->is_image()) return;
  // No host access: nothing of the host memory can be relied on.
  if (m->flags & CL_MEM_HOST_NO_ACCESS) return;
  context* c = m->context;
  if (!shares_host_memory(*c)) return;
  std::shared_ptr<host_coherence> state;
  try {
    state = std::make_shared<host_coherence>(m->host_ptr, m->size);
  } catch (const std::bad_alloc&) {
    FERRY_WARN("coherence", "no memory for the shadow of a %zu-byte CL_MEM_USE_HOST_PTR buffer: it gets plain "
               "caching (map it to see its contents)", m->size);
    return;
  }
  state->push_allowed = !(m->flags & CL_MEM_HOST_READ_ONLY);
  state->pull_allowed = !(m->flags & CL_MEM_HOST_WRITE_ONLY);
  std::lock_guard lock(c->coherent_mutex);
  if (c->follows_spec) return;
  m->coherence = std::move(state);
  c->coherent.push_back(m);
  c->coherent_count.store(c->coherent.size());
}

namespace {
void forget(memory* m) {
  context* c = m->context;
  std::lock_guard lock(c->coherent_mutex);
  std::erase(c->coherent, m);
  c->coherent_count.store(c->coherent.size());
}
}  // namespace

void stop_coherence(memory* m) {
  if (!m->coherence) return;
  forget(m);
  m->coherence.reset();
}

void end_coherence(memory* m) {
  if (!(m->flags & CL_MEM_USE_HOST_PTR) || configured_host_ptr_mode() != host_ptr_mode::automatic) return;
  context* c = m->context;
  std::lock_guard list(c->coherent_mutex);
  if (c->follows_spec) return;
  c->follows_spec = true;
  for (memory* other : c->coherent) {
    std::lock_guard lock(other->coherence->mutex);
    other->coherence->active = false;
  }
  FERRY_DEBUG("coherence",
              "buffer %llu is mapped, read or written explicitly: the program follows the specification, so the "
              "%zu CL_MEM_USE_HOST_PTR buffers of its context get plain caching from now on",
              static_cast<unsigned long long>(root_of(m)->id), c->coherent.size());
  c->coherent.clear();
  c->coherent_count.store(0);
}

bool is_coherent(memory* m) {
  memory* root = root_of(m);
  if (!root->coherence) return false;
  std::lock_guard lock(root->coherence->mutex);
  return root->coherence->active;
}

cl_int push_host_changes(queue* q, memory* m, std::vector<protocol::object_id>& waits) {
  memory* root = root_of(m);
  host_coherence* state = root->coherence.get();
  if (state == nullptr) return CL_SUCCESS;
  std::vector<host_mirror::range> changes;
  std::vector<std::vector<uint8_t>> bytes;
  {
    std::lock_guard lock(state->mutex);
    if (!state->active || !state->push_allowed) return CL_SUCCESS;
    changes = state->mirror.take_host_changes();
    if (changes.empty()) return CL_SUCCESS;
    ++state->push_epoch;
    // Sent from the shadow, which now holds exactly what the server will.
    for (const auto& r : changes)
      bytes.emplace_back(state->mirror.shadow() + r.offset, state->mirror.shadow() + r.offset + r.size);
  }
  for (size_t i = 0; i < changes.size(); ++i) {
    command write(q, CL_COMMAND_WRITE_BUFFER, 0, nullptr, nullptr, blocking::no);
    write.without_host_sync();
    // The server keeps the write's event for the command's wait list (an
    // out-of-order queue would not order them otherwise).
    write.header.flags |= protocol::keep_event;
    if (cl_int code = write.uses(root, access_for_write(root, changes[i].offset, changes[i].size));
        code != CL_SUCCESS)
      return write.abandon(code);
    write.send(protocol::enqueue_write_buffer{write.header, root->id, changes[i].offset, changes[i].size});
    write.link().send_data(write.header.command, std::move(bytes[i]));
    write.complete();
    waits.push_back(write.header.command);
  }
  FERRY_TRACE("coherence", "buffer %llu: %zu changed ranges of host memory sent",
              static_cast<unsigned long long>(root->id), changes.size());
  return CL_SUCCESS;
}

void note_coherent_writer(memory* root, event* writer, uint64_t sequence) {
  host_coherence* state = root->coherence.get();
  if (state == nullptr || writer == nullptr) return;
  std::lock_guard lock(state->mutex);
  if (!state->active) return;
  retain_internal(writer);
  if (state->writer) release_internal(state->writer);
  state->writer = writer;
  state->writer_sequence = sequence;
}

void pull_before_finish(queue* q) {
  context* c = q->context;
  if (c->coherent_count.load() == 0) return;
  std::lock_guard list(c->coherent_mutex);
  for (memory* m : c->coherent) {
    host_coherence& state = *m->coherence;
    std::lock_guard lock(state.mutex);
    if (!needs_pull(state) || state.writer->queue != q) continue;
    uint64_t sequence = 0;
    enqueue_pull(m, state, q, sequence);
  }
}

void settle_coherent_buffers(context* c) {
  if (c->coherent_count.load() == 0) return;
  // Reads that may be waited for safely: each directly behind its completed
  // writer, with nothing else of the queue ahead of it.
  std::vector<event*> waits;
  {
    std::lock_guard list(c->coherent_mutex);
    for (memory* m : c->coherent) {
      host_coherence& state = *m->coherence;
      std::lock_guard lock(state.mutex);
      settle(state);
      if (!needs_pull(state) || state.writer->status.load() > CL_COMPLETE) continue;
      queue* q = state.writer->queue;
      // The read waits for everything ahead of it in the queue. A later
      // command than the writer that has not ended might wait for something
      // only the program can give (a user event), and the read with it: such
      // a read is left for the program's next clFinish of that queue.
      const uint64_t before = q->submitted.load(std::memory_order_acquire);
      const bool nothing_pending =
          before == state.writer_sequence || q->complete_through.load(std::memory_order_acquire) >= before;
      if (!nothing_pending) continue;
      uint64_t sequence = 0;
      event* e = enqueue_pull(m, state, q, sequence);
      if (e && sequence == before + 1) {
        retain_internal(e);
        waits.push_back(e);
      }
    }
  }
  if (waits.empty()) return;
  for (server* s : c->servers) s->link->flush();
  std::vector<cl_event> list(waits.begin(), waits.end());
  wait_for(list.data(), static_cast<cl_uint>(list.size()));
  for (event* e : waits) release_internal(e);
  std::lock_guard list_lock(c->coherent_mutex);
  for (memory* m : c->coherent) {
    std::lock_guard lock(m->coherence->mutex);
    settle(*m->coherence);
  }
}

}  // namespace ferry::client
