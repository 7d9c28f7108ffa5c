// What Ferry's libcuda.so.1 knows: the servers it reached at cuInit, their
// CUDA devices, and the objects a program made (docs/cuda.md).
//
// Handles are pointers to the structs below; each starts with a tag that
// says what it is, so a handle of the wrong kind or a stale one is refused
// with CUDA's code instead of being followed. Every object names the
// client-chosen id the server knows it by. The current context is per
// thread, as in CUDA (a stack: push, pop, set).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/net/connection.hpp"
#include "cuda/abi/address_ranges.hpp"
#include "cuda/abi/driver_abi.hpp"
#include "protocol/messages.hpp"

namespace ferry::cuda {

enum class tag : uint32_t {
  context = 0x43545846,  // "FXTC"
  module = 0x444f4d46,
  function = 0x434e5546,
  stream = 0x52545346,
  event = 0x54564546,
  link = 0x4b4e4c46,
  library = 0x42494c46,
  dead = 0xdeadbeef,
};

struct server_link {
  std::string address;
  std::unique_ptr<client::connection> link;
};

struct device_entry {
  server_link* server = nullptr;
  protocol::cuda_device_desc desc;  // desc.ordinal: the device's ordinal on its server
  int attribute(int which) const {
    return which > 0 && static_cast<size_t>(which) < desc.attributes.size() ? desc.attributes[which] : 0;
  }
  // The device's primary context (made at the first retain; guarded by
  // driver_state::mutex).
  CUctx_st* primary = nullptr;
  unsigned primary_refs = 0;
  unsigned primary_flags = 0;
};

}  // namespace ferry::cuda

// The handle types are CUDA's (declared in ferry::cuda by driver_abi.hpp);
// these are their definitions on the client.
namespace ferry::cuda {

struct CUctx_st {
  tag kind = tag::context;
  protocol::object_id id = 0;
  device_entry* device = nullptr;
  CUdevice ordinal = 0;  // the client's device ordinal
  unsigned flags = 0;
  bool primary = false;
  client::connection* link() const { return device->server->link.get(); }
  std::mutex mutex;  // guards allocations, globals, pieces, free_pieces, slabs, slab_next, slab_end, syncs,
                     // nonblocking_streams, kept_free, kept_free_bytes
  std::map<uint64_t, uint64_t> allocations;  // address -> size (the server's addresses)
  std::map<uint64_t, uint64_t> globals;
  /// Small allocations (at most small_piece_limit bytes) are pieces of slabs
  /// the client allocated on the server: GCC's OpenACC allocates and frees
  /// an argument block around every kernel, and a round trip each would cost
  /// more than the kernel. Address -> size of the live pieces; freed pieces
  /// by size class; the slabs (in `allocations` too) and the unused end of
  /// the newest one.
  std::map<uint64_t, uint64_t> pieces;
  /// A freed piece is used again only once a synchronization that began
  /// after its free has ended (work in flight may still read it): by size
  /// class, the address and the value of `syncs` when it was freed.
  std::map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> free_pieces;
  /// Synchronizations of this context that waited for all of its earlier
  /// work: a context synchronize, or one of the NULL stream while the
  /// context has no non-blocking stream (the legacy stream waits for the
  /// others).
  uint64_t syncs = 0;
  int nonblocking_streams = 0;
  std::map<uint64_t, uint64_t> slabs;
  uint64_t slab_next = 0, slab_end = 0;
  /// Freed allocations above small_piece_limit kept on the server for a later
  /// cuMemAlloc of the same size (GCC's OpenMP allocates its stacks around
  /// every kernel, a round trip each): by size, the address and the value of
  /// `syncs` when freed (usable again after a later whole synchronization, as
  /// pieces are; one less when it was idle at once, see idle_at_frame). At most kept_free_limit bytes; cuMemGetInfo, and an
  /// allocation the server refuses for want of memory, free them first.
  std::multimap<uint64_t, std::pair<uint64_t, uint64_t>> kept_free;
  uint64_t kept_free_bytes = 0;
  /// The frame number (connection::posted_frames) of the request of the last
  /// whole synchronization that succeeded: while the connection has posted
  /// nothing since, no work of the context is in flight, and memory freed
  /// then is idle at once (GCC's OpenMP frees its stacks right after the
  /// cuCtxSynchronize behind their kernel, and allocates them again before
  /// the next). 0: none yet.
  uint64_t idle_at_frame = 0;

  /// Pieces of copies back on the bulk stream not yet whole (their bytes
  /// and their answer). The bytes travel on the bulk stream, so the answer
  /// to a later synchronization can overtake them: synchronizations and
  /// queries wait for these too, and the context is not freed before them.
  void bulk_piece_begun();
  void bulk_piece_ended();
  void wait_for_bulk_pieces();
  bool bulk_pieces_pending();
  /// Whether [address, address + size) lies inside one allocation or global.
  bool owns(uint64_t address, uint64_t size);
  /// The allocation containing `address`: its base and size (false: none).
  bool allocation_of(uint64_t address, uint64_t& base, uint64_t& size);

