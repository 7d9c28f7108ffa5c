#include "cuda/server/cuda_session.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "common/elapsed.hpp"
#include "common/log.hpp"
#include "common/spare_cores.hpp"
#include "common/thread_name.hpp"
#include "cuda/abi/address_ranges.hpp"
#include "cuda/abi/result_names.hpp"
#include "server/session/session_quota.hpp"
#include "server/transport/bulk_writer.hpp"
#include "server/transport/control_writer.hpp"
#include "server/transport/transfer_table.hpp"

namespace ferry::cuda {

namespace p = protocol;

namespace {

/// Most device memory one session may hold in pinned staging kept for
/// reuse; what is beyond goes back to the driver.
constexpr size_t max_spare_staging = size_t{256} << 20;
/// The pieces whose staging a new context pins in the background
/// (session_cuda::prewarm_staging): two copies in, as a piece is still being
/// copied to the GPU when the next one arrives; and a 64 MiB copy back, whose
/// pieces the client asks for at once (one per bulk lane).
/// FERRY_CUDA_PREWARM=0 in the daemon's environment pins none (a measuring aid).
const bool prewarm = [] {
  const char* text = std::getenv("FERRY_CUDA_PREWARM");
  return text == nullptr || std::strcmp(text, "0") != 0;
}();
constexpr int prewarm_in_pieces = 2;
constexpr int prewarm_back_pieces = 4;
/// Longest log a JIT may write into the replies (the client's buffers are
/// usually 4-16 KiB).
constexpr int64_t max_jit_log = int64_t{1} << 20;
/// Kernel parameters of one launch: CUDA allows 32 KiB (Volta and later).
constexpr size_t max_launch_params = 32768;
/// How long a session's end waits for its GPU work before it leaves the
/// contexts to the driver: a context's destruction waits for its kernels, and
/// a kernel that never returns would hold the session's worker for good. The
/// client is gone, so nothing waits for the work's results; a worker's exit
/// ends the work, as a process's exit does natively.
constexpr auto end_wait = std::chrono::seconds(2);

/// A handle kept in `spare` (guarded by `mutex`) for reuse, else a new one
/// from `make` (null with its error in `rc`).
template <class Handle, class Make>
Handle take_spare(std::mutex& mutex, std::vector<Handle>& spare, CUresult& rc, Make&& make) {
  {
    std::lock_guard lock(mutex);
    if (!spare.empty()) {
      Handle h = spare.back();
      spare.pop_back();
      rc = CUDA_SUCCESS;
      return h;
    }
  }
  Handle h = nullptr;
  rc = make(&h);
  return rc == CUDA_SUCCESS ? h : nullptr;
}

const char* name_of(CUresult rc) {
  const char* name = result_name(rc);
  return name ? name : "an unknown CUresult";
}

/// Measuring aids (docs/cuda.md, "Figures"): FERRY_CUDA_PRIMARY_CONTEXTS=1
/// gives every context of the session the device's primary context (one
/// process per session: still the session's alone), FERRY_CUDA_JIT_PLAIN=1
/// gives the JIT no option of the daemon's own (logs, wall time).
bool env_flag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && std::strcmp(value, "1") == 0;
}
bool primary_contexts() {
  static const bool value = env_flag("FERRY_CUDA_PRIMARY_CONTEXTS");
  return value;
}
bool plain_jit() {
  static const bool value = env_flag("FERRY_CUDA_JIT_PLAIN");
  return value;
}

size_t size_class(size_t size) {
  size_t c = 4096;
  while (c < size) c <<= 1;
  return c;
}

}  // namespace

void choose_jit_cache(const std::string& parent) {
  if (std::getenv("CUDA_CACHE_PATH") != nullptr) return;
  std::string dir;
  if (!parent.empty()) {
    dir = parent + "/cuda";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && ::access(home, W_OK) == 0) {
    return;  // the driver's own default, under $HOME
  } else {
    dir = "/var/tmp/ferry-cuda-cache-" + std::to_string(::geteuid());
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    FERRY_INFO("cuda", "cannot make a JIT cache in %s (%s): modules are compiled anew in every session", dir.c_str(),
               std::strerror(errno));
    return;
  }
  struct stat st {};
  // Someone else's directory of that name is not ours to use.
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
    FERRY_WARN("cuda", "%s is not a directory of this user: no JIT cache", dir.c_str());
    return;
  }
  ::setenv("CUDA_CACHE_PATH", dir.c_str(), 1);
}

const cuda_backend& backend() {
  static const cuda_backend* instance = [] {
    auto* b = new cuda_backend;  // lives as long as the process
    std::string why;
    choose_jit_cache({});  // a session worker chose already (CUDA_CACHE_PATH)
    b->drv = driver::load(why);
    if (!b->drv) {
      b->status = CUDA_ERROR_NO_DEVICE;
      b->note = "no CUDA driver on this host (" + why + ")";
      FERRY_INFO("cuda", "%s: this daemon serves no CUDA devices", b->note.c_str());
      return b;
    }
    b->devices = list_cuda_devices(*b->drv, why);
    if (b->devices.empty()) {
      b->status = CUDA_ERROR_NO_DEVICE;
      b->note = why.empty() ? "the CUDA driver reports no device" : why;
      FERRY_INFO("cuda", "%s: this daemon serves no CUDA devices", b->note.c_str());
    } else {
      int version = 0;
      if (b->drv->cuDriverGetVersion && b->drv->cuDriverGetVersion(&version) == CUDA_SUCCESS)
        b->driver_version = version;
      FERRY_INFO("cuda", "serving %zu CUDA device(s), driver version %d", b->devices.size(), b->driver_version);
    }
    return b;
  }();
  return *instance;
}

session_cuda::session_cuda(server::control_outbox& outbox, server::transfer_table& transfers,
                           server::bulk_outbox& bulk, server::session_quota& quota, std::string label)
    : outbox_(outbox),
      transfers_(transfers),
      bulk_(bulk),
      quota_(quota),
      label_(std::move(label)),
      backend_(backend()),
      drv_(backend_.drv.get()) {}

session_cuda::~session_cuda() { shutdown(); }

bool session_cuda::violate(std::string why) {
  violation_ = std::move(why);
  return false;
}

void session_cuda::answer_status(uint64_t request, CUresult rc) { outbox_.push_message(p::cuda_status{request, rc}); }

bool session_cuda::make_current(context_state& c) {
  if (current_ == c.handle) return true;
  if (drv_->cuCtxSetCurrent(c.handle) != CUDA_SUCCESS) return false;
  current_ = c.handle;
  return true;
}

session_cuda::context_state* session_cuda::enter(p::object_id id, CUresult& rc) {
  auto it = contexts_.find(id);
  if (it == contexts_.end()) {
    rc = CUDA_ERROR_INVALID_CONTEXT;
    return nullptr;
  }
  if (!make_current(*it->second)) {
    rc = CUDA_ERROR_INVALID_CONTEXT;
    return nullptr;
  }
  rc = CUDA_SUCCESS;
  return it->second.get();
}

session_cuda::object* session_cuda::find(p::object_id id, object::kind kind) {
  auto it = objects_.find(id);
  if (it == objects_.end() || it->second.what != kind) return nullptr;
  return &it->second;
}

std::vector<session_cuda::stream_state*> session_cuda::every_stream_of(context_state& c) {
  std::vector<stream_state*> all{&c.null_stream};
  all.insert(all.end(), c.streams.begin(), c.streams.end());
  return all;
}

session_cuda::stream_state* session_cuda::find_stream(context_state& c, p::object_id id) {
  if (id == 0) return &c.null_stream;
  object* s = find(id, object::kind::stream);
  if (s == nullptr || s->context != &c) return nullptr;
  return s->stream;
}

