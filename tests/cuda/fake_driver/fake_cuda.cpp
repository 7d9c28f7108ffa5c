// libferry_fake_cuda.so: a CPU stand-in for NVIDIA's libcuda.so.1, for tests only.
//
// CI machines have no GPU, yet the daemon's CUDA path (src/cuda/server) must run end to
// end there. This library exports, with C linkage and under NVIDIA's real (versioned)
// symbol names, the driver entry points the daemon uses, plus cuGetProcAddress_v2, and
// implements them on the CPU:
//
// - Devices: FERRY_FAKE_CUDA_DEVICES of them (default 1, read at each cuInit; 0 makes
//   cuInit answer CUDA_ERROR_NO_DEVICE), 1 GiB each, a fixed attribute table.
// - "Device" memory is host memory (256-byte aligned): a device pointer is a host address
//   the fake dereferences. Copies and kernels check their ranges against the table of
//   allocations and module globals.
// - Each stream, and each context's NULL stream, is a FIFO served by a thread of its own,
//   so asynchronous work really completes later. The NULL stream waits for the
//   context's blocking streams and they wait for it, as CUDA's legacy stream does.
//   FERRY_FAKE_CUDA_DELAY_US makes every kernel sleep that long first.
// - Modules are text: PTX (a ".version" line) or what the fake's own cuLinkComplete makes
//   ("FERRYFAKECUBIN\n" + the linked PTX). ".entry NAME(" lines declare kernels, ".global"
//   lines globals. Only the kernels in `kernels` below exist; they run on the stream's
//   thread, looping over gridDim.x * blockDim.x threads (y and z are not looped).
// - The kernel `fault` makes its context fail with CUDA_ERROR_ILLEGAL_ADDRESS for good, as
//   a real fault does; so does a kernel whose pointers leave the allocations. The kernel
//   `hang` never returns.
//
// Not modelled: per-thread default streams (they are the legacy stream), priorities,
// peer access, graphs, arrays, managed memory. No CUDA call is permitted from a stream's
// thread (inside a host function or callback): CUDA_ERROR_NOT_PERMITTED, as CUDA asks.
//
// Thread safety: one mutex (`state::mutex`) guards every table; each stream has its own
// mutex for its queue. Nothing waits for a stream while holding the tables' mutex.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cuda/abi/driver_abi.hpp"
#include "cuda/abi/result_names.hpp"

using namespace ferry::cuda;

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

constexpr std::size_t device_memory = std::size_t{1} << 30;
constexpr std::size_t alignment = 256;
constexpr const char* cubin_magic = "FERRYFAKECUBIN\n";

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return std::atoi(text);
}

// ---------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------
struct context;
struct stream;

/// An operation waits for `seq` of `on` to have completed before it runs.
struct dependency {
  std::shared_ptr<stream> on;
  std::uint64_t seq;
};

/// True on a stream's own thread: no CUDA call is permitted there.
thread_local bool on_stream_thread = false;

/// A FIFO of operations served by one thread.
struct stream : std::enable_shared_from_this<stream> {
  context* ctx = nullptr;
  unsigned flags = CU_STREAM_DEFAULT;
  bool is_null_stream = false;

  std::mutex mutex;  // guards the members below
  std::condition_variable changed;
  struct operation {
    std::function<void()> run;  // may be empty: a pure wait
    std::vector<dependency> dependencies;
  };
  std::deque<operation> queue;
  std::uint64_t enqueued = 0;
  std::uint64_t completed = 0;
  bool stopping = false;
  bool finished = false;
  std::thread worker;

  void start() {
    worker = std::thread([this] { serve(); });
  }

  std::uint64_t enqueue(std::function<void()> run, std::vector<dependency> dependencies) {
    std::lock_guard<std::mutex> lock(mutex);
    queue.push_back({std::move(run), std::move(dependencies)});
    changed.notify_all();
    return ++enqueued;
  }

  std::uint64_t tail() {
    std::lock_guard<std::mutex> lock(mutex);
    return enqueued;
  }

  bool reached(std::uint64_t seq) {
    std::lock_guard<std::mutex> lock(mutex);
    return completed >= seq;
  }

  void wait_for(std::uint64_t seq) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return completed >= seq; });
  }

  /// Lets the queue drain, then ends the thread.
  void stop() {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
    changed.notify_all();
  }

  void serve() {
    pthread_setname_np(pthread_self(), is_null_stream ? "fakecuda-null" : "fakecuda-stream");
    on_stream_thread = true;
    for (;;) {
      operation op;
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return !queue.empty() || stopping; });
        if (queue.empty()) break;
        op = std::move(queue.front());
        queue.pop_front();
      }
      for (dependency& d : op.dependencies) d.on->wait_for(d.seq);
      if (op.run) op.run();
      std::lock_guard<std::mutex> lock(mutex);
      ++completed;
      changed.notify_all();
    }
    std::lock_guard<std::mutex> lock(mutex);
    finished = true;
  }
};

struct context {
  int device = 0;
  unsigned flags = 0;
  std::shared_ptr<stream> null_stream;
  std::vector<std::shared_ptr<stream>> streams;  // made by cuStreamCreate, not yet destroyed
  /// A fault (CUDA_ERROR_ILLEGAL_ADDRESS) sticks: every later call on the context fails.
  std::atomic<CUresult> sticky{CUDA_SUCCESS};
};

/// One parameter of a kernel: where it sits in the packed parameter buffer.
struct param {
  std::size_t offset;
  std::size_t size;
};

struct launch_shape {
  unsigned grid[3];
  unsigned block[3];
  std::uint64_t threads() const { return std::uint64_t{grid[0]} * block[0]; }
};

struct kernel {
  const char* name;
  std::vector<param> params;
  /// Runs on the stream's thread; returns CUDA_SUCCESS or the fault to make sticky.
  CUresult (*run)(const launch_shape& shape, const unsigned char* args);
  std::size_t args_size() const { return params.empty() ? 0 : params.back().offset + params.back().size; }
};

struct loaded_module;

struct kernel_function {
  loaded_module* owner = nullptr;
  const kernel* code = nullptr;
  std::map<int, int> set_attributes;  // by cuFuncSetAttribute
};

struct loaded_module {
  context* ctx = nullptr;
  std::map<std::string, std::unique_ptr<kernel_function>> functions;
  std::map<std::string, CUdeviceptr> globals;  // their memory is in state::allocations
};

struct allocation {
  std::size_t size;
  context* ctx;
  loaded_module* global_of;  // non-null: a module's global, not freed by cuMemFree
};

/// One cuEventRecord: the stream position it marks and when that position was reached.
struct record {
  std::shared_ptr<stream> on;
  std::uint64_t seq = 0;
  std::chrono::steady_clock::time_point when;  // written on the stream's thread before `seq` completes
};

struct event {
  context* ctx = nullptr;
  unsigned flags = 0;
  std::shared_ptr<record> last;  // null until recorded
};

struct link_state {
  context* ctx = nullptr;
  unsigned num_options = 0;
  CUjit_option* options = nullptr;  // the caller's arrays: valid until cuLinkDestroy, as CUDA asks
  void** values = nullptr;
  std::string linked;  // PTX inputs, concatenated
  std::string image;   // made by cuLinkComplete
};

struct primary_context {
  context* ctx = nullptr;
  int references = 0;
};

/// Every table of the fake driver.
struct state {
  std::mutex mutex;  // guards everything below
  bool initialized = false;
  int device_count = 0;
  std::map<context*, std::unique_ptr<context>> contexts;
  std::map<stream*, std::shared_ptr<stream>> streams;
  std::vector<std::shared_ptr<stream>> retired;  // destroyed streams still draining
  std::map<std::uintptr_t, allocation> allocations;  // by base address
  std::size_t used[64] = {};                          // bytes allocated per device
  std::set<void*> host_allocations;
  std::map<void*, context*> registered;  // cuMemHostRegister ranges, by the context they were pinned for
  std::map<loaded_module*, std::unique_ptr<loaded_module>> modules;
  std::set<kernel_function*> functions;
  std::map<event*, std::unique_ptr<event>> events;
  std::map<link_state*, std::unique_ptr<link_state>> links;
  std::map<int, primary_context> primaries;
};