 private:
  std::mutex bulk_mutex_;  // guards bulk_pending_
  std::condition_variable bulk_cv_;
  int bulk_pending_ = 0;
};

/// The most bytes of freed allocations a context keeps (CUctx_st::kept_free).
inline constexpr uint64_t kept_free_limit = uint64_t{256} << 20;
/// Allocations up to this size are pieces of slabs (CUctx_st::pieces).
inline constexpr uint64_t small_piece_limit = 64 * 1024;
/// A slab's size, and the alignment of every piece (as cuMemAlloc's).
inline constexpr uint64_t slab_size = 4u << 20;
inline constexpr uint64_t piece_alignment = 256;

struct CUstream_st {
  tag kind = tag::stream;
  protocol::object_id id = 0;
  CUctx_st* context = nullptr;
  unsigned flags = 0;
  int priority = 0;
  /// Copies back asked for on the stream, numbered from 1 in stream order,
  /// whose bytes have not arrived yet: the stream is not idle before they
  /// did, whatever the server says of it, and neither is an event recorded
  /// after one of them (CUevent_st::copies_before).
  uint64_t begin_copy_back();
  void end_copy_back(uint64_t number);
  /// Copies back asked for so far.
  uint64_t copies_back_asked();
  /// Whether a copy back numbered up to `number` still waits for its bytes
  /// (~0: any).
  bool copy_back_pending(uint64_t number = ~uint64_t{0});

 private:
  std::mutex copies_mutex_;  // guards the two below
  uint64_t copies_asked_ = 0;
  std::set<uint64_t> copies_pending_;
};

struct CUevent_st {
  tag kind = tag::event;
  protocol::object_id id = 0;
  CUctx_st* context = nullptr;
  unsigned flags = 0;
  CUstream_st* recorded_on = nullptr;  // null: the NULL stream or never recorded
  uint64_t copies_before = 0;          // recorded_on's copies back asked for before the record
};

struct CUmod_st {
  tag kind = tag::module;
  protocol::object_id id = 0;
  CUctx_st* context = nullptr;
};

struct CUfunc_st {
  tag kind = tag::function;
  protocol::object_id id = 0;
  CUmod_st* module = nullptr;
  bool params_known = false;
  std::vector<protocol::cuda_param> params;
  std::vector<int32_t> attributes;
  uint32_t params_size() const;
};

struct CUlinkState_st {
  tag kind = tag::link;
  CUctx_st* context = nullptr;
  std::vector<protocol::cuda_jit_option> options;
  std::vector<protocol::cuda_link_input> inputs;
  std::vector<uint8_t> image;  // cuLinkComplete's output, owned until destroyed
  // The program's own output slots (cuLinkCreate's option values).
  char* info_log = nullptr;
  size_t info_size = 0;
  char* error_log = nullptr;
  size_t error_size = 0;
  float* wall_time = nullptr;
};

/// cuLibrary* over modules: a library is a module loaded in the context
/// current at load time; its kernels are its functions.
struct CUlib_st {
  tag kind = tag::library;
  CUmod_st* module = nullptr;
};

/// The driver: servers and devices (fixed once cuInit has run), id counter.
struct driver_state {
  std::vector<std::unique_ptr<server_link>> servers;
  std::vector<device_entry> devices;
  std::atomic<uint64_t> next_id{1};
  std::mutex mutex;  // guards the devices' primary contexts
};

/// Every handle object the program was given is held here, so that one the
/// program drops without destroying it (CUDA lets it: functions, a context at
/// exit) is still owned. `keep` registers a new one and returns it; `bury`
/// marks a destroyed one dead (its tag) and keeps it for the next 4096
/// burials, so that a stale handle is refused with CUDA's code rather than
/// followed, then frees it.
void keep_object(void* object, void (*destroy)(void*));
template <class T>
T* keep(T* object) {
  keep_object(object, [](void* p) { delete static_cast<T*>(p); });
  return object;
}
void bury_object(void* object);
template <class T>
void bury(T* object) {
  object->kind = tag::dead;
  bury_object(object);
}

/// CUDA_SUCCESS once cuInit connected; CUDA_ERROR_NOT_INITIALIZED before;
/// CUDA_ERROR_NO_DEVICE when no server has a CUDA device. Runs the
/// connection once, on the first call.
CUresult initialize(unsigned flags);
/// Whether cuInit was called (whatever it returned).
bool initialized();
driver_state& driver();
protocol::object_id new_id();

// The calling thread's current context.
CUctx_st* current_context();
void set_current_context(CUctx_st* c);
/// False when the stack is full (256 deep).
bool push_context(CUctx_st* c);
CUctx_st* pop_context();
/// Forgets `c` in every thread's stack is impossible; this thread's only.
void forget_context_here(CUctx_st* c);

/// True on the thread that runs stream callbacks while it runs one: CUDA
/// forbids driver calls there (CUDA_ERROR_NOT_PERMITTED), and GCC's libgomp
/// relies on that answer.
bool in_callback();

/// Runs stream callbacks and host functions on one dedicated thread, in the
/// order their streams got there.
void run_on_callback_thread(std::function<void()> work);

}  // namespace ferry::cuda