bool session_cuda::owns(const context_state& c, uint64_t address, uint64_t size) const {
  return within_one(c.allocations, address, size) || within_one(c.globals, address, size);
}

void session_cuda::defer(context_state& c, CUresult rc, const char* what) {
  FERRY_DEBUG("cuda", "session %s: %s failed with %s; reported at the context's next synchronization",
              label_.c_str(), what, name_of(rc));
  CUresult none = CUDA_SUCCESS;
  c.deferred.compare_exchange_strong(none, rc);
}

CUresult session_cuda::take_deferred(context_state& c) { return c.deferred.exchange(CUDA_SUCCESS); }

session_cuda::staging_block session_cuda::take_staging(context_state& c, size_t size, CUresult& rc) {
  const size_t wanted = size_class(size);
  {
    std::unique_lock lock(watch_mutex_);
    for (;;) {
      auto it = c.spare_staging.find(wanted);
      if (it != c.spare_staging.end()) {
        staging_block b = it->second;
        c.spare_staging.erase(it);
        c.spare_staging_bytes -= b.capacity;
        rc = CUDA_SUCCESS;
        return b;
      }
      // A block being pinned comes sooner than a new one would.
      if (!c.prewarming_in || wanted != size_class(p::cuda_copy_in_piece)) break;
      prewarm_cv_.wait(lock);
    }
  }
  staging_block b;
  const auto start = std::chrono::steady_clock::now();
  rc = drv_->cuMemAllocHost(&b.data, wanted);
  FERRY_TRACE("timeline", "session %s: cuMemAllocHost of %zu bytes of staging took %lld us", label_.c_str(), wanted,
              microseconds_since(start));
  if (rc != CUDA_SUCCESS) return {};
  b.capacity = wanted;
  return b;
}

void session_cuda::prewarm_staging(context_state& c) {
  name_this_thread("cuda-prewarm");
  const auto start = std::chrono::steady_clock::now();
  const bool current = drv_->cuCtxSetCurrent(c.handle) == CUDA_SUCCESS;
  for (int i = 0; current && i < prewarm_in_pieces && !c.prewarm_cancelled.load(); ++i) {
    staging_block b;
    if (drv_->cuMemAllocHost(&b.data, size_class(p::cuda_copy_in_piece)) != CUDA_SUCCESS) break;
    b.capacity = size_class(p::cuda_copy_in_piece);
    return_staging(c, b);
    prewarm_cv_.notify_all();
  }
  {
    std::lock_guard lock(watch_mutex_);
    c.prewarming_in = false;
  }
  prewarm_cv_.notify_all();
  // Taken together and given back together: as many blocks, all spare.
  std::vector<std::shared_ptr<uint8_t>> back;
  for (int i = 0; current && i < prewarm_back_pieces && !c.prewarm_cancelled.load(); ++i) {
    CUresult rc;
    auto block = c.sendable->take(p::cuda_copy_back_piece, rc);
    if (!block) break;
    back.push_back(std::move(block));
  }
  back.clear();
  {
    std::lock_guard lock(watch_mutex_);
    c.prewarming_back = false;
  }
  prewarm_cv_.notify_all();
  drv_->cuCtxSetCurrent(nullptr);
  FERRY_DEBUG("cuda", "session %s: context %llu's staging pinned in %lld us", label_.c_str(),
              static_cast<unsigned long long>(c.id), microseconds_since(start));
}

void session_cuda::wait_for_prewarmed_back(context_state& c) {
  // Only once it pins them: before, pinning its own costs less than waiting
  // for the staging of copies in too.
  std::unique_lock lock(watch_mutex_);
  prewarm_cv_.wait(lock, [&] { return c.prewarming_in || !c.prewarming_back; });
}

void session_cuda::return_staging(context_state& c, staging_block block) {
  std::lock_guard lock(watch_mutex_);
  return_staging_locked(c, block);
}

void session_cuda::return_staging_locked(context_state& c, staging_block block) {
  if (block.data == nullptr) return;
  if (c.spare_staging_bytes + block.capacity <= max_spare_staging) {
    c.spare_staging.emplace(block.capacity, block);
    c.spare_staging_bytes += block.capacity;
  } else {
    drv_->cuMemFreeHost(block.data);
  }
}

CUevent session_cuda::take_event(context_state& c, CUresult& rc) {
  return take_spare(watch_mutex_, c.spare_events, rc,
                    [&](CUevent* e) { return drv_->cuEventCreate(e, CU_EVENT_DISABLE_TIMING); });
}

CUstream session_cuda::take_wait_stream(context_state& c, CUresult& rc) {
  // Non-blocking: the legacy stream's later work must not hold it back.
  return take_spare(watch_mutex_, c.spare_wait_streams, rc,
                    [&](CUstream* s) { return drv_->cuStreamCreate(s, CU_STREAM_NON_BLOCKING); });
}

bool session_cuda::start_watch(watch w, const std::vector<stream_state*>& streams, CUresult& rc, CUevent after) {
  context_state& c = *w.context;
  // One stream for each event waited on: on a shared one, a wait would stay
  // behind an earlier wait for a later event.
  if (after != nullptr && (w.wait_stream = take_wait_stream(c, rc)) == nullptr) return false;
  for (stream_state* s : streams) {
    CUevent e = take_event(c, rc);
    if (e == nullptr) break;
    if (after != nullptr) {
      rc = drv_->cuStreamWaitEvent(w.wait_stream, after, 0);
      if (rc == CUDA_SUCCESS) rc = drv_->cuEventRecord(e, w.wait_stream);
    } else {
      rc = drv_->cuEventRecord(e, s->handle);
    }
    if (rc != CUDA_SUCCESS) {
      std::lock_guard lock(watch_mutex_);
      c.spare_events.push_back(e);
      break;
    }
    w.points.push_back({s, e, after != nullptr ? 0 : ++s->watches});
  }
  if (rc != CUDA_SUCCESS) {
    std::lock_guard lock(watch_mutex_);
    for (const watch_point& point : w.points) c.spare_events.push_back(point.event);
    // Its wait may still be pending on the GPU: not reused.
    if (w.wait_stream != nullptr) drv_->cuStreamDestroy(w.wait_stream);
    return false;
  }
  {
    std::lock_guard lock(watch_mutex_);
    watches_.push_back(std::move(w));
    if (!watcher_.joinable())
      watcher_ = std::thread([this] {
        name_this_thread("cuda-watch");
        watcher_loop();
      });
  }
  watch_cv_.notify_one();
  return true;
}

// ---------------------------------------------------------------------------
// Devices and contexts

bool session_cuda::on(const p::cuda_get_devices& m) {
  p::cuda_devices reply;
  reply.request = m.request;
  reply.result = backend_.status;
  reply.driver_version = backend_.driver_version;
  reply.note = backend_.note;
  for (const cuda_device_facts& d : backend_.devices) {
    p::cuda_device_desc desc;
    desc.ordinal = static_cast<uint32_t>(d.ordinal);
    desc.name = d.name;
    desc.uuid = d.uuid;
    desc.total_memory = d.total_memory;
    desc.attributes.assign(d.attributes.begin(), d.attributes.end());
    if (desc.attributes.size() > 1024) desc.attributes.resize(1024);
    reply.devices.push_back(std::move(desc));
  }
  outbox_.push_message(reply);
  return true;
}

bool session_cuda::admit_object() {
  return quota_.admit_object(objects_.size()) == CL_SUCCESS;
}