// Never destroyed: stream threads may still run when the process exits.
state& g = *new state;

/// The calling thread's context stack; the current context is the top.
thread_local std::vector<context*> context_stack;

// ---------------------------------------------------------------------------
// Devices
// ---------------------------------------------------------------------------
int device_attribute(int attribute) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 4;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 8;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1000000;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 0;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 2;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
    default: return 0;
  }
}

// ---------------------------------------------------------------------------
// Memory ranges (callers hold g.mutex)
// ---------------------------------------------------------------------------
const allocation* find_range_locked(CUdeviceptr pointer, std::size_t bytes) {
  auto it = g.allocations.upper_bound(static_cast<std::uintptr_t>(pointer));
  if (it == g.allocations.begin()) return nullptr;
  --it;
  std::uintptr_t base = it->first;
  if (pointer < base || bytes > it->second.size || pointer - base > it->second.size - bytes) return nullptr;
  return &it->second;
}

bool range_ok(CUdeviceptr pointer, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(g.mutex);
  return find_range_locked(pointer, bytes) != nullptr;
}

void* allocate_zeroed(std::size_t bytes) {
  std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (p != nullptr) std::memset(p, 0, rounded);
  return p;
}

// ---------------------------------------------------------------------------
// Kernels: what the fake knows how to run
// ---------------------------------------------------------------------------
template <class T>
T arg(const unsigned char* args, std::size_t offset) {
  T value;
  std::memcpy(&value, args + offset, sizeof value);
  return value;
}

template <class T>
T* device(std::uint64_t address) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(address));
}

CUresult run_saxpy(const launch_shape& shape, const unsigned char* args) {
  auto n = arg<std::uint32_t>(args, 0);
  auto a = arg<float>(args, 4);
  auto x = arg<std::uint64_t>(args, 8);
  auto y = arg<std::uint64_t>(args, 16);
  std::uint64_t count = std::min<std::uint64_t>(n, shape.threads());
  if (count == 0) return CUDA_SUCCESS;
  if (!range_ok(x, count * 4) || !range_ok(y, count * 4)) return CUDA_ERROR_ILLEGAL_ADDRESS;
  for (std::uint64_t i = 0; i < count; ++i) device<float>(y)[i] = a * device<float>(x)[i] + device<float>(y)[i];
  return CUDA_SUCCESS;
}

CUresult run_fill_u32(const launch_shape& shape, const unsigned char* args) {
  auto p = arg<std::uint64_t>(args, 0);
  auto value = arg<std::uint32_t>(args, 8);
  auto n = arg<std::uint32_t>(args, 12);
  std::uint64_t count = std::min<std::uint64_t>(n, shape.threads());
  if (count == 0) return CUDA_SUCCESS;
  if (!range_ok(p, count * 4)) return CUDA_ERROR_ILLEGAL_ADDRESS;
  for (std::uint64_t i = 0; i < count; ++i) device<std::uint32_t>(p)[i] = value;
  return CUDA_SUCCESS;
}

CUresult run_add_one_i32(const launch_shape& shape, const unsigned char* args) {
  auto p = arg<std::uint64_t>(args, 0);
  auto n = arg<std::uint32_t>(args, 8);
  std::uint64_t count = std::min<std::uint64_t>(n, shape.threads());
  if (count == 0) return CUDA_SUCCESS;
  if (!range_ok(p, count * 4)) return CUDA_ERROR_ILLEGAL_ADDRESS;
  for (std::uint64_t i = 0; i < count; ++i) device<std::int32_t>(p)[i] += 1;
  return CUDA_SUCCESS;
}

CUresult run_sum_f32(const launch_shape&, const unsigned char* args) {
  auto in = arg<std::uint64_t>(args, 0);
  auto out = arg<std::uint64_t>(args, 8);
  auto n = arg<std::uint32_t>(args, 16);
  if ((n > 0 && !range_ok(in, std::uint64_t{n} * 4)) || !range_ok(out, 4)) return CUDA_ERROR_ILLEGAL_ADDRESS;
  float sum = 0;
  for (std::uint32_t i = 0; i < n; ++i) sum += device<float>(in)[i];
  device<float>(out)[0] = sum;
  return CUDA_SUCCESS;
}

CUresult run_struct_arg(const launch_shape&, const unsigned char* args) {
  auto out = arg<std::uint64_t>(args, 0);
  auto a = arg<double>(args, 8);
  auto b = arg<std::uint32_t>(args, 16);
  if (!range_ok(out, 8)) return CUDA_ERROR_ILLEGAL_ADDRESS;
  device<double>(out)[0] = a + b;
  return CUDA_SUCCESS;
}

CUresult run_fault(const launch_shape&, const unsigned char*) { return CUDA_ERROR_ILLEGAL_ADDRESS; }

// hang(): never returns, as a kernel stuck in a loop (only the process's end stops it).
CUresult run_hang(const launch_shape&, const unsigned char*) {
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// noop(): does nothing (ferry_bench_cuda_driver times launch + synchronize with it).
CUresult run_noop(const launch_shape&, const unsigned char*) { return CUDA_SUCCESS; }

const kernel kernels[] = {
    {"saxpy", {{0, 4}, {4, 4}, {8, 8}, {16, 8}}, run_saxpy},
    {"fill_u32", {{0, 8}, {8, 4}, {12, 4}}, run_fill_u32},
    {"add_one_i32", {{0, 8}, {8, 4}}, run_add_one_i32},
    {"sum_f32", {{0, 8}, {8, 8}, {16, 4}}, run_sum_f32},
    {"struct_arg", {{0, 8}, {8, 16}}, run_struct_arg},
    {"fault", {{0, 8}}, run_fault},
    {"noop", {}, run_noop},
    {"hang", {}, run_hang},
};

const kernel* find_kernel(const std::string& name) {
  for (const kernel& k : kernels)
    if (name == k.name) return &k;
  return nullptr;
}

// ---------------------------------------------------------------------------
// Module text
// ---------------------------------------------------------------------------
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> tokens_of(const std::string& line) {
  std::vector<std::string> tokens;
  std::istringstream in(line);
  for (std::string t; in >> t;) tokens.push_back(t);
  return tokens;
}

bool has_version_line(const std::string& text) {
  for (const std::string& line : split_lines(text)) {
    auto tokens = tokens_of(line);
    if (!tokens.empty() && tokens[0] == ".version") return true;
  }
  return false;
}

std::size_t ptx_type_size(const std::string& type) {
  static const std::map<std::string, std::size_t> sizes = {
      {".b8", 1},  {".u8", 1},  {".s8", 1},  {".b16", 2}, {".u16", 2}, {".s16", 2}, {".f16", 2},
      {".b32", 4}, {".u32", 4}, {".s32", 4}, {".f32", 4}, {".b64", 8}, {".u64", 8}, {".s64", 8},
      {".f64", 8}};
  auto it = sizes.find(type);
  return it == sizes.end() ? 0 : it->second;
}

struct parsed_module {
  std::vector<std::string> entries;
  std::vector<std::pair<std::string, std::size_t>> globals;  // name, bytes
};

parsed_module parse_module(const std::string& text) {
  parsed_module parsed;
  for (std::string line : split_lines(text)) {
    auto comment = line.find("//");
    if (comment != std::string::npos) line.resize(comment);
    // ".entry NAME(" declares a kernel.
    auto entry = line.find(".entry");
    if (entry != std::string::npos && entry + 6 < line.size() &&
        std::isspace(static_cast<unsigned char>(line[entry + 6]))) {
      std::size_t begin = line.find_first_not_of(" \t", entry + 6);
      std::size_t end = begin == std::string::npos ? begin : line.find_first_of("( \t", begin);
      if (begin != std::string::npos) parsed.entries.push_back(line.substr(begin, end - begin));
      continue;
    }
    // ".global [.align N] .TYPE NAME[SIZE];" declares a global.
    std::string declaration = line.substr(0, line.find_first_of(";="));
    auto tokens = tokens_of(declaration);
    if (std::find(tokens.begin(), tokens.end(), ".global") == tokens.end() || tokens.size() < 2) continue;
    std::size_t element = 0;
    for (const std::string& t : tokens)
      if (ptx_type_size(t) != 0) element = ptx_type_size(t);
    std::string name = tokens.back();
    std::size_t count = 1;
    auto bracket = name.find('[');
    if (bracket != std::string::npos) {
      count = std::strtoull(name.c_str() + bracket + 1, nullptr, 10);
      name.resize(bracket);
    }
    if (element != 0 && count != 0 && !name.empty() && name[0] != '.')
      parsed.globals.emplace_back(name, element * count);
  }
  return parsed;
}

/// Writes what a JIT run reports through its options: the logs, their sizes and the wall time.
void report_jit(unsigned num_options, const CUjit_option* options, void** values, const char* info,
                const char* error) {
  if (options == nullptr || values == nullptr) return;
  auto size_of = [&](CUjit_option which) -> std::size_t {
    for (unsigned i = 0; i < num_options; ++i)
      if (options[i] == which) return static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(values[i]));
    return 0;
  };
  auto write_log = [&](CUjit_option buffer_option, CUjit_option size_option, const char* text) {
    std::size_t capacity = size_of(size_option);
    std::size_t written = 0;
    for (unsigned i = 0; i < num_options; ++i) {
      if (options[i] != buffer_option || values[i] == nullptr || capacity == 0) continue;
      auto* buffer = static_cast<char*>(values[i]);
      written = std::min(std::strlen(text), capacity - 1);
      std::memcpy(buffer, text, written);
      buffer[written] = '\0';
      ++written;  // the terminator counts as filled
    }
    for (unsigned i = 0; i < num_options; ++i)
      if (options[i] == size_option) values[i] = reinterpret_cast<void*>(static_cast<std::uintptr_t>(written));
  };
  write_log(CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, info);
  write_log(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, error);
  for (unsigned i = 0; i < num_options; ++i) {
    if (options[i] != CU_JIT_WALL_TIME) continue;
    float milliseconds = 0.01f;  // the value's slot itself receives the float, as CUDA does
    values[i] = nullptr;
    std::memcpy(&values[i], &milliseconds, sizeof milliseconds);
  }
}

