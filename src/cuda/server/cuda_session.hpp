// The daemon's CUDA backend for one session: runs the cuda_* messages of
// Ferry's libcuda.so.1 on NVIDIA's driver (docs/cuda.md).
//
// Like the OpenCL executor it is driven by the session's control reader
// thread and never blocks it waiting for the GPU: copies, launches, memsets
// and event records are enqueued on the session's streams and the call
// returns. What the client waits for (a synchronize, the bytes of a copy
// back, a stream callback) becomes a *watch*: a CUDA event recorded behind
// the work, which the session's watcher thread polls and answers once it has
// ended. Watches on one stream are answered in the order they were made, so
// the bytes of a copy back reach the client before the answer to a later
// synchronize of the same stream.
//
// Every context belongs to this session alone (a client's primary context
// is an ordinary context here), and copies and memsets through device
// pointers are checked against the session's own allocations and module
// globals. An enqueue that the driver refuses is not answered on the spot
// (nothing waits for it): its error is kept and returned by the context's
// next synchronize, query or copy back, as CUDA reports asynchronous errors.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <chrono>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cuda/abi/driver_abi.hpp"
#include "cuda/server/device_catalog.hpp"
#include "cuda/server/driver.hpp"
#include "cuda/server/registered_staging.hpp"
#include "protocol/messages.hpp"

namespace ferry::server {
class bulk_outbox;
class control_outbox;
class session_quota;
class transfer_table;
}

namespace ferry::cuda {

/// The daemon's CUDA driver and devices, loaded on first use (the first
/// session that asks; in a session worker, that worker). A host without
/// NVIDIA's driver has none and says so once in the log.
struct cuda_backend {
  std::unique_ptr<driver> drv;  // null: no driver
  std::vector<cuda_device_facts> devices;
  CUresult status = CUDA_SUCCESS;  // what the client is told when there is no device
  int driver_version = 0;
  std::string note;  // why there are no devices, in words
};
const cuda_backend& backend();

/// Gives NVIDIA's JIT a cache it can write (CUDA_CACHE_PATH), unless the
/// environment names one: `parent`/cuda (the daemon's kernel cache), else
/// the driver's default under a writable $HOME, else a directory of this user
/// under /var/tmp. A session worker runs as nobody, whose home it cannot
/// write: without this every session would compile its modules again (GCC's
/// OpenMP runtime takes seconds). Call it while the process has one thread
/// (it sets an environment variable).
void choose_jit_cache(const std::string& parent);

class session_cuda {
 public:
  /// `transfers`: the session's bulk transfers (copies to the device whose
  /// bytes come on the bulk stream); `bulk`: what the bulk stream sends
  /// (copies back from 1 MiB); `quota`: the session's limits (its device
  /// memory limit holds for CUDA allocations too).
  session_cuda(server::control_outbox& outbox, server::transfer_table& transfers, server::bulk_outbox& bulk,
               server::session_quota& quota, std::string label);
  ~session_cuda();
  session_cuda(const session_cuda&) = delete;
  session_cuda& operator=(const session_cuda&) = delete;

  // Each returns false only for a protocol violation (violation() says why).
  bool on(const protocol::cuda_get_devices& m);
  bool on(const protocol::cuda_create_context& m);
  bool on(const protocol::cuda_release& m);
  bool on(const protocol::cuda_mem_alloc& m);
  bool on(const protocol::cuda_mem_free& m);
  bool on(const protocol::cuda_mem_get_info& m);
  bool on(const protocol::cuda_module_load& m);
  bool on(const protocol::cuda_get_function& m);
  bool on(const protocol::cuda_get_global& m);
  bool on(const protocol::cuda_link& m);
  bool on(const protocol::cuda_func_set_attribute& m);
  bool on(const protocol::cuda_launch& m);
  bool on(const protocol::cuda_copy_to_device& m);
  bool on(const protocol::cuda_copy_to_device_bulk& m);
  bool on(const protocol::cuda_copy_from_device& m);
  bool on(const protocol::cuda_copy_from_device_bulk& m);
  bool on(const protocol::cuda_copy_on_device& m);
  bool on(const protocol::cuda_memset& m);
  bool on(const protocol::cuda_create_stream& m);
  bool on(const protocol::cuda_create_event& m);
  bool on(const protocol::cuda_record_event& m);
  bool on(const protocol::cuda_wait_event& m);
  bool on(const protocol::cuda_synchronize& m);
  bool on(const protocol::cuda_query& m);
  bool on(const protocol::cuda_elapsed_time& m);

  const std::string& violation() const { return violation_; }
  /// Ends the session's CUDA work: waits for its streams, destroys its
  /// contexts (and with them everything in them). Work that has not ended
  /// 2 s after is left to the driver, logged (the worker's exit ends it).
  /// Idempotent.
  void shutdown();