bool session_cuda::on(const p::cuda_create_context& m) {
  if (m.context == 0 || objects_.count(m.context))
    return violate("cuda_create_context: context id " + std::to_string(m.context) + " is 0 or in use");
  if (drv_ == nullptr || m.ordinal >= backend_.devices.size()) {
    answer_status(m.request, drv_ == nullptr ? CUDA_ERROR_NO_DEVICE : CUDA_ERROR_INVALID_DEVICE);
    return true;
  }
  if (!admit_object()) {
    answer_status(m.request, CUDA_ERROR_OUT_OF_MEMORY);
    return true;
  }
  CUdevice device = 0;
  CUresult rc = drv_->cuDeviceGet(&device, backend_.devices[m.ordinal].ordinal);
  auto c = std::make_unique<context_state>();
  c->device = device;
  c->id = m.context;
  c->ordinal = m.ordinal;
  // Scheduling flags only: the host-mapping flag asks for what a remote
  // context cannot give (the client refuses it before it gets here).
  if (rc == CUDA_SUCCESS && primary_contexts() && drv_->cuDevicePrimaryCtxRetain && drv_->cuDevicePrimaryCtxRelease) {
    rc = drv_->cuDevicePrimaryCtxRetain(&c->handle, device);
    c->primary = true;
    if (rc == CUDA_SUCCESS) rc = drv_->cuCtxSetCurrent(c->handle);
  } else if (rc == CUDA_SUCCESS) {
    rc = drv_->cuCtxCreate(&c->handle, m.flags & 0x7u, device);
  }
  if (rc != CUDA_SUCCESS) {
    FERRY_DEBUG("cuda", "session %s: creating a context on device %u failed: %s", label_.c_str(), m.ordinal,
                name_of(rc));
    answer_status(m.request, rc);
    return true;
  }
  current_ = c->handle;  // cuCtxCreate makes it current
  c->sendable = std::make_shared<registered_staging>(*drv_, max_spare_staging);
  // The session's first context on each device only: pinned memory is no
  // session quota's, and a program that makes many contexts would pin for each.
  if (prewarm && prewarmed_devices_.insert(m.ordinal).second) {
    c->prewarming_in = c->prewarming_back = true;
    c->prewarm = std::thread([this, state = c.get()] { prewarm_staging(*state); });
  }
  object o{object::kind::context};
  o.context = c.get();
  objects_.emplace(m.context, o);
  contexts_.emplace(m.context, std::move(c));
  answer_status(m.request, CUDA_SUCCESS);
  return true;
}

void session_cuda::forget_objects_of(const context_state* c) {
  for (auto it = objects_.begin(); it != objects_.end();) {
    if (it->second.context == c) {
      set_recorded_on(it->second, nullptr);
      it = objects_.erase(it);
    } else {
      ++it;
    }
  }
}

void session_cuda::set_recorded_on(object& event, stream_state* s) {
  if (event.recorded_on == s) return;
  if (event.recorded_on != nullptr) --event.recorded_on->events;
  if (s != nullptr) ++s->events;
  event.recorded_on = s;
}

void session_cuda::forget_released_streams() {
  std::vector<const stream_state*> named;
  {
    std::lock_guard lock(watch_mutex_);
    if (finishing_ > 0) return;  // watches out of the list may name one: next time
    for (const watch& w : watches_)
      for (const watch_point& point : w.points) named.push_back(point.stream);
  }
  std::sort(named.begin(), named.end());
  std::erase_if(stream_storage_, [&](const std::unique_ptr<stream_state>& s) {
    return s->released && s->events == 0 && !std::binary_search(named.begin(), named.end(), s.get());
  });
}

void session_cuda::destroy_context(context_state& c) {
  c.prewarm_cancelled = true;  // a context destroyed at once need not wait for all of it
  if (c.prewarm.joinable()) c.prewarm.join();
  make_current(c);
  drv_->cuCtxSynchronize();
  // The watcher answers what waited on the context before it goes.
  {
    std::unique_lock lock(watch_mutex_);
    watch_cv_.notify_one();
    watch_cv_.wait(lock, [&] {
      return finishing_ == 0 &&
             std::none_of(watches_.begin(), watches_.end(), [&](const watch& w) { return w.context == &c; });
    });
  }
  for (CUevent e : c.spare_events) drv_->cuEventDestroy(e);
  c.spare_events.clear();
  for (CUstream s : c.spare_wait_streams) drv_->cuStreamDestroy(s);
  c.spare_wait_streams.clear();
  for (auto& [size, block] : c.spare_staging) drv_->cuMemFreeHost(block.data);
  c.spare_staging.clear();
  for (const staging_block& block : c.parked_staging) drv_->cuMemFreeHost(block.data);
  c.parked_staging.clear();
  // Blocks the bulk stream still holds stay readable (registered_staging).
  if (c.sendable) c.sendable->retire();
  if (c.primary) {
    // What was made in it goes with the last release only: free it now.
    for (const auto& [address, size] : c.allocations) drv_->cuMemFree(address);
    drv_->cuDevicePrimaryCtxRelease(c.device);
  } else {
    drv_->cuCtxDestroy(c.handle);  // its streams, events, modules and memory with it
  }
  current_ = nullptr;
}

bool session_cuda::on(const p::cuda_release& m) {
  auto it = objects_.find(m.id);
  if (it == objects_.end()) return true;  // released twice, or its creation failed: nothing to do
  object o = it->second;
  CUresult rc = CUDA_SUCCESS;
  if (o.what == object::kind::context) {
    auto c = contexts_.find(m.id);
    for (const auto& [address, size] : c->second->allocations) allocated_ -= size;
    destroy_context(*c->second);
    forget_objects_of(c->second.get());
    for (stream_state* s : c->second->streams) s->released = true;
    contexts_.erase(c);
    forget_released_streams();
    return true;
  }
  if (!make_current(*o.context)) return true;
  switch (o.what) {
    case object::kind::module:
      rc = drv_->cuModuleUnload(static_cast<CUmodule>(o.handle));
      break;
    case object::kind::stream: {
      rc = drv_->cuStreamDestroy(static_cast<CUstream>(o.handle));
      auto& list = o.context->streams;
      list.erase(std::remove(list.begin(), list.end(), o.stream), list.end());
      // Its state stays while watches or events name it (they order answers by it).
      o.stream->released = true;
      forget_released_streams();
      break;
    }
    case object::kind::event:
      rc = drv_->cuEventDestroy(static_cast<CUevent>(o.handle));
      set_recorded_on(it->second, nullptr);
      break;
    default:
      break;
  }
  if (rc != CUDA_SUCCESS) defer(*o.context, rc, "releasing an object");
  objects_.erase(it);
  return true;
}

// ---------------------------------------------------------------------------
// Memory

bool session_cuda::on(const p::cuda_mem_alloc& m) {
  CUresult rc;
  context_state* c = enter(m.context, rc);
  p::cuda_pointer reply{m.request, rc, 0, 0};
  if (c != nullptr) {
    CUdeviceptr address = 0;
    if (m.size == 0)
      reply.result = CUDA_ERROR_INVALID_VALUE;
    else if (quota_.admit_memory(allocated_, m.size) != CL_SUCCESS)
      reply.result = CUDA_ERROR_OUT_OF_MEMORY;  // the session's --session-memory (logged by the quota)
    else
      reply.result = drv_->cuMemAlloc(&address, m.size);
    if (reply.result == CUDA_SUCCESS) {
      c->allocations[address] = m.size;
      allocated_ += m.size;
      reply.address = address;
      reply.size = m.size;
    }
  }
  outbox_.push_message(reply);
  return true;
}

bool session_cuda::on(const p::cuda_mem_free& m) {
  CUresult rc;
  context_state* c = enter(m.context, rc);
  if (c == nullptr) return true;
  auto it = c->allocations.find(m.address);
  if (it == c->allocations.end()) {
    defer(*c, CUDA_ERROR_INVALID_VALUE, "cuMemFree of an address the session did not allocate");
    return true;
  }
  // cuMemFree waits for the work that may use the memory, as CUDA's does.
  rc = drv_->cuMemFree(m.address);
  if (rc != CUDA_SUCCESS) defer(*c, rc, "cuMemFree");
  allocated_ -= it->second;
  c->allocations.erase(it);
  return true;
}