// ---------------------------------------------------------------------------
// Entry checks
// ---------------------------------------------------------------------------
/// Every entry point but the version and error-name queries starts here.
CUresult enter() {
  if (on_stream_thread) return CUDA_ERROR_NOT_PERMITTED;
  std::lock_guard<std::mutex> lock(g.mutex);
  return g.initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

#define FAKE_ENTER()                      \
  do {                                    \
    CUresult entered_ = enter();          \
    if (entered_ != CUDA_SUCCESS) return entered_; \
  } while (0)

/// The current context (callers hold g.mutex), or why there is none usable.
context* current_locked(CUresult& rc) {
  context* c = context_stack.empty() ? nullptr : context_stack.back();
  if (c == nullptr || g.contexts.count(c) == 0) {
    rc = CUDA_ERROR_INVALID_CONTEXT;
    return nullptr;
  }
  rc = c->sticky.load();
  return rc == CUDA_SUCCESS ? c : nullptr;
}

bool is_null_stream_handle(CUstream s) {
  auto value = reinterpret_cast<std::uintptr_t>(s);
  return value == 0 || value == stream_legacy_value || value == stream_per_thread_value;
}

/// The stream a handle names (callers hold g.mutex); the NULL stream is the current context's.
std::shared_ptr<stream> stream_locked(CUstream handle, CUresult& rc) {
  if (is_null_stream_handle(handle)) {
    context* c = current_locked(rc);
    return c != nullptr ? c->null_stream : nullptr;
  }
  auto it = g.streams.find(reinterpret_cast<stream*>(handle));
  if (it == g.streams.end()) {
    rc = CUDA_ERROR_INVALID_HANDLE;
    return nullptr;
  }
  rc = it->second->ctx->sticky.load();
  return rc == CUDA_SUCCESS ? it->second : nullptr;
}

/// What work on `s` must wait for besides its own queue: the legacy NULL stream and the
/// context's blocking streams wait for each other (callers hold g.mutex).
std::vector<dependency> implicit_dependencies_locked(const std::shared_ptr<stream>& s) {
  std::vector<dependency> deps;
  context* c = s->ctx;
  if (s->is_null_stream) {
    for (auto& other : c->streams)
      if (other->flags == CU_STREAM_DEFAULT) deps.push_back({other, other->tail()});
  } else if (s->flags == CU_STREAM_DEFAULT) {
    deps.push_back({c->null_stream, c->null_stream->tail()});
  }
  return deps;
}

/// Enqueues `run` on the stream `handle` names, after what the legacy stream rules ask.
CUresult enqueue_on(CUstream handle, std::function<void()> run, std::vector<dependency> extra = {},
                    std::shared_ptr<stream>* out = nullptr, std::uint64_t* seq = nullptr) {
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc = CUDA_SUCCESS;
  std::shared_ptr<stream> s = stream_locked(handle, rc);
  if (!s) return rc;
  auto deps = implicit_dependencies_locked(s);
  deps.insert(deps.end(), extra.begin(), extra.end());
  std::uint64_t n = s->enqueue(std::move(run), std::move(deps));
  if (out != nullptr) *out = s;
  if (seq != nullptr) *seq = n;
  return CUDA_SUCCESS;
}

/// Every stream of a context, for waiting on them without the tables' mutex.
std::vector<std::shared_ptr<stream>> streams_of_locked(context* c) {
  std::vector<std::shared_ptr<stream>> all = c->streams;
  all.push_back(c->null_stream);
  return all;
}

void drain(const std::vector<std::shared_ptr<stream>>& streams) {
  for (auto& s : streams) s->wait_for(s->tail());
}

/// Joins destroyed streams whose threads have ended (callers hold g.mutex).
void reap_locked() {
  auto done = [](const std::shared_ptr<stream>& s) {
    std::lock_guard<std::mutex> lock(s->mutex);
    return s->finished;
  };
  for (auto it = g.retired.begin(); it != g.retired.end();) {
    if (done(*it)) {
      (*it)->worker.join();
      it = g.retired.erase(it);
    } else {
      ++it;
    }
  }
}

std::shared_ptr<stream> make_stream(context* c, unsigned flags, bool null_stream) {
  auto s = std::make_shared<stream>();
  s->ctx = c;
  s->flags = flags;
  s->is_null_stream = null_stream;
  s->start();
  return s;
}

context* create_context_locked(int device, unsigned flags) {
  auto c = std::make_unique<context>();
  c->device = device;
  c->flags = flags;
  c->null_stream = make_stream(c.get(), CU_STREAM_DEFAULT, true);
  context* raw = c.get();
  g.contexts.emplace(raw, std::move(c));
  return raw;
}

/// Ends a context: its streams finish their work, then everything it owns is freed.
void destroy_context(context* c) {
  std::vector<std::shared_ptr<stream>> streams;
  std::unique_ptr<context> owned;
  std::vector<void*> memory;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    auto it = g.contexts.find(c);
    if (it == g.contexts.end()) return;
    owned = std::move(it->second);
    g.contexts.erase(it);
    // Host memory pinned for the context is pageable again (and stays the caller's).
    std::erase_if(g.registered, [c](const auto& r) { return r.second == c; });
    streams = streams_of_locked(c);
    for (auto& s : c->streams) g.streams.erase(s.get());
    // Destroyed streams still draining run work of this context too.
    for (auto r = g.retired.begin(); r != g.retired.end();) {
      if ((*r)->ctx == c) {
        streams.push_back(*r);
        r = g.retired.erase(r);
      } else {
        ++r;
      }
    }
    for (auto a = g.allocations.begin(); a != g.allocations.end();) {
      if (a->second.ctx == c) {
        if (a->second.global_of == nullptr) g.used[c->device] -= a->second.size;
        memory.push_back(reinterpret_cast<void*>(a->first));
        a = g.allocations.erase(a);
      } else {
        ++a;
      }
    }
    for (auto m = g.modules.begin(); m != g.modules.end();) {
      if (m->second->ctx == c) {
        for (auto& f : m->second->functions) g.functions.erase(f.second.get());
        m = g.modules.erase(m);
      } else {
        ++m;
      }
    }
    for (auto e = g.events.begin(); e != g.events.end();) e = e->second->ctx == c ? g.events.erase(e) : std::next(e);
    for (auto l = g.links.begin(); l != g.links.end();) l = l->second->ctx == c ? g.links.erase(l) : std::next(l);
  }
  for (auto& s : streams) {
    s->stop();
    if (s->worker.joinable()) s->worker.join();
  }
  for (void* p : memory) std::free(p);
}

}  // namespace

