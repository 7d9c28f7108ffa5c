// Runs a session's control-stream messages on the native devices.
//
// One executor per session, driven by the session's control reader thread:
// dispatch_frame decodes each frame and calls the matching `on`, which calls
// the native API right here, with native wait lists, and never blocks a queue
// waiting for the client. Completions and replies go to the session's
// control_outbox; the writer thread sends them.
//
// `on` returns false only for a protocol violation (the connection is then
// closed; violation() says why) or when the session must stop
// (stop_requested()). A command that names an unknown object, or that the
// native API refuses, is not a violation: it fails with the matching CL error
// in its completion (or in the reply of a request).
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda/server/cuda_session.hpp"
#include "protocol/messages.hpp"
#include "server/native/catalog.hpp"
#include "server/native/pinned_pool.hpp"
#include "server/session/object_table.hpp"
#include "server/session/queued_commands.hpp"
#include "server/session/session_core.hpp"
#include "server/transport/callback_pool.hpp"

namespace ferry::server {

class file_copier;
class file_start;

class executor {
 public:
  executor(std::shared_ptr<session_core> core, const native::device_catalog& catalog);
  ~executor();
  executor(const executor&) = delete;
  executor& operator=(const executor&) = delete;

  bool on(const protocol::ping& m);
  bool on(const protocol::get_server_info& m);
  bool on(const protocol::get_object_counts& m);
  bool on(const protocol::goodbye& m);
  bool on(const protocol::ack& m);
  bool on(const protocol::lane_ack& m);
  bool on(const protocol::create_context& m);
  bool on(const protocol::create_queue& m);
  bool on(const protocol::create_buffer& m);
  bool on(const protocol::create_sub_buffer& m);
  bool on(const protocol::create_user_event& m);
  bool on(const protocol::set_user_event_status& m);
  bool on(const protocol::release_object& m);
  bool on(const protocol::create_program_with_source& m);
  bool on(const protocol::create_program_with_binary& m);
  bool on(const protocol::create_program_with_il& m);
  bool on(const protocol::set_program_specialization_constant& m);
  bool on(const protocol::build_program& m);
  bool on(const protocol::compile_program& m);
  bool on(const protocol::build_program_v4& m);
  bool on(const protocol::compile_program_v4& m);
  bool on(const protocol::link_program& m);
  bool on(const protocol::create_kernel& m);
  bool on(const protocol::create_kernels_in_program& m);
  bool on(const protocol::check_kernel_arg& m);
  bool on(const protocol::query& m);
  bool on(const protocol::enqueue_ndrange& m);
  bool on(const protocol::enqueue_write_buffer& m);
  bool on(const protocol::enqueue_read_buffer& m);
  bool on(const protocol::enqueue_write_buffer_rect& m);
  bool on(const protocol::enqueue_read_buffer_rect& m);
  bool on(const protocol::enqueue_copy_buffer& m);
  bool on(const protocol::enqueue_copy_buffer_rect& m);
  bool on(const protocol::enqueue_fill_buffer& m);
  bool on(const protocol::enqueue_marker& m);
  bool on(const protocol::enqueue_barrier& m);
  bool on(const protocol::flush_queue& m);
  // Images and samplers (executor_images.cpp).
  bool on(const protocol::create_image& m);
  bool on(const protocol::create_sampler& m);
  bool on(const protocol::enqueue_write_image& m);
  bool on(const protocol::enqueue_read_image& m);
  bool on(const protocol::enqueue_copy_image& m);
  bool on(const protocol::enqueue_fill_image& m);
  bool on(const protocol::enqueue_copy_image_to_buffer& m);
  bool on(const protocol::enqueue_copy_buffer_to_image& m);
  // Coarse-grained SVM (executor_svm.cpp).
  bool on(const protocol::svm_alloc& m);
  bool on(const protocol::enqueue_svm_read& m);
  bool on(const protocol::enqueue_svm_write& m);
  bool on(const protocol::enqueue_svm_copy& m);
  bool on(const protocol::enqueue_svm_fill& m);
  bool on(const protocol::set_kernel_exec_info& m);
  bool on(const protocol::set_content_size& m);
  // Several servers (executor_peers.cpp).
  bool on(const protocol::add_peer& m);
  bool on(const protocol::export_event& m);
  bool on(const protocol::import_event& m);
  bool on(const protocol::migrate_out& m);
  bool on(const protocol::migrate_in& m);
  bool on(const protocol::abort_transfer& m);
  bool on(const protocol::get_link_counters& m);
  bool on(const protocol::get_workers& m);
  bool on(const protocol::get_local_route& m);
  bool on(const protocol::add_peer_route& m);
  // Files below the server's --file-root (executor_files.cpp).
  bool on(const protocol::file_to_buffer& m);
  bool on(const protocol::buffer_to_file& m);
  // CUDA remoting (src/cuda/server/cuda_session.*): the session's CUDA
  // backend, made when the client first asks for it.
  template <class Message>
    requires requires(cuda::session_cuda& s, const Message& m) { s.on(m); }
  bool on(const Message& m) {
    if (!cuda_)
      cuda_ = std::make_unique<cuda::session_cuda>(core_->outbox, core_->transfers, core_->bulk, core_->quota,
                                                    core_->label);
    return cuda_->on(m) || violate(cuda_->violation());
  }

