// Buffers: creation (with initial contents, over SVM, sub-buffers) and the
// buffer enqueues: writes whose bytes come on the bulk stream, reads whose
// bytes go back on it (content-sized ones included), copies and fills.
//
// Every byte range a client names is checked against the size the daemon
// recorded at creation before a native call sees it.
#include "server/commands/executor.hpp"
#include "server/commands/executor_inline.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "server/transport/pipelined_read.hpp"
#include "server/transport/staging.hpp"

namespace ferry::server {

namespace p = protocol;

namespace {

// A write of at least pieces_from bytes that are still arriving goes to the
// device a piece at a time as its bytes land, so the device copy overlaps
// the network instead of following it (a 1 GiB write spent ~0.15 s copying
// to an H100 after its last byte). Pieces are bulk chunks: each gate opens
// as a chunk ends.
constexpr uint64_t piece_bytes = p::max_bulk_chunk;
constexpr uint64_t pieces_from = 2 * piece_bytes;

// A read of at least read_pieces_from bytes is read a piece at a time, each
// piece sent as soon as it is in staging, so the device copy overlaps the
// stream instead of preceding it (a 1 GiB read was read whole before its
// first byte went out). A piece is one bulk chunk, as for writes: its bytes
// leave in one frame (one writev, or one read window slot), a resumed
// session's frame numbers stay whole chunks, the first bytes leave after
// 8 MiB of device copy (about 1 ms on a GPU), and the cost of a piece (a
// native enqueue and a callback, tens of microseconds) stays below 5% of
// the time its bytes take on the stream (about 2 ms at 4 GB/s).
constexpr uint64_t read_piece_bytes = p::max_bulk_chunk;
constexpr uint64_t read_pieces_from = 2 * read_piece_bytes;

/// Whether [offset, offset + size) is a non-empty range inside `buffer`.
bool inside(const object_entry& buffer, uint64_t offset, uint64_t size) {
  return size != 0 && offset <= buffer.size && size <= buffer.size - offset;
}

}  // namespace

// ---------------------------------------------------------------------------
// Creation

bool executor::on(const p::create_buffer& m) {
  if (duplicate(m.id)) return false;
  object_table::found context = objects_.find<object_kind::context>(m.context);
  // A buffer over an SVM allocation takes no device memory of its own.
  cl_int refused = context ? admit_objects(1, m.svm ? 0 : m.size) : context.error();
  if (refused != CL_SUCCESS) {
    if (m.initial_transfer) core_->transfers.abandon(m.initial_transfer);
    return record_failed(m.id, object_kind::mem, refused);
  }
  // The client resolved the host-pointer flags; host pointers of another
  // process mean nothing here. The host-access flags restrict the
  // application, which the client enforces; the daemon itself must read and
  // write any buffer to migrate it between servers.
  cl_mem_flags flags = m.flags & ~daemon_ignored_flags;
  cl_context native_context = context->as_context();
  cl_int error;
  cl_mem mem = nullptr;
  if (m.svm) {
    // Storage from an SVM allocation: its contents are already here.
    if (m.initial_transfer) {
      core_->transfers.abandon(m.initial_transfer);
      return record_failed(m.id, object_kind::mem, CL_INVALID_HOST_PTR);
    }
    mem = create_buffer_over_svm(native_context, flags, m.size, m.svm, m.svm_offset, error);
  } else if (m.initial_transfer) {
    uint8_t* data = nullptr;
    if (!await_initial_contents(m.initial_transfer, m.size, m.id, data, refused)) return false;
    if (refused != CL_SUCCESS) return record_failed(m.id, object_kind::mem, refused);
    mem = api_.clCreateBuffer(native_context, flags | CL_MEM_COPY_HOST_PTR, static_cast<size_t>(m.size), data,
                              &error);
    core_->transfers.erase(m.initial_transfer);
  } else {
    mem = api_.clCreateBuffer(native_context, flags, static_cast<size_t>(m.size), nullptr, &error);
  }
  if (mem == nullptr) return record_failed(m.id, object_kind::mem, error);
  auto entry = object_entry::native(object_kind::mem, mem, native_context);
  entry.size = m.size;
  entry.device_bytes = m.svm ? 0 : m.size;
  objects_.insert(m.id, entry);
  return true;
}

bool executor::await_initial_contents(uint64_t transfer, uint64_t expected, p::object_id id, uint8_t*& data,
                                      cl_int& refused) {
  uint64_t total = 0;
  // Waits on the bulk stream; session shutdown, or a connection lost for the
  // whole grace period, ends the wait (and the session: the bytes could only
  // come after a resumption, which this thread would have to accept). Work
  // already enqueued starts first.
  flush_touched();
  if (!core_->transfers.wait_complete(transfer, data, total, refused)) {
    stop_requested_ = true;
    return violate("session closing, or its connection lost past the grace period, while memory object " + std::to_string(id) +
                   " waited for its contents");
  }
  if (refused != CL_SUCCESS) return true;  // the contents were dropped; nothing to erase
  if (total != expected) {
    core_->transfers.erase(transfer);
    return violate("initial contents of " + std::to_string(total) + " bytes for memory object " + std::to_string(id) +
                   " of " + std::to_string(expected) + " bytes");
  }
  return true;
}

bool executor::on(const p::create_sub_buffer& m) {
  if (duplicate(m.id)) return false;
  object_table::found parent = objects_.find<object_kind::mem>(m.parent);
  if (!parent) return record_failed(m.id, object_kind::mem, parent.error());
  // CL_INVALID_VALUE if the region specified by buffer_create_info is out of
  // bounds of buffer. Checked here without overflow: PoCL 3.1 sums origin and
  // size, so a region whose end wraps around passed and later commands on the
  // sub-buffer wrote outside the parent (heap corruption in the daemon).
  // Images (which record no byte size) are left to the native call.
  const bool buffer = parent->element_size == 0;
  if (buffer && (m.origin > parent->size || m.size > parent->size - m.origin))
    return record_failed(m.id, object_kind::mem, CL_INVALID_VALUE);
  // A sub-buffer is part of its parent's memory: it counts as an object only.
  if (cl_int refused = admit_objects(); refused != CL_SUCCESS) return record_failed(m.id, object_kind::mem, refused);
  cl_buffer_region region{static_cast<size_t>(m.origin), static_cast<size_t>(m.size)};
  cl_int error;
  cl_mem mem = api_.clCreateSubBuffer(parent->as_mem(), m.flags & ~daemon_ignored_flags, CL_BUFFER_CREATE_TYPE_REGION,
                                      &region, &error);
  if (mem == nullptr) return record_failed(m.id, object_kind::mem, error);
  auto entry = object_entry::native(object_kind::mem, mem, parent->context);
  entry.size = m.size;
  objects_.insert(m.id, entry);
  return true;
}

// ---------------------------------------------------------------------------
// Writes

bool executor::write_in_pieces(const p::command_header& h, const object_entry& queue, cl_mem buffer,
                               uint64_t offset, uint64_t total, uint8_t* data) {
  const size_t count = static_cast<size_t>((total + piece_bytes - 1) / piece_bytes);
  std::vector<transfer_table::piece_gate> gates;
  std::vector<cl_event> writes;
  gates.reserve(count);
  writes.reserve(count);
  std::vector<cl_event> waits(wait_list_);
  waits.push_back(nullptr);  // the piece's gate
  cl_int rc = CL_SUCCESS;
  for (size_t i = 0; i < count && rc == CL_SUCCESS; ++i) {
    const uint64_t at = i * piece_bytes;
    cl_event gate = api_.clCreateUserEvent(queue.context, &rc);
    if (gate == nullptr) break;
    gates.push_back({at + std::min(piece_bytes, total - at), gate});
    waits.back() = gate;
    cl_event written = nullptr;
    rc = api_.clEnqueueWriteBuffer(queue.as_queue(), buffer, CL_FALSE, static_cast<size_t>(offset + at),
                                   static_cast<size_t>(gates.back().bytes - at), data + at,
                                   static_cast<cl_uint>(waits.size()), waits.data(), &written);
    if (rc == CL_SUCCESS) writes.push_back(written);
  }
  // The command's event: every piece written (in- or out-of-order queue).
  cl_event event = nullptr;
  if (rc == CL_SUCCESS)
    rc = api_.clEnqueueMarkerWithWaitList(queue.as_queue(), static_cast<cl_uint>(writes.size()), writes.data(),
                                          &event);
  for (cl_event written : writes) api_.clReleaseEvent(written);
  if (rc != CL_SUCCESS) {
    // Pieces enqueued so far fail behind their gates and never read staging.
    for (auto& gate : gates) {
      api_.clSetUserEventStatus(gate.event, rc);
      api_.clReleaseEvent(gate.event);
    }
    return fail_write(h, h.command, rc);
  }
  core_->transfers.attach_piece_gates(h.command, std::move(gates));
  return finish({.header = h, .queue = queue, .rc = rc, .event = event, .kind = callback_kind::write});
}

bool executor::on(const p::enqueue_write_buffer& m) {
  const std::optional<uint64_t> transfer = bulk_transfer(m.header, m.size);
  const object_entry *queue, *buffer;
  if (step s = prepare_write(m.header, transfer, m.buffer, queue, buffer); s != step::go) return s == step::failed;
  if (!inside(*buffer, m.offset, m.size)) return fail_write(m.header, transfer, CL_INVALID_VALUE);
  cl_command_queue q = queue->as_queue();
  cl_mem b = buffer->as_mem();
  uint8_t* data = nullptr;
  bulk_bytes bytes = bulk_bytes::here;
  if (step s = claim_bulk(m.header, m.size, data, bytes); s != step::go) return s == step::failed;
  // (A profiled write stays one native command: its counters are the client's.)
  if (bytes == bulk_bytes::coming && m.size >= pieces_from && !queue->profiling)
    return write_in_pieces(m.header, *queue, b, m.offset, m.size, data);
  return write_claimed(m.header, *queue, m.size, bytes, data, [&](const uint8_t* staged, cl_event* event) {
    return api_.clEnqueueWriteBuffer(q, b, CL_FALSE, static_cast<size_t>(m.offset), static_cast<size_t>(m.size),
                                     staged, wait_count(), wait_events(), event);
  });
}

bool executor::on(const p::enqueue_write_buffer_rect& m) {
  uint64_t total = 0;
  bool sized = region_bytes(m.region, total);
  const std::optional<uint64_t> transfer = bulk_transfer(m.header, sized ? total : 0);
  const object_entry *queue, *buffer;
  if (step s = prepare_write(m.header, transfer, m.buffer, queue, buffer); s != step::go) return s == step::failed;
  // A valid rectangle never holds more bytes than its buffer.
  if (!sized || total == 0 || total > buffer->size) return fail_write(m.header, transfer, CL_INVALID_VALUE);
  cl_command_queue q = queue->as_queue();
  cl_mem b = buffer->as_mem();
  const native_size3 origin(m.buffer_origin), region(m.region);
  size_t host_origin[3] = {0, 0, 0};
  return write_from_bulk(m.header, *queue, total, [&](const uint8_t* data, cl_event* event) {
    return api_.clEnqueueWriteBufferRect(q, b, CL_FALSE, origin, host_origin, region,
                                         static_cast<size_t>(m.buffer_row_pitch),
                                         static_cast<size_t>(m.buffer_slice_pitch), region[0], region[0] * region[1],
                                         data, wait_count(), wait_events(), event);
  });
}

// ---------------------------------------------------------------------------
// Reads

bool executor::read_in_pieces(const p::command_header& h, const object_entry& queue, cl_mem buffer,
                              uint64_t offset, uint64_t total) {
  cl_int rc;
  uint8_t* staging = read_staging(total, rc);
  if (staging == nullptr) return fail(h, rc);
  auto read = std::make_shared<pipelined_read>();
  read->command = h.command;
  read->data.reset(staging);
  read->size = total;
  read->profiling = queue.profiling;
  const size_t count = static_cast<size_t>((total + read_piece_bytes - 1) / read_piece_bytes);
  read->pieces_left = count + 1;  // every piece, and the seal
  // Each piece is armed as soon as it is enqueued (pipelined_read.hpp says
  // why); the marker below needs the pieces' events, so they are retained.
  std::vector<cl_event> pieces;
  pieces.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t at = i * read_piece_bytes;
    const uint64_t size = std::min(read_piece_bytes, total - at);
    cl_event piece = nullptr;
    rc = api_.clEnqueueReadBuffer(queue.as_queue(), buffer, CL_FALSE, static_cast<size_t>(offset + at),
                                  static_cast<size_t>(size), staging + at, wait_count(), wait_events(), &piece);
    if (rc != CL_SUCCESS) break;
    pieces.push_back(piece);
    api_.clRetainEvent(piece);
    callback_slot* slot = core_->callbacks.acquire();
    slot->core = core_;
    slot->command = h.command;
    slot->event = piece;
    slot->kind = callback_kind::read_piece;
    slot->piece_of = read;
    slot->offset = at;
    slot->size = size;
    slot->profiling = queue.profiling;
    slot->follow(queue.callbacks);
    callback_pool::arm(api_, slot);
  }
  // Nothing enqueued: no job shares the read, and the failure is reported here.
  if (pieces.empty()) return fail(h, rc);
  touch(queue.as_queue());
  // The command's event: every piece read (in- or out-of-order queue).
  cl_event event = nullptr;
  if (rc == CL_SUCCESS)
    rc = api_.clEnqueueMarkerWithWaitList(queue.as_queue(), static_cast<cl_uint>(pieces.size()), pieces.data(),
                                          &event);
  for (cl_event piece : pieces) api_.clReleaseEvent(piece);
  // The seal: the read's completion (or its failure) goes out after its last job.
  bulk_job seal;
  seal.command = h.command;
  seal.whole = read;
  seal.status = rc;
  seal.seal = true;
  seal.never_enqueued = count - pieces.size();
  core_->bulk.push(std::move(seal));
  if (rc == CL_SUCCESS)
    return finish({.header = h, .queue = queue, .rc = rc, .event = event, .kind = callback_kind::read_piece});
  // The failure reaches the client through the seal, after the pieces that were enqueued.
  record_failed_event(h, rc);
  return true;
}