// ===========================================================================
// Initialization, version, errors
// ===========================================================================
FAKE_API CUresult cuInit(unsigned flags) {
  if (on_stream_thread) return CUDA_ERROR_NOT_PERMITTED;
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g.mutex);
  // Read at every cuInit (the real driver's repeats do nothing) so that one test process
  // can try several device counts.
  g.device_count = std::clamp(env_int("FERRY_FAKE_CUDA_DEVICES", 1), 0, 64);
  g.initialized = g.device_count > 0;
  return g.initialized ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

FAKE_API CUresult cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = driver_version;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGetErrorName(CUresult error, const char** name) {
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *name = result_name(error);
  return *name != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuGetErrorString(CUresult error, const char** text) {
  if (text == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *text = result_string(error);
  return *text != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// ===========================================================================
// Devices
// ===========================================================================
namespace {
CUresult check_device(CUdevice device) {
  std::lock_guard<std::mutex> lock(g.mutex);
  return device >= 0 && device < g.device_count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
}  // namespace

FAKE_API CUresult cuDeviceGetCount(int* count) {
  FAKE_ENTER();
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g.mutex);
  *count = g.device_count;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  FAKE_ENTER();
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = check_device(ordinal); rc != CUDA_SUCCESS) return rc;
  *device = ordinal;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  FAKE_ENTER();
  if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = check_device(device); rc != CUDA_SUCCESS) return rc;
  std::snprintf(name, static_cast<std::size_t>(length), "Ferry fake CUDA device %d", device);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  FAKE_ENTER();
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = check_device(device); rc != CUDA_SUCCESS) return rc;
  if (attribute < 1 || attribute >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  *value = device_attribute(attribute);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceTotalMem_v2(std::size_t* bytes, CUdevice device) {
  FAKE_ENTER();
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = check_device(device); rc != CUDA_SUCCESS) return rc;
  *bytes = device_memory;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice device) {
  FAKE_ENTER();
  if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = check_device(device); rc != CUDA_SUCCESS) return rc;
  std::memset(uuid->bytes, 0, sizeof uuid->bytes);
  uuid->bytes[0] = static_cast<char>(0xfe);
  uuid->bytes[1] = static_cast<char>(0x77);
  uuid->bytes[2] = static_cast<char>(device);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice device) { return cuDeviceGetUuid_v2(uuid, device); }