bool session_cuda::on(const p::cuda_mem_get_info& m) {
  CUresult rc;
  context_state* c = enter(m.context, rc);
  p::cuda_mem_info reply{m.request, rc, 0, 0};
  if (c != nullptr) {
    size_t free = 0, total = 0;
    reply.result = drv_->cuMemGetInfo(&free, &total);
    reply.free = free;
    reply.total = total;
  }
  outbox_.push_message(reply);
  return true;
}

// ---------------------------------------------------------------------------
// Modules, functions, linking

namespace {

/// The options a JIT gets: the client's numeric ones, then the server's own
/// log buffers and wall time (their contents go back in the reply).
struct jit_options {
  std::vector<CUjit_option> keys;
  std::vector<void*> values;
  std::string info_log, error_log;
  float wall_ms = 0;
  size_t wall_index = SIZE_MAX;

  explicit jit_options(const std::vector<p::cuda_jit_option>& from) {
    int64_t info_size = 0, error_size = 0;
    for (const p::cuda_jit_option& o : from) {
      switch (o.option) {
        case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: info_size = std::clamp<int64_t>(o.value, 0, max_jit_log); break;
        case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: error_size = std::clamp<int64_t>(o.value, 0, max_jit_log); break;
        case CU_JIT_WALL_TIME:
        case CU_JIT_INFO_LOG_BUFFER:
        case CU_JIT_ERROR_LOG_BUFFER:
          break;  // the server's own, below
        default:
          keys.push_back(static_cast<CUjit_option>(o.option));
          values.push_back(reinterpret_cast<void*>(static_cast<intptr_t>(o.value)));
      }
    }
    if (plain_jit()) info_size = error_size = 0;
    info_log.assign(static_cast<size_t>(info_size), '\0');
    error_log.assign(static_cast<size_t>(error_size), '\0');
    if (info_size > 0) {
      keys.push_back(CU_JIT_INFO_LOG_BUFFER);
      values.push_back(info_log.data());
      keys.push_back(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
      values.push_back(reinterpret_cast<void*>(static_cast<intptr_t>(info_size)));
    }
    if (error_size > 0) {
      keys.push_back(CU_JIT_ERROR_LOG_BUFFER);
      values.push_back(error_log.data());
      keys.push_back(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
      values.push_back(reinterpret_cast<void*>(static_cast<intptr_t>(error_size)));
    }
    if (plain_jit()) return;
    wall_index = keys.size();
    keys.push_back(CU_JIT_WALL_TIME);
    values.push_back(nullptr);
  }
  /// After the JIT ran: the logs cut at their NUL, the wall time read.
  void collect() {
    info_log.resize(std::strlen(info_log.c_str()));
    error_log.resize(std::strlen(error_log.c_str()));
    if (wall_index == SIZE_MAX) return;
    uint32_t bits = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(values[wall_index]));
    std::memcpy(&wall_ms, &bits, sizeof wall_ms);
  }
  uint64_t wall_ns() const { return wall_ms > 0 ? static_cast<uint64_t>(static_cast<double>(wall_ms) * 1e6) : 0; }
};

}  // namespace

bool session_cuda::on(const p::cuda_module_load& m) {
  if (m.module == 0 || objects_.count(m.module))
    return violate("cuda_module_load: module id " + std::to_string(m.module) + " is 0 or in use");
  CUresult rc;
  context_state* c = enter(m.context, rc);
  p::cuda_module_reply reply{m.request, rc, {}, {}, 0};
  if (c != nullptr && !admit_object()) {
    reply.result = CUDA_ERROR_OUT_OF_MEMORY;
  } else if (c != nullptr) {
    // A PTX image must end with its NUL: the driver reads it as a C string.
    std::vector<uint8_t> image(m.image.begin(), m.image.end());
    image.push_back(0);
    jit_options jit(m.options);
    CUmodule module = nullptr;
    reply.result = drv_->cuModuleLoadDataEx(&module, image.data(), static_cast<unsigned>(jit.keys.size()),
                                            jit.keys.data(), jit.values.data());
    jit.collect();
    reply.info_log = std::move(jit.info_log);
    reply.error_log = std::move(jit.error_log);
    reply.wall_time_ns = jit.wall_ns();
    if (reply.result == CUDA_SUCCESS) {
      object o{object::kind::module};
      o.context = c;
      o.handle = module;
      objects_.emplace(m.module, o);
    } else {
      FERRY_DEBUG("cuda", "session %s: loading a module failed: %s %s", label_.c_str(), name_of(reply.result),
                  reply.error_log.c_str());
    }
  }
  outbox_.push_message(reply);
  return true;
}

bool session_cuda::on(const p::cuda_get_function& m) {
  if (m.function == 0 || objects_.count(m.function))
    return violate("cuda_get_function: function id " + std::to_string(m.function) + " is 0 or in use");
  p::cuda_function_reply reply{m.request, CUDA_ERROR_INVALID_HANDLE, 0, {}, {}};
  object* module = find(m.module, object::kind::module);
  if (module != nullptr && !admit_object()) {
    reply.result = CUDA_ERROR_OUT_OF_MEMORY;
  } else if (module != nullptr && make_current(*module->context)) {
    CUfunction f = nullptr;
    reply.result = drv_->cuModuleGetFunction(&f, static_cast<CUmodule>(module->handle), m.name.c_str());
    if (reply.result == CUDA_SUCCESS) {
      object o{object::kind::function};
      o.context = module->context;
      o.handle = f;
      if (drv_->cuFuncGetParamInfo) {
        reply.params_known = 1;
        for (size_t i = 0; i < 4096; ++i) {
          size_t offset = 0, size = 0;
          if (drv_->cuFuncGetParamInfo(f, i, &offset, &size) != CUDA_SUCCESS) break;
          reply.params.push_back({static_cast<uint32_t>(offset), static_cast<uint32_t>(size)});
          o.params_size = std::max<uint32_t>(o.params_size, static_cast<uint32_t>(offset + size));
        }
      }
      for (int a = 0; a < CU_FUNC_ATTRIBUTE_MAX && a < 64; ++a) {
        int value = 0;
        if (drv_->cuFuncGetAttribute(&value, static_cast<CUfunction_attribute>(a), f) != CUDA_SUCCESS) value = 0;
        reply.attributes.push_back(value);
      }
      objects_.emplace(m.function, o);
    }
  }
  outbox_.push_message(reply);
  return true;
}

bool session_cuda::on(const p::cuda_get_global& m) {
  p::cuda_pointer reply{m.request, CUDA_ERROR_INVALID_HANDLE, 0, 0};
  object* module = find(m.module, object::kind::module);
  if (module != nullptr && make_current(*module->context)) {
    CUdeviceptr address = 0;
    size_t size = 0;
    reply.result = drv_->cuModuleGetGlobal(&address, &size, static_cast<CUmodule>(module->handle), m.name.c_str());
    if (reply.result == CUDA_SUCCESS) {
      module->context->globals[address] = size;
      reply.address = address;
      reply.size = size;
    }
  }
  outbox_.push_message(reply);
  return true;
}

bool session_cuda::on(const p::cuda_link& m) {
  CUresult rc;
  context_state* c = enter(m.context, rc);
  p::cuda_link_reply reply{m.request, rc, {}, {}, {}, 0};
  if (c != nullptr) {
    jit_options jit(m.options);
    CUlinkState state = nullptr;
    reply.result = drv_->cuLinkCreate(static_cast<unsigned>(jit.keys.size()), jit.keys.data(), jit.values.data(),
                                      &state);
    for (size_t i = 0; reply.result == CUDA_SUCCESS && i < m.inputs.size(); ++i) {
      std::vector<uint8_t> data(m.inputs[i].data.begin(), m.inputs[i].data.end());
      const auto type = static_cast<CUjitInputType>(m.inputs[i].type);
      if (type == CU_JIT_INPUT_PTX && (data.empty() || data.back() != 0)) data.push_back(0);
      reply.result = drv_->cuLinkAddData(state, type, data.data(), data.size(),
                                         m.inputs[i].name.empty() ? nullptr : m.inputs[i].name.c_str(), 0, nullptr,
                                         nullptr);
    }
    if (reply.result == CUDA_SUCCESS) {
      void* cubin = nullptr;
      size_t size = 0;
      reply.result = drv_->cuLinkComplete(state, &cubin, &size);
      if (reply.result == CUDA_SUCCESS && size <= p::max_bytes_field - 4096) {
        const auto* bytes = static_cast<const uint8_t*>(cubin);
        reply.image.assign(bytes, bytes + size);
      } else if (reply.result == CUDA_SUCCESS) {
        reply.result = CUDA_ERROR_OUT_OF_MEMORY;
      }
    }
    if (state != nullptr) {
      jit.collect();
      drv_->cuLinkDestroy(state);
    }
    reply.info_log = std::move(jit.info_log);
    reply.error_log = std::move(jit.error_log);
    reply.wall_time_ns = jit.wall_ns();
  }
  outbox_.push_message(reply);
  return true;
}

bool session_cuda::on(const p::cuda_func_set_attribute& m) {
  CUresult rc = CUDA_ERROR_INVALID_HANDLE;
  object* f = find(m.function, object::kind::function);
  if (f != nullptr && make_current(*f->context))
    rc = drv_->cuFuncSetAttribute(static_cast<CUfunction>(f->handle), static_cast<CUfunction_attribute>(m.attribute),
                                  m.value);
  answer_status(m.request, rc);
  return true;
}

// ---------------------------------------------------------------------------
// Work on streams: never waits

bool session_cuda::on(const p::cuda_launch& m) {
  CUresult rc;
  context_state* c = enter(m.context, rc);
  if (c == nullptr) return true;  // the client checked its context; a released one's work is dropped
  object* f = find(m.function, object::kind::function);
  stream_state* s = find_stream(*c, m.stream);
  if (f == nullptr || f->context != c || s == nullptr) {
    defer(*c, CUDA_ERROR_INVALID_HANDLE, "a launch naming an unknown function or stream");
    return true;
  }
  if (m.params.size() > max_launch_params) {
    defer(*c, CUDA_ERROR_INVALID_VALUE, "a launch with more than 32 KiB of parameters");
    return true;
  }
  std::vector<uint8_t> params(m.params.begin(), m.params.end());
  size_t size = params.size();
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER(), params.data(), CU_LAUNCH_PARAM_BUFFER_SIZE(), &size,
                   CU_LAUNCH_PARAM_END()};
  rc = drv_->cuLaunchKernel(static_cast<CUfunction>(f->handle), m.grid[0], m.grid[1], m.grid[2], m.block[0],
                            m.block[1], m.block[2], m.shared_bytes, s->handle, nullptr,
                            size == 0 ? nullptr : extra);
  if (rc != CUDA_SUCCESS) defer(*c, rc, "cuLaunchKernel");
  return true;
}