bool executor::on(const p::enqueue_read_buffer& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  object_table::found buffer = objects_.find<object_kind::mem>(m.buffer);
  if (!buffer) return fail(m.header, buffer.error());
  if (!inside(*buffer, m.offset, m.size)) return fail(m.header, CL_INVALID_VALUE);
  // (A content-sized read stays one native command: how much it sends is
  // known only once its size has been read.)
  if (m.size >= read_pieces_from && content_sizes_.find(m.buffer) == content_sizes_.end())
    return read_in_pieces(m.header, *queue, buffer->as_mem(), m.offset, m.size);
  cl_int error;
  auto* staging = read_staging(m.size, error);
  if (staging == nullptr) return fail(m.header, error);
  // A content-sized buffer: its size is read first, behind the wait list, and
  // the data behind the size (the queue may run out of order); only the part
  // below the size is sent.
  std::unique_ptr<uint64_t> content;
  cl_event size_read = nullptr;
  if (auto pairing = content_sizes_.find(m.buffer); pairing != content_sizes_.end()) {
    if (object_table::found sizes = objects_.find<object_kind::mem>(pairing->second)) {
      content = std::make_unique<uint64_t>(0);
      cl_int rc = api_.clEnqueueReadBuffer(queue->as_queue(), sizes->as_mem(), CL_FALSE, 0, sizeof(uint64_t),
                                           content.get(), wait_count(), wait_events(), &size_read);
      if (rc != CL_SUCCESS) {
        release_staging(staging);
        return fail(m.header, rc);
      }
      hold_for_imports(size_read);
    }
  }
  cl_event event = nullptr;
  cl_int rc = api_.clEnqueueReadBuffer(queue->as_queue(), buffer->as_mem(), CL_FALSE, static_cast<size_t>(m.offset),
                                       static_cast<size_t>(m.size), staging, size_read ? 1 : wait_count(),
                                       size_read ? &size_read : wait_events(), &event);
  if (size_read) api_.clReleaseEvent(size_read);
  if (rc != CL_SUCCESS && content) {
    // The size read may still write into `content`.
    api_.clFinish(queue->as_queue());
    content.reset();
  }
  return finish({.header = m.header,
                 .queue = *queue,
                 .rc = rc,
                 .event = event,
                 .kind = callback_kind::read,
                 .staging = staging,
                 .size = m.size,
                 .content_size = std::move(content),
                 .offset = m.offset});
}