// ===========================================================================
// Contexts
// ===========================================================================
FAKE_API CUresult cuCtxCreate_v2(CUcontext* out, unsigned flags, CUdevice device) {
  FAKE_ENTER();
  if (out == nullptr || (flags & ~CU_CTX_FLAGS_MASK) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = check_device(device); rc != CUDA_SUCCESS) return rc;
  std::lock_guard<std::mutex> lock(g.mutex);
  context* c = create_context_locked(device, flags);
  context_stack.push_back(c);  // the new context becomes current
  *out = reinterpret_cast<CUcontext>(c);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxDestroy_v2(CUcontext handle) {
  FAKE_ENTER();
  auto* c = reinterpret_cast<context*>(handle);
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    if (c == nullptr || g.contexts.count(c) == 0) return CUDA_ERROR_INVALID_CONTEXT;
  }
  std::erase(context_stack, c);
  destroy_context(c);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxSetCurrent(CUcontext handle) {
  FAKE_ENTER();
  auto* c = reinterpret_cast<context*>(handle);
  if (c != nullptr) {
    std::lock_guard<std::mutex> lock(g.mutex);
    if (g.contexts.count(c) == 0) return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (!context_stack.empty()) context_stack.pop_back();
  if (c != nullptr) context_stack.push_back(c);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxGetCurrent(CUcontext* out) {
  FAKE_ENTER();
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = reinterpret_cast<CUcontext>(context_stack.empty() ? nullptr : context_stack.back());
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxPushCurrent_v2(CUcontext handle) {
  FAKE_ENTER();
  auto* c = reinterpret_cast<context*>(handle);
  std::lock_guard<std::mutex> lock(g.mutex);
  if (c == nullptr || g.contexts.count(c) == 0) return CUDA_ERROR_INVALID_CONTEXT;
  context_stack.push_back(c);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxPopCurrent_v2(CUcontext* out) {
  FAKE_ENTER();
  if (context_stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (out != nullptr) *out = reinterpret_cast<CUcontext>(context_stack.back());
  context_stack.pop_back();
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxGetDevice(CUdevice* device) {
  FAKE_ENTER();
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  context* c = current_locked(rc);
  if (c == nullptr) return rc;
  *device = c->device;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxSynchronize() {
  FAKE_ENTER();
  std::vector<std::shared_ptr<stream>> streams;
  context* c;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    CUresult rc;
    c = current_locked(rc);
    if (c == nullptr) return rc;
    streams = streams_of_locked(c);
  }
  drain(streams);
  std::lock_guard<std::mutex> lock(g.mutex);
  return g.contexts.count(c) != 0 ? c->sticky.load() : CUDA_ERROR_INVALID_CONTEXT;
}

FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext* out, CUdevice device) {
  FAKE_ENTER();
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = check_device(device); rc != CUDA_SUCCESS) return rc;
  std::lock_guard<std::mutex> lock(g.mutex);
  primary_context& p = g.primaries[device];
  if (p.ctx == nullptr || g.contexts.count(p.ctx) == 0) {
    p.ctx = create_context_locked(device, 0);
    p.references = 0;
  }
  ++p.references;
  *out = reinterpret_cast<CUcontext>(p.ctx);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  FAKE_ENTER();
  if (CUresult rc = check_device(device); rc != CUDA_SUCCESS) return rc;
  context* last = nullptr;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    primary_context& p = g.primaries[device];
    if (p.ctx == nullptr || p.references == 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (--p.references == 0) std::swap(last, p.ctx);
  }
  if (last != nullptr) {
    std::erase(context_stack, last);
    destroy_context(last);
  }
  return CUDA_SUCCESS;
}

// ===========================================================================
// Memory
// ===========================================================================
FAKE_API CUresult cuMemAlloc_v2(CUdeviceptr* out, std::size_t bytes) {
  FAKE_ENTER();
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  context* c = current_locked(rc);
  if (c == nullptr) return rc;
  if (out == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > device_memory - g.used[c->device]) return CUDA_ERROR_OUT_OF_MEMORY;
  void* p = allocate_zeroed(bytes);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  g.allocations[reinterpret_cast<std::uintptr_t>(p)] = {bytes, c, nullptr};
  g.used[c->device] += bytes;
  *out = reinterpret_cast<std::uintptr_t>(p);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemFree_v2(CUdeviceptr pointer) {
  FAKE_ENTER();
  std::vector<std::shared_ptr<stream>> streams;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    CUresult rc;
    context* c = current_locked(rc);
    if (c == nullptr) return rc;
    auto it = g.allocations.find(static_cast<std::uintptr_t>(pointer));
    if (it == g.allocations.end() || it->second.global_of != nullptr) return CUDA_ERROR_INVALID_VALUE;
    streams = streams_of_locked(it->second.ctx);
  }
  // As cuMemFree does on a GPU, wait for the work that may still use the memory.
  drain(streams);
  std::lock_guard<std::mutex> lock(g.mutex);
  auto it = g.allocations.find(static_cast<std::uintptr_t>(pointer));
  if (it == g.allocations.end()) return CUDA_ERROR_INVALID_VALUE;  // freed meanwhile by another thread
  g.used[it->second.ctx->device] -= it->second.size;
  g.allocations.erase(it);
  std::free(reinterpret_cast<void*>(static_cast<std::uintptr_t>(pointer)));
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemGetInfo_v2(std::size_t* free, std::size_t* total) {
  FAKE_ENTER();
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  context* c = current_locked(rc);
  if (c == nullptr) return rc;
  if (free == nullptr || total == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *total = device_memory;
  *free = device_memory - g.used[c->device];
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemHostAlloc(void** out, std::size_t bytes, unsigned flags) {
  FAKE_ENTER();
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  if (current_locked(rc) == nullptr) return rc;
  if (out == nullptr || bytes == 0 || (flags & ~0x7u) != 0) return CUDA_ERROR_INVALID_VALUE;
  void* p = allocate_zeroed(bytes);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  g.host_allocations.insert(p);
  *out = p;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemAllocHost_v2(void** out, std::size_t bytes) { return cuMemHostAlloc(out, bytes, 0); }

FAKE_API CUresult cuMemFreeHost(void* pointer) {
  FAKE_ENTER();
  std::lock_guard<std::mutex> lock(g.mutex);
  if (g.host_allocations.erase(pointer) == 0) return CUDA_ERROR_INVALID_VALUE;
  std::free(pointer);
  return CUDA_SUCCESS;
}

/// Registration only records the range (the stand-in's copies read any memory);
/// what it checks is what NVIDIA's driver refuses: no context, a null or empty
/// range, unknown flags, a range registered twice, unregistering what was not.
FAKE_API CUresult cuMemHostRegister_v2(void* pointer, std::size_t bytes, unsigned flags) {
  FAKE_ENTER();
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  context* c = current_locked(rc);
  if (c == nullptr) return rc;
  if (pointer == nullptr || bytes == 0 || (flags & ~0xFu) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!g.registered.emplace(pointer, c).second) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemHostUnregister(void* pointer) {
  FAKE_ENTER();
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  if (current_locked(rc) == nullptr) return rc;
  if (g.registered.erase(pointer) == 0) return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  return CUDA_SUCCESS;
}

namespace {
/// Checks that [pointer, pointer + bytes) is device memory.
CUresult check_range(CUdeviceptr pointer, std::size_t bytes) {
  return range_ok(pointer, bytes) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult wait_on(const std::shared_ptr<stream>& s, std::uint64_t seq) {
  s->wait_for(seq);
  return s->ctx->sticky.load();
}
}  // namespace

FAKE_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream s) {
  FAKE_ENTER();
  if (bytes == 0) return CUDA_SUCCESS;
  if (src == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = check_range(dst, bytes); rc != CUDA_SUCCESS) return rc;
  // The host bytes are read when the copy runs, not now: the caller must keep them.
  return enqueue_on(s, [=] { std::memcpy(device<void>(dst), src, bytes); });
}

FAKE_API CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, std::size_t bytes, CUstream s) {
  FAKE_ENTER();
  if (bytes == 0) return CUDA_SUCCESS;
  if (dst == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = check_range(src, bytes); rc != CUDA_SUCCESS) return rc;
  return enqueue_on(s, [=] { std::memcpy(dst, device<void>(src), bytes); });
}

FAKE_API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream s) {
  FAKE_ENTER();
  if (bytes == 0) return CUDA_SUCCESS;
  if (CUresult rc = check_range(dst, bytes); rc != CUDA_SUCCESS) return rc;
  if (CUresult rc = check_range(src, bytes); rc != CUDA_SUCCESS) return rc;
  return enqueue_on(s, [=] { std::memmove(device<void>(dst), device<void>(src), bytes); });
}

FAKE_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, std::size_t bytes) {
  FAKE_ENTER();
  if (bytes == 0) return CUDA_SUCCESS;
  if (src == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = check_range(dst, bytes); rc != CUDA_SUCCESS) return rc;
  std::shared_ptr<stream> s;
  std::uint64_t seq = 0;
  CUresult rc = enqueue_on(nullptr, [=] { std::memcpy(device<void>(dst), src, bytes); }, {}, &s, &seq);
  return rc != CUDA_SUCCESS ? rc : wait_on(s, seq);
}

FAKE_API CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, std::size_t bytes) {
  FAKE_ENTER();
  if (bytes == 0) return CUDA_SUCCESS;
  if (dst == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = check_range(src, bytes); rc != CUDA_SUCCESS) return rc;
  std::shared_ptr<stream> s;
  std::uint64_t seq = 0;
  CUresult rc = enqueue_on(nullptr, [=] { std::memcpy(dst, device<void>(src), bytes); }, {}, &s, &seq);
  return rc != CUDA_SUCCESS ? rc : wait_on(s, seq);
}

namespace {
template <class T>
CUresult memset_async(CUdeviceptr dst, T value, std::size_t count, CUstream s) {
  FAKE_ENTER();
  if (count == 0) return CUDA_SUCCESS;
  if (dst % sizeof(T) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult rc = check_range(dst, count * sizeof(T)); rc != CUDA_SUCCESS) return rc;
  return enqueue_on(s, [=] { std::fill_n(device<T>(dst), count, value); });
}
}  // namespace

FAKE_API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, std::size_t count, CUstream s) {
  return memset_async<unsigned char>(dst, value, count, s);
}
FAKE_API CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, std::size_t count, CUstream s) {
  return memset_async<unsigned short>(dst, value, count, s);
}
FAKE_API CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, std::size_t count, CUstream s) {
  return memset_async<unsigned>(dst, value, count, s);
}

// ===========================================================================
// Modules and functions
// ===========================================================================
FAKE_API CUresult cuModuleLoadDataEx(CUmodule* out, const void* image, unsigned num_options, CUjit_option* options,
                                     void** values) {
  FAKE_ENTER();
  if (out == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (num_options > 0 && (options == nullptr || values == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  std::string text(static_cast<const char*>(image));
  bool cubin = text.rfind(cubin_magic, 0) == 0;
  if (!cubin && !has_version_line(text)) {
    report_jit(num_options, options, values, "",
               "fake jit: the image is neither PTX (no .version line) nor a fake cubin");
    return CUDA_ERROR_INVALID_IMAGE;
  }
  parsed_module parsed = parse_module(text);
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  context* c = current_locked(rc);
  if (c == nullptr) return rc;
  auto m = std::make_unique<loaded_module>();
  m->ctx = c;
  for (const std::string& name : parsed.entries) {
    const kernel* k = find_kernel(name);
    if (k == nullptr) continue;  // declared but not runnable here: cuModuleGetFunction says NOT_FOUND
    auto f = std::make_unique<kernel_function>();
    f->owner = m.get();
    f->code = k;
    g.functions.insert(f.get());
    m->functions[name] = std::move(f);
  }
  for (const auto& [name, bytes] : parsed.globals) {
    void* p = allocate_zeroed(bytes);
    if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    g.allocations[reinterpret_cast<std::uintptr_t>(p)] = {bytes, c, m.get()};
    m->globals[name] = reinterpret_cast<std::uintptr_t>(p);
  }
  report_jit(num_options, options, values, "fake jit: ok", "");
  loaded_module* raw = m.get();
  g.modules.emplace(raw, std::move(m));
  *out = reinterpret_cast<CUmodule>(raw);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuModuleLoadData(CUmodule* out, const void* image) {
  return cuModuleLoadDataEx(out, image, 0, nullptr, nullptr);
}

FAKE_API CUresult cuModuleUnload(CUmodule handle) {
  FAKE_ENTER();
  auto* m = reinterpret_cast<loaded_module*>(handle);
  std::vector<std::shared_ptr<stream>> streams;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    auto it = g.modules.find(m);
    if (it == g.modules.end()) return CUDA_ERROR_INVALID_HANDLE;
    if (CUresult rc = m->ctx->sticky.load(); rc != CUDA_SUCCESS) return rc;
    streams = streams_of_locked(m->ctx);
  }
  drain(streams);  // kernels in flight may still use its globals
  std::lock_guard<std::mutex> lock(g.mutex);
  auto it = g.modules.find(m);
  if (it == g.modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  for (auto& f : m->functions) g.functions.erase(f.second.get());
  for (auto& [name, address] : m->globals) {
    g.allocations.erase(static_cast<std::uintptr_t>(address));
    std::free(device<void>(address));
  }
  g.modules.erase(it);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuModuleGetFunction(CUfunction* out, CUmodule handle, const char* name) {
  FAKE_ENTER();
  if (out == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g.mutex);
  auto it = g.modules.find(reinterpret_cast<loaded_module*>(handle));
  if (it == g.modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult rc = it->second->ctx->sticky.load(); rc != CUDA_SUCCESS) return rc;
  auto f = it->second->functions.find(name);
  if (f == it->second->functions.end()) return CUDA_ERROR_NOT_FOUND;
  *out = reinterpret_cast<CUfunction>(f->second.get());
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuModuleGetGlobal_v2(CUdeviceptr* pointer, std::size_t* bytes, CUmodule handle, const char* name) {
  FAKE_ENTER();
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g.mutex);
  auto it = g.modules.find(reinterpret_cast<loaded_module*>(handle));
  if (it == g.modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult rc = it->second->ctx->sticky.load(); rc != CUDA_SUCCESS) return rc;
  auto v = it->second->globals.find(name);
  if (v == it->second->globals.end()) return CUDA_ERROR_NOT_FOUND;
  if (pointer != nullptr) *pointer = v->second;
  if (bytes != nullptr) *bytes = g.allocations.at(static_cast<std::uintptr_t>(v->second)).size;
  return CUDA_SUCCESS;
}

namespace {
/// The function a handle names (callers hold g.mutex).
kernel_function* function_locked(CUfunction handle, CUresult& rc) {
  auto* f = reinterpret_cast<kernel_function*>(handle);
  if (f == nullptr || g.functions.count(f) == 0) {
    rc = CUDA_ERROR_INVALID_HANDLE;
    return nullptr;
  }
  rc = f->owner->ctx->sticky.load();
  return rc == CUDA_SUCCESS ? f : nullptr;
}
}  // namespace

FAKE_API CUresult cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction handle) {
  FAKE_ENTER();
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  kernel_function* f = function_locked(handle, rc);
  if (f == nullptr) return rc;
  if (attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  auto set = f->set_attributes.find(attribute);
  if (set != f->set_attributes.end()) {
    *value = set->second;
  } else {
    *value = attribute == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024
             : attribute == CU_FUNC_ATTRIBUTE_NUM_REGS           ? 16
                                                                 : 0;
  }
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuFuncSetAttribute(CUfunction handle, CUfunction_attribute attribute, int value) {
  FAKE_ENTER();
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  kernel_function* f = function_locked(handle, rc);
  if (f == nullptr) return rc;
  // Only these are settable (the others describe the compiled code).
  if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES &&
      attribute != CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT &&
      attribute != CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH && attribute != CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT &&
      attribute != CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH &&
      attribute != CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED &&
      attribute != CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE)
    return CUDA_ERROR_INVALID_VALUE;
  if (value < 0) return CUDA_ERROR_INVALID_VALUE;
  f->set_attributes[attribute] = value;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuFuncSetCacheConfig(CUfunction handle, CUfunc_cache config) {
  FAKE_ENTER();
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  if (function_locked(handle, rc) == nullptr) return rc;
  return config >= CU_FUNC_CACHE_PREFER_NONE && config <= CU_FUNC_CACHE_PREFER_EQUAL ? CUDA_SUCCESS
                                                                                      : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuFuncGetParamInfo(CUfunction handle, std::size_t index, std::size_t* offset, std::size_t* size) {
  FAKE_ENTER();
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  kernel_function* f = function_locked(handle, rc);
  if (f == nullptr) return rc;
  if (index >= f->code->params.size()) return CUDA_ERROR_INVALID_VALUE;
  if (offset != nullptr) *offset = f->code->params[index].offset;
  if (size != nullptr) *size = f->code->params[index].size;
  return CUDA_SUCCESS;
}

// ===========================================================================
// Launches
// ===========================================================================
namespace {
CUresult launch(CUfunction handle, const launch_shape& shape, unsigned shared_bytes, CUstream s, void** params,
                void** extra) {
  FAKE_ENTER();
  const kernel* code;
  context* c;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    CUresult rc;
    kernel_function* f = function_locked(handle, rc);
    if (f == nullptr) return rc;
    code = f->code;
    c = f->owner->ctx;
  }
  for (int i = 0; i < 3; ++i)
    if (shape.grid[i] == 0 || shape.block[i] == 0) return CUDA_ERROR_INVALID_VALUE;
  if (std::uint64_t{shape.block[0]} * shape.block[1] * shape.block[2] > 1024 || shape.block[2] > 64)
    return CUDA_ERROR_INVALID_VALUE;
  if (shape.grid[1] > 65535 || shape.grid[2] > 65535) return CUDA_ERROR_INVALID_VALUE;
  if (shared_bytes > 49152) return CUDA_ERROR_INVALID_VALUE;

  // The arguments are read now, as CUDA reads them at the launch call.
  std::vector<unsigned char> args(code->args_size());
  if (params != nullptr && extra != nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (params != nullptr) {
    for (std::size_t i = 0; i < code->params.size(); ++i) {
      if (params[i] == nullptr) return CUDA_ERROR_INVALID_VALUE;
      std::memcpy(args.data() + code->params[i].offset, params[i], code->params[i].size);
    }
  } else if (extra != nullptr) {
    const void* buffer = nullptr;
    const std::size_t* buffer_size = nullptr;
    for (std::size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END(); i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER())
        buffer = extra[i + 1];
      else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE())
        buffer_size = static_cast<const std::size_t*>(extra[i + 1]);
      else
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (buffer == nullptr || buffer_size == nullptr || *buffer_size < args.size()) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(args.data(), buffer, args.size());
  } else if (!code->params.empty()) {
    return CUDA_ERROR_INVALID_VALUE;
  }

  return enqueue_on(s, [c, code, shape, args = std::move(args)] {
    int delay = env_int("FERRY_FAKE_CUDA_DELAY_US", 0);
    if (delay > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay));
    if (c->sticky.load() != CUDA_SUCCESS) return;  // a failed context runs nothing more
    CUresult rc = code->run(shape, args.data());
    if (rc != CUDA_SUCCESS) {
      CUresult expected = CUDA_SUCCESS;
      c->sticky.compare_exchange_strong(expected, rc);
    }
  });
}
}  // namespace

FAKE_API CUresult cuLaunchKernel(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                                 unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream s, void** params,
                                 void** extra) {
  return launch(f, {{grid_x, grid_y, grid_z}, {block_x, block_y, block_z}}, shared_bytes, s, params, extra);
}

FAKE_API CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (config->numAttrs > 0 && config->attrs == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // Launch attributes (clusters, priorities, ...) change nothing on the CPU.
  return launch(f, {{config->gridDimX, config->gridDimY, config->gridDimZ},
                    {config->blockDimX, config->blockDimY, config->blockDimZ}},
                config->sharedMemBytes, config->hStream, params, extra);
}

FAKE_API CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void* user_data) {
  FAKE_ENTER();
  if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return enqueue_on(s, [=] { fn(user_data); });
}

FAKE_API CUresult cuStreamAddCallback(CUstream s, CUstreamCallback callback, void* user_data, unsigned flags) {
  FAKE_ENTER();
  if (callback == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  context* c;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    CUresult rc;
    auto target = stream_locked(s, rc);
    if (!target) return rc;
    c = target->ctx;
  }
  return enqueue_on(s, [=] { callback(s, c->sticky.load(), user_data); });
}

// ===========================================================================
// Streams
// ===========================================================================
FAKE_API CUresult cuStreamCreateWithPriority(CUstream* out, unsigned flags, int priority) {
  FAKE_ENTER();
  if (out == nullptr || (flags & ~CU_STREAM_NON_BLOCKING) != 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  context* c = current_locked(rc);
  if (c == nullptr) return rc;
  reap_locked();
  auto s = make_stream(c, flags, false);
  c->streams.push_back(s);
  g.streams[s.get()] = s;
  *out = reinterpret_cast<CUstream>(s.get());
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamCreate(CUstream* out, unsigned flags) { return cuStreamCreateWithPriority(out, flags, 0); }

FAKE_API CUresult cuStreamDestroy_v2(CUstream handle) {
  FAKE_ENTER();
  std::lock_guard<std::mutex> lock(g.mutex);
  auto it = g.streams.find(reinterpret_cast<stream*>(handle));
  if (it == g.streams.end()) return CUDA_ERROR_INVALID_HANDLE;
  std::shared_ptr<stream> s = it->second;
  g.streams.erase(it);
  std::erase(s->ctx->streams, s);
  // As on a GPU, the call returns at once and the stream's work still completes.
  s->stop();
  g.retired.push_back(s);
  reap_locked();
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamQuery(CUstream handle) {
  FAKE_ENTER();
  std::shared_ptr<stream> s;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    CUresult rc;
    s = stream_locked(handle, rc);
    if (!s) return rc;
  }
  return s->reached(s->tail()) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FAKE_API CUresult cuStreamSynchronize(CUstream handle) {
  FAKE_ENTER();
  std::shared_ptr<stream> s;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    CUresult rc;
    s = stream_locked(handle, rc);
    if (!s) return rc;
  }
  return wait_on(s, s->tail());
}

// ===========================================================================
// Events
// ===========================================================================
namespace {
event* event_locked(CUevent handle) {
  auto it = g.events.find(reinterpret_cast<event*>(handle));
  return it == g.events.end() ? nullptr : it->second.get();
}
}  // namespace

FAKE_API CUresult cuEventCreate(CUevent* out, unsigned flags) {
  FAKE_ENTER();
  if (out == nullptr || (flags & ~0x7u) != 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  context* c = current_locked(rc);
  if (c == nullptr) return rc;
  auto e = std::make_unique<event>();
  e->ctx = c;
  e->flags = flags;
  event* raw = e.get();
  g.events.emplace(raw, std::move(e));
  *out = reinterpret_cast<CUevent>(raw);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventDestroy_v2(CUevent handle) {
  FAKE_ENTER();
  std::lock_guard<std::mutex> lock(g.mutex);
  // A record still pending finishes anyway: it holds no pointer to the event.
  return g.events.erase(reinterpret_cast<event*>(handle)) != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

FAKE_API CUresult cuEventRecord(CUevent handle, CUstream s) {
  FAKE_ENTER();
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    if (event_locked(handle) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  }
  auto r = std::make_shared<record>();
  std::shared_ptr<stream> on;
  std::uint64_t seq = 0;
  CUresult rc = enqueue_on(s, [r] { r->when = std::chrono::steady_clock::now(); }, {}, &on, &seq);
  if (rc != CUDA_SUCCESS) return rc;
  r->on = on;
  r->seq = seq;
  std::lock_guard<std::mutex> lock(g.mutex);
  if (event* e = event_locked(handle)) e->last = r;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventQuery(CUevent handle) {
  FAKE_ENTER();
  std::shared_ptr<record> r;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    event* e = event_locked(handle);
    if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (CUresult rc = e->ctx->sticky.load(); rc != CUDA_SUCCESS) return rc;
    r = e->last;
  }
  return r == nullptr || r->on->reached(r->seq) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FAKE_API CUresult cuEventSynchronize(CUevent handle) {
  FAKE_ENTER();
  std::shared_ptr<record> r;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    event* e = event_locked(handle);
    if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    r = e->last;
  }
  return r == nullptr ? CUDA_SUCCESS : wait_on(r->on, r->seq);
}

FAKE_API CUresult cuEventElapsedTime(float* milliseconds, CUevent start, CUevent end) {
  FAKE_ENTER();
  if (milliseconds == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<record> a, b;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    event* s = event_locked(start);
    event* e = event_locked(end);
    if (s == nullptr || e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (((s->flags | e->flags) & CU_EVENT_DISABLE_TIMING) != 0) return CUDA_ERROR_INVALID_HANDLE;
    a = s->last;
    b = e->last;
  }
  if (a == nullptr || b == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (!a->on->reached(a->seq) || !b->on->reached(b->seq)) return CUDA_ERROR_NOT_READY;
  *milliseconds = std::chrono::duration<float, std::milli>(b->when - a->when).count();
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventElapsedTime_v2(float* milliseconds, CUevent start, CUevent end) {
  return cuEventElapsedTime(milliseconds, start, end);
}

FAKE_API CUresult cuStreamWaitEvent(CUstream handle, CUevent event_handle, unsigned flags) {
  FAKE_ENTER();
  if ((flags & ~CU_EVENT_WAIT_EXTERNAL) != 0) return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<record> r;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    event* e = event_locked(event_handle);
    if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    r = e->last;
  }
  if (r == nullptr) return CUDA_SUCCESS;  // never recorded: nothing to wait for
  return enqueue_on(handle, nullptr, {{r->on, r->seq}});
}

// ===========================================================================
// Linking
// ===========================================================================
FAKE_API CUresult cuLinkCreate_v2(unsigned num_options, CUjit_option* options, void** values, CUlinkState* out) {
  FAKE_ENTER();
  if (out == nullptr || (num_options > 0 && (options == nullptr || values == nullptr))) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  context* c = current_locked(rc);
  if (c == nullptr) return rc;
  auto l = std::make_unique<link_state>();
  l->ctx = c;
  l->num_options = num_options;
  l->options = options;
  l->values = values;
  link_state* raw = l.get();
  g.links.emplace(raw, std::move(l));
  *out = reinterpret_cast<CUlinkState>(raw);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuLinkCreate(unsigned num_options, CUjit_option* options, void** values, CUlinkState* out) {
  return cuLinkCreate_v2(num_options, options, values, out);
}

FAKE_API CUresult cuLinkAddData_v2(CUlinkState handle, CUjitInputType type, void* data, std::size_t size,
                                   const char* name, unsigned num_options, CUjit_option* options, void** values) {
  FAKE_ENTER();
  if (data == nullptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g.mutex);
  auto it = g.links.find(reinterpret_cast<link_state*>(handle));
  if (it == g.links.end()) return CUDA_ERROR_INVALID_HANDLE;
  if (type != CU_JIT_INPUT_PTX) return CUDA_ERROR_INVALID_VALUE;  // the fake links PTX only
  std::string text(static_cast<const char*>(data), size);
  text.resize(std::strlen(text.c_str()));  // the size may count a terminator
  // A 13.0 driver answers CUDA_ERROR_INVALID_IMAGE for PTX input that is not PTX at all.
  if (!has_version_line(text)) return CUDA_ERROR_INVALID_IMAGE;
  it->second->linked += text;
  if (!text.empty() && text.back() != '\n') it->second->linked += '\n';
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuLinkAddData(CUlinkState handle, CUjitInputType type, void* data, std::size_t size,
                                const char* name, unsigned num_options, CUjit_option* options, void** values) {
  return cuLinkAddData_v2(handle, type, data, size, name, num_options, options, values);
}

FAKE_API CUresult cuLinkComplete(CUlinkState handle, void** image, std::size_t* size) {
  FAKE_ENTER();
  if (image == nullptr || size == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g.mutex);
  auto it = g.links.find(reinterpret_cast<link_state*>(handle));
  if (it == g.links.end()) return CUDA_ERROR_INVALID_HANDLE;
  link_state& l = *it->second;
  if (l.linked.empty()) {
    report_jit(l.num_options, l.options, l.values, "", "fake jit: nothing to link");
    return CUDA_ERROR_INVALID_VALUE;
  }
  l.image = std::string(cubin_magic) + l.linked;  // owned by the link state, NUL-terminated by std::string
  report_jit(l.num_options, l.options, l.values, "fake jit: ok", "");
  *image = l.image.data();
  *size = l.image.size();
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuLinkDestroy(CUlinkState handle) {
  FAKE_ENTER();
  std::lock_guard<std::mutex> lock(g.mutex);
  return g.links.erase(reinterpret_cast<link_state*>(handle)) != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

// ===========================================================================
// Occupancy
// ===========================================================================
FAKE_API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction handle, int block_size,
                                                              std::size_t dynamic_shared_bytes) {
  FAKE_ENTER();
  if (blocks == nullptr || block_size <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  if (function_locked(handle, rc) == nullptr) return rc;
  *blocks = block_size > 1024 ? 0 : std::min(32, 2048 / block_size);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuOccupancyMaxPotentialBlockSize(int* min_grid_size, int* block_size, CUfunction handle,
                                                   std::size_t (*)(int), std::size_t dynamic_shared_bytes,
                                                   int block_size_limit) {
  FAKE_ENTER();
  if (min_grid_size == nullptr || block_size == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g.mutex);
  CUresult rc;
  if (function_locked(handle, rc) == nullptr) return rc;
  int best = block_size_limit > 0 ? std::min(block_size_limit, 1024) : 1024;
  *block_size = best;
  *min_grid_size = 4 * std::min(32, 2048 / best);  // multiprocessors * blocks per multiprocessor
  return CUDA_SUCCESS;
}

// ===========================================================================
// cuGetProcAddress
// ===========================================================================
namespace {
struct proc {
  const char* name;  // the base name
  int since;         // the CUDA version whose signature this is
  int until;         // the version that changed the signature (0: none since); the fake lacks the newer one
  void* entry;
};

template <class F>
void* address(F* f) {
  return reinterpret_cast<void*>(f);
}
}  // namespace

FAKE_API CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                      CUdriverProcAddressQueryResult* status);

namespace {
const proc procs[] = {
    {"cuInit", 2000, 0, address(cuInit)},
    {"cuDriverGetVersion", 2020, 0, address(cuDriverGetVersion)},
    {"cuGetErrorName", 6000, 0, address(cuGetErrorName)},
    {"cuGetErrorString", 6000, 0, address(cuGetErrorString)},
    {"cuGetProcAddress", 12000, 0, address(cuGetProcAddress_v2)},
    {"cuDeviceGetCount", 2000, 0, address(cuDeviceGetCount)},
    {"cuDeviceGet", 2000, 0, address(cuDeviceGet)},
    {"cuDeviceGetName", 2000, 0, address(cuDeviceGetName)},
    {"cuDeviceGetAttribute", 2000, 0, address(cuDeviceGetAttribute)},
    {"cuDeviceTotalMem", 3020, 0, address(cuDeviceTotalMem_v2)},
    {"cuDeviceGetUuid", 9020, 0, address(cuDeviceGetUuid_v2)},
    // A real 13.0 driver answers cuCtxCreate_v3 from 11040 and _v4 from 12050, with
    // other parameters; the fake has only the _v2 signature.
    {"cuCtxCreate", 3020, 11040, address(cuCtxCreate_v2)},
    {"cuCtxDestroy", 4000, 0, address(cuCtxDestroy_v2)},
    {"cuCtxSetCurrent", 4000, 0, address(cuCtxSetCurrent)},
    {"cuCtxGetCurrent", 4000, 0, address(cuCtxGetCurrent)},
    {"cuCtxPushCurrent", 4000, 0, address(cuCtxPushCurrent_v2)},
    {"cuCtxPopCurrent", 4000, 0, address(cuCtxPopCurrent_v2)},
    {"cuCtxGetDevice", 2000, 0, address(cuCtxGetDevice)},
    {"cuCtxSynchronize", 2000, 0, address(cuCtxSynchronize)},
    {"cuDevicePrimaryCtxRetain", 7000, 0, address(cuDevicePrimaryCtxRetain)},
    {"cuDevicePrimaryCtxRelease", 7000, 0, address(cuDevicePrimaryCtxRelease_v2)},
    {"cuMemAlloc", 3020, 0, address(cuMemAlloc_v2)},
    {"cuMemFree", 3020, 0, address(cuMemFree_v2)},
    {"cuMemGetInfo", 3020, 0, address(cuMemGetInfo_v2)},
    {"cuMemAllocHost", 3020, 0, address(cuMemAllocHost_v2)},
    {"cuMemHostAlloc", 2020, 0, address(cuMemHostAlloc)},
    {"cuMemFreeHost", 2000, 0, address(cuMemFreeHost)},
    {"cuMemHostRegister", 6050, 0, address(cuMemHostRegister_v2)},
    {"cuMemHostUnregister", 4000, 0, address(cuMemHostUnregister)},
    {"cuMemcpyHtoD", 3020, 0, address(cuMemcpyHtoD_v2)},
    {"cuMemcpyDtoH", 3020, 0, address(cuMemcpyDtoH_v2)},
    {"cuMemcpyHtoDAsync", 3020, 0, address(cuMemcpyHtoDAsync_v2)},
    {"cuMemcpyDtoHAsync", 3020, 0, address(cuMemcpyDtoHAsync_v2)},
    {"cuMemcpyDtoDAsync", 3020, 0, address(cuMemcpyDtoDAsync_v2)},
    {"cuMemsetD8Async", 3020, 0, address(cuMemsetD8Async)},
    {"cuMemsetD16Async", 3020, 0, address(cuMemsetD16Async)},
    {"cuMemsetD32Async", 3020, 0, address(cuMemsetD32Async)},
    {"cuModuleLoadData", 2000, 0, address(cuModuleLoadData)},
    {"cuModuleLoadDataEx", 2010, 0, address(cuModuleLoadDataEx)},
    {"cuModuleUnload", 2000, 0, address(cuModuleUnload)},
    {"cuModuleGetFunction", 2000, 0, address(cuModuleGetFunction)},
    {"cuModuleGetGlobal", 3020, 0, address(cuModuleGetGlobal_v2)},
    {"cuFuncGetAttribute", 2020, 0, address(cuFuncGetAttribute)},
    {"cuFuncSetAttribute", 9000, 0, address(cuFuncSetAttribute)},
    {"cuFuncSetCacheConfig", 3000, 0, address(cuFuncSetCacheConfig)},
    {"cuFuncGetParamInfo", 12040, 0, address(cuFuncGetParamInfo)},
    {"cuLaunchKernel", 4000, 0, address(cuLaunchKernel)},
    {"cuLaunchKernelEx", 11060, 0, address(cuLaunchKernelEx)},
    {"cuLaunchHostFunc", 10000, 0, address(cuLaunchHostFunc)},
    {"cuStreamAddCallback", 5000, 0, address(cuStreamAddCallback)},
    {"cuStreamCreate", 2000, 0, address(cuStreamCreate)},
    {"cuStreamCreateWithPriority", 5050, 0, address(cuStreamCreateWithPriority)},
    {"cuStreamDestroy", 4000, 0, address(cuStreamDestroy_v2)},
    {"cuStreamQuery", 2000, 0, address(cuStreamQuery)},
    {"cuStreamSynchronize", 2000, 0, address(cuStreamSynchronize)},
    {"cuStreamWaitEvent", 3020, 0, address(cuStreamWaitEvent)},
    {"cuEventCreate", 2000, 0, address(cuEventCreate)},
    {"cuEventRecord", 2000, 0, address(cuEventRecord)},
    {"cuEventDestroy", 4000, 0, address(cuEventDestroy_v2)},
    {"cuEventQuery", 2000, 0, address(cuEventQuery)},
    {"cuEventSynchronize", 2000, 0, address(cuEventSynchronize)},
    {"cuEventElapsedTime", 2000, 0, address(cuEventElapsedTime)},
    {"cuLinkCreate", 5050, 0, address(cuLinkCreate_v2)},
    {"cuLinkAddData", 5050, 0, address(cuLinkAddData_v2)},
    {"cuLinkComplete", 5050, 0, address(cuLinkComplete)},
    {"cuLinkDestroy", 5050, 0, address(cuLinkDestroy)},
    {"cuOccupancyMaxPotentialBlockSize", 6050, 0, address(cuOccupancyMaxPotentialBlockSize)},
    {"cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050, 0, address(cuOccupancyMaxActiveBlocksPerMultiprocessor)},
};
}  // namespace

/// As the real one: by base name and the caller's CUDA version; an unknown name (or one
/// whose only variant at that version the fake lacks) answers CUDA_SUCCESS with a NULL
/// function. Works before cuInit. The per-thread-stream flag changes nothing here.
FAKE_API CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                      CUdriverProcAddressQueryResult* status) {
  if (symbol == nullptr || pfn == nullptr || cuda_version <= 0 || cuda_version > driver_version ||
      flags > (CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
    return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  CUdriverProcAddressQueryResult answer = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  for (const proc& p : procs) {
    if (std::strcmp(p.name, symbol) != 0) continue;
    if (cuda_version < p.since) {
      answer = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    } else if (p.until == 0 || cuda_version < p.until) {
      *pfn = p.entry;
      answer = CU_GET_PROC_ADDRESS_SUCCESS;
    }
    break;
  }
  if (status != nullptr) *status = answer;
  return CUDA_SUCCESS;
}
