// The CUDA driver API entry points Ferry's libcuda.so.1 implements, under
// the symbol names NVIDIA's driver exports (the _v2 variants where CUDA's
// header renames a call), each answering with the driver's codes
// (docs/cuda.md). Every other entry point is in refused.cpp.
//
// What never leaves the client: device queries (the attributes came with
// cuInit), the context stack, argument checks, pointer checks against the
// allocations this client made. What is posted without waiting: launches,
// copies to the device, memsets, stream and event work. What waits:
// allocations, module loads, copies back, synchronizations and queries.
// Posted work is only queued on the connection, as an OpenCL enqueue is: its
// writer sends what has accumulated, and a call that waits flushes first.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/net/control_channel.hpp"
#include "common/log.hpp"
#include "common/spare_cores.hpp"
#include "cuda/abi/driver_abi.hpp"
#include "cuda/abi/result_names.hpp"
#include "cuda/client/driver_state.hpp"
#include "cuda/client/image_size.hpp"
#include "cuda/client/proc_table.hpp"
#include "cuda/client/round_trips.hpp"
#include "protocol/codec.hpp"

using namespace ferry::cuda;
namespace p = ferry::protocol;

#define FERRY_CUDA_API extern "C" __attribute__((visibility("default")))

/// Marks this library as Ferry's: a ferryd that finds it in place of NVIDIA's
/// driver refuses to load it (it would serve its sessions to itself).
extern "C" __attribute__((visibility("default"))) const int ferry_remote_cuda_driver = 1;

namespace {

/// What a lost server's work answers: the session ended for good (the
/// server restarted or stayed away past the grace period).
constexpr CUresult lost = CUDA_ERROR_DEVICE_UNAVAILABLE;

CUresult fail(CUresult rc, const char* call, const char* why) {
  const char* name = result_name(rc);
  FERRY_DEBUG("cuda", "%s returns %s: %s", call, name ? name : "?", why);
  return rc;
}

/// The checks every call but error naming makes first.
CUresult ready(const char* call) {
  if (in_callback()) return fail(CUDA_ERROR_NOT_PERMITTED, call, "called from a stream callback");
  if (!initialized()) return fail(CUDA_ERROR_NOT_INITIALIZED, call, "cuInit has not been called");
  return CUDA_SUCCESS;
}

template <class T>
bool alive(const T* object, tag kind) {
  return object != nullptr && object->kind == kind;
}

/// The context a call works in: `c` if given, else the current one.
CUresult context_for(CUctx_st* c, CUctx_st*& out, const char* call) {
  out = c != nullptr ? c : current_context();
  if (out == nullptr) return fail(CUDA_ERROR_INVALID_CONTEXT, call, "no context is current");
  if (!alive(out, tag::context)) return fail(CUDA_ERROR_INVALID_CONTEXT, call, "the context was destroyed");
  return CUDA_SUCCESS;
}

/// A stream handle: null, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD are the
/// NULL stream of the current context (Ferry runs the per-thread default
/// stream as the legacy one); others must be live streams.
CUresult stream_for(CUstream s, CUctx_st*& context, p::object_id& id, const char* call) {
  const auto value = reinterpret_cast<std::uintptr_t>(s);
  if (s == nullptr || value == stream_legacy_value || value == stream_per_thread_value) {
    id = 0;
    return context_for(nullptr, context, call);
  }
  if (!alive(s, tag::stream)) return fail(CUDA_ERROR_INVALID_HANDLE, call, "not a live stream");
  id = s->id;
  context = s->context;
  return CUDA_SUCCESS;
}

/// Waits for an outstanding count to reach zero, polling first (the rCUDA
/// paper: the answer is usually microseconds away).
class countdown {
 public:
  explicit countdown(int n) : left_(n) {}
  /// One part ended with `rc`; true when it was the last.
  bool done(CUresult rc) {
    bool last;
    {
      std::lock_guard lock(mutex_);
      if (rc != CUDA_SUCCESS && result_ == CUDA_SUCCESS) result_ = rc;
      last = --left_ == 0;
    }
    cv_.notify_all();
    return last;
  }
  CUresult wait() {
    const auto deadline = std::chrono::steady_clock::now() + ferry::client::this_thread_spin();
    while (std::chrono::steady_clock::now() < deadline) {
      std::lock_guard lock(mutex_);
      if (left_ == 0) return result_;
    }
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return left_ == 0; });
    return result_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int left_;
  CUresult result_ = CUDA_SUCCESS;
};

/// How long a thread that waits for `c`'s GPU polls before it sleeps: as
/// CUDA's context flags ask. CU_CTX_SCHED_SPIN spins, and so does
/// CU_CTX_SCHED_AUTO where the host has cores to spare, for up to a second
/// (native CUDA spins for the whole wait; a thread that sleeps through a
/// long kernel wakes 50-60 µs late, and through Ferry two threads do: the
/// waiting one and the connection's reader). CU_CTX_SCHED_YIELD and
/// CU_CTX_SCHED_BLOCKING_SYNC get the default (FERRY_SPIN_US).
std::chrono::microseconds context_wait_spin(const CUctx_st* c) {
  static const bool set_by_hand = std::getenv("FERRY_SPIN_US") != nullptr;  // a measuring aid's
  if (set_by_hand) return ferry::client::spin_duration();
  const unsigned flags = (c->primary ? c->device->primary_flags : c->flags) & CU_CTX_SCHED_MASK;
  if (flags == CU_CTX_SCHED_SPIN) return std::max(ferry::client::spin_duration(), std::chrono::microseconds(1000000));
  return flags == CU_CTX_SCHED_AUTO ? ferry::client::gpu_wait_spin() : ferry::client::spin_duration();
}

/// Sends `request` on `c`'s server and waits for the reply, polling for
/// `spin` before it sleeps; `lost` when the session ended first. `frame`:
/// where to store the request's frame number.
template <class Reply, class Request>
CUresult call(CUctx_st* c, Request& request, Reply& reply, const char* what, uint64_t* frame = nullptr,
              std::chrono::microseconds spin = ferry::client::this_thread_spin()) {
  ferry::client::connection* link = c->link();
  ferry::client::connection::waiting scope(*link, spin);
  count_round_trip(what);
  uint64_t number = 0;
  auto answer = link->call<Reply>(request, [] {}, number);
  if (frame != nullptr) *frame = number;
  if (!answer) return fail(lost, what, "the server's session ended");
  reply = std::move(*answer);
  return reply.result;
}

/// Decodes an asynchronous reply (control_channel::post_request).
template <class Reply>
bool decode_reply(bool answered, uint16_t id, const uint8_t* payload, size_t size, Reply& reply) {
  if (!answered || id != static_cast<uint16_t>(p::message_traits<Reply>::id)) return false;
  const char* why = "";
  return p::decode_payload(payload, size, reply, why);
}

/// The bytes of a cuda_data answer, read in place (a copy back's bytes go
/// from the received frame straight into the program's memory). Its fields
/// in wire order: request (u64), result (i32), data (u32 count, bytes).
/// False for a payload that is not such an answer.
bool cuda_data_in_place(bool answered, uint16_t id, const uint8_t* payload, size_t size, CUresult& result,
                        const uint8_t*& data, size_t& count) {
  if (!answered || id != static_cast<uint16_t>(p::message_id::cuda_data) || size < 16) return false;
  int32_t r;
  uint32_t n;
  std::memcpy(&r, payload + 8, 4);
  std::memcpy(&n, payload + 12, 4);
  if (size - 16 != n) return false;
  result = r;
  data = payload + 16;
  count = n;
  return true;
}

CUresult synchronize(CUctx_st* c, p::object_id target, p::cuda_target kind, const char* what) {
  uint64_t before;
  bool whole;
  {
    std::lock_guard lock(c->mutex);
    before = c->syncs;
    whole = kind == p::cuda_target::context || (kind == p::cuda_target::stream && target == 0 && c->nonblocking_streams == 0);
  }
  p::cuda_synchronize ask{0, c->id, target, kind};
  p::cuda_status reply;
  uint64_t frame = 0;
  CUresult rc = call(c, ask, reply, what, &frame, context_wait_spin(c));
  c->wait_for_bulk_pieces();
  if (whole && rc == CUDA_SUCCESS) {
    // Pieces freed before this synchronization began are idle now.
    std::lock_guard lock(c->mutex);
    c->syncs = std::max(c->syncs, before + 1);
    c->idle_at_frame = frame;
  }
  return rc;
}

// ---------------------------------------------------------------------------
// Copies

/// Copies to the device from this size go on the bulk stream (through the
/// shared-memory window on a Unix socket), in pieces of bulk_piece bytes, so
/// that the daemon's pinned staging stays small and its copies to the GPU
/// overlap the next piece's bytes. Smaller ones ride in the control message.
constexpr size_t bulk_copy_from = size_t{1} << 20;
constexpr size_t bulk_piece = p::cuda_copy_in_piece;

/// Host to device, in stream order; the bytes are copied (or sent) before
/// this returns, so the host memory may change as soon as it does.
CUresult copy_to_device(CUctx_st* c, p::object_id stream, CUdeviceptr dst, const void* src, size_t size,
                        const char* call_name) {
  if (size == 0) return CUDA_SUCCESS;
  if (src == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, call_name, "the host pointer is NULL");
  if (!c->owns(dst, size)) return fail(CUDA_ERROR_INVALID_VALUE, call_name, "the range is not device memory of the context");
  const auto* bytes = static_cast<const uint8_t*>(src);
  ferry::client::connection* link = c->link();
  if (size >= bulk_copy_from) {
    std::vector<std::pair<p::object_id, size_t>> pieces;
    for (size_t done = 0; done < size;) {
      const size_t piece = std::min(size - done, bulk_piece);
      const p::object_id transfer = new_id();
      link->post(p::cuda_copy_to_device_bulk{c->id, stream, dst + done, piece, transfer});
      pieces.emplace_back(transfer, piece);
      done += piece;
    }
    link->flush();
    size_t done = 0;
    for (const auto& [transfer, piece] : pieces) {
      if (!link->send_data(transfer, bytes + done, piece, ferry::client::bytes_lifetime::until_return))
        return fail(lost, call_name, "the server's session ended");
      done += piece;
    }
    return CUDA_SUCCESS;
  }
  for (size_t done = 0; done < size;) {
    const size_t piece = std::min<size_t>(size - done, p::max_cuda_copy_piece);
    p::cuda_copy_to_device m;
    m.context = c->id;
    m.stream = stream;
    m.destination = dst + done;
    m.data.assign(bytes + done, bytes + done + piece);
    link->post(m);
    done += piece;
  }
  return CUDA_SUCCESS;
}

/// Copies back from this size come on the bulk stream (through the read
/// window on a Unix socket), in pieces of bulk_back_piece bytes, at most
/// bulk_back_window of them asked for at a time: the daemon holds each piece
/// in page-locked memory until the client has it, so the window bounds what
/// it holds, and its blocks are used again piece after piece. A piece asked
/// for later still comes after all the work enqueued before the copy; work a
/// program enqueues after the copy can only come first from another thread
/// (a race in the program) or after an asynchronous copy, which therefore
/// returns only once its last window of pieces is asked for (as CUDA's own
/// asynchronous copies to pageable memory wait).
constexpr size_t bulk_back_piece = p::cuda_copy_back_piece;
constexpr size_t bulk_back_window = 8;

/// One piece of a copy back on the bulk stream: whole once its answer and its
/// bytes came (or the answer said that none come).
class bulk_back {
 public:
  explicit bulk_back(CUctx_st* c) : context_(c) { c->bulk_piece_begun(); }
  /// One part ended with `rc`.
  void part_done(CUresult rc) {
    if (parts_.done(rc)) context_->bulk_piece_ended();
  }
  CUresult wait() { return parts_.wait(); }