bool executor::on(const p::set_content_size& m) {
  // The client checked both buffers; ids unknown here (released meanwhile)
  // only make later reads whole.
  if (m.size_buffer == 0) content_sizes_.erase(m.buffer);
  else content_sizes_[m.buffer] = m.size_buffer;
  return true;
}

bool executor::on(const p::enqueue_read_buffer_rect& m) {
  const object_entry* queue;
  if (step s = prepare(m.header, queue); s != step::go) return s == step::failed;
  object_table::found buffer = objects_.find<object_kind::mem>(m.buffer);
  if (!buffer) return fail(m.header, buffer.error());
  uint64_t total = 0;
  if (!region_bytes(m.region, total) || total == 0 || total > buffer->size) return fail(m.header, CL_INVALID_VALUE);
  const native_size3 origin(m.buffer_origin), region(m.region);
  size_t host_origin[3] = {0, 0, 0};
  return read_to_bulk(m.header, *queue, total, [&](uint8_t* staging, cl_event* event) {
    return api_.clEnqueueReadBufferRect(queue->as_queue(), buffer->as_mem(), CL_FALSE, origin, host_origin, region,
                                        static_cast<size_t>(m.buffer_row_pitch),
                                        static_cast<size_t>(m.buffer_slice_pitch), region[0], region[0] * region[1],
                                        staging, wait_count(), wait_events(), event);
  });
}

