#include "cuda/client/driver_state.hpp"

#include <cstdlib>
#include <functional>
#include <unordered_map>

#include "client/core/objects.hpp"
#include "client/core/servers/config.hpp"
#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "protocol/version.hpp"

namespace ferry::client {
// The client core's OpenCL objects carry the ICD dispatch table of libferry.
// This library uses the core's connections only and makes no OpenCL object,
// so its table is empty: nothing could dispatch through it.
extern const cl_icd_dispatch dispatch_table;
const cl_icd_dispatch dispatch_table{};
}  // namespace ferry::client

namespace ferry::cuda {

uint64_t CUstream_st::begin_copy_back() {
  std::lock_guard lock(copies_mutex_);
  copies_pending_.insert(++copies_asked_);
  return copies_asked_;
}

void CUstream_st::end_copy_back(uint64_t number) {
  std::lock_guard lock(copies_mutex_);
  copies_pending_.erase(number);
}

uint64_t CUstream_st::copies_back_asked() {
  std::lock_guard lock(copies_mutex_);
  return copies_asked_;
}

bool CUstream_st::copy_back_pending(uint64_t number) {
  std::lock_guard lock(copies_mutex_);
  return !copies_pending_.empty() && *copies_pending_.begin() <= number;
}

void CUctx_st::bulk_piece_begun() {
  std::lock_guard lock(bulk_mutex_);
  ++bulk_pending_;
}

void CUctx_st::bulk_piece_ended() {
  // Notified under the lock: a waiter that sees 0 may free the context.
  std::lock_guard lock(bulk_mutex_);
  --bulk_pending_;
  bulk_cv_.notify_all();
}

void CUctx_st::wait_for_bulk_pieces() {
  std::unique_lock lock(bulk_mutex_);
  bulk_cv_.wait(lock, [&] { return bulk_pending_ == 0; });
}

bool CUctx_st::bulk_pieces_pending() {
  std::lock_guard lock(bulk_mutex_);
  return bulk_pending_ > 0;
}

bool CUctx_st::owns(uint64_t address, uint64_t size) {
  std::lock_guard lock(mutex);
  return within_one(allocations, address, size) || within_one(globals, address, size);
}

bool CUctx_st::allocation_of(uint64_t address, uint64_t& base, uint64_t& size) {
  std::lock_guard lock(mutex);
  // A piece before its slab: the piece is what the program allocated.
  for (const auto* ranges : {&pieces, &allocations, &globals}) {
    auto it = ranges->upper_bound(address);
    if (it == ranges->begin()) continue;
    --it;
    if (address - it->first < it->second) {
      base = it->first;
      size = it->second;
      return true;
    }
  }
  return false;
}

uint32_t CUfunc_st::params_size() const {
  uint32_t end = 0;
  for (const auto& p : params) end = std::max(end, p.offset + p.size);
  return end;
}

namespace {

std::mutex init_mutex;
std::atomic<bool> init_called{false};
CUresult init_result = CUDA_ERROR_NOT_INITIALIZED;  // guarded by init_mutex until init_called
driver_state* the_state = nullptr;

/// Connects to one server and asks for its CUDA devices.
void connect(driver_state& st, const std::string& text, const protocol::credentials& who) {
  auto s = std::make_unique<server_link>();
  s->address = text;
  endpoint where;
  std::string error;
  if (!parse_endpoint(text, protocol::default_port, where, error)) {
    FERRY_WARN("cuda", "ignoring server '%s': %s", text.c_str(), error.c_str());
    return;
  }
  s->link = client::connection::open(where, who, error);
  if (!s->link) {
    FERRY_WARN("cuda", "server %s is not available: %s; its CUDA devices are left out", text.c_str(), error.c_str());
    return;
  }
  // Its calls return CUDA_ERROR_DEVICE_UNAVAILABLE then (entry_points.cpp, `lost`).
  s->link->name_failures([](cl_int) { return std::string("CUDA_ERROR_DEVICE_UNAVAILABLE"); });
  if (s->link->version() < protocol::cuda_version) {
    FERRY_WARN("cuda", "server %s speaks protocol version %u, older than CUDA remoting (%u); it has no CUDA devices",
               text.c_str(), s->link->version(), protocol::cuda_version);
    s->link->say_goodbye();
    return;
  }
  protocol::cuda_get_devices ask;
  auto answer = s->link->call<protocol::cuda_devices>(ask);
  if (!answer) {
    FERRY_WARN("cuda", "server %s did not list its CUDA devices", text.c_str());
    return;
  }
  if (answer->devices.empty()) {
    FERRY_INFO("cuda", "server %s has no CUDA device: %s", text.c_str(), answer->note.c_str());
    s->link->say_goodbye();
    return;
  }
  for (auto& d : answer->devices) {
    device_entry e;
    e.server = s.get();
    e.desc = std::move(d);
    st.devices.push_back(std::move(e));
  }
  FERRY_INFO("cuda", "server %s: %zu CUDA device(s)", text.c_str(), answer->devices.size());
  st.servers.push_back(std::move(s));
}

CUresult connect_all() {
  auto* st = new driver_state;  // lives as long as the process
  the_state = st;
  client::server_list list = client::configured_servers();
  if (list.addresses.empty()) {
    FERRY_WARN("cuda",
               "no Ferry server configured (set FERRY_SERVERS=host:port, or run the program with "
               "'ferry run --cuda'); there is no CUDA device");
    return CUDA_ERROR_NO_DEVICE;
  }
  protocol::credentials who;
  std::string error;
  if (!client::load_credentials(who, error)) {
    FERRY_ERROR("cuda", "%s; there is no CUDA device", error.c_str());
    return CUDA_ERROR_NO_DEVICE;
  }
  for (const std::string& address : list.addresses) connect(*st, address, who);
  // The sessions end at exit at once rather than after the grace period.
  std::atexit([] {
    for (auto& s : the_state->servers) s->link->say_goodbye();
  });
  return st->devices.empty() ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}

// The context stack of each thread. Plain storage, never destroyed: a program's
// exit handlers (GCC's libgomp frees its device memory and contexts in one) run
// after the main thread's thread_local destructors, and must still find it.
constexpr int max_context_depth = 256;
thread_local CUctx_st* context_stack[max_context_depth];
thread_local int context_depth = 0;
thread_local bool callback_thread = false;

/// The thread that runs stream callbacks and host functions in order.
class callback_runner {
 public:
  void post(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
      if (!thread_.joinable())
        thread_ = std::thread([this] {
          name_this_thread("cuda-callbacks");
          callback_thread = true;
          loop();
        });
    }
    cv_.notify_one();
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return !jobs_.empty(); });
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }
  std::mutex mutex_;  // guards jobs_, thread_
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::thread thread_;  // runs until the process ends (detached at exit below)
};