 private:
  CUctx_st* const context_;
  countdown parts_{2};
};

/// Device to host on the bulk stream (see bulk_back_piece). Returns the
/// first failure of a piece it waited for.
CUresult copy_back_in_bulk(CUctx_st* c, p::object_id stream, uint8_t* out, CUdeviceptr src, size_t size, bool wait) {
  ferry::client::connection* link = c->link();
  ferry::client::connection::waiting scope(*link, context_wait_spin(c));
  std::deque<std::shared_ptr<bulk_back>> asked;
  CUresult first = CUDA_SUCCESS;
  auto settle_oldest = [&] {
    if (CUresult rc = asked.front()->wait(); rc != CUDA_SUCCESS && first == CUDA_SUCCESS) first = rc;
    asked.pop_front();
  };
  for (size_t done = 0; done < size;) {
    if (asked.size() == bulk_back_window) {
      link->flush();
      settle_oldest();
    }
    const size_t piece = std::min(size - done, bulk_back_piece);
    const p::object_id transfer = new_id();
    auto state = std::make_shared<bulk_back>(c);
    asked.push_back(state);
    done += piece;
    if (!link->expect_bytes(transfer, out + done - piece, piece,
                            [state](bool landed) { state->part_done(landed ? CUDA_SUCCESS : lost); })) {
      state->part_done(lost);
      state->part_done(lost);
      break;
    }
    p::cuda_copy_from_device_bulk m{0, c->id, stream, src + done - piece, piece, transfer};
    bool posted = link->post_request(m, [state, link, transfer](bool answered, uint16_t id, const uint8_t* payload,
                                                                size_t size) {
      p::cuda_status reply;
      CUresult rc = lost;
      if (decode_reply(answered, id, payload, size, reply)) rc = reply.result;
      else if (answered) rc = CUDA_ERROR_UNKNOWN;  // not the answer asked for
      // A failure sends no bytes: their part ends here unless it already did.
      if (rc != CUDA_SUCCESS && link->forget_bytes(transfer)) state->part_done(rc);
      state->part_done(rc);
    });
    if (!posted) {
      if (link->forget_bytes(transfer)) state->part_done(lost);
      state->part_done(lost);
      break;
    }
  }
  link->flush();
  if (wait)
    while (!asked.empty()) settle_oldest();
  return first;
}

/// Device to host in pieces: each piece's bytes are written into `dst` on
/// the connection's reader thread when they arrive. `wait`: until all did.
CUresult copy_from_device(CUctx_st* c, CUstream_st* s, p::object_id stream, void* dst, CUdeviceptr src, size_t size,
                          bool wait, const char* call_name) {
  if (size == 0) return CUDA_SUCCESS;
  if (dst == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, call_name, "the host pointer is NULL");
  if (!c->owns(src, size)) return fail(CUDA_ERROR_INVALID_VALUE, call_name, "the range is not device memory of the context");
  if (wait) count_round_trip(call_name);
  if (size >= bulk_copy_from) return copy_back_in_bulk(c, stream, static_cast<uint8_t*>(dst), src, size, wait);
  const size_t pieces = (size + p::max_cuda_copy_piece - 1) / p::max_cuda_copy_piece;
  auto latch = std::make_shared<countdown>(static_cast<int>(pieces));
  auto* out = static_cast<uint8_t*>(dst);
  for (size_t done = 0; done < size;) {
    const size_t piece = std::min<size_t>(size - done, p::max_cuda_copy_piece);
    p::cuda_copy_from_device m{0, c->id, stream, src + done, piece};
    const uint64_t number = s != nullptr ? s->begin_copy_back() : 0;
    uint8_t* target = out + done;
    bool posted = c->link()->post_request(m, [latch, target, piece, s, number](bool answered, uint16_t id,
                                                                               const uint8_t* payload, size_t size) {
      CUresult rc = lost;
      const uint8_t* data = nullptr;
      size_t count = 0;
      if (cuda_data_in_place(answered, id, payload, size, rc, data, count)) {
        if (rc == CUDA_SUCCESS && count == piece) std::memcpy(target, data, piece);
        else if (rc == CUDA_SUCCESS) rc = CUDA_ERROR_UNKNOWN;
      } else if (answered) {
        rc = CUDA_ERROR_UNKNOWN;  // not the answer asked for
      }
      if (s != nullptr) s->end_copy_back(number);
      latch->done(rc);
    });
    if (!posted) {
      if (s != nullptr) s->end_copy_back(number);
      latch->done(lost);
    }
    done += piece;
  }
  if (!wait) return CUDA_SUCCESS;
  ferry::client::connection::waiting scope(*c->link(), context_wait_spin(c));
  c->link()->flush();
  return latch->wait();
}

CUresult copy_on_device(CUctx_st* c, p::object_id stream, CUdeviceptr dst, CUdeviceptr src, size_t size,
                        const char* call_name) {
  if (size == 0) return CUDA_SUCCESS;
  if (!c->owns(dst, size) || !c->owns(src, size))
    return fail(CUDA_ERROR_INVALID_VALUE, call_name, "a range is not device memory of the context");
  c->link()->post(p::cuda_copy_on_device{c->id, stream, dst, src, size});
  return CUDA_SUCCESS;
}

CUresult memset(CUdeviceptr dst, unsigned value, unsigned element, size_t count, CUstream s, bool wait,
                const char* call_name) {
  if (CUresult rc = ready(call_name)) return rc;
  CUctx_st* c;
  p::object_id stream;
  if (CUresult rc = stream_for(s, c, stream, call_name)) return rc;
  if (count == 0) return CUDA_SUCCESS;
  if (dst % element != 0) return fail(CUDA_ERROR_INVALID_VALUE, call_name, "the pointer is not aligned");
  if (count > SIZE_MAX / element || !c->owns(dst, count * element))
    return fail(CUDA_ERROR_INVALID_VALUE, call_name, "the range is not device memory of the context");
  c->link()->post(p::cuda_memset{c->id, stream, dst, value, element, count});
  return wait ? synchronize(c, stream, p::cuda_target::stream, call_name) : CUDA_SUCCESS;
}

/// The device `dev` names (after the checks every call makes), or
/// CUDA_ERROR_INVALID_DEVICE.
CUresult device_of(CUdevice dev, device_entry*& out, const char* call) {
  if (CUresult rc = ready(call)) return rc;
  if (dev < 0 || static_cast<size_t>(dev) >= driver().devices.size())
    return fail(CUDA_ERROR_INVALID_DEVICE, call, "no such device");
  out = &driver().devices[static_cast<size_t>(dev)];
  return CUDA_SUCCESS;
}

// ---------------------------------------------------------------------------
// Contexts

CUresult create_context(CUctx_st** out, unsigned flags, CUdevice dev, bool primary, const char* call_name) {
  device_entry* d;
  if (CUresult rc = device_of(dev, d, call_name)) return rc;
  if (flags & CU_CTX_MAP_HOST)
    FERRY_DEBUG("cuda", "%s: CU_CTX_MAP_HOST is ignored: a remote GPU cannot map this host's memory", call_name);
  auto* c = keep(new CUctx_st);
  c->id = new_id();
  c->device = d;
  c->ordinal = dev;
  c->flags = flags;
  c->primary = primary;
  p::cuda_create_context ask{0, c->id, d->desc.ordinal, flags & 0x7u};
  p::cuda_status reply;
  if (CUresult rc = call(c, ask, reply, call_name)) {
    bury(c);
    return rc;
  }
  *out = c;
  return CUDA_SUCCESS;
}

void destroy_context(CUctx_st* c) {
  c->wait_for_bulk_pieces();  // their handlers name the context
  c->link()->post(p::cuda_release{c->id});
  forget_context_here(c);
  bury(c);  // handles to it fail from now on
}

// ---------------------------------------------------------------------------
// Modules

/// The JIT options of the program: numbers go to the server, the log
/// buffers and wall time stay here and are filled from the reply.
struct jit_request {
  std::vector<p::cuda_jit_option> options;
  char* info_log = nullptr;
  size_t info_size = 0;
  char* error_log = nullptr;
  size_t error_size = 0;
  float* wall_time = nullptr;
  void* info_size_slot = nullptr;
  void* error_size_slot = nullptr;

  CUresult read(unsigned n, CUjit_option* keys, void** values) {
    if (n > 0 && (keys == nullptr || values == nullptr)) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; ++i) {
      const auto value = reinterpret_cast<std::uintptr_t>(values[i]);
      switch (keys[i]) {
        case CU_JIT_INFO_LOG_BUFFER: info_log = static_cast<char*>(values[i]); break;
        case CU_JIT_ERROR_LOG_BUFFER: error_log = static_cast<char*>(values[i]); break;
        case CU_JIT_WALL_TIME: wall_time = reinterpret_cast<float*>(&values[i]); break;
        case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
          info_size = static_cast<unsigned>(value);
          info_size_slot = &values[i];
          options.push_back({static_cast<uint32_t>(keys[i]), static_cast<int64_t>(info_size)});
          break;
        case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
          error_size = static_cast<unsigned>(value);
          error_size_slot = &values[i];
          options.push_back({static_cast<uint32_t>(keys[i]), static_cast<int64_t>(error_size)});
          break;
        case CU_JIT_GLOBAL_SYMBOL_NAMES:
        case CU_JIT_GLOBAL_SYMBOL_ADDRESSES:
        case CU_JIT_GLOBAL_SYMBOL_COUNT:
        case CU_JIT_REFERENCED_KERNEL_NAMES:
        case CU_JIT_REFERENCED_VARIABLE_NAMES:
          // Pointers into this process mean nothing to the server's JIT.
          FERRY_DEBUG("cuda", "JIT option %d (pointers into the program) is ignored", keys[i]);
          break;
        default:
          if (keys[i] < 0 || keys[i] >= CU_JIT_NUM_OPTIONS) return CUDA_ERROR_INVALID_VALUE;
          options.push_back({static_cast<uint32_t>(keys[i]), static_cast<int64_t>(value)});
      }
    }
    return CUDA_SUCCESS;
  }
  /// Fills the program's buffers from what the server's JIT wrote.
  void fill(const std::string& info, const std::string& error, uint64_t wall_ns) const {
    auto copy = [](char* to, size_t size, const std::string& from, void* size_slot) {
      if (to == nullptr || size == 0) return;
      const size_t n = std::min(size - 1, from.size());
      std::memcpy(to, from.data(), n);
      to[n] = '\0';
      // CUDA writes back how many bytes the log took, its NUL included.
      if (size_slot != nullptr) *static_cast<void**>(size_slot) = reinterpret_cast<void*>(n + 1);
    };
    copy(info_log, info_size, info, info_size_slot);
    copy(error_log, error_size, error, error_size_slot);
    if (wall_time != nullptr) *wall_time = static_cast<float>(static_cast<double>(wall_ns) / 1e6);
  }
};

