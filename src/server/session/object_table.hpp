// A session's objects: client-chosen 64-bit ids -> native handles.
//
// Ids resolve only inside their session (each session has its own table), so
// no client can name another's objects. A creation that failed natively is
// still recorded, with its error, so that later commands naming the id fail
// with that code instead of a generic one. Owned by the session's control
// reader thread; nothing else touches it.
#pragma once

#include <vector>

#include <CL/cl.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <unordered_map>

#include "protocol/messages.hpp"
#include "server/native/api.hpp"
#include "server/native/catalog.hpp"

namespace ferry::server {

using protocol::object_id;

struct client_paths;  // server/commands/build_headers.hpp

enum class object_kind : uint8_t { context, queue, mem, program, kernel, event, sampler, svm };

const char* kind_name(object_kind kind);

/// The spec's error for an id that names no live object of `kind`: what a
/// command fails with when it names an unknown id, or an object of another
/// kind. An SVM allocation is named by a pointer, which the spec calls
/// invalid with CL_INVALID_VALUE.
constexpr cl_int invalid_object_error(object_kind kind) {
  switch (kind) {
    case object_kind::context: return CL_INVALID_CONTEXT;
    case object_kind::queue: return CL_INVALID_COMMAND_QUEUE;
    case object_kind::mem: return CL_INVALID_MEM_OBJECT;
    case object_kind::program: return CL_INVALID_PROGRAM;
    case object_kind::kernel: return CL_INVALID_KERNEL;
    case object_kind::event: return CL_INVALID_EVENT;
    case object_kind::sampler: return CL_INVALID_SAMPLER;
    case object_kind::svm: return CL_INVALID_VALUE;
  }
  return CL_INVALID_VALUE;
}

/// A native coarse-grained SVM allocation (clSVMAlloc) of a session. Native
/// buffers may use its memory (CL_MEM_USE_HOST_PTR with a pointer into it);
/// their destructor callbacks count them down, and the memory is freed only
/// once none is left, so no buffer ever stands on freed memory.
struct svm_block {
  cl_context context = nullptr;  // retained until the block is freed
  void* pointer = nullptr;
  uint64_t size = 0;
  /// Native buffers over the block not yet destroyed (changed by native
  /// destructor callbacks, on any thread).
  std::atomic<uint32_t> buffers{0};
  /// Once its id is released: markers behind every command that may still
  /// use the memory (retained events).
  std::vector<cl_event> fences;
};

/// Frees the block's native memory and releases its context. The block is
/// deleted too, unless native buffers still refer to it (only when a whole
/// session ends under them): then both stay, a small leak instead of a
/// buffer on freed memory.
void free_svm_block(const native::api& api, svm_block* block);

/// What a kernel argument takes, as far as handle safety goes.
namespace argument_class {
inline constexpr uint8_t other = 0;    // data (or __local)
inline constexpr uint8_t memory = 1;   // __global or __constant pointer: buffers, images
inline constexpr uint8_t sampler = 2;  // sampler_t
}  // namespace argument_class

struct object_entry {
  object_kind kind = object_kind::context;
  /// CL_SUCCESS, or the error of a creation that failed (handle is null).
  cl_int error = CL_SUCCESS;
  /// The native handle, as the type its kind names.
  void* handle = nullptr;
  /// queue, mem, event: the native context (not retained; the object keeps it alive).
  cl_context context = nullptr;
  /// context: the platform of its devices, and the first of them; queue: its device.
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  /// mem: size in bytes.
  uint64_t size = 0;
  /// mem: bytes per pixel of an image (0 for buffers).
  uint64_t element_size = 0;
  /// mem, svm: device memory the object allocated, counted against the
  /// session's memory quota (0 for sub-buffers and buffers over SVM memory).
  uint64_t device_bytes = 0;
  /// queue: created with CL_QUEUE_PROFILING_ENABLE.
  bool profiling = false;
  /// queue: created with CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE.
  bool out_of_order = false;
  /// context, queue, event: how the platform's event callbacks treat failures.
  native::callback_behaviour callbacks;
  /// program, kernel: may print (source mentions printf, or a binary or IL).
  bool printf_capable = false;
  /// program: created from IL. Only these reach the native
  /// clSetProgramSpecializationConstant (PoCL 3.1 aborts on a program from
  /// source that was never built).
  bool from_il = false;
  /// program, kernel: built without -cl-kernel-arg-info by the client (the
  /// daemon adds it for itself), so argument info is not reported.
  bool arg_info_hidden = false;
  /// program: how its last build or compile with the client's headers named
  /// the client's files (null without headers). The build log and options
  /// it reports are the client's, not the temporary tree's.
  std::shared_ptr<const client_paths> client_files;
  /// kernel: per argument, its argument_class (empty when the platform does
  /// not tell). Memory and sampler arguments take only objects of their own
  /// kind named by id, never raw bytes that the driver would dereference.
  std::vector<uint8_t> pointer_args;
  /// event: made by create_user_event, and whether its status was set since.
  bool user_event = false;
  bool status_set = false;