void session_cuda::free_staging_after(context_state& c, stream_state& s, staging_block staging, bool in_use) {
  if (in_use) {
    watch w;
    w.context = &c;
    w.action = watch_action::free_staging;
    w.staging = staging;
    CUresult rc;
    if (start_watch(std::move(w), {&s}, rc)) return;
    // No event: the staging may be read still; wait for the stream instead.
    drv_->cuStreamSynchronize(s.handle);
  }
  return_staging(c, staging);
}

bool session_cuda::on(const p::cuda_copy_to_device& m) {
  CUresult rc;
  context_state* c = enter(m.context, rc);
  if (c == nullptr) return true;
  stream_state* s = find_stream(*c, m.stream);
  if (s == nullptr || !owns(*c, m.destination, m.data.size())) {
    defer(*c, s == nullptr ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE,
          "a copy to device memory the session does not own");
    return true;
  }
  if (m.data.empty()) return true;
  // The bytes go through pinned staging, so that the copy is as
  // asynchronous as the client's: from pageable memory the driver would
  // wait here for the stream's earlier work.
  staging_block staging = take_staging(*c, m.data.size(), rc);
  if (rc != CUDA_SUCCESS) {
    defer(*c, rc, "cuMemAllocHost (staging)");
    return true;
  }
  std::memcpy(staging.data, m.data.data(), m.data.size());
  rc = drv_->cuMemcpyHtoDAsync(m.destination, staging.data, m.data.size(), s->handle);
  if (rc != CUDA_SUCCESS) defer(*c, rc, "cuMemcpyHtoDAsync");
  free_staging_after(*c, *s, staging, rc == CUDA_SUCCESS);
  return true;
}

namespace {

/// Pieces of a copy to the device that go to the GPU while the rest of its
/// bytes are on their way (a bulk chunk's size: with lanes the bytes come a
/// chunk at a time, in any order).
constexpr uint64_t copy_segment = p::max_bulk_chunk;

/// Where the bytes of a copy to the device land: straight in the copy's
/// pinned staging once they come in order. The control reader, which waits
/// for them, learns how far they are written (progressed) and when they are
/// all in (landed), so that it enqueues the copy segment by segment.
class pinned_landing : public server::transfer_table::landing {
 public:
  /// What has come so far.
  struct progress {
    uint8_t* staging = nullptr;  // where the bytes below `staged` are
    uint64_t staged = 0;
    uint64_t prefix = 0;  // bytes from 0 that are written
    bool ended = false;   // every byte is in (`prefix` is the total), or failed
    bool failed = false;
  };

  explicit pinned_landing(uint8_t* pinned) : pinned_(pinned) {}
  uint8_t* direct(uint64_t offset, uint64_t) override { return pinned_ + offset; }
  void progressed(uint8_t* staging, uint64_t staged, uint64_t prefix) override {
    {
      std::lock_guard lock(mutex_);
      now_.staging = staging;
      now_.staged = std::max(now_.staged, staged);
      now_.prefix = std::max(now_.prefix, prefix);
    }
    cv_.notify_all();
  }
  void landed(uint8_t* staging, uint64_t staged, uint64_t total) override {
    {
      std::lock_guard lock(mutex_);
      now_.staging = staging;
      now_.staged = staged;
      now_.prefix = total;
      now_.ended = true;
    }
    cv_.notify_all();
  }
  void failed(cl_int) override {
    {
      std::lock_guard lock(mutex_);
      now_.failed = true;
      now_.ended = true;
    }
    cv_.notify_all();
  }
  /// Waits until `bytes` from 0 are written or the transfer ended, and says
  /// how far it is; false when the session ends, or its connection stays lost
  /// past the grace period, first (transfer_table::waits_give_up: nobody
  /// fails a landing then, so the
  /// wait looks every 50 ms). The table is asked without mutex_ held: it
  /// calls progressed() under its own lock.
  bool wait(const server::transfer_table& table, uint64_t bytes, progress& out) {
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        if (cv_.wait_for(lock, std::chrono::milliseconds(50), [&] { return now_.ended || now_.prefix >= bytes; })) {
          out = now_;
          return true;
        }
      }
      if (table.waits_give_up()) return false;
    }
  }

 private:
  uint8_t* const pinned_;
  std::mutex mutex_;  // guards now_
  std::condition_variable cv_;
  progress now_;
};

}  // namespace