CUresult load_module(CUmod_st** out, const void* image, size_t size, unsigned n, CUjit_option* keys,
                     void** values, const char* call_name) {
  if (CUresult rc = ready(call_name)) return rc;
  if (out == nullptr || image == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, call_name, "a pointer is NULL");
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, call_name)) return rc;
  if (size == 0) return fail(CUDA_ERROR_INVALID_IMAGE, call_name, "the image's format is not known");
  if (size > p::max_bytes_field - 4096) return fail(CUDA_ERROR_INVALID_VALUE, call_name, "the image is too large");
  jit_request jit;
  if (CUresult rc = jit.read(n, keys, values)) return fail(rc, call_name, "a JIT option is invalid");
  auto* m = keep(new CUmod_st);
  m->id = new_id();
  m->context = c;
  p::cuda_module_load ask;
  ask.context = c->id;
  ask.module = m->id;
  const auto* bytes = static_cast<const uint8_t*>(image);
  // PTX travels without its NUL; the server adds one.
  ask.image.assign(bytes, bytes + size);
  if (!ask.image.empty() && ask.image.back() == 0) ask.image.pop_back();
  ask.options = jit.options;
  p::cuda_module_reply reply;
  CUresult rc = call(c, ask, reply, call_name);
  if (rc != lost) jit.fill(reply.info_log, reply.error_log, reply.wall_time_ns);
  if (rc != CUDA_SUCCESS) {
    bury(m);
    return fail(rc, call_name, reply.error_log.empty() ? "the server's driver refused the image" : reply.error_log.c_str());
  }
  *out = m;
  return CUDA_SUCCESS;
}

bool read_file(const char* path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

CUresult get_function(CUfunc_st** out, CUmod_st* m, const char* name, const char* call_name) {
  if (CUresult rc = ready(call_name)) return rc;
  if (out == nullptr || name == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, call_name, "a pointer is NULL");
  if (!alive(m, tag::module)) return fail(CUDA_ERROR_INVALID_HANDLE, call_name, "not a live module");
  auto* f = keep(new CUfunc_st);
  f->id = new_id();
  f->module = m;
  p::cuda_get_function ask{0, m->id, f->id, name};
  p::cuda_function_reply reply;
  if (CUresult rc = call(m->context, ask, reply, call_name)) {
    bury(f);
    return fail(rc, call_name, name);
  }
  f->params_known = reply.params_known != 0;
  f->params = std::move(reply.params);
  f->attributes = std::move(reply.attributes);
  *out = f;
  return CUDA_SUCCESS;
}

// ---------------------------------------------------------------------------
// Launches

CUresult launch(CUfunc_st* f, const unsigned grid[3], const unsigned block[3], unsigned shared, CUstream s,
                void** params, void** extra, const char* call_name) {
  if (CUresult rc = ready(call_name)) return rc;
  if (!alive(f, tag::function)) return fail(CUDA_ERROR_INVALID_HANDLE, call_name, "not a live function");
  CUctx_st* c;
  p::object_id stream;
  if (CUresult rc = stream_for(s, c, stream, call_name)) return rc;
  if (c != f->module->context) return fail(CUDA_ERROR_INVALID_HANDLE, call_name, "the function is of another context");
  const device_entry& d = *c->device;
  const int max_block[3] = {d.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X), d.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                            d.attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
  const int max_grid[3] = {d.attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), d.attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                           d.attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
  uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (grid[i] == 0 || block[i] == 0) return fail(CUDA_ERROR_INVALID_VALUE, call_name, "a dimension is 0");
    if ((max_block[i] > 0 && block[i] > static_cast<unsigned>(max_block[i])) ||
        (max_grid[i] > 0 && grid[i] > static_cast<unsigned>(max_grid[i])))
      return fail(CUDA_ERROR_INVALID_VALUE, call_name, "a dimension is over the device's limit");
    threads *= block[i];
  }
  int max_threads = d.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  if (!f->attributes.empty() && f->attributes[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK] > 0)
    max_threads = f->attributes[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK];
  if (max_threads > 0 && threads > static_cast<uint64_t>(max_threads))
    return fail(CUDA_ERROR_INVALID_VALUE, call_name, "more threads per block than the kernel allows");
  p::cuda_launch m;
  m.context = c->id;
  m.stream = stream;
  m.function = f->id;
  m.grid = {grid[0], grid[1], grid[2]};
  m.block = {block[0], block[1], block[2]};
  m.shared_bytes = shared;
  if (params != nullptr && extra != nullptr)
    return fail(CUDA_ERROR_INVALID_VALUE, call_name, "both kernelParams and extra are given");
  if (params != nullptr) {
    if (!f->params_known)
      return fail(CUDA_ERROR_NOT_SUPPORTED, call_name,
                  "the server's driver cannot tell the kernel's parameter layout (pass them with 'extra')");
    m.params.assign(f->params_size(), 0);
    for (size_t i = 0; i < f->params.size(); ++i) {
      if (params[i] == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, call_name, "a kernel parameter pointer is NULL");
      std::memcpy(m.params.data() + f->params[i].offset, params[i], f->params[i].size);
    }
  } else if (extra != nullptr) {
    const void* buffer = nullptr;
    size_t size = 0;
    bool sized = false;
    for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END(); i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER()) {
        buffer = extra[i + 1];
      } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE()) {
        if (extra[i + 1] == nullptr) return fail(CUDA_ERROR_INVALID_VALUE, call_name, "the extra size is NULL");
        size = *static_cast<const size_t*>(extra[i + 1]);
        sized = true;
      } else {
        return fail(CUDA_ERROR_INVALID_VALUE, call_name, "an unknown entry in extra");
      }
    }
    if (buffer == nullptr || !sized) return fail(CUDA_ERROR_INVALID_VALUE, call_name, "extra lacks the buffer or its size");
    if (size > 32768) return fail(CUDA_ERROR_INVALID_VALUE, call_name, "more than 32 KiB of kernel parameters");
    const auto* bytes = static_cast<const uint8_t*>(buffer);
    m.params.assign(bytes, bytes + size);
  } else if (f->params_known && f->params_size() > 0) {
    return fail(CUDA_ERROR_INVALID_VALUE, call_name, "the kernel has parameters but none were given");
  }
  c->link()->post(m);
  return CUDA_SUCCESS;
}

// ---------------------------------------------------------------------------
// Stream callbacks

CUresult add_callback(CUstream s, const char* call_name, std::function<void(CUresult)> then) {
  CUctx_st* c;
  p::object_id stream;
  if (CUresult rc = stream_for(s, c, stream, call_name)) return rc;
  p::cuda_synchronize ask{0, c->id, stream, p::cuda_target::stream};
  bool posted = c->link()->post_request(ask, [then, c](bool answered, uint16_t id, const uint8_t* payload,
                                                        size_t size) {
    p::cuda_status reply;
    const CUresult rc = decode_reply(answered, id, payload, size, reply) ? reply.result : lost;
    // The bytes of copies back on the bulk stream may trail the answer: the
    // callback thread (never this reader) waits for them first.
    run_on_callback_thread([then, c, rc] {
      c->wait_for_bulk_pieces();
      then(rc);
    });
  });
  if (!posted) return fail(lost, call_name, "the server's session ended");
  return CUDA_SUCCESS;
}

}  // namespace

// ===========================================================================
// Initialization, versions, errors

FERRY_CUDA_API CUresult cuInit(unsigned flags) {
  if (in_callback()) return CUDA_ERROR_NOT_PERMITTED;
  if (flags != 0) return fail(CUDA_ERROR_INVALID_VALUE, "cuInit", "flags must be 0");
  return initialize(flags);
}