 private:
  struct context_state;
  struct stream_state;
  /// One object of the session, by its client id.
  struct object {
    enum class kind : uint8_t { context, module, function, stream, event } what;
    context_state* context = nullptr;  // the context it lives in (itself for a context)
    void* handle = nullptr;            // CUmodule, CUfunction, CUstream or CUevent
    stream_state* stream = nullptr;    // kind stream
    /// kind event: the stream it was last recorded on (watches on the event
    /// are ordered with that stream's); null while never recorded.
    stream_state* recorded_on = nullptr;
    uint64_t recorded_after = 0;  // recorded_on's watch count at the record
    uint32_t flags = 0;
    /// kind function: its parameter layout's total size (0: unknown).
    uint32_t params_size = 0;
  };
  struct stream_state {
    CUstream handle = nullptr;  // null: the context's NULL stream
    uint64_t watches = 0;       // watches made on it (numbers their points)
    uint32_t events = 0;        // event objects last recorded on it
    bool released = false;      // the client destroyed it; kept while named
  };
  /// Pinned host memory for copies, by power-of-two size class.
  struct staging_block {
    void* data = nullptr;
    size_t capacity = 0;
  };
  struct context_state {
    protocol::object_id id = 0;
    CUcontext handle = nullptr;
    uint32_t ordinal = 0;
    CUdevice device = 0;
    bool primary = false;  // the device's primary context (FERRY_CUDA_PRIMARY_CONTEXTS)
    stream_state null_stream;
    std::vector<stream_state*> streams;  // the session's streams in it (not the NULL one)
    /// Ferry's own streams for watching event synchronizations, one per watch,
    /// kept for reuse (non-blocking).
    std::vector<CUstream> spare_wait_streams;
    std::map<uint64_t, uint64_t> allocations;  // address -> size
    std::map<uint64_t, uint64_t> globals;      // module globals: address -> size
    std::vector<CUevent> spare_events;         // for watches, DISABLE_TIMING
    std::multimap<size_t, staging_block> spare_staging;
    size_t spare_staging_bytes = 0;
    /// Staging of copies whose bytes stopped coming when the session ended:
    /// a bulk reader may still write into it, so it is freed with the context.
    std::vector<staging_block> parked_staging;
    /// Page-locked blocks of copies back on the bulk stream (made with the context).
    std::shared_ptr<registered_staging> sendable;
    /// The first refused enqueue not reported yet: set by the control
    /// reader, taken by whichever thread answers the next synchronization.
    std::atomic<CUresult> deferred{CUDA_SUCCESS};
    /// Pins the staging of the context's first copies in the background
    /// (prewarm_staging); joined before the context goes.
    std::thread prewarm;
    /// Whether it is still pinning staging for copies in, and for copies
    /// back (guarded by watch_mutex_; prewarm_cv_ says when they change).
    bool prewarming_in = false, prewarming_back = false;
    std::atomic<bool> prewarm_cancelled{false};  // the context goes: pin no more
    ~context_state() {
      if (prewarm.joinable()) prewarm.join();
    }
  };
  /// What a watch does once its events have ended.
  enum class watch_action : uint8_t { answer_status, answer_data, free_staging, send_bulk };
  /// One thing a watch waits for: `event`, recorded for it, and the stream
  /// whose order it keeps.
  struct watch_point {
    stream_state* stream = nullptr;
    CUevent event = nullptr;
    /// Its number among the watches of `stream` (stream_state::watches); 0
    /// for an event synchronization's point, which is on a wait stream.
    uint64_t seq = 0;
  };
  struct watch {
    context_state* context = nullptr;
    std::vector<watch_point> points;  // what must end
    /// An event synchronization: the watches of its stream made before the
    /// event was recorded, which it must not overtake (later ones it may).
    uint64_t follows = 0;
    watch_action action = watch_action::answer_status;
    uint64_t request = 0;
    staging_block staging;  // answer_data, free_staging
    uint64_t size = 0;      // answer_data, send_bulk: bytes of staging to send
    /// send_bulk: the bytes and the bulk transfer that carries them.
    std::shared_ptr<uint8_t> sendable;
    uint64_t transfer = 0;
    /// An event's synchronization: the stream of Ferry's own its point is on.
    CUstream wait_stream = nullptr;
    bool answered = false;
  };