  /// clFlush on every queue that got commands since the last call. The
  /// control reader calls it when no whole frame is left, before it blocks in
  /// recv (some drivers start no work before a flush).
  void flush_touched();

  /// The client said goodbye, or the session is closing under a blocked call.
  bool stop_requested() const { return stop_requested_; }
  /// Why the last `on` returned false.
  const std::string& violation() const { return violation_; }
  size_t object_count() const { return objects_.size(); }

  /// Ends the session's native work: fails writes still waiting for bytes and
  /// user events the client never set, finishes every queue, reports what a
  /// platform without failure callbacks left unreported, releases every
  /// object. Call after the bulk reader has stopped; staging of writes is
  /// freed by the writer as their callbacks come in. Idempotent.
  void shutdown();

 private:
  enum class step { go, failed, violation };

  // Shared bookkeeping (executor.cpp).
  bool duplicate(protocol::object_id id);
  bool violate(std::string why);
  bool record_failed(protocol::object_id id, object_kind kind, cl_int error);
  /// The session's quotas for `count` new objects allocating `device_bytes`
  /// of device memory: CL_SUCCESS, CL_OUT_OF_RESOURCES (objects) or
  /// CL_MEM_OBJECT_ALLOCATION_FAILURE (memory).
  cl_int admit_objects(size_t count = 1, uint64_t device_bytes = 0);
  /// The live `Kind` object `id` names that a new object is made from, once
  /// the session's quota admits one more object; otherwise the error the
  /// creation fails with (that of the lookup, then the quota's).
  template <object_kind Kind>
  object_table::found find_for_creation(protocol::object_id id);
  bool map_devices(const std::vector<uint32_t>& indices, std::vector<cl_device_id>& out);
  /// Sends the reply of a request; true (the session goes on).
  template <class Reply>
  bool answer(const Reply& reply);