FERRY_CUDA_API CUresult cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = driver_version;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuGetErrorName(CUresult error, const char** text) {
  if (text == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *text = result_name(error);
  return *text ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FERRY_CUDA_API CUresult cuGetErrorString(CUresult error, const char** text) {
  if (text == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *text = result_string(error);
  return *text ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// ===========================================================================
// Devices

FERRY_CUDA_API CUresult cuDeviceGetCount(int* count) {
  if (CUresult rc = ready("cuDeviceGetCount")) return rc;
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = static_cast<int>(driver().devices.size());
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (CUresult rc = ready("cuDeviceGet")) return rc;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (ordinal < 0 || static_cast<size_t>(ordinal) >= driver().devices.size())
    return fail(CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet", "no such device");
  *device = ordinal;
  return CUDA_SUCCESS;
}


FERRY_CUDA_API CUresult cuDeviceGetName(char* name, int length, CUdevice dev) {
  device_entry* d;
  if (CUresult rc = device_of(dev, d, "cuDeviceGetName")) return rc;
  if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  const size_t n = std::min(static_cast<size_t>(length) - 1, d->desc.name.size());
  std::memcpy(name, d->desc.name.data(), n);
  name[n] = '\0';
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice dev) {
  device_entry* d;
  if (CUresult rc = device_of(dev, d, "cuDeviceGetAttribute")) return rc;
  if (value == nullptr || attribute <= 0 || attribute >= CU_DEVICE_ATTRIBUTE_MAX)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetAttribute", "no such attribute");
  *value = d->attribute(attribute);
  // A remote GPU cannot map this host's memory, whatever the server's can.
  if (attribute == CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY || attribute == CU_DEVICE_ATTRIBUTE_INTEGRATED ||
      attribute == CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS ||
      attribute == CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM ||
      attribute == CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED || attribute == CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY ||
      attribute == CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)
    *value = 0;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  device_entry* d;
  if (CUresult rc = device_of(dev, d, "cuDeviceTotalMem")) return rc;
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *bytes = d->desc.total_memory;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  device_entry* d;
  if (CUresult rc = device_of(dev, d, "cuDeviceGetUuid")) return rc;
  if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(uuid->bytes, d->desc.uuid.data(), 16);
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) { return cuDeviceGetUuid(uuid, dev); }

FERRY_CUDA_API CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
  device_entry* d;
  if (CUresult rc = device_of(dev, d, "cuDeviceComputeCapability")) return rc;
  if (major == nullptr || minor == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *major = d->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  *minor = d->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuDeviceGetPCIBusId(char* text, int length, CUdevice dev) {
  device_entry* d;
  if (CUresult rc = device_of(dev, d, "cuDeviceGetPCIBusId")) return rc;
  if (text == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  char id[32];
  std::snprintf(id, sizeof id, "%08x:%02x:%02x.0", d->attribute(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
                d->attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID), d->attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID));
  std::snprintf(text, static_cast<size_t>(length), "%s", id);
  return CUDA_SUCCESS;
}

// ===========================================================================
// Contexts

FERRY_CUDA_API CUresult cuCtxCreate_v2(CUcontext* out, unsigned flags, CUdevice dev) {
  if (CUresult rc = ready("cuCtxCreate")) return rc;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* c;
  if (CUresult rc = create_context(&c, flags, dev, false, "cuCtxCreate")) return rc;
  if (!push_context(c)) {
    destroy_context(c);
    return fail(CUDA_ERROR_OUT_OF_MEMORY, "cuCtxCreate", "this thread's context stack is full");
  }
  *out = c;
  return CUDA_SUCCESS;
}

// cuCtxCreate_v3 adds execution-affinity parameters, _v4 a parameter struct
// (affinity and a CIG context); Ferry takes neither, and without them both
// are cuCtxCreate_v2.
FERRY_CUDA_API CUresult cuCtxCreate_v3(CUcontext* out, void* affinity, int count, unsigned flags, CUdevice dev) {
  if (affinity != nullptr || count != 0) {
    if (CUresult rc = ready("cuCtxCreate_v3")) return rc;
    return fail(CUDA_ERROR_NOT_SUPPORTED, "cuCtxCreate_v3", "execution affinity is not supported");
  }
  return cuCtxCreate_v2(out, flags, dev);
}

FERRY_CUDA_API CUresult cuCtxCreate_v4(CUcontext* out, void* params, unsigned flags, CUdevice dev) {
  if (params != nullptr) {
    if (CUresult rc = ready("cuCtxCreate_v4")) return rc;
    return fail(CUDA_ERROR_NOT_SUPPORTED, "cuCtxCreate_v4", "context creation parameters are not supported");
  }
  return cuCtxCreate_v2(out, flags, dev);
}

FERRY_CUDA_API CUresult cuCtxDestroy_v2(CUcontext c) {
  if (CUresult rc = ready("cuCtxDestroy")) return rc;
  if (!alive(c, tag::context) || c->primary) return fail(CUDA_ERROR_INVALID_CONTEXT, "cuCtxDestroy", "not a live context");
  destroy_context(c);
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuCtxPushCurrent_v2(CUcontext c) {
  if (CUresult rc = ready("cuCtxPushCurrent")) return rc;
  if (!alive(c, tag::context)) return fail(CUDA_ERROR_INVALID_CONTEXT, "cuCtxPushCurrent", "not a live context");
  if (!push_context(c)) return fail(CUDA_ERROR_OUT_OF_MEMORY, "cuCtxPushCurrent", "this thread's context stack is full");
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuCtxPopCurrent_v2(CUcontext* out) {
  if (CUresult rc = ready("cuCtxPopCurrent")) return rc;
  CUctx_st* c = pop_context();
  if (c == nullptr) return fail(CUDA_ERROR_INVALID_CONTEXT, "cuCtxPopCurrent", "no context is current");
  if (out != nullptr) *out = c;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuCtxSetCurrent(CUcontext c) {
  if (CUresult rc = ready("cuCtxSetCurrent")) return rc;
  if (c != nullptr && !alive(c, tag::context)) return fail(CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent", "not a live context");
  set_current_context(c);
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuCtxGetCurrent(CUcontext* out) {
  if (CUresult rc = ready("cuCtxGetCurrent")) return rc;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = current_context();
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuCtxGetDevice(CUdevice* dev) {
  if (CUresult rc = ready("cuCtxGetDevice")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuCtxGetDevice")) return rc;
  if (dev == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *dev = c->ordinal;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuCtxGetFlags(unsigned* flags) {
  if (CUresult rc = ready("cuCtxGetFlags")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuCtxGetFlags")) return rc;
  if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *flags = c->flags;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuCtxGetApiVersion(CUcontext c, unsigned* version) {
  if (CUresult rc = ready("cuCtxGetApiVersion")) return rc;
  CUctx_st* ctx;
  if (CUresult rc = context_for(c, ctx, "cuCtxGetApiVersion")) return rc;
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = 3020;  // the API version of contexts made by cuCtxCreate_v2
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuCtxSynchronize() {
  if (CUresult rc = ready("cuCtxSynchronize")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuCtxSynchronize")) return rc;
  return synchronize(c, 0, p::cuda_target::context, "cuCtxSynchronize");
}

FERRY_CUDA_API CUresult cuCtxSetCacheConfig(CUfunc_cache config) {
  if (CUresult rc = ready("cuCtxSetCacheConfig")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuCtxSetCacheConfig")) return rc;
  // A preference the driver may ignore (CUDA's documentation says so).
  return config >= CU_FUNC_CACHE_PREFER_NONE && config <= CU_FUNC_CACHE_PREFER_EQUAL ? CUDA_SUCCESS
                                                                                     : CUDA_ERROR_INVALID_VALUE;
}

FERRY_CUDA_API CUresult cuCtxGetCacheConfig(CUfunc_cache* config) {
  if (CUresult rc = ready("cuCtxGetCacheConfig")) return rc;
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *config = CU_FUNC_CACHE_PREFER_NONE;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuCtxGetStreamPriorityRange(int* least, int* greatest) {
  if (CUresult rc = ready("cuCtxGetStreamPriorityRange")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuCtxGetStreamPriorityRange")) return rc;
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuCtxSetLimit(int limit, size_t value) {
  if (CUresult rc = ready("cuCtxSetLimit")) return rc;
  return fail(CUDA_ERROR_UNSUPPORTED_LIMIT, "cuCtxSetLimit", "limits are the server's");
}

FERRY_CUDA_API CUresult cuCtxGetLimit(size_t* value, int limit) {
  if (CUresult rc = ready("cuCtxGetLimit")) return rc;
  return fail(CUDA_ERROR_UNSUPPORTED_LIMIT, "cuCtxGetLimit", "limits are the server's");
}

FERRY_CUDA_API CUresult cuDevicePrimaryCtxRetain(CUcontext* out, CUdevice dev) {
  if (CUresult rc = ready("cuDevicePrimaryCtxRetain")) return rc;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto& st = driver();
  device_entry* entry;
  if (CUresult rc = device_of(dev, entry, "cuDevicePrimaryCtxRetain")) return rc;
  device_entry& d = *entry;
  std::lock_guard lock(st.mutex);
  if (d.primary == nullptr || !alive(d.primary, tag::context)) {
    CUctx_st* c;
    if (CUresult rc = create_context(&c, d.primary_flags, dev, true, "cuDevicePrimaryCtxRetain")) return rc;
    d.primary = c;
  }
  ++d.primary_refs;
  *out = d.primary;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  if (CUresult rc = ready("cuDevicePrimaryCtxRelease")) return rc;
  auto& st = driver();
  device_entry* entry;
  if (CUresult rc = device_of(dev, entry, "cuDevicePrimaryCtxRelease")) return rc;
  device_entry& d = *entry;
  std::lock_guard lock(st.mutex);
  if (d.primary_refs == 0) return fail(CUDA_ERROR_INVALID_CONTEXT, "cuDevicePrimaryCtxRelease", "not retained");
  if (--d.primary_refs == 0) {
    destroy_context(d.primary);
    d.primary = nullptr;
  }
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  if (CUresult rc = ready("cuDevicePrimaryCtxReset")) return rc;
  auto& st = driver();
  device_entry* entry;
  if (CUresult rc = device_of(dev, entry, "cuDevicePrimaryCtxReset")) return rc;
  device_entry& d = *entry;
  std::lock_guard lock(st.mutex);
  if (d.primary != nullptr) destroy_context(d.primary);
  d.primary = nullptr;
  d.primary_refs = 0;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned* flags, int* active) {
  if (CUresult rc = ready("cuDevicePrimaryCtxGetState")) return rc;
  auto& st = driver();
  device_entry* entry;
  if (CUresult rc = device_of(dev, entry, "cuDevicePrimaryCtxGetState")) return rc;
  if (flags == nullptr || active == nullptr) return CUDA_ERROR_INVALID_VALUE;
  device_entry& d = *entry;
  std::lock_guard lock(st.mutex);
  *flags = d.primary_flags;
  *active = d.primary_refs > 0 ? 1 : 0;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned flags) {
  if (CUresult rc = ready("cuDevicePrimaryCtxSetFlags")) return rc;
  auto& st = driver();
  device_entry* entry;
  if (CUresult rc = device_of(dev, entry, "cuDevicePrimaryCtxSetFlags")) return rc;
  std::lock_guard lock(st.mutex);
  entry->primary_flags = flags;
  return CUDA_SUCCESS;
}

// ===========================================================================
// Memory

namespace {

uint64_t piece_class(uint64_t size) {
  uint64_t c = piece_alignment;
  while (c < size) c <<= 1;
  return c;
}

/// A piece of a slab for a small allocation: a freed one of its class, the
/// rest of the newest slab, or a new slab (the only round trip).
/// Frees on the server the allocations `c` kept (CUctx_st::kept_free);
/// false when it kept none.
bool release_kept_free(CUctx_st* c) {
  std::multimap<uint64_t, std::pair<uint64_t, uint64_t>> kept;
  {
    std::lock_guard lock(c->mutex);
    kept.swap(c->kept_free);
    c->kept_free_bytes = 0;
  }
  for (const auto& [size, entry] : kept) c->link()->post(p::cuda_mem_free{c->id, entry.first});
  return !kept.empty();
}

CUresult allocate_piece(CUctx_st* c, uint64_t size, CUdeviceptr& out) {
  const uint64_t cls = piece_class(size);
  {
    std::lock_guard lock(c->mutex);
    auto& spare = c->free_pieces[cls];
    auto idle = std::find_if(spare.begin(), spare.end(), [&](const auto& freed) { return freed.second < c->syncs; });
    if (idle != spare.end()) {
      out = idle->first;
      spare.erase(idle);
    } else if (c->slab_end - c->slab_next >= cls) {
      out = c->slab_next;
      c->slab_next += cls;
    } else {
      out = 0;
    }
    if (out != 0) {
      c->pieces[out] = size;
      return CUDA_SUCCESS;
    }
  }
  p::cuda_mem_alloc ask{0, c->id, slab_size};
  p::cuda_pointer reply;
  if (CUresult rc = call(c, ask, reply, "cuMemAlloc")) return rc;
  std::lock_guard lock(c->mutex);
  c->allocations[reply.address] = reply.size;
  c->slabs[reply.address] = reply.size;
  // What was left of the previous slab serves no class any more; a new one starts.
  c->slab_next = reply.address + cls;
  c->slab_end = reply.address + reply.size;
  out = reply.address;
  c->pieces[out] = size;
  return CUDA_SUCCESS;
}

}  // namespace

FERRY_CUDA_API CUresult cuMemAlloc_v2(CUdeviceptr* out, size_t size) {
  if (CUresult rc = ready("cuMemAlloc")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuMemAlloc")) return rc;
  if (out == nullptr || size == 0) return fail(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc", "NULL pointer or size 0");
  if (size <= small_piece_limit) {
    CUdeviceptr piece;
    if (CUresult rc = allocate_piece(c, size, piece)) return fail(rc, "cuMemAlloc", "the server's driver refused a slab");
    *out = piece;
    return CUDA_SUCCESS;
  }
  {
    // A freed allocation of this size that no work can still use.
    std::lock_guard lock(c->mutex);
    auto [first, last] = c->kept_free.equal_range(size);
    for (auto it = first; it != last; ++it) {
      if (it->second.second >= c->syncs) continue;
      *out = it->second.first;
      c->allocations[*out] = size;
      c->kept_free_bytes -= size;
      c->kept_free.erase(it);
      return CUDA_SUCCESS;
    }
  }
  p::cuda_mem_alloc ask{0, c->id, size};
  p::cuda_pointer reply;
  FERRY_DEBUG("cuda", "cuMemAlloc of %zu bytes asks the server (%zu bytes kept idle)", size,
              static_cast<size_t>(c->kept_free_bytes));
  CUresult rc = call(c, ask, reply, "cuMemAlloc");
  if (rc == CUDA_ERROR_OUT_OF_MEMORY && release_kept_free(c)) rc = call(c, ask, reply, "cuMemAlloc");
  if (rc != CUDA_SUCCESS) return fail(rc, "cuMemAlloc", "the server's driver refused");
  {
    std::lock_guard lock(c->mutex);
    c->allocations[reply.address] = reply.size;
  }
  *out = reply.address;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuMemFree_v2(CUdeviceptr address) {
  if (CUresult rc = ready("cuMemFree")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuMemFree")) return rc;
  if (address == 0) return CUDA_SUCCESS;
  {
    std::lock_guard lock(c->mutex);
    if (auto piece = c->pieces.find(address); piece != c->pieces.end()) {
      // Back to its class, for use after the next whole synchronization;
      // the slab stays on the server.
      c->free_pieces[piece_class(piece->second)].emplace_back(address, c->syncs);
      c->pieces.erase(piece);
      return CUDA_SUCCESS;
    }
    auto it = c->allocations.find(address);
    if (it == c->allocations.end() || c->slabs.count(address))
      return fail(CUDA_ERROR_INVALID_VALUE, "cuMemFree", "not the start of an allocation of the context");
    const uint64_t size = it->second;
    c->allocations.erase(it);
    FERRY_DEBUG("cuda", "cuMemFree of %llu bytes at 0x%llx", static_cast<unsigned long long>(size),
                static_cast<unsigned long long>(address));
    if (c->kept_free_bytes + size <= kept_free_limit) {
      // Kept on the server for a later allocation of its size (CUctx_st::kept_free):
      // usable at once when nothing was posted since the last whole
      // synchronization, else after the next.
      const bool idle = c->idle_at_frame != 0 && c->link()->posted_frames() == c->idle_at_frame;
      c->kept_free.emplace(size, std::make_pair(address, idle ? c->syncs - 1 : c->syncs));
      c->kept_free_bytes += size;
      return CUDA_SUCCESS;
    }
  }
  c->link()->post(p::cuda_mem_free{c->id, address});
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
  if (CUresult rc = ready("cuMemGetInfo")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuMemGetInfo")) return rc;
  if (free == nullptr || total == nullptr) return CUDA_ERROR_INVALID_VALUE;
  release_kept_free(c);  // the program asks what it could allocate
  p::cuda_mem_get_info ask{0, c->id};
  p::cuda_mem_info reply;
  if (CUresult rc = call(c, ask, reply, "cuMemGetInfo")) return rc;
  *free = reply.free;
  *total = reply.total;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuMemGetAddressRange_v2(CUdeviceptr* base, size_t* size, CUdeviceptr address) {
  if (CUresult rc = ready("cuMemGetAddressRange")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuMemGetAddressRange")) return rc;
  uint64_t b, s;
  if (!c->allocation_of(address, b, s)) return fail(CUDA_ERROR_NOT_FOUND, "cuMemGetAddressRange", "no allocation holds it");
  if (base) *base = b;
  if (size) *size = s;
  return CUDA_SUCCESS;
}

// Page-locked host memory is ordinary memory of this process: the copies
// read and write it at the right time, and no GPU maps it.
FERRY_CUDA_API CUresult cuMemAllocHost_v2(void** out, size_t size) {
  if (CUresult rc = ready("cuMemAllocHost")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuMemAllocHost")) return rc;
  if (out == nullptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
  *out = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
  return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FERRY_CUDA_API CUresult cuMemHostAlloc(void** out, size_t size, unsigned flags) {
  if (CUresult rc = ready("cuMemHostAlloc")) return rc;
  if (flags & ~0x7u) return CUDA_ERROR_INVALID_VALUE;
  return cuMemAllocHost_v2(out, size);
}

FERRY_CUDA_API CUresult cuMemFreeHost(void* memory) {
  if (CUresult rc = ready("cuMemFreeHost")) return rc;
  std::free(memory);
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuMemHostGetFlags(unsigned* flags, void* memory) {
  if (CUresult rc = ready("cuMemHostGetFlags")) return rc;
  if (flags == nullptr || memory == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *flags = 0;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* out, void* memory, unsigned flags) {
  if (CUresult rc = ready("cuMemHostGetDevicePointer")) return rc;
  // What a driver answers for host memory that was not mapped into the
  // device's address space: a GPU on another machine maps none of ours.
  return fail(CUDA_ERROR_INVALID_VALUE, "cuMemHostGetDevicePointer",
              "host memory cannot be mapped into a remote GPU's address space");
}

FERRY_CUDA_API CUresult cuMemHostRegister_v2(void* memory, size_t size, unsigned flags) {
  if (CUresult rc = ready("cuMemHostRegister")) return rc;
  if (memory == nullptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
  if (flags & 0x2u /* DEVICEMAP */)
    return fail(CUDA_ERROR_NOT_SUPPORTED, "cuMemHostRegister", "a remote GPU cannot map this host's memory");
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuMemHostUnregister(void* memory) {
  if (CUresult rc = ready("cuMemHostUnregister")) return rc;
  return memory == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t size) {
  if (CUresult rc = ready("cuMemcpyHtoD")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuMemcpyHtoD")) return rc;
  return copy_to_device(c, 0, dst, src, size, "cuMemcpyHtoD");
}

FERRY_CUDA_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t size, CUstream s) {
  if (CUresult rc = ready("cuMemcpyHtoDAsync")) return rc;
  CUctx_st* c;
  p::object_id stream;
  if (CUresult rc = stream_for(s, c, stream, "cuMemcpyHtoDAsync")) return rc;
  return copy_to_device(c, stream, dst, src, size, "cuMemcpyHtoDAsync");
}

FERRY_CUDA_API CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t size) {
  if (CUresult rc = ready("cuMemcpyDtoH")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuMemcpyDtoH")) return rc;
  return copy_from_device(c, nullptr, 0, dst, src, size, true, "cuMemcpyDtoH");
}

FERRY_CUDA_API CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t size, CUstream s) {
  if (CUresult rc = ready("cuMemcpyDtoHAsync")) return rc;
  CUctx_st* c;
  p::object_id stream;
  if (CUresult rc = stream_for(s, c, stream, "cuMemcpyDtoHAsync")) return rc;
  return copy_from_device(c, stream ? s : nullptr, stream, dst, src, size, false, "cuMemcpyDtoHAsync");
}

FERRY_CUDA_API CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t size) {
  if (CUresult rc = ready("cuMemcpyDtoD")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuMemcpyDtoD")) return rc;
  return copy_on_device(c, 0, dst, src, size, "cuMemcpyDtoD");
}

FERRY_CUDA_API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream s) {
  if (CUresult rc = ready("cuMemcpyDtoDAsync")) return rc;
  CUctx_st* c;
  p::object_id stream;
  if (CUresult rc = stream_for(s, c, stream, "cuMemcpyDtoDAsync")) return rc;
  return copy_on_device(c, stream, dst, src, size, "cuMemcpyDtoDAsync");
}

namespace {
/// cuMemcpy's unified addressing: a pointer inside one of the context's
/// allocations is device memory, anything else host memory.
CUresult unified_copy(CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream s, bool wait, const char* call_name) {
  if (CUresult rc = ready(call_name)) return rc;
  CUctx_st* c;
  p::object_id stream;
  if (CUresult rc = stream_for(s, c, stream, call_name)) return rc;
  uint64_t base, length;
  const bool dst_device = c->allocation_of(dst, base, length);
  const bool src_device = c->allocation_of(src, base, length);
  CUstream_st* tracked = stream ? s : nullptr;
  if (dst_device && src_device) return copy_on_device(c, stream, dst, src, size, call_name);
  if (dst_device) return copy_to_device(c, stream, dst, reinterpret_cast<const void*>(src), size, call_name);
  if (src_device)
    return copy_from_device(c, tracked, stream, reinterpret_cast<void*>(dst), src, size, wait, call_name);
  if (wait) {
    if (CUresult rc = synchronize(c, stream, p::cuda_target::stream, call_name)) return rc;
  }
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), size);
  return CUDA_SUCCESS;
}
}  // namespace

FERRY_CUDA_API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t size) {
  return unified_copy(dst, src, size, nullptr, true, "cuMemcpy");
}

FERRY_CUDA_API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream s) {
  return unified_copy(dst, src, size, s, false, "cuMemcpyAsync");
}

FERRY_CUDA_API CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t count) {
  return memset(dst, value, 1, count, nullptr, true, "cuMemsetD8");
}
FERRY_CUDA_API CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short value, size_t count) {
  return memset(dst, value, 2, count, nullptr, true, "cuMemsetD16");
}
FERRY_CUDA_API CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned value, size_t count) {
  return memset(dst, value, 4, count, nullptr, true, "cuMemsetD32");
}
FERRY_CUDA_API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream s) {
  return memset(dst, value, 1, count, s, false, "cuMemsetD8Async");
}
FERRY_CUDA_API CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count, CUstream s) {
  return memset(dst, value, 2, count, s, false, "cuMemsetD16Async");
}
FERRY_CUDA_API CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count, CUstream s) {
  return memset(dst, value, 4, count, s, false, "cuMemsetD32Async");
}

FERRY_CUDA_API CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr pointer) {
  if (CUresult rc = ready("cuPointerGetAttribute")) return rc;
  if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuPointerGetAttribute")) return rc;
  uint64_t base, size;
  // Host memory is unknown to a remote driver, as unregistered memory is to CUDA's.
  if (!c->allocation_of(pointer, base, size))
    return fail(CUDA_ERROR_INVALID_VALUE, "cuPointerGetAttribute", "not device memory of the context");
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: *static_cast<CUcontext*>(data) = c; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *static_cast<unsigned*>(data) = CU_MEMORYTYPE_DEVICE; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *static_cast<CUdeviceptr*>(data) = pointer; break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER: return fail(CUDA_ERROR_INVALID_VALUE, "cuPointerGetAttribute", "not mapped to the host");
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *static_cast<int*>(data) = 0; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *static_cast<int*>(data) = c->ordinal; break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *static_cast<CUdeviceptr*>(data) = base; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *static_cast<size_t*>(data) = size; break;
    case CU_POINTER_ATTRIBUTE_MAPPED: *static_cast<int*>(data) = 1; break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: *static_cast<int*>(data) = 1; break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: *static_cast<unsigned long long*>(data) = base; break;
    default: return fail(CUDA_ERROR_INVALID_VALUE, "cuPointerGetAttribute", "attribute not supported");
  }
  return CUDA_SUCCESS;
}

// ===========================================================================
// Modules and functions

FERRY_CUDA_API CUresult cuModuleLoadData(CUmodule* out, const void* image) {
  return load_module(out, image, module_image_size(image), 0, nullptr, nullptr, "cuModuleLoadData");
}

FERRY_CUDA_API CUresult cuModuleLoadDataEx(CUmodule* out, const void* image, unsigned n, CUjit_option* keys,
                                           void** values) {
  return load_module(out, image, module_image_size(image), n, keys, values, "cuModuleLoadDataEx");
}

FERRY_CUDA_API CUresult cuModuleLoad(CUmodule* out, const char* path) {
  if (CUresult rc = ready("cuModuleLoad")) return rc;
  if (path == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::vector<uint8_t> bytes;
  if (!read_file(path, bytes)) return fail(CUDA_ERROR_FILE_NOT_FOUND, "cuModuleLoad", path);
  bytes.push_back(0);
  return load_module(out, bytes.data(), bytes.size(), 0, nullptr, nullptr, "cuModuleLoad");
}

FERRY_CUDA_API CUresult cuModuleUnload(CUmodule m) {
  if (CUresult rc = ready("cuModuleUnload")) return rc;
  if (!alive(m, tag::module)) return fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleUnload", "not a live module");
  m->context->link()->post(p::cuda_release{m->id});
  bury(m);
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuModuleGetFunction(CUfunction* out, CUmodule m, const char* name) {
  return get_function(out, m, name, "cuModuleGetFunction");
}

FERRY_CUDA_API CUresult cuModuleGetGlobal_v2(CUdeviceptr* address, size_t* size, CUmodule m, const char* name) {
  if (CUresult rc = ready("cuModuleGetGlobal")) return rc;
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!alive(m, tag::module)) return fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleGetGlobal", "not a live module");
  p::cuda_get_global ask{0, m->id, name};
  p::cuda_pointer reply;
  if (CUresult rc = call(m->context, ask, reply, "cuModuleGetGlobal")) return rc;
  {
    std::lock_guard lock(m->context->mutex);
    m->context->globals[reply.address] = reply.size;
  }
  if (address) *address = reply.address;
  if (size) *size = reply.size;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction f) {
  if (CUresult rc = ready("cuFuncGetAttribute")) return rc;
  if (value == nullptr || attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  if (!alive(f, tag::function)) return fail(CUDA_ERROR_INVALID_HANDLE, "cuFuncGetAttribute", "not a live function");
  *value = static_cast<size_t>(attribute) < f->attributes.size() ? f->attributes[attribute] : 0;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute attribute, int value) {
  if (CUresult rc = ready("cuFuncSetAttribute")) return rc;
  if (!alive(f, tag::function)) return fail(CUDA_ERROR_INVALID_HANDLE, "cuFuncSetAttribute", "not a live function");
  p::cuda_func_set_attribute ask{0, f->id, attribute, value};
  p::cuda_status reply;
  if (CUresult rc = call(f->module->context, ask, reply, "cuFuncSetAttribute")) return rc;
  if (static_cast<size_t>(attribute) < f->attributes.size()) f->attributes[attribute] = value;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuFuncSetCacheConfig(CUfunction f, CUfunc_cache config) {
  if (CUresult rc = ready("cuFuncSetCacheConfig")) return rc;
  if (!alive(f, tag::function)) return CUDA_ERROR_INVALID_HANDLE;
  return config >= CU_FUNC_CACHE_PREFER_NONE && config <= CU_FUNC_CACHE_PREFER_EQUAL ? CUDA_SUCCESS
                                                                                     : CUDA_ERROR_INVALID_VALUE;
}

FERRY_CUDA_API CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t* offset, size_t* size) {
  if (CUresult rc = ready("cuFuncGetParamInfo")) return rc;
  if (!alive(f, tag::function)) return CUDA_ERROR_INVALID_HANDLE;
  if (!f->params_known) return CUDA_ERROR_NOT_SUPPORTED;
  if (index >= f->params.size()) return CUDA_ERROR_INVALID_VALUE;
  if (offset) *offset = f->params[index].offset;
  if (size) *size = f->params[index].size;
  return CUDA_SUCCESS;
}

// cuLibrary* over modules: numba-cuda (through cuda-bindings) and CUDA 12's
// runtime load code this way.
FERRY_CUDA_API CUresult cuLibraryLoadData(CUlibrary* out, const void* image, CUjit_option* jit_keys, void** jit_values,
                                          unsigned jit_count, void* library_keys, void** library_values,
                                          unsigned library_count) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUmod_st* m;
  if (CUresult rc = load_module(&m, image, module_image_size(image), jit_count, jit_keys, jit_values, "cuLibraryLoadData"))
    return rc;
  auto* lib = keep(new CUlib_st);
  lib->module = m;
  *out = lib;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuLibraryUnload(CUlibrary lib) {
  if (!alive(lib, tag::library)) return CUDA_ERROR_INVALID_HANDLE;
  CUresult rc = cuModuleUnload(lib->module);
  bury(lib);
  return rc;
}

FERRY_CUDA_API CUresult cuLibraryGetModule(CUmodule* out, CUlibrary lib) {
  if (CUresult rc = ready("cuLibraryGetModule")) return rc;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!alive(lib, tag::library)) return CUDA_ERROR_INVALID_HANDLE;
  *out = lib->module;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuLibraryGetKernel(CUkernel* out, CUlibrary lib, const char* name) {
  if (!alive(lib, tag::library)) return ready("cuLibraryGetKernel") ? ready("cuLibraryGetKernel") : CUDA_ERROR_INVALID_HANDLE;
  CUfunc_st* f;
  if (CUresult rc = get_function(&f, lib->module, name, "cuLibraryGetKernel")) return rc;
  *out = reinterpret_cast<CUkernel>(f);  // a kernel is its function here (one context per library)
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuKernelGetFunction(CUfunction* out, CUkernel kernel) {
  if (CUresult rc = ready("cuKernelGetFunction")) return rc;
  auto* f = reinterpret_cast<CUfunc_st*>(kernel);
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!alive(f, tag::function)) return CUDA_ERROR_INVALID_HANDLE;
  *out = f;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuKernelGetAttribute(int* value, CUfunction_attribute attribute, CUkernel kernel, CUdevice dev) {
  return cuFuncGetAttribute(value, attribute, reinterpret_cast<CUfunction>(kernel));
}

// ===========================================================================
// Linking: the inputs are collected here and linked on the server.

FERRY_CUDA_API CUresult cuLinkCreate_v2(unsigned n, CUjit_option* keys, void** values, CUlinkState* out) {
  if (CUresult rc = ready("cuLinkCreate")) return rc;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuLinkCreate")) return rc;
  jit_request jit;
  if (CUresult rc = jit.read(n, keys, values)) return rc;
  auto* state = keep(new CUlinkState_st);
  state->context = c;
  state->options = jit.options;
  state->info_log = jit.info_log;
  state->info_size = jit.info_size;
  state->error_log = jit.error_log;
  state->error_size = jit.error_size;
  state->wall_time = jit.wall_time;
  *out = state;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size,
                                         const char* name, unsigned n, CUjit_option* keys, void** values) {
  if (CUresult rc = ready("cuLinkAddData")) return rc;
  if (!alive(state, tag::link)) return CUDA_ERROR_INVALID_HANDLE;
  if (data == nullptr || size == 0 || type < 0 || type >= CU_JIT_NUM_INPUT_TYPES) return CUDA_ERROR_INVALID_VALUE;
  p::cuda_link_input input;
  input.type = static_cast<uint32_t>(type);
  const auto* bytes = static_cast<const uint8_t*>(data);
  input.data.assign(bytes, bytes + size);
  if (name) input.name = name;
  state->inputs.push_back(std::move(input));
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char* path, unsigned n,
                                         CUjit_option* keys, void** values) {
  if (CUresult rc = ready("cuLinkAddFile")) return rc;
  if (path == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::vector<uint8_t> bytes;
  if (!read_file(path, bytes)) return fail(CUDA_ERROR_FILE_NOT_FOUND, "cuLinkAddFile", path);
  return cuLinkAddData_v2(state, type, bytes.data(), bytes.size(), path, n, keys, values);
}

FERRY_CUDA_API CUresult cuLinkComplete(CUlinkState state, void** cubin, size_t* size) {
  if (CUresult rc = ready("cuLinkComplete")) return rc;
  if (!alive(state, tag::link)) return CUDA_ERROR_INVALID_HANDLE;
  if (cubin == nullptr || size == nullptr) return CUDA_ERROR_INVALID_VALUE;
  p::cuda_link ask;
  ask.context = state->context->id;
  ask.inputs = state->inputs;
  ask.options = state->options;
  p::cuda_link_reply reply;
  CUresult rc = call(state->context, ask, reply, "cuLinkComplete");
  if (rc != lost) {
    jit_request out;
    out.info_log = state->info_log;
    out.info_size = state->info_size;
    out.error_log = state->error_log;
    out.error_size = state->error_size;
    out.wall_time = state->wall_time;
    out.fill(reply.info_log, reply.error_log, reply.wall_time_ns);
  }
  if (rc != CUDA_SUCCESS) return fail(rc, "cuLinkComplete", reply.error_log.c_str());
  state->image = std::move(reply.image);
  *cubin = state->image.data();
  *size = state->image.size();
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuLinkDestroy(CUlinkState state) {
  if (CUresult rc = ready("cuLinkDestroy")) return rc;
  if (!alive(state, tag::link)) return CUDA_ERROR_INVALID_HANDLE;
  bury(state);
  return CUDA_SUCCESS;
}

// ===========================================================================
// Launches

FERRY_CUDA_API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                       unsigned bz, unsigned shared, CUstream s, void** params, void** extra) {
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return launch(f, grid, block, shared, s, params, extra, "cuLaunchKernel");
}

FERRY_CUDA_API CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (config->numAttrs != 0) {
    if (CUresult rc = ready("cuLaunchKernelEx")) return rc;
    return fail(CUDA_ERROR_NOT_SUPPORTED, "cuLaunchKernelEx", "launch attributes are not supported");
  }
  const unsigned grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
  const unsigned block[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
  return launch(f, grid, block, config->sharedMemBytes, config->hStream, params, extra, "cuLaunchKernelEx");
}

FERRY_CUDA_API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction f, int block_size,
                                                                    size_t shared) {
  if (CUresult rc = ready("cuOccupancyMaxActiveBlocksPerMultiprocessor")) return rc;
  if (blocks == nullptr || block_size <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (!alive(f, tag::function)) return CUDA_ERROR_INVALID_HANDLE;
  const device_entry& d = *f->module->context->device;
  // Threads only: a bound the register and shared memory use can only lower.
  const int per_sm = d.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  *blocks = std::max(1, per_sm / block_size);
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuOccupancyMaxPotentialBlockSize(int* min_grid, int* block_size, CUfunction f,
                                                         void* shared_of_block, size_t shared, int limit) {
  if (CUresult rc = ready("cuOccupancyMaxPotentialBlockSize")) return rc;
  if (min_grid == nullptr || block_size == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!alive(f, tag::function)) return CUDA_ERROR_INVALID_HANDLE;
  const device_entry& d = *f->module->context->device;
  int size = f->attributes.empty() ? 1024 : f->attributes[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK];
  if (size <= 0) size = d.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  if (limit > 0) size = std::min(size, limit);
  const int per_sm = std::max(1, d.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) / std::max(size, 1));
  *block_size = size;
  *min_grid = per_sm * d.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  return CUDA_SUCCESS;
}

// ===========================================================================
// Streams and events

FERRY_CUDA_API CUresult cuStreamCreateWithPriority(CUstream* out, unsigned flags, int priority) {
  if (CUresult rc = ready("cuStreamCreate")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuStreamCreate")) return rc;
  if (out == nullptr || (flags & ~CU_STREAM_NON_BLOCKING) != 0) return CUDA_ERROR_INVALID_VALUE;
  auto* s = keep(new CUstream_st);
  s->id = new_id();
  s->context = c;
  s->flags = flags;
  s->priority = priority;
  if (flags & CU_STREAM_NON_BLOCKING) {
    std::lock_guard lock(c->mutex);
    ++c->nonblocking_streams;
  }
  c->link()->post(p::cuda_create_stream{c->id, s->id, flags, priority});
  *out = s;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuStreamCreate(CUstream* out, unsigned flags) { return cuStreamCreateWithPriority(out, flags, 0); }

FERRY_CUDA_API CUresult cuStreamDestroy_v2(CUstream s) {
  if (CUresult rc = ready("cuStreamDestroy")) return rc;
  if (!alive(s, tag::stream)) return fail(CUDA_ERROR_INVALID_HANDLE, "cuStreamDestroy", "not a live stream");
  // The server destroys it once its work is done (CUDA's own behaviour);
  // replies still due write into memory the program owns.
  s->context->link()->post(p::cuda_release{s->id});
  // nonblocking_streams stays: work of the stream may be in flight still,
  // so from now on context synchronizations alone make freed pieces idle.
  bury(s);
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuStreamSynchronize(CUstream s) {
  if (CUresult rc = ready("cuStreamSynchronize")) return rc;
  CUctx_st* c;
  p::object_id stream;
  if (CUresult rc = stream_for(s, c, stream, "cuStreamSynchronize")) return rc;
  return synchronize(c, stream, p::cuda_target::stream, "cuStreamSynchronize");
}

FERRY_CUDA_API CUresult cuStreamQuery(CUstream s) {
  if (CUresult rc = ready("cuStreamQuery")) return rc;
  CUctx_st* c;
  p::object_id stream;
  if (CUresult rc = stream_for(s, c, stream, "cuStreamQuery")) return rc;
  if (stream != 0 && s->copy_back_pending()) return CUDA_ERROR_NOT_READY;
  if (c->bulk_pieces_pending()) return CUDA_ERROR_NOT_READY;
  p::cuda_query ask{0, c->id, stream, p::cuda_target::stream};
  p::cuda_status reply;
  return call(c, ask, reply, "cuStreamQuery");
}

FERRY_CUDA_API CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  if (CUresult rc = ready("cuStreamWaitEvent")) return rc;
  CUctx_st* c;
  p::object_id stream;
  if (CUresult rc = stream_for(s, c, stream, "cuStreamWaitEvent")) return rc;
  if (!alive(e, tag::event)) return fail(CUDA_ERROR_INVALID_HANDLE, "cuStreamWaitEvent", "not a live event");
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (e->context->device->server != c->device->server)
    return fail(CUDA_ERROR_NOT_SUPPORTED, "cuStreamWaitEvent", "the event is on another server");
  c->link()->post(p::cuda_wait_event{c->id, stream, e->id});
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuStreamAddCallback(CUstream s, CUstreamCallback callback, void* data, unsigned flags) {
  if (CUresult rc = ready("cuStreamAddCallback")) return rc;
  if (callback == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return add_callback(s, "cuStreamAddCallback", [s, callback, data](CUresult status) { callback(s, status, data); });
}

FERRY_CUDA_API CUresult cuLaunchHostFunc(CUstream s, CUhostFn function, void* data) {
  if (CUresult rc = ready("cuLaunchHostFunc")) return rc;
  if (function == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return add_callback(s, "cuLaunchHostFunc", [function, data](CUresult status) {
    if (status == CUDA_SUCCESS) function(data);
  });
}

FERRY_CUDA_API CUresult cuStreamGetFlags(CUstream s, unsigned* flags) {
  if (CUresult rc = ready("cuStreamGetFlags")) return rc;
  if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (s == nullptr) {
    *flags = 0;
    return CUDA_SUCCESS;
  }
  if (!alive(s, tag::stream)) return CUDA_ERROR_INVALID_HANDLE;
  *flags = s->flags;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuStreamGetPriority(CUstream s, int* priority) {
  if (CUresult rc = ready("cuStreamGetPriority")) return rc;
  if (priority == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *priority = alive(s, tag::stream) ? s->priority : 0;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuStreamGetCtx(CUstream s, CUcontext* out) {
  if (CUresult rc = ready("cuStreamGetCtx")) return rc;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* c;
  p::object_id stream;
  if (CUresult rc = stream_for(s, c, stream, "cuStreamGetCtx")) return rc;
  *out = c;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuEventCreate(CUevent* out, unsigned flags) {
  if (CUresult rc = ready("cuEventCreate")) return rc;
  CUctx_st* c;
  if (CUresult rc = context_for(nullptr, c, "cuEventCreate")) return rc;
  if (out == nullptr || (flags & ~0x7u) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (flags & CU_EVENT_INTERPROCESS)
    return fail(CUDA_ERROR_NOT_SUPPORTED, "cuEventCreate", "interprocess events are not supported");
  auto* e = keep(new CUevent_st);
  e->id = new_id();
  e->context = c;
  e->flags = flags;
  c->link()->post(p::cuda_create_event{c->id, e->id, flags});
  *out = e;
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuEventRecord(CUevent e, CUstream s) {
  if (CUresult rc = ready("cuEventRecord")) return rc;
  if (!alive(e, tag::event)) return fail(CUDA_ERROR_INVALID_HANDLE, "cuEventRecord", "not a live event");
  CUctx_st* c;
  p::object_id stream;
  if (CUresult rc = stream_for(s, c, stream, "cuEventRecord")) return rc;
  if (c != e->context) return fail(CUDA_ERROR_INVALID_HANDLE, "cuEventRecord", "the event and the stream are of different contexts");
  e->recorded_on = stream ? s : nullptr;
  e->copies_before = stream ? s->copies_back_asked() : 0;
  c->link()->post(p::cuda_record_event{e->id, stream});
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return cuEventRecord(e, s);
}

FERRY_CUDA_API CUresult cuEventDestroy_v2(CUevent e) {
  if (CUresult rc = ready("cuEventDestroy")) return rc;
  if (!alive(e, tag::event)) return fail(CUDA_ERROR_INVALID_HANDLE, "cuEventDestroy", "not a live event");
  e->context->link()->post(p::cuda_release{e->id});
  bury(e);
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuEventQuery(CUevent e) {
  if (CUresult rc = ready("cuEventQuery")) return rc;
  if (!alive(e, tag::event)) return fail(CUDA_ERROR_INVALID_HANDLE, "cuEventQuery", "not a live event");
  // Only the copies back asked for before the record hold the event: the
  // stream's later work is not the event's.
  if (e->recorded_on != nullptr && alive(e->recorded_on, tag::stream) &&
      e->recorded_on->copy_back_pending(e->copies_before))
    return CUDA_ERROR_NOT_READY;
  if (e->context->bulk_pieces_pending()) return CUDA_ERROR_NOT_READY;
  p::cuda_query ask{0, e->context->id, e->id, p::cuda_target::event};
  p::cuda_status reply;
  return call(e->context, ask, reply, "cuEventQuery");
}

FERRY_CUDA_API CUresult cuEventSynchronize(CUevent e) {
  if (CUresult rc = ready("cuEventSynchronize")) return rc;
  if (!alive(e, tag::event)) return fail(CUDA_ERROR_INVALID_HANDLE, "cuEventSynchronize", "not a live event");
  return synchronize(e->context, e->id, p::cuda_target::event, "cuEventSynchronize");
}

FERRY_CUDA_API CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  if (CUresult rc = ready("cuEventElapsedTime")) return rc;
  if (ms == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!alive(start, tag::event) || !alive(end, tag::event)) return CUDA_ERROR_INVALID_HANDLE;
  if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING)
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuEventElapsedTime", "an event was created without timing");
  p::cuda_elapsed_time ask{0, start->id, end->id};
  p::cuda_elapsed reply;
  if (CUresult rc = call(start->context, ask, reply, "cuEventElapsedTime")) return rc;
  *ms = static_cast<float>(static_cast<double>(reply.nanoseconds) / 1e6);
  return CUDA_SUCCESS;
}

FERRY_CUDA_API CUresult cuEventElapsedTime_v2(float* ms, CUevent start, CUevent end) {
  return cuEventElapsedTime(ms, start, end);
}

// ===========================================================================
// The unsuffixed names an old program (or a loader that tries the plain name
// first) may look up, the same functions.

FERRY_CUDA_API CUresult cuDeviceTotalMem(size_t* bytes, CUdevice dev) { return cuDeviceTotalMem_v2(bytes, dev); }
FERRY_CUDA_API CUresult cuCtxCreate(CUcontext* out, unsigned flags, CUdevice dev) { return cuCtxCreate_v2(out, flags, dev); }
FERRY_CUDA_API CUresult cuCtxDestroy(CUcontext c) { return cuCtxDestroy_v2(c); }
FERRY_CUDA_API CUresult cuCtxPushCurrent(CUcontext c) { return cuCtxPushCurrent_v2(c); }
FERRY_CUDA_API CUresult cuCtxPopCurrent(CUcontext* c) { return cuCtxPopCurrent_v2(c); }
FERRY_CUDA_API CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }
FERRY_CUDA_API CUresult cuDevicePrimaryCtxReset(CUdevice dev) { return cuDevicePrimaryCtxReset_v2(dev); }
FERRY_CUDA_API CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned flags) {
  return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}
FERRY_CUDA_API CUresult cuMemAlloc(CUdeviceptr* out, size_t size) { return cuMemAlloc_v2(out, size); }
FERRY_CUDA_API CUresult cuMemFree(CUdeviceptr address) { return cuMemFree_v2(address); }
FERRY_CUDA_API CUresult cuMemGetInfo(size_t* free, size_t* total) { return cuMemGetInfo_v2(free, total); }
FERRY_CUDA_API CUresult cuMemGetAddressRange(CUdeviceptr* base, size_t* size, CUdeviceptr address) {
  return cuMemGetAddressRange_v2(base, size, address);
}
FERRY_CUDA_API CUresult cuMemAllocHost(void** out, size_t size) { return cuMemAllocHost_v2(out, size); }
FERRY_CUDA_API CUresult cuMemHostGetDevicePointer(CUdeviceptr* out, void* memory, unsigned flags) {
  return cuMemHostGetDevicePointer_v2(out, memory, flags);
}
FERRY_CUDA_API CUresult cuMemHostRegister(void* memory, size_t size, unsigned flags) {
  return cuMemHostRegister_v2(memory, size, flags);
}
FERRY_CUDA_API CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t size) { return cuMemcpyHtoD_v2(dst, src, size); }
FERRY_CUDA_API CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t size) { return cuMemcpyDtoH_v2(dst, src, size); }
FERRY_CUDA_API CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t size) { return cuMemcpyDtoD_v2(dst, src, size); }
FERRY_CUDA_API CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t size, CUstream s) {
  return cuMemcpyHtoDAsync_v2(dst, src, size, s);
}
FERRY_CUDA_API CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t size, CUstream s) {
  return cuMemcpyDtoHAsync_v2(dst, src, size, s);
}
FERRY_CUDA_API CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream s) {
  return cuMemcpyDtoDAsync_v2(dst, src, size, s);
}
FERRY_CUDA_API CUresult cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t count) { return cuMemsetD8_v2(dst, value, count); }
FERRY_CUDA_API CUresult cuMemsetD16(CUdeviceptr dst, unsigned short value, size_t count) {
  return cuMemsetD16_v2(dst, value, count);
}
FERRY_CUDA_API CUresult cuMemsetD32(CUdeviceptr dst, unsigned value, size_t count) { return cuMemsetD32_v2(dst, value, count); }
FERRY_CUDA_API CUresult cuModuleGetGlobal(CUdeviceptr* address, size_t* size, CUmodule m, const char* name) {
  return cuModuleGetGlobal_v2(address, size, m, name);
}
FERRY_CUDA_API CUresult cuLinkCreate(unsigned n, CUjit_option* keys, void** values, CUlinkState* out) {
  return cuLinkCreate_v2(n, keys, values, out);
}
FERRY_CUDA_API CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                                      unsigned n, CUjit_option* keys, void** values) {
  return cuLinkAddData_v2(state, type, data, size, name, n, keys, values);
}
FERRY_CUDA_API CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char* path, unsigned n,
                                      CUjit_option* keys, void** values) {
  return cuLinkAddFile_v2(state, type, path, n, keys, values);
}
FERRY_CUDA_API CUresult cuStreamDestroy(CUstream s) { return cuStreamDestroy_v2(s); }
FERRY_CUDA_API CUresult cuEventDestroy(CUevent e) { return cuEventDestroy_v2(e); }

// ===========================================================================
// The per-thread default stream names (cuda/abi/per_thread_stream.hpp): a program
// built with per-thread default streams calls cuMemcpyHtoD_v2_ptds,
// cuLaunchKernel_ptsz, ... Ferry runs the per-thread default stream as the legacy
// one (docs/cuda.md says why), so each name is an alias of the function above:
// the NULL stream there is the legacy stream, which orders more than CUDA's
// per-thread stream would, never less.

#define FERRY_PER_THREAD_NAME(name, suffix) \
  extern "C" __attribute__((visibility("default"), alias(#name))) decltype(name) name##suffix;
FERRY_PER_THREAD_NAME(cuMemcpy, _ptds)
FERRY_PER_THREAD_NAME(cuMemcpyHtoD, _ptds)
FERRY_PER_THREAD_NAME(cuMemcpyHtoD_v2, _ptds)
FERRY_PER_THREAD_NAME(cuMemcpyDtoH, _ptds)
FERRY_PER_THREAD_NAME(cuMemcpyDtoH_v2, _ptds)
FERRY_PER_THREAD_NAME(cuMemcpyDtoD, _ptds)
FERRY_PER_THREAD_NAME(cuMemcpyDtoD_v2, _ptds)
FERRY_PER_THREAD_NAME(cuMemsetD8, _ptds)
FERRY_PER_THREAD_NAME(cuMemsetD8_v2, _ptds)
FERRY_PER_THREAD_NAME(cuMemsetD16, _ptds)
FERRY_PER_THREAD_NAME(cuMemsetD16_v2, _ptds)
FERRY_PER_THREAD_NAME(cuMemsetD32, _ptds)
FERRY_PER_THREAD_NAME(cuMemsetD32_v2, _ptds)
FERRY_PER_THREAD_NAME(cuMemcpyAsync, _ptsz)
FERRY_PER_THREAD_NAME(cuMemcpyHtoDAsync, _ptsz)
FERRY_PER_THREAD_NAME(cuMemcpyHtoDAsync_v2, _ptsz)
FERRY_PER_THREAD_NAME(cuMemcpyDtoHAsync, _ptsz)
FERRY_PER_THREAD_NAME(cuMemcpyDtoHAsync_v2, _ptsz)
FERRY_PER_THREAD_NAME(cuMemcpyDtoDAsync, _ptsz)
FERRY_PER_THREAD_NAME(cuMemcpyDtoDAsync_v2, _ptsz)
FERRY_PER_THREAD_NAME(cuMemsetD8Async, _ptsz)
FERRY_PER_THREAD_NAME(cuMemsetD16Async, _ptsz)
FERRY_PER_THREAD_NAME(cuMemsetD32Async, _ptsz)
FERRY_PER_THREAD_NAME(cuLaunchKernel, _ptsz)
FERRY_PER_THREAD_NAME(cuLaunchKernelEx, _ptsz)
FERRY_PER_THREAD_NAME(cuLaunchHostFunc, _ptsz)
FERRY_PER_THREAD_NAME(cuStreamSynchronize, _ptsz)
FERRY_PER_THREAD_NAME(cuStreamQuery, _ptsz)
FERRY_PER_THREAD_NAME(cuStreamWaitEvent, _ptsz)
FERRY_PER_THREAD_NAME(cuStreamAddCallback, _ptsz)
FERRY_PER_THREAD_NAME(cuStreamGetFlags, _ptsz)
FERRY_PER_THREAD_NAME(cuStreamGetPriority, _ptsz)
FERRY_PER_THREAD_NAME(cuStreamGetCtx, _ptsz)
FERRY_PER_THREAD_NAME(cuEventRecord, _ptsz)
FERRY_PER_THREAD_NAME(cuEventRecordWithFlags, _ptsz)
#undef FERRY_PER_THREAD_NAME

// ===========================================================================
// cuGetProcAddress: by base name and CUDA version (cuda-bindings resolves
// every entry point this way).

namespace {
const proc_variant implemented[] = {
#define FERRY_PROC(base, since, fn) {base, since, reinterpret_cast<void*>(&fn)}
    FERRY_PROC("cuInit", 2000, cuInit),
    FERRY_PROC("cuDriverGetVersion", 2020, cuDriverGetVersion),
    FERRY_PROC("cuGetErrorName", 6000, cuGetErrorName),
    FERRY_PROC("cuGetErrorString", 6000, cuGetErrorString),
    FERRY_PROC("cuDeviceGetCount", 2000, cuDeviceGetCount),
    FERRY_PROC("cuDeviceGet", 2000, cuDeviceGet),
    FERRY_PROC("cuDeviceGetName", 2000, cuDeviceGetName),
    FERRY_PROC("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
    FERRY_PROC("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
    FERRY_PROC("cuDeviceGetUuid", 9020, cuDeviceGetUuid),
    FERRY_PROC("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
    FERRY_PROC("cuDeviceComputeCapability", 2000, cuDeviceComputeCapability),
    FERRY_PROC("cuDeviceGetPCIBusId", 4010, cuDeviceGetPCIBusId),
    FERRY_PROC("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    FERRY_PROC("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
    FERRY_PROC("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2),
    FERRY_PROC("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState),
    FERRY_PROC("cuDevicePrimaryCtxSetFlags", 11000, cuDevicePrimaryCtxSetFlags_v2),
    FERRY_PROC("cuCtxCreate", 3020, cuCtxCreate_v2),
    FERRY_PROC("cuCtxCreate", 11040, cuCtxCreate_v3),
    FERRY_PROC("cuCtxCreate", 12050, cuCtxCreate_v4),
    FERRY_PROC("cuCtxDestroy", 4000, cuCtxDestroy_v2),
    FERRY_PROC("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
    FERRY_PROC("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
    FERRY_PROC("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
    FERRY_PROC("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    FERRY_PROC("cuCtxGetDevice", 2000, cuCtxGetDevice),
    FERRY_PROC("cuCtxGetFlags", 7000, cuCtxGetFlags),
    FERRY_PROC("cuCtxGetApiVersion", 3020, cuCtxGetApiVersion),
    FERRY_PROC("cuCtxSynchronize", 2000, cuCtxSynchronize),
    FERRY_PROC("cuCtxSetCacheConfig", 3020, cuCtxSetCacheConfig),
    FERRY_PROC("cuCtxGetCacheConfig", 3020, cuCtxGetCacheConfig),
    FERRY_PROC("cuCtxGetStreamPriorityRange", 5050, cuCtxGetStreamPriorityRange),
    FERRY_PROC("cuCtxSetLimit", 3010, cuCtxSetLimit),
    FERRY_PROC("cuCtxGetLimit", 3010, cuCtxGetLimit),
    FERRY_PROC("cuMemAlloc", 3020, cuMemAlloc_v2),
    FERRY_PROC("cuMemFree", 3020, cuMemFree_v2),
    FERRY_PROC("cuMemGetInfo", 3020, cuMemGetInfo_v2),
    FERRY_PROC("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2),
    FERRY_PROC("cuMemAllocHost", 3020, cuMemAllocHost_v2),
    FERRY_PROC("cuMemHostAlloc", 2020, cuMemHostAlloc),
    FERRY_PROC("cuMemFreeHost", 2000, cuMemFreeHost),
    FERRY_PROC("cuMemHostGetFlags", 2030, cuMemHostGetFlags),
    FERRY_PROC("cuMemHostGetDevicePointer", 3020, cuMemHostGetDevicePointer_v2),
    FERRY_PROC("cuMemHostRegister", 6050, cuMemHostRegister_v2),
    FERRY_PROC("cuMemHostUnregister", 4000, cuMemHostUnregister),
    FERRY_PROC("cuMemcpy", 4000, cuMemcpy),
    FERRY_PROC("cuMemcpyAsync", 4000, cuMemcpyAsync),
    FERRY_PROC("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2),
    FERRY_PROC("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2),
    FERRY_PROC("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2),
    FERRY_PROC("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2),
    FERRY_PROC("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2),
    FERRY_PROC("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2),
    FERRY_PROC("cuMemsetD8", 3020, cuMemsetD8_v2),
    FERRY_PROC("cuMemsetD16", 3020, cuMemsetD16_v2),
    FERRY_PROC("cuMemsetD32", 3020, cuMemsetD32_v2),
    FERRY_PROC("cuMemsetD8Async", 3020, cuMemsetD8Async),
    FERRY_PROC("cuMemsetD16Async", 3020, cuMemsetD16Async),
    FERRY_PROC("cuMemsetD32Async", 3020, cuMemsetD32Async),
    FERRY_PROC("cuPointerGetAttribute", 4000, cuPointerGetAttribute),
    FERRY_PROC("cuModuleLoad", 2000, cuModuleLoad),
    FERRY_PROC("cuModuleLoadData", 2000, cuModuleLoadData),
    FERRY_PROC("cuModuleLoadDataEx", 2010, cuModuleLoadDataEx),
    FERRY_PROC("cuModuleUnload", 2000, cuModuleUnload),
    FERRY_PROC("cuModuleGetFunction", 2000, cuModuleGetFunction),
    FERRY_PROC("cuModuleGetGlobal", 3020, cuModuleGetGlobal_v2),
    FERRY_PROC("cuFuncGetAttribute", 2020, cuFuncGetAttribute),
    FERRY_PROC("cuFuncSetAttribute", 9000, cuFuncSetAttribute),
    FERRY_PROC("cuFuncSetCacheConfig", 3000, cuFuncSetCacheConfig),
    FERRY_PROC("cuFuncGetParamInfo", 12040, cuFuncGetParamInfo),
    FERRY_PROC("cuLibraryLoadData", 12000, cuLibraryLoadData),
    FERRY_PROC("cuLibraryUnload", 12000, cuLibraryUnload),
    FERRY_PROC("cuLibraryGetKernel", 12000, cuLibraryGetKernel),
    FERRY_PROC("cuLibraryGetModule", 12000, cuLibraryGetModule),
    FERRY_PROC("cuKernelGetFunction", 12000, cuKernelGetFunction),
    FERRY_PROC("cuKernelGetAttribute", 12000, cuKernelGetAttribute),
    FERRY_PROC("cuLinkCreate", 6050, cuLinkCreate_v2),
    FERRY_PROC("cuLinkAddData", 6050, cuLinkAddData_v2),
    FERRY_PROC("cuLinkAddFile", 6050, cuLinkAddFile_v2),
    FERRY_PROC("cuLinkComplete", 5050, cuLinkComplete),
    FERRY_PROC("cuLinkDestroy", 5050, cuLinkDestroy),
    FERRY_PROC("cuLaunchKernel", 4000, cuLaunchKernel),
    FERRY_PROC("cuLaunchKernelEx", 11060, cuLaunchKernelEx),
    FERRY_PROC("cuOccupancyMaxPotentialBlockSize", 6050, cuOccupancyMaxPotentialBlockSize),
    FERRY_PROC("cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050, cuOccupancyMaxActiveBlocksPerMultiprocessor),
    FERRY_PROC("cuStreamCreate", 2000, cuStreamCreate),
    FERRY_PROC("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority),
    FERRY_PROC("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    FERRY_PROC("cuStreamSynchronize", 2000, cuStreamSynchronize),
    FERRY_PROC("cuStreamQuery", 2000, cuStreamQuery),
    FERRY_PROC("cuStreamWaitEvent", 3020, cuStreamWaitEvent),
    FERRY_PROC("cuStreamAddCallback", 5000, cuStreamAddCallback),
    FERRY_PROC("cuLaunchHostFunc", 10000, cuLaunchHostFunc),
    FERRY_PROC("cuStreamGetFlags", 5050, cuStreamGetFlags),
    FERRY_PROC("cuStreamGetPriority", 5050, cuStreamGetPriority),
    FERRY_PROC("cuStreamGetCtx", 9020, cuStreamGetCtx),
    FERRY_PROC("cuEventCreate", 2000, cuEventCreate),
    FERRY_PROC("cuEventRecord", 2000, cuEventRecord),
    FERRY_PROC("cuEventRecordWithFlags", 11010, cuEventRecordWithFlags),
    FERRY_PROC("cuEventDestroy", 4000, cuEventDestroy_v2),
    FERRY_PROC("cuEventQuery", 2000, cuEventQuery),
    FERRY_PROC("cuEventSynchronize", 2000, cuEventSynchronize),
    FERRY_PROC("cuEventElapsedTime", 2000, cuEventElapsedTime),
    FERRY_PROC("cuEventElapsedTime", 12080, cuEventElapsedTime_v2),
#undef FERRY_PROC
};

[[maybe_unused]] const bool registered = [] {
  set_implemented(implemented, std::size(implemented));
  return true;
}();
}  // namespace

FERRY_CUDA_API CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                            int* status) {
  return get_proc_address(symbol, pfn, version, flags, status);
}

FERRY_CUDA_API CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  return get_proc_address(symbol, pfn, version, flags, nullptr);
}