bool session_cuda::on(const p::cuda_copy_to_device_bulk& m) {
  CUresult rc;
  context_state* c = enter(m.context, rc);
  stream_state* s = c != nullptr ? find_stream(*c, m.stream) : nullptr;
  if (c != nullptr && (s == nullptr || !owns(*c, m.destination, m.size))) {
    defer(*c, s == nullptr ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE,
          "a copy to device memory the session does not own");
  }
  staging_block staging;
  if (c != nullptr && s != nullptr && rc == CUDA_SUCCESS && m.size > 0 && owns(*c, m.destination, m.size)) {
    staging = take_staging(*c, m.size, rc);
    if (rc != CUDA_SUCCESS) defer(*c, rc, "cuMemAllocHost (staging)");
  }
  if (staging.data == nullptr) {
    // Nothing takes the bytes: they are read off the bulk stream and dropped.
    transfers_.abandon(m.transfer);
    return true;
  }
  auto* pinned = static_cast<uint8_t*>(staging.data);
  // The copy goes to the GPU a segment at a time as the bytes come (from
  // staging, the part that came before the landing was attached), so that
  // the GPU's copy overlaps the network. The control reader waits for the
  // bytes (and so enqueues every segment in stream order): a stream has
  // nothing that could hold its later work back.
  uint64_t enqueued = 0;
  // The session ended, or its connection stayed lost past the grace period,
  // while the bytes were on their way: they may still land in the staging,
  // which is kept until the context goes (its destruction comes after the
  // bulk readers have stopped). The copy fails.
  bool gave_up = false;
  rc = CUDA_SUCCESS;
  // Enqueues the bytes [enqueued, end) a segment at a time, each copied in
  // from staging first where it came before the landing took over.
  auto enqueue_up_to = [&](const pinned_landing::progress& now, uint64_t end) {
    while (rc == CUDA_SUCCESS && enqueued < end) {
      const uint64_t piece_end = std::min(end, enqueued + copy_segment);
      if (now.staged > enqueued)
        std::memcpy(pinned + enqueued, now.staging + enqueued, std::min(piece_end, now.staged) - enqueued);
      rc = drv_->cuMemcpyHtoDAsync(m.destination + enqueued, pinned + enqueued, piece_end - enqueued, s->handle);
      if (rc == CUDA_SUCCESS) enqueued = piece_end;
    }
  };
  std::shared_ptr<pinned_landing> landing;
  pinned_landing::progress now;
  bool claimed = true;  // the table holds the bytes until write_finished
  uint8_t* data = nullptr;
  uint64_t total = 0;
  cl_int status = CL_SUCCESS;
  std::string why;
  switch (transfers_.claim_at_most(m.transfer, m.size, data, total, status, why)) {
    case server::transfer_table::claim_result::complete:
      now = {data, total, total, true, false};
      break;
    case server::transfer_table::claim_result::pending:
      landing = std::make_shared<pinned_landing>(pinned);
      if (!transfers_.attach_landing(m.transfer, landing, data, total))
        now = {data, total, total, true, false};  // every byte came meanwhile
      break;
    case server::transfer_table::claim_result::conflict:
      return violate("cuda_copy_to_device_bulk: " + why);
    default:
      claimed = false;  // aborted, refused by the quota, no memory: the copy fails below
      now.failed = now.ended = true;
      break;
  }
  // After a refused enqueue the bytes still land in the staging: it is
  // given back only once the last of them did.
  for (;;) {
    if (!now.ended) {
      const uint64_t next = rc == CUDA_SUCCESS ? std::min(m.size, enqueued + copy_segment) : m.size;
      if (!landing->wait(transfers_, next, now)) {
        gave_up = true;
        break;
      }
    }
    if (now.failed || (now.ended && now.prefix != m.size)) break;
    enqueue_up_to(now, now.ended ? now.prefix : now.prefix / copy_segment * copy_segment);
    if (now.ended) break;
  }
  const bool whole = now.ended && !now.failed && now.prefix == m.size;
  if (claimed) transfers_.write_finished(m.transfer);
  FERRY_TRACE("timeline", "session %s: cuda copy to device, transfer %llu: %llu of %llu bytes enqueued",
              label_.c_str(), static_cast<unsigned long long>(m.transfer), static_cast<unsigned long long>(enqueued),
              static_cast<unsigned long long>(m.size));
  if (rc != CUDA_SUCCESS) {
    defer(*c, rc, "cuMemcpyHtoDAsync");
  } else if (!whole) {
    // Segments already enqueued have changed the destination; CUDA leaves
    // memory undefined after a failed copy, and the error is reported.
    defer(*c, CUDA_ERROR_INVALID_VALUE, "a copy to the device whose bytes did not all come");
  }
  if (gave_up) c->parked_staging.push_back(staging);
  else free_staging_after(*c, *s, staging, enqueued > 0);
  return true;
}

bool session_cuda::on(const p::cuda_copy_from_device& m) {
  CUresult rc;
  context_state* c = enter(m.context, rc);
  if (c == nullptr) {
    outbox_.push_message(p::cuda_data{m.request, rc, {}});
    return true;
  }
  stream_state* s = find_stream(*c, m.stream);
  if (s == nullptr || m.size > p::max_cuda_copy_piece || !owns(*c, m.source, m.size)) {
    outbox_.push_message(
        p::cuda_data{m.request, s == nullptr ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE, {}});
    return true;
  }
  staging_block staging;
  if (m.size > 0) {
    staging = take_staging(*c, m.size, rc);
    if (rc == CUDA_SUCCESS) rc = drv_->cuMemcpyDtoHAsync(staging.data, m.source, m.size, s->handle);
  }
  if (rc == CUDA_SUCCESS) {
    watch w;
    w.context = c;
    w.action = watch_action::answer_data;
    w.request = m.request;
    w.staging = staging;
    w.size = m.size;
    if (start_watch(std::move(w), {s}, rc)) return true;
    drv_->cuStreamSynchronize(s->handle);
  }
  return_staging(*c, staging);
  outbox_.push_message(p::cuda_data{m.request, rc, {}});
  return true;
}

bool session_cuda::on(const p::cuda_copy_from_device_bulk& m) {
  CUresult rc;
  context_state* c = enter(m.context, rc);
  if (c == nullptr) {
    answer_status(m.request, rc);
    return true;
  }
  stream_state* s = find_stream(*c, m.stream);
  if (s == nullptr || m.size == 0 || m.size > p::max_cuda_bulk_piece || !owns(*c, m.source, m.size)) {
    answer_status(m.request, s == nullptr ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE);
    return true;
  }
  // The bytes leave from page-locked memory of the session's own (see
  // registered_staging): the bulk stream may hold them past the context.
  wait_for_prewarmed_back(*c);
  std::shared_ptr<uint8_t> block = c->sendable->take(m.size, rc);
  if (rc == CUDA_SUCCESS) rc = drv_->cuMemcpyDtoHAsync(block.get(), m.source, m.size, s->handle);
  if (rc == CUDA_SUCCESS) {
    watch w;
    w.context = c;
    w.action = watch_action::send_bulk;
    w.request = m.request;
    w.size = m.size;
    w.sendable = block;
    w.transfer = m.transfer;
    if (start_watch(std::move(w), {s}, rc)) return true;
    drv_->cuStreamSynchronize(s->handle);
  }
  answer_status(m.request, rc);
  return true;
}

bool session_cuda::on(const p::cuda_copy_on_device& m) {
  CUresult rc;
  context_state* c = enter(m.context, rc);
  if (c == nullptr) return true;
  stream_state* s = find_stream(*c, m.stream);
  if (s == nullptr || !owns(*c, m.destination, m.size) || !owns(*c, m.source, m.size)) {
    defer(*c, s == nullptr ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE,
          "a copy between device memory the session does not own");
    return true;
  }
  if (m.size == 0) return true;
  rc = drv_->cuMemcpyDtoDAsync(m.destination, m.source, m.size, s->handle);
  if (rc != CUDA_SUCCESS) defer(*c, rc, "cuMemcpyDtoDAsync");
  return true;
}