  bool violate(std::string why);
  /// Whether the session may hold one more CUDA object: ferryd
  /// --session-objects holds for them too, counted apart from its OpenCL
  /// objects (the quota logs the first refusal).
  bool admit_object();
  /// The context `id`, made current on this thread; null (an error in
  /// `rc`) for an unknown or destroyed one.
  context_state* enter(protocol::object_id id, CUresult& rc);
  bool make_current(context_state& c);
  /// The stream `id` of context `c` (0: its NULL stream); null for an
  /// unknown one or one of another context.
  stream_state* find_stream(context_state& c, protocol::object_id id);
  /// The NULL stream of `c` and the session's streams in it (the NULL stream
  /// does not wait for the non-blocking ones).
  static std::vector<stream_state*> every_stream_of(context_state& c);
  object* find(protocol::object_id id, object::kind kind);
  /// Whether [address, address + size) lies inside one allocation or global
  /// of `c`.
  bool owns(const context_state& c, uint64_t address, uint64_t size) const;
  void defer(context_state& c, CUresult rc, const char* what);
  /// The deferred error of `c`, now reported (cleared).
  CUresult take_deferred(context_state& c);
  /// Pinned staging of at least `size` bytes for a copy: a spare block of
  /// its size class (one the context's pre-warming is still pinning is
  /// waited for), else a new one.
  staging_block take_staging(context_state& c, size_t size, CUresult& rc);
  /// The pre-warming thread of the session's first context on a device: pins
  /// the staging that the client's
  /// large copies take (two pieces in, four back; protocol::cuda_copy_in_piece
  /// and cuda_copy_back_piece) and leaves it spare, so that a fresh
  /// context's first copies find it ready, as NVIDIA's driver pins its own
  /// staging when it makes a context: pinning costs about 0.35 ms a MiB
  /// (docs/cuda.md), more than the copy itself.
  void prewarm_staging(context_state& c);
  /// Waits, if the pre-warming of `c` is pinning its blocks for copies back,
  /// until it has.
  void wait_for_prewarmed_back(context_state& c);
  void return_staging(context_state& c, staging_block block);
  void return_staging_locked(context_state& c, staging_block block);  // watch_mutex_ held
  CUevent take_event(context_state& c, CUresult& rc);
  /// A non-blocking stream for one event synchronization (spare or new).
  CUstream take_wait_stream(context_state& c, CUresult& rc);
  /// Records an event on each stream of `streams` and hands the watch to the
  /// watcher thread; false (rc set) when the driver refused. With `after`,
  /// the point is recorded on a wait stream behind a wait for `after`
  /// instead (the stream in `streams` still orders the answer).
  bool start_watch(watch w, const std::vector<stream_state*>& streams, CUresult& rc, CUevent after = nullptr);
  void answer_status(uint64_t request, CUresult rc);
  void destroy_context(context_state& c);
  /// Frees the states of destroyed streams that no watch and no event names.
  void forget_released_streams();
  /// Makes `s` (may be null) the stream `event` was last recorded on,
  /// keeping the streams' event counts.
  void set_recorded_on(object& event, stream_state* s);
  /// Whether the work of every stream of every context ends within `limit`
  /// (polled through events recorded on them): shutdown asks before it
  /// destroys contexts, whose destruction would wait without a limit.
  bool gpu_work_ends_within(std::chrono::milliseconds limit);
  void forget_objects_of(const context_state* c);

  // The watcher thread: polls the watches' events and answers them.
  void watcher_loop();
  /// True when every point of `w` has ended (rc: the first failure).
  bool ended(watch& w, CUresult& rc);
  void finish(watch& w, CUresult rc);

  /// Gives `staging` back: at once, or (`in_use`: copies on `s` read it)
  /// once `s` has passed the work enqueued so far.
  void free_staging_after(context_state& c, stream_state& s, staging_block staging, bool in_use);

  server::control_outbox& outbox_;
  server::transfer_table& transfers_;
  server::bulk_outbox& bulk_;
  server::session_quota& quota_;
  uint64_t allocated_ = 0;  // device bytes of the session's allocations (control reader)
  const std::string label_;
  std::string violation_;
  const cuda_backend& backend_;
  const driver* drv_ = nullptr;

  // Owned by the control reader thread.
  std::unordered_map<protocol::object_id, object> objects_;
  std::unordered_map<protocol::object_id, std::unique_ptr<context_state>> contexts_;
  std::vector<std::unique_ptr<stream_state>> stream_storage_;  // streams' states (see forget_released_streams)
  std::set<uint32_t> prewarmed_devices_;  // devices whose first context pinned staging ahead
  CUcontext current_ = nullptr;
  bool shut_down_ = false;

  // Shared with the watcher thread.
  std::mutex watch_mutex_;  // guards watches_, finishing_, stop_, and the contexts' spare events, streams and staging
  std::condition_variable watch_cv_;
  std::condition_variable prewarm_cv_;  // a context's pre-warming pinned a block, or ended
  std::deque<watch> watches_;
  size_t finishing_ = 0;  // watches taken out and being answered without the lock
  bool stop_ = false;
  std::thread watcher_;
};

}  // namespace ferry::cuda