  // Enqueue plumbing (executor_plumbing.cpp).
  /// How a command's native enqueue went, for finish(): what its completion
  /// reports and what its callback hands on or frees.
  struct enqueue_outcome {
    const protocol::command_header& header;
    const object_entry& queue;
    cl_int rc = CL_SUCCESS;
    /// The command's native event; null where none was asked for.
    cl_event event = nullptr;
    callback_kind kind = callback_kind::completion;
    /// A kernel that may print: its output goes to the client ahead of the completion.
    bool printf = false;
    /// read: the staging the bytes land in, and how many (the callback sends and frees them).
    uint8_t* staging = nullptr;
    uint64_t size = 0;
    /// write: the transfer whose staging the callback frees (0: the command's own).
    uint64_t transfer = 0;
    /// read of a content-sized buffer: the size buffer's value, read first
    /// (only the bytes below it are sent), and the read's buffer offset.
    std::unique_ptr<uint64_t> content_size = nullptr;
    uint64_t offset = 0;
    /// A file command's outcome, reported in place of the event's success
    /// when negative; the completion is then always reported.
    std::shared_ptr<const std::atomic<cl_int>> outcome = nullptr;
  };
  /// The checks of a command's header that need no object: a kept event's id
  /// is new, the wait list within its limit.
  step check_header(const protocol::command_header& h);
  /// check_header, the queue, the session's quotas, then map_wait_list.
  step prepare(const protocol::command_header& h, const object_entry*& queue);
  /// prepare() for a command without a queue of the client's (migrate_out):
  /// the id and wait list checks, wait_list_ filled.
  step prepare_wait_list(const protocol::command_header& h);
  step map_wait_list(const protocol::command_header& h);
  bool fail(const protocol::command_header& h, cl_int error);
  /// fail() without the report: a command the client holds the event of is
  /// recorded as failed (waits on it fail), its failure reported elsewhere.
  void record_failed_event(const protocol::command_header& h, cl_int error);
  /// prepare() for a command whose bytes come on the bulk stream as
  /// `transfer` (none: no bytes come): when the command fails, they are dropped.
  step prepare_write(const protocol::command_header& h, std::optional<uint64_t> transfer,
                     const object_entry*& queue);
  /// prepare_write(), then the live memory object `target` the bytes go to
  /// (otherwise the command fails with the lookup's error).
  step prepare_write(const protocol::command_header& h, std::optional<uint64_t> transfer, protocol::object_id target,
                     const object_entry*& queue, const object_entry*& mem);
  /// fail() for such a command: its bytes are dropped.
  bool fail_write(const protocol::command_header& h, std::optional<uint64_t> transfer, cl_int error);
  /// Reports the command: its failure, or its event (kept for the client,
  /// followed by a callback, or dropped).
  bool finish(enqueue_outcome done);
  /// Whether the command must bring its native event: the client observes
  /// it, imports of its wait list need it held, or it is the queue's next
  /// checkpoint for the queued-commands quota (queued_commands).
  bool wants_event(const protocol::command_header& h, const object_entry& queue) const;
  cl_uint wait_count() const { return static_cast<cl_uint>(wait_list_.size()); }
  const cl_event* wait_events() const { return wait_list_.empty() ? nullptr : wait_list_.data(); }
  /// `queue` got commands: flush it before the reader blocks (flush_touched).
  void touch(cl_command_queue queue);
  /// `queue` was flushed or is about to go: no flush for it any more.
  void untouch(cl_command_queue queue);
  /// Keeps `event` (a command of the current wait list) alive until the
  /// imports it waits for are settled (see event_imports::hold).
  void hold_for_imports(cl_event event);
  /// Whether every event of the current wait list has completed.
  bool wait_list_complete() const;
  /// A platform that runs no callback for commands that a failed event ends
  /// needs a sweep after one fails (see callback_pool).
  void sweep_after_failure();
  /// Runs one native enqueue that reports through the command's event (a
  /// native event is requested only when wants_event()).
  template <class Native>
  bool enqueue_native(const protocol::command_header& h, const object_entry& queue, Native&& native);
  /// prepare(), the live memory objects `mems` names (the command fails with
  /// the first one's error otherwise), then enqueue_native: `native(queue,
  /// handles, event)` with the handles of `mems` in their order.
  template <size_t N, class Native>
  bool enqueue_on_mems(const protocol::command_header& h, const protocol::object_id (&mems)[N], Native&& native);
  /// Staging for a read of `size` bytes, charged to the session's bytes in
  /// flight; nullptr with `error` (CL_OUT_OF_RESOURCES over the quota,
  /// CL_OUT_OF_HOST_MEMORY) otherwise.
  uint8_t* read_staging(uint64_t size, cl_int& error);
  /// A read of `size` bytes: `read(staging, event)` enqueues the native
  /// read into new staging, which the read's callback sends to the client.
  template <class Read>
  bool read_to_bulk(const protocol::command_header& h, const object_entry& queue, uint64_t size, Read&& read);
  /// Where the bytes of a bulk write are: all in staging, or still arriving.
  enum class bulk_bytes { here, coming };
  /// Admits the bytes of transfer h.command against the quota and claims
  /// them; `data` is their staging and `bytes` says where they are. Anything
  /// but step::go ended the command.
  step claim_bulk(const protocol::command_header& h, uint64_t total, uint8_t*& data, bulk_bytes& bytes);
  /// claim_bulk, then write_claimed.
  template <class Enqueue>
  bool write_from_bulk(const protocol::command_header& h, const object_entry& queue, uint64_t total,
                       Enqueue&& enqueue);
  /// Enqueues the write `enqueue` makes from `data`, behind a gate that
  /// opens when the last of the `total` bytes lands if `bytes` are still coming.
  template <class Enqueue>
  bool write_claimed(const protocol::command_header& h, const object_entry& queue, uint64_t total, bulk_bytes bytes,
                     uint8_t* data, Enqueue&& enqueue);