bool session_cuda::on(const p::cuda_memset& m) {
  CUresult rc;
  context_state* c = enter(m.context, rc);
  if (c == nullptr) return true;
  stream_state* s = find_stream(*c, m.stream);
  const uint64_t element = m.element_size;
  const bool sized = element == 1 || element == 2 || element == 4;
  if (s == nullptr || !sized || m.count > UINT64_MAX / 4 || !owns(*c, m.destination, m.count * element)) {
    defer(*c, s == nullptr ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE,
          "a memset of device memory the session does not own");
    return true;
  }
  if (m.count == 0) return true;
  if (element == 1)
    rc = drv_->cuMemsetD8Async(m.destination, static_cast<unsigned char>(m.value), m.count, s->handle);
  else if (element == 2)
    rc = drv_->cuMemsetD16Async(m.destination, static_cast<unsigned short>(m.value), m.count, s->handle);
  else
    rc = drv_->cuMemsetD32Async(m.destination, m.value, m.count, s->handle);
  if (rc != CUDA_SUCCESS) defer(*c, rc, "cuMemsetAsync");
  return true;
}

bool session_cuda::on(const p::cuda_create_stream& m) {
  if (m.stream == 0 || objects_.count(m.stream))
    return violate("cuda_create_stream: stream id " + std::to_string(m.stream) + " is 0 or in use");
  CUresult rc;
  context_state* c = enter(m.context, rc);
  if (c == nullptr) return true;
  if (!admit_object()) {
    defer(*c, CUDA_ERROR_OUT_OF_MEMORY, "cuStreamCreate (over the session's object limit)");
    return true;
  }
  CUstream handle = nullptr;
  if (m.priority != 0 && drv_->cuStreamCreateWithPriority)
    rc = drv_->cuStreamCreateWithPriority(&handle, m.flags & CU_STREAM_NON_BLOCKING, m.priority);
  else
    rc = drv_->cuStreamCreate(&handle, m.flags & CU_STREAM_NON_BLOCKING);
  if (rc != CUDA_SUCCESS) {
    defer(*c, rc, "cuStreamCreate");
    return true;
  }
  auto state = std::make_unique<stream_state>();
  state->handle = handle;
  object o{object::kind::stream};
  o.context = c;
  o.handle = handle;
  o.stream = state.get();
  c->streams.push_back(state.get());
  stream_storage_.push_back(std::move(state));
  objects_.emplace(m.stream, o);
  return true;
}

bool session_cuda::on(const p::cuda_create_event& m) {
  if (m.event == 0 || objects_.count(m.event))
    return violate("cuda_create_event: event id " + std::to_string(m.event) + " is 0 or in use");
  CUresult rc;
  context_state* c = enter(m.context, rc);
  if (c == nullptr) return true;
  if (!admit_object()) {
    defer(*c, CUDA_ERROR_OUT_OF_MEMORY, "cuEventCreate (over the session's object limit)");
    return true;
  }
  CUevent handle = nullptr;
  // Blocking sync only changes how a host thread waits; the watcher polls.
  rc = drv_->cuEventCreate(&handle, m.flags & ~static_cast<uint32_t>(CU_EVENT_BLOCKING_SYNC));
  if (rc != CUDA_SUCCESS) {
    defer(*c, rc, "cuEventCreate");
    return true;
  }
  object o{object::kind::event};
  o.context = c;
  o.handle = handle;
  o.flags = m.flags;
  objects_.emplace(m.event, o);
  return true;
}

bool session_cuda::on(const p::cuda_record_event& m) {
  object* e = find(m.event, object::kind::event);
  if (e == nullptr || !make_current(*e->context)) return true;
  stream_state* s = find_stream(*e->context, m.stream);
  if (s == nullptr) {
    defer(*e->context, CUDA_ERROR_INVALID_HANDLE, "cuEventRecord on an unknown stream");
    return true;
  }
  CUresult rc = drv_->cuEventRecord(static_cast<CUevent>(e->handle), s->handle);
  if (rc != CUDA_SUCCESS) {
    defer(*e->context, rc, "cuEventRecord");
    return true;
  }
  set_recorded_on(*e, s);
  e->recorded_after = s->watches;
  return true;
}

bool session_cuda::on(const p::cuda_wait_event& m) {
  CUresult rc;
  context_state* c = enter(m.context, rc);
  if (c == nullptr) return true;
  stream_state* s = find_stream(*c, m.stream);
  object* e = find(m.event, object::kind::event);
  if (s == nullptr || e == nullptr) {
    defer(*c, CUDA_ERROR_INVALID_HANDLE, "cuStreamWaitEvent naming an unknown stream or event");
    return true;
  }
  rc = drv_->cuStreamWaitEvent(s->handle, static_cast<CUevent>(e->handle), 0);
  if (rc != CUDA_SUCCESS) defer(*c, rc, "cuStreamWaitEvent");
  return true;
}

// ---------------------------------------------------------------------------
// What the client waits for

bool session_cuda::on(const p::cuda_synchronize& m) {
  CUresult rc;
  context_state* c = enter(m.context, rc);
  if (c == nullptr) {
    answer_status(m.request, rc);
    return true;
  }
  std::vector<stream_state*> streams;
  CUevent after = nullptr;  // an event's synchronization: what the point waits for
  uint64_t follows = 0;     // and the watches of its stream it must not overtake
  switch (m.kind) {
    case p::cuda_target::context:
      streams = every_stream_of(*c);
      break;
    case p::cuda_target::stream:
      if (stream_state* s = find_stream(*c, m.target)) streams.push_back(s);
      break;
    case p::cuda_target::event: {
      object* e = find(m.target, object::kind::event);
      if (e == nullptr || e->context != c) break;
      // An event never recorded has nothing to wait for. One recorded is
      // watched on a stream of Ferry's own, behind a wait for the event
      // (not on the stream it was recorded on: that stream's later work, or
      // its destruction, must not hold the answer back), and answered after
      // the earlier watches of its stream (a copy back before it arrives first).
      if (e->recorded_on == nullptr) {
        answer_status(m.request, take_deferred(*c));
        return true;
      }
      streams.push_back(e->recorded_on);
      after = static_cast<CUevent>(e->handle);
      follows = e->recorded_after;
      break;
    }
    default:
      return violate("cuda_synchronize: unknown target kind");
  }
  if (streams.empty()) {
    answer_status(m.request, CUDA_ERROR_INVALID_HANDLE);
    return true;
  }
  watch w;
  w.context = c;
  w.action = watch_action::answer_status;
  w.request = m.request;
  w.follows = follows;
  if (!start_watch(std::move(w), streams, rc, after)) answer_status(m.request, rc);
  return true;
}

bool session_cuda::on(const p::cuda_query& m) {
  CUresult rc;
  context_state* c = enter(m.context, rc);
  if (c == nullptr) {
    answer_status(m.request, rc);
    return true;
  }
  if (m.kind == p::cuda_target::stream) {
    stream_state* s = find_stream(*c, m.target);
    rc = s == nullptr ? CUDA_ERROR_INVALID_HANDLE : drv_->cuStreamQuery(s->handle);
  } else if (m.kind == p::cuda_target::event) {
    object* e = find(m.target, object::kind::event);
    rc = e == nullptr || e->context != c ? CUDA_ERROR_INVALID_HANDLE
                                         : drv_->cuEventQuery(static_cast<CUevent>(e->handle));
  } else {
    return violate("cuda_query: unknown target kind");
  }
  // An earlier refused enqueue is reported first, as the failure it was.
  if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_NOT_READY)
    if (CUresult deferred = take_deferred(*c); deferred != CUDA_SUCCESS) rc = deferred;
  answer_status(m.request, rc);
  return true;
}