callback_runner& callbacks() {
  // Never destroyed: a callback may still be queued while the process exits.
  static auto* runner = new callback_runner;
  return *runner;
}

}  // namespace

CUresult initialize(unsigned flags) {
  std::lock_guard lock(init_mutex);
  if (!init_called.load()) {
    init_result = connect_all();
    init_called.store(true);
  }
  return init_result;
}

bool initialized() { return init_called.load(std::memory_order_acquire); }

driver_state& driver() { return *the_state; }

protocol::object_id new_id() { return the_state->next_id.fetch_add(1, std::memory_order_relaxed); }

CUctx_st* current_context() { return context_depth == 0 ? nullptr : context_stack[context_depth - 1]; }

void set_current_context(CUctx_st* c) {
  if (c == nullptr) {
    if (context_depth > 0) --context_depth;
  } else if (context_depth == 0) {
    context_stack[context_depth++] = c;
  } else {
    context_stack[context_depth - 1] = c;
  }
}

bool push_context(CUctx_st* c) {
  if (context_depth == max_context_depth) return false;
  context_stack[context_depth++] = c;
  return true;
}

CUctx_st* pop_context() { return context_depth == 0 ? nullptr : context_stack[--context_depth]; }

void forget_context_here(CUctx_st* c) {
  int kept = 0;
  for (int i = 0; i < context_depth; ++i)
    if (context_stack[i] != c) context_stack[kept++] = context_stack[i];
  context_depth = kept;
}

namespace {

struct handle_registry {
  std::mutex mutex;  // guards live, graveyard
  std::unordered_map<void*, void (*)(void*)> live;
  std::deque<std::pair<void*, void (*)(void*)>> graveyard;
  static constexpr size_t graveyard_size = 4096;
};

handle_registry& handles() {
  // Never destroyed: handles are used until the process ends (exit handlers too).
  static auto* registry = new handle_registry;
  return *registry;
}

}  // namespace

void keep_object(void* object, void (*destroy)(void*)) {
  std::lock_guard lock(handles().mutex);
  handles().live.emplace(object, destroy);
}

void bury_object(void* object) {
  std::pair<void*, void (*)(void*)> freed{nullptr, nullptr};
  {
    handle_registry& r = handles();
    std::lock_guard lock(r.mutex);
    auto it = r.live.find(object);
    if (it == r.live.end()) return;
    r.graveyard.emplace_back(it->first, it->second);
    r.live.erase(it);
    if (r.graveyard.size() > handle_registry::graveyard_size) {
      freed = r.graveyard.front();
      r.graveyard.pop_front();
    }
  }
  if (freed.first != nullptr) freed.second(freed.first);
}

bool in_callback() { return callback_thread; }

void run_on_callback_thread(std::function<void()> work) { callbacks().post(std::move(work)); }

}  // namespace ferry::cuda