  // Contexts, queues, events (executor_objects.cpp).
  /// Drops the reference create_context took, unless events are parked in
  /// the context: those are released by the teardown (native/event_parking.hpp).
  void let_go_of_context(cl_context context);
  /// A new user event of `context` as its entry (the handle null, and
  /// `error` set, when the native call fails).
  object_entry new_user_event(const object_entry& context, cl_int& error);

  // Buffers and their transfers (executor_buffers.cpp).
  /// Waits for the `expected` bytes of a new memory object's initial
  /// contents (transfer `transfer`); false (a violation) when the session
  /// closes meanwhile or the size differs. `refused` is set when the quota
  /// refused the contents as they came (the creation fails with it);
  /// otherwise the caller erases the transfer.
  bool await_initial_contents(uint64_t transfer, uint64_t expected, protocol::object_id id, uint8_t*& data,
                              cl_int& refused);
  /// A large enqueue_write_buffer whose bytes are still arriving: one native
  /// write per piece, each behind a gate that opens when its bytes are in.
  bool write_in_pieces(const protocol::command_header& h, const object_entry& queue, cl_mem buffer,
                       uint64_t offset, uint64_t total, uint8_t* data);
  /// A large enqueue_read_buffer: one native read per piece into one
  /// staging, each piece sent by the bulk writer as soon as it is read
  /// (pipelined_read.hpp); the command's own event is a marker behind them.
  bool read_in_pieces(const protocol::command_header& h, const object_entry& queue, cl_mem buffer,
                      uint64_t offset, uint64_t total);

  // Programs (executor_programs.cpp), kernels (executor_kernels.cpp) and
  // queries (executor_queries.cpp).
  /// Whether `program` holds a compiled binary or library for every device
  /// (all of the program's when `devices` is empty).
  bool has_binary_for(cl_program program, const std::vector<cl_device_id>& devices);
  /// CL_PROGRAM_KERNEL_NAMES, split at its semicolons.
  cl_int kernel_names(cl_program program, std::vector<std::string>& out);
  /// Records a new native kernel of `program` under `id`.
  void insert_kernel(protocol::object_id id, cl_kernel kernel, const object_entry& program, cl_uint args);
  /// Which arguments of a new kernel are buffer pointers (see object_entry).
  std::vector<uint8_t> pointer_arguments(cl_kernel kernel, cl_uint count);
  /// Sets one argument of `kernel` (check_kernel_arg, enqueue_ndrange): the
  /// native answer or the daemon's refusal; nullopt for an argument of no
  /// known kind, a protocol violation (violation_ says why).
  std::optional<cl_int> set_arg(const object_entry& kernel, const protocol::kernel_arg& arg);
  cl_int query_value(const protocol::query& m, protocol::bytes& out);

  // SVM allocations (executor_svm.cpp). The client frees one whenever it
  // likes; the native memory goes only once nothing can touch it any more.
  /// The live allocation `id` with [offset, offset + size) inside it and
  /// size > 0; nullptr (and `error`) otherwise.
  svm_block* svm_range(protocol::object_id id, uint64_t offset, uint64_t size, cl_int& error) const;
  /// svm_range, for a command of `queue`: the allocation must belong to the
  /// queue's context.
  svm_block* svm_for(const object_entry& queue, protocol::object_id id, uint64_t offset, uint64_t size,
                     cl_int& error) const;
  /// A native buffer of `context` over [offset, offset + size) of SVM
  /// allocation `svm` (create_buffer); nullptr and `error` on failure.
  cl_mem create_buffer_over_svm(cl_context context, cl_mem_flags flags, uint64_t size, protocol::object_id svm,
                                uint64_t offset, cl_int& error);
  /// release_object of an allocation: the id goes at once; the memory waits
  /// behind a marker on every queue of its context (and the queues already
  /// released) and for the native buffers over it.
  void retire_svm(const object_entry& entry);
  /// release_object of a queue: while SVM allocations of its context exist,
  /// keeps a marker behind its last command, as a fence for later frees.
  void fence_released_queue(const object_entry& queue);
  /// Frees the retired allocations that nothing can touch any more.
  void reclaim_svm();
  /// At shutdown, once every queue is finished: frees what is left.
  void release_retired_svm();