// ---------------------------------------------------------------------------
// Copies and fills

bool executor::on(const p::enqueue_copy_buffer& m) {
  return enqueue_on_mems(m.header, {m.source, m.destination}, [&](cl_command_queue queue, auto& mem, cl_event* event) {
    return api_.clEnqueueCopyBuffer(queue, mem[0], mem[1], static_cast<size_t>(m.source_offset),
                                    static_cast<size_t>(m.destination_offset), static_cast<size_t>(m.size),
                                    wait_count(), wait_events(), event);
  });
}

bool executor::on(const p::enqueue_copy_buffer_rect& m) {
  const native_size3 source_origin(m.source_origin), destination_origin(m.destination_origin), region(m.region);
  return enqueue_on_mems(m.header, {m.source, m.destination}, [&](cl_command_queue queue, auto& mem, cl_event* event) {
    return api_.clEnqueueCopyBufferRect(
        queue, mem[0], mem[1], source_origin, destination_origin, region, static_cast<size_t>(m.source_row_pitch),
        static_cast<size_t>(m.source_slice_pitch), static_cast<size_t>(m.destination_row_pitch),
        static_cast<size_t>(m.destination_slice_pitch), wait_count(), wait_events(), event);
  });
}

bool executor::on(const p::enqueue_fill_buffer& m) {
  return enqueue_on_mems(m.header, {m.buffer}, [&](cl_command_queue queue, auto& mem, cl_event* event) {
    return api_.clEnqueueFillBuffer(queue, mem[0], m.pattern.empty() ? nullptr : m.pattern.data(), m.pattern.size(),
                                    static_cast<size_t>(m.offset), static_cast<size_t>(m.size), wait_count(),
                                    wait_events(), event);
  });
}

}  // namespace ferry::server