bool session_cuda::on(const p::cuda_elapsed_time& m) {
  p::cuda_elapsed reply{m.request, CUDA_ERROR_INVALID_HANDLE, 0};
  object* start = find(m.start, object::kind::event);
  object* end = find(m.end, object::kind::event);
  if (start != nullptr && end != nullptr && make_current(*start->context)) {
    float ms = 0;
    reply.result = drv_->cuEventElapsedTime(&ms, static_cast<CUevent>(start->handle),
                                            static_cast<CUevent>(end->handle));
    if (reply.result == CUDA_SUCCESS) reply.nanoseconds = static_cast<uint64_t>(std::max(0.0, ms * 1e6));
  }
  outbox_.push_message(reply);
  return true;
}

// ---------------------------------------------------------------------------
// The watcher

bool session_cuda::ended(watch& w, CUresult& rc) {
  rc = CUDA_SUCCESS;
  for (const watch_point& point : w.points) {
    CUresult q = drv_->cuEventQuery(point.event);
    if (q == CUDA_ERROR_NOT_READY) return false;
    if (q != CUDA_SUCCESS && rc == CUDA_SUCCESS) rc = q;
  }
  return true;
}

void session_cuda::finish(watch& w, CUresult rc) {
  context_state& c = *w.context;
  switch (w.action) {
    case watch_action::answer_status: {
      if (rc == CUDA_SUCCESS) rc = take_deferred(c);
      outbox_.push_message_quietly(p::cuda_status{w.request, rc});
      break;
    }
    case watch_action::answer_data: {
      p::cuda_data reply{w.request, rc, {}};
      if (rc == CUDA_SUCCESS && w.size > 0) {
        const auto* bytes = static_cast<const uint8_t*>(w.staging.data);
        reply.data.assign(bytes, bytes + w.size);
      }
      outbox_.push_message_quietly(reply);
      break;
    }
    case watch_action::send_bulk: {
      if (rc != CUDA_SUCCESS) {
        outbox_.push_message_quietly(p::cuda_status{w.request, rc});
        break;
      }
      // The answer follows the bytes, as a read's completion does: the bulk
      // writer sends it once the last byte is written.
      server::bulk_job job;
      job.command = w.transfer;
      job.size = w.size;
      job.bytes = w.sendable.get();
      job.keeper = std::move(w.sendable);
      // (The session's outbox outlives this object and its bulk writer.)
      job.after_sent = [outbox = &outbox_, request = w.request] {
        outbox->push_message_quietly(p::cuda_status{request, CUDA_SUCCESS});
        outbox->send_or_wake();
      };
      bulk_.push(std::move(job));
      break;
    }
    case watch_action::free_staging:
      break;
  }
}

void session_cuda::watcher_loop() {
  using clock = std::chrono::steady_clock;
  // Where cores are spare it polls without pause while anything is watched
  // (a client waits for it: a pause would be added to its wait, and a thread
  // woken from sleep takes tens of µs; native CUDA's waits spin too) for up to
  // a second of no progress, and for 2 ms after each answer when nothing is
  // (the rCUDA paper's trick: the next synchronization is usually
  // microseconds away). Then it backs off to 200 µs pauses, and sleeps when
  // nothing is watched. Without spare cores both windows are 50 µs.
  const bool spare = host_has_spare_cores();
  const auto spin = std::chrono::microseconds(spare ? 2000 : 50);
  const auto watched_spin = std::chrono::microseconds(spare ? 1000000 : 50);
  auto last_progress = clock::now();
  auto pause = std::chrono::microseconds(5);
  CUcontext current = nullptr;
  std::vector<std::pair<watch, CUresult>> done;
  std::unique_lock lock(watch_mutex_);
  for (;;) {
    if (stop_) return;
    if (watches_.empty()) {
      if (clock::now() - last_progress < spin) {
        lock.unlock();
        std::this_thread::yield();
        lock.lock();
      } else {
        watch_cv_.wait(lock, [&] { return stop_ || !watches_.empty(); });
        last_progress = clock::now();  // the new watch's wait starts now
        pause = std::chrono::microseconds(5);
      }
      continue;
    }
    // Watches in the order made; one that has not ended holds back the
    // later watches of its streams (their answers must not overtake its). An
    // event synchronization is held back only by the watches made before
    // its event was recorded.
    std::vector<std::pair<const stream_state*, uint64_t>> held;  // stream, seq
    for (auto it = watches_.begin(); it != watches_.end();) {
      bool blocked = std::any_of(it->points.begin(), it->points.end(), [&](const watch_point& point) {
        return std::any_of(held.begin(), held.end(), [&](const auto& h) {
          return h.first == point.stream && (point.seq != 0 || h.second <= it->follows);
        });
      });
      CUresult rc = CUDA_SUCCESS;
      if (!blocked) {
        if (current != it->context->handle) {
          drv_->cuCtxSetCurrent(it->context->handle);
          current = it->context->handle;
        }
        blocked = !ended(*it, rc);
      }
      if (blocked) {
        for (const watch_point& point : it->points)
          if (point.seq != 0) held.emplace_back(point.stream, point.seq);
        ++it;
        continue;
      }
      for (const watch_point& point : it->points) it->context->spare_events.push_back(point.event);
      if (it->wait_stream != nullptr) it->context->spare_wait_streams.push_back(it->wait_stream);
      done.emplace_back(std::move(*it), rc);
      it = watches_.erase(it);
    }
    if (!done.empty()) {
      // Answered without the lock, in order, and sent from this thread when
      // the writer is idle (no hand-off to wake it).
      finishing_ += done.size();
      lock.unlock();
      for (auto& [w, rc] : done) finish(w, rc);
      outbox_.send_or_wake();
      lock.lock();
      for (auto& [w, rc] : done) return_staging_locked(*w.context, w.staging);
      finishing_ -= done.size();
      done.clear();
      last_progress = clock::now();
      pause = std::chrono::microseconds(5);
      watch_cv_.notify_all();  // destroy_context may wait for this context's watches
      continue;
    }
    if (clock::now() - last_progress < watched_spin) {
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
      continue;
    }
    watch_cv_.wait_for(lock, pause, [&] { return stop_; });
    pause = std::min(pause * 2, std::chrono::microseconds(200));
  }
}

bool session_cuda::gpu_work_ends_within(std::chrono::milliseconds limit) {
  // A point on every stream: the NULL stream does not wait for non-blocking ones.
  std::vector<std::pair<context_state*, CUevent>> points;
  for (auto& [id, c] : contexts_) {
    if (!make_current(*c)) continue;
    for (stream_state* s : every_stream_of(*c)) {
      CUresult rc;
      CUevent e = take_event(*c, rc);
      if (e == nullptr) continue;
      if (drv_->cuEventRecord(e, s->handle) == CUDA_SUCCESS) {
        points.emplace_back(c.get(), e);
      } else {  // a context failed for good has nothing left to run
        std::lock_guard lock(watch_mutex_);
        c->spare_events.push_back(e);
      }
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    std::erase_if(points, [&](const std::pair<context_state*, CUevent>& point) {
      if (make_current(*point.first) && drv_->cuEventQuery(point.second) == CUDA_ERROR_NOT_READY) return false;
      std::lock_guard lock(watch_mutex_);
      point.first->spare_events.push_back(point.second);
      return true;
    });
    if (points.empty()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void session_cuda::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  const bool ended = contexts_.empty() || gpu_work_ends_within(end_wait);
  if (ended) {
    for (auto& [id, c] : contexts_) destroy_context(*c);
  } else {
    FERRY_WARN("cuda",
               "session %s: its GPU work has not ended %lld s after the session did (a kernel that does not "
               "return?); its contexts are left to the driver, which ends them when this process exits",
               label_.c_str(), static_cast<long long>(end_wait.count()));
  }
  // The watcher stops even with watches left (those of contexts left to the driver).
  {
    std::lock_guard lock(watch_mutex_);
    stop_ = true;
  }
  watch_cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
  contexts_.clear();
  objects_.clear();
}

}  // namespace ferry::cuda