  /// An entry for a native object that was created successfully.
  static object_entry native(object_kind kind, void* handle, cl_context context) {
    object_entry entry;
    entry.kind = kind;
    entry.handle = handle;
    entry.context = context;
    return entry;
  }

  cl_context as_context() const { return static_cast<cl_context>(handle); }
  cl_command_queue as_queue() const { return static_cast<cl_command_queue>(handle); }
  cl_mem as_mem() const { return static_cast<cl_mem>(handle); }
  cl_program as_program() const { return static_cast<cl_program>(handle); }
  cl_kernel as_kernel() const { return static_cast<cl_kernel>(handle); }
  cl_event as_event() const { return static_cast<cl_event>(handle); }
  cl_sampler as_sampler() const { return static_cast<cl_sampler>(handle); }
  svm_block* as_svm() const { return static_cast<svm_block*>(handle); }
};

class object_table {
 public:
  explicit object_table(const native::api& api) : api_(api) { entries_.reserve(256); }
  ~object_table() { release_all(); }
  object_table(const object_table&) = delete;
  object_table& operator=(const object_table&) = delete;

  bool contains(object_id id) const { return entries_.count(id) != 0; }
  /// Adds an entry whose id is not in the table yet (check with contains());
  /// the table owns its handle from now on. Returns false for a duplicate
  /// and leaves the handle to the caller.
  bool insert(object_id id, const object_entry& entry);

  /// What a lookup found: the entry of a live object, or the error that a
  /// command naming the id fails with.
  class found {
   public:
    explicit found(const object_entry& entry) : entry_(&entry), error_(CL_SUCCESS) {}
    /// Nothing usable: `error` says why (never CL_SUCCESS).
    explicit found(cl_int error) : error_(error) {}

    explicit operator bool() const { return entry_ != nullptr; }
    const object_entry& operator*() const { return *entry_; }
    const object_entry* operator->() const { return entry_; }
    /// CL_SUCCESS when an entry was found.
    cl_int error() const { return error_; }

   private:
    const object_entry* entry_ = nullptr;
    cl_int error_;
  };

  /// The live `Kind` object `id` names (`objects.find<object_kind::mem>(id)`).
  /// Otherwise no entry, and the error: `missing` for an unknown id or an
  /// object of another kind (by default the spec's code for an invalid object
  /// of that kind, invalid_object_error), or the recorded error of a creation
  /// that failed.
  template <object_kind Kind>
  found find(object_id id, cl_int missing = invalid_object_error(Kind)) const {
    return find(id, Kind, missing);
  }
  object_entry* find_mutable(object_id id);

  /// Releases the native object and forgets the id; false for an unknown id.
  bool erase(object_id id);
  /// Forgets the id without releasing the native object, which passes to the
  /// caller in `out`; false for an unknown id.
  bool take(object_id id, object_entry& out);
  /// Releases everything: events, kernels, programs, buffers, SVM
  /// allocations, queues, contexts.
  void release_all();

  size_t size() const { return entries_.size(); }
  /// Device memory held by the entries (their device_bytes).
  uint64_t memory() const { return memory_; }

  template <class F>
  void for_each(F&& f) {
    for (auto& [id, entry] : entries_) f(id, entry);
  }

  /// Live entries in all sessions of this process (for debug logs).
  static int64_t daemon_total() { return total_.load(std::memory_order_relaxed); }

 private:
  found find(object_id id, object_kind kind, cl_int missing) const;
  void release_native(const object_entry& entry);

  const native::api& api_;
  // Nodes of released ids are reused for new ones, so steady-state creation
  // (e.g. one kept event per command) allocates nothing.
  std::pmr::unsynchronized_pool_resource pool_;
  std::pmr::unordered_map<object_id, object_entry> entries_{&pool_};
  uint64_t memory_ = 0;
  static std::atomic<int64_t> total_;
};

}  // namespace ferry::server