  // Several servers (executor_peers.cpp).
  /// The daemon's own queues of `context`, made on the context's first device
  /// when first needed and released with the context: one for migrate_out
  /// maps, one for deferred migrate_in maps and writes. Out of order where the
  /// device allows, so that each transfer waits only for what it names: on one
  /// in-order queue a landing write could sit behind a map that waits,
  /// through the client's commands, for that very write. nullptr and `error`
  /// on failure.
  struct own_queue {
    cl_command_queue reads = nullptr;
    cl_command_queue writes = nullptr;
    native::callback_behaviour callbacks;
    /// The device was asked to run them out of order. NVIDIA's accepts and
    /// still runs them in order, so a small command is waited for on the
    /// spot only when everything before it on `reads` has ended too.
    bool out_of_order = false;
    /// The latest command on `reads` (retained; null before the first).
    cl_event last_read = nullptr;
    /// Pinned blocks migrations are read into and land in (null: none to be had).
    std::shared_ptr<native::pinned_pool> pinned;
  };
  own_queue* own_queue_of(cl_context context, cl_int& error);
  void release_own_queue(cl_context context);
  void finish_own_queues();
  /// migrate_in whose bytes are all here: the native write of `total` bytes
  /// (a marker for none) on the command's queue.
  bool write_landed(const protocol::command_header& h, const object_entry& queue, const object_entry& buffer,
                    uint64_t offset, uint64_t transfer, const uint8_t* data, uint64_t total);
  /// file_to_buffer or buffer_to_file (executor_files.cpp).
  bool file_command(const protocol::command_header& h, protocol::object_id buffer, uint64_t offset, uint64_t size,
                    const std::string& path, uint64_t file_offset, bool to_buffer);
  /// migrate_in of at most `size` bytes that are still to come: see executor_peers.cpp.
  bool defer_write(const protocol::command_header& h, const object_entry& queue, const object_entry& buffer,
                   uint64_t offset, uint64_t size, uint64_t transfer);

 public:
  /// A control frame (not an ack) is about to run.
  void count_frame();
  /// Before the reader blocks: asks for an ack when many frames went unacknowledged.
  void ack_if_due();

 private:
  std::shared_ptr<session_core> core_;
  std::shared_ptr<control_outbox> outbox_;  // aliases core_, for printf attribution
  const native::api& api_;
  const native::device_catalog& catalog_;
  object_table objects_;
  queued_commands queued_;  // for the session's queued-commands quota
  std::vector<cl_event> wait_list_;             // reused by every enqueue
  std::vector<cl_command_queue> touched_;       // queues to flush before blocking
  std::vector<protocol::object_id> pending_imports_;  // imports of the current wait list still without status
  /// cl_pocl_content_size pairings: buffer id -> its size buffer's id.
  std::unordered_map<protocol::object_id, protocol::object_id> content_sizes_;
  std::vector<svm_block*> retired_svm_;         // released by the client, memory not yet freed
  struct queue_fence {
    cl_context context;
    cl_event marker;  // retained
  };
  std::vector<queue_fence> queue_fences_;       // markers of released queues (see fence_released_queue)
  std::unordered_map<cl_context, own_queue> own_queues_;
  /// migrate_in writes whose bytes come later, while any of them lives: a
  /// landing may wait on the host for its turn after its bytes have left
  /// the transfer table, and the teardown fails it before finishing queues.
  std::vector<std::weak_ptr<transfer_table::landing>> deferred_writes_;
  /// The session's file thread (made on the first file command) and the file
  /// commands whose wait lists have not ended yet, which the teardown ends.
  std::shared_ptr<file_copier> files_;
  std::vector<std::weak_ptr<file_start>> file_starts_;
  struct made_context {
    cl_context context;
    bool blocking_release;  // released through context_releaser
  };
  std::vector<made_context> contexts_;  // contexts made and retained (see let_go_of_context)
  /// clReleaseContext, inline or on the releaser's thread.
  void release_made_context(const made_context& made);
  uint64_t ack_requested_at_ = 0;      // control_in when ack_if_due last asked for an ack
  std::string violation_;
  std::unique_ptr<cuda::session_cuda> cuda_;
  bool stop_requested_ = false;
  bool may_print_ = false;  // a printf-capable kernel was enqueued
  bool shut_down_ = false;
};

}  // namespace ferry::server
