#include "client/net/control_channel.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "client/net/wake_all.hpp"
#include "common/log.hpp"
#include "common/spare_cores.hpp"
#include "common/thread_name.hpp"

namespace ferry::client {

std::chrono::microseconds spin_duration() {
  static const std::chrono::microseconds value = [] {
    if (const char* text = std::getenv("FERRY_SPIN_US")) return std::chrono::microseconds(std::atoi(text));
    return std::chrono::microseconds(host_has_spare_cores() ? 2000 : 50);
  }();
  return value;
}

std::chrono::microseconds gpu_wait_spin() {
  static const std::chrono::microseconds value = [] {
    if (std::getenv("FERRY_SPIN_US") != nullptr || !host_has_spare_cores()) return spin_duration();
    return std::max(spin_duration(), std::chrono::microseconds(1000000));
  }();
  return value;
}

namespace {
/// The spin of this thread's innermost waiting scope that set one (-1: none).
thread_local int64_t thread_spin_us = -1;
}  // namespace

std::chrono::microseconds this_thread_spin() {
  return thread_spin_us >= 0 ? std::chrono::microseconds(thread_spin_us) : spin_duration();
}

control_channel::waiting::waiting(control_channel& c) : waiting(c, this_thread_spin()) {}

control_channel::waiting::waiting(control_channel& c, std::chrono::microseconds spin)
    : c_(c), outer_spin_us_(thread_spin_us) {
  thread_spin_us = spin.count();
  // Counted before the window opens: a reader that sees the window sees a
  // waiter. A sleeping reader is woken once the request went out (flush).
  c_.waiters_.fetch_add(1, std::memory_order_seq_cst);
  c_.wake_.open_window(spin, false);
}

control_channel::waiting::~waiting() {
  c_.waiters_.fetch_sub(1, std::memory_order_seq_cst);
  thread_spin_us = outer_spin_us_;
}

control_channel::control_channel(link_state& link, event_tracker& tracker, bulk_sender& sender)
    : link_(link), tracker_(tracker), sender_(sender) {
  out_.reserve(64 * 1024);
  spare_.reserve(64 * 1024);
  link_.on_end([this] {
    wake_writer();
    requests_cv_.notify_all();
    fail_handlers();
  });
}

void control_channel::write_locked(const std::vector<uint8_t>& batch) {
  const uint64_t control = link_.received_control.load(std::memory_order_acquire);
  const uint64_t bulk = link_.received_bulk.load(std::memory_order_acquire);
  iovec pieces[2];
  int count = 0;
  // What the client has received rides ahead of what it sends, so the server
  // can let go of it.
  const bool ack = control != link_.acked_control.load(std::memory_order_relaxed) ||
                   bulk != link_.acked_bulk.load(std::memory_order_relaxed);
  // The bulk lanes' counts, when one moved (lanes exist from version 11 only;
  // nothing is built on a flush where none did).
  const uint32_t lane_count = link_.lane_count();
  bool lanes_moved = false;
  for (uint32_t lane = 1; lane < lane_count && !lanes_moved; ++lane)
    lanes_moved = link_.received_lanes[lane].load(std::memory_order_acquire) !=
                  link_.acked_lanes[lane].load(std::memory_order_relaxed);
  protocol::lane_ack lanes;
  for (uint32_t lane = 1; lanes_moved && lane < lane_count; ++lane)
    lanes.received.push_back(link_.received_lanes[lane].load(std::memory_order_acquire));
  if (ack || lanes_moved) {
    ack_frame_.clear();
    if (ack) protocol::append_frame(ack_frame_, protocol::ack{control, bulk});
    if (lanes_moved) protocol::append_frame(ack_frame_, lanes);
    pieces[count++] = {ack_frame_.data(), ack_frame_.size()};
  }
  if (!batch.empty()) pieces[count++] = {const_cast<uint8_t*>(batch.data()), batch.size()};
  if (count == 0) return;
  const uint64_t generation = link_.generation();
  if (!writev_all(link_.control(), pieces, count)) {
    if (!link_.stopping) link_.broken(generation, "cannot send to server");
    return;
  }
  if (ack) {
    link_.acked_control.store(control, std::memory_order_relaxed);
    link_.acked_bulk.store(bulk, std::memory_order_relaxed);
  }
  for (uint32_t lane = 1; lanes_moved && lane <= lanes.received.size(); ++lane)
    link_.acked_lanes[lane].store(lanes.received[lane - 1], std::memory_order_relaxed);
}

void control_channel::flush() {
  flush_batch();
  // Somebody waits for the answer to what just went out: the reader polls
  // for it (woken now, off the request's way, if it sleeps).
  if (waiters_.load(std::memory_order_seq_cst) > 0) wake_.wake();
}

void control_channel::flush_batch() {
  std::lock_guard send(send_mutex_);
  uint64_t frames;
  {
    std::lock_guard lock(out_mutex_);
    if (out_.empty() && !ack_due_) return;
    ack_due_ = false;
    out_.swap(spare_);
    frames = std::exchange(out_frames_, 0);
  }
  // Offline, the batch goes into the log only: the resumption sends it.
  if (link_.alive.load(std::memory_order_acquire)) write_locked(spare_);
  uint64_t claimed;
  bool overclaimed;
  {
    std::lock_guard lock(log_mutex_);
    control_log_.append(spare_, frames);
    // Everything written is in the log now, so an earlier ack that claimed
    // more than the log held must fit.
    claimed = std::exchange(early_ack_, 0);
    overclaimed = claimed > control_log_.sent();
    if (claimed && !overclaimed) control_log_.acknowledge(claimed);
  }
  spare_.clear();
  if (overclaimed) link_.end_session("server acknowledged control frames never sent", CL_DEVICE_NOT_AVAILABLE);
}

void control_channel::request_ack() {
  bool wake;
  {
    std::lock_guard lock(out_mutex_);
    ack_due_ = true;
    wake = writer_idle_;
  }
  if (wake) out_cv_.notify_one();
}

void control_channel::start_writer() {
  writer_ = std::thread([this] { writer_loop(); });
}

void control_channel::join_writer() {
  if (writer_.joinable()) writer_.join();
}

void control_channel::writer_loop() {
  name_this_thread(thread_name("wr", link_.name()));
  for (;;) {
    {
      std::unique_lock lock(out_mutex_);
      writer_idle_ = true;
      out_cv_.wait(lock, [&] { return !out_.empty() || ack_due_ || link_.stopping || link_.ended; });
      writer_idle_ = false;
      if (link_.stopping || link_.ended) return;
    }
    flush();
  }
}

void control_channel::wake_writer() {
  // The writer reads the flags that stop it under out_mutex_.
  wake_all(out_mutex_, out_cv_);
}

void control_channel::wake_callers() {
  wake_all(requests_mutex_, requests_cv_);
}

void control_channel::reset_locked() {
  out_.clear();
  out_frames_ = 0;
  posted_ = 0;
  ack_due_ = false;
  control_log_ = protocol::replay_log{};
  early_ack_ = 0;
}

bool control_channel::wait_reply(uint64_t request, uint64_t epoch, uint16_t& id, std::vector<uint8_t>& payload) {
  // Over when the session ends or a new one replaced it.
  auto over = [&] { return link_.ended || link_.epoch.load(std::memory_order_acquire) != epoch; };
  // Look for the reply a little while before sleeping (see spin_duration).
  auto deadline = std::chrono::steady_clock::now() + this_thread_spin();
  while (std::chrono::steady_clock::now() < deadline) {
    std::lock_guard lock(requests_mutex_);
    if (requests_[request].done || over()) break;
  }
  // Offline, the request waits for the resumption (it is in the replay log).
  std::unique_lock lock(requests_mutex_);
  requests_cv_.wait(lock, [&] { return requests_[request].done || over(); });
  auto it = requests_.find(request);
  bool done = it->second.done;
  id = it->second.id;
  payload = std::move(it->second.payload);
  requests_.erase(it);
  return done;
}

cl_int control_channel::unreachable(cl_int code, std::string_view kind, const char* what) const {
  // CL_OUT_OF_RESOURCES comes only from a session the server ended because
  // its worker process exceeded a limit (resumer, failure_after_refusal).
  const char* because = code == CL_OUT_OF_RESOURCES ? " (the server stopped its worker for exceeding a limit)" : "";
  return link_.sink().explain(code, "server " + link_.name() + " unreachable: " + what + because + " (request " +
                                        std::string(kind) + ", session " +
                                        protocol::session_label(link_.session()) + ")");
}

void control_channel::failed_reply(cl_int status, std::string_view kind, const char* object_kind,
                                   protocol::object_id object) const {
  const std::string session = protocol::session_label(link_.session());
  link_.sink().explain(status, "answered by server " + link_.name() + " (session " + session + ") to " +
                                   std::string(kind) + " for " + object_kind + " " + std::to_string(object));
  link_.sink().failed_reply({link_.name(), session}, status, kind, object_kind, object);
}

bool control_channel::on_ack(const protocol::ack& a) {
  {
    std::lock_guard lock(log_mutex_);
    // The ack may overtake its frames' entry into the log (they enter it
    // right after they are written); flush() settles it then.
    if (a.control <= control_log_.sent())
      control_log_.acknowledge(a.control);
    else
      early_ack_ = std::max(early_ack_, a.control);
  }
  return sender_.acknowledge(a.bulk);
}

void control_channel::fail_handlers() {
  std::vector<reply_handler> failed;
  {
    std::lock_guard lock(requests_mutex_);
    for (auto it = requests_.begin(); it != requests_.end();) {
      if (it->second.handler) {
        failed.push_back(std::move(it->second.handler));
        it = requests_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& handler : failed) handler(false, 0, nullptr, 0);
}

bool control_channel::on_reply(const protocol::frame_view& frame, std::string& why) {
  // Every reply starts with its request id; the waiting caller decodes it.
  if (frame.header.payload_size < 8) {
    why = "reply without request id";
    return false;
  }
  uint64_t request;
  std::memcpy(&request, frame.payload, 8);
  reply_handler handler;
  {
    std::lock_guard lock(requests_mutex_);
    auto it = requests_.find(request);
    if (it == requests_.end()) {
      why = "reply to unknown request " + std::to_string(request);
      return false;
    }
    if (it->second.handler) {
      handler = std::move(it->second.handler);
      requests_.erase(it);
    } else {
      it->second.done = true;
      it->second.id = frame.header.message_id;
      it->second.payload.assign(frame.payload, frame.payload + frame.header.payload_size);
    }
  }
  if (handler) {
    handler(true, frame.header.message_id, frame.payload, frame.header.payload_size);
    return true;
  }
  requests_cv_.notify_all();
  return true;
}

namespace {

/// Decodes the payload of `frame` into `message`; false, with `why`, when it
/// is malformed.
template <class Message>
bool decode(const protocol::frame_view& frame, Message& message, std::string& why) {
  const char* error = "";
  if (protocol::decode_payload(frame.payload, frame.header.payload_size, message, error)) return true;
  why = std::string("malformed ") + std::string(protocol::message_traits<Message>::label) + ": " + error;
  return false;
}

}  // namespace

bool control_channel::on_frame(const protocol::frame_view& frame, std::string& why) {
  using protocol::message_id;
  switch (static_cast<message_id>(frame.header.message_id)) {
    case message_id::completions: {
      protocol::completions batch;
      if (!decode(frame, batch, why)) return false;
      // The client's half of a command's timeline (the daemon's: --log-level trace).
      if (!batch.entries.empty())
        FERRY_TRACE("timeline", "%zu completions received, the last of command %llu", batch.entries.size(),
                    static_cast<unsigned long long>(batch.entries.back().command));
      tracker_.on_completions(batch);
      return true;
    }
    case message_id::ack: {
      protocol::ack a;
      if (!decode(frame, a, why)) return false;
      if (!on_ack(a)) {
        why = "ack of bulk frames never sent";
        return false;
      }
      return true;
    }
    case message_id::lane_ack: {
      protocol::lane_ack a;
      if (!decode(frame, a, why)) return false;
      if (!sender_.acknowledge_lanes(a.received)) {
        why = "lane_ack of bulk lane frames never sent";
        return false;
      }
      return true;
    }
    case message_id::printf_output: {
      protocol::printf_output text;
      if (!decode(frame, text, why)) return false;
      // Kernel printf output belongs on the application's stdout.
      std::fwrite(text.text.data(), 1, text.text.size(), stdout);
      std::fflush(stdout);
      return true;
    }
    case message_id::pong:
    case message_id::server_info:
    case message_id::object_counts:
    case message_id::build_reply:
    case message_id::kernel_reply:
    case message_id::query_reply:
    case message_id::link_counters:
    case message_id::workers:
    case message_id::local_route:
    case message_id::status_reply:
    case message_id::cuda_devices:
    case message_id::cuda_pointer:
    case message_id::cuda_mem_info:
    case message_id::cuda_module_reply:
    case message_id::cuda_function_reply:
    case message_id::cuda_link_reply:
    case message_id::cuda_data:
    case message_id::cuda_elapsed:
    case message_id::cuda_status:
      return on_reply(frame, why);
    default: {
      const char* name = protocol::message_name(frame.header.message_id);
      why = name ? std::string("unexpected message ") + name
                 : "unknown message id " + std::to_string(frame.header.message_id);
      return false;
    }
  }
}

ssize_t control_channel::receive(void* area, size_t size) {
  stream* from = link_.control();
  // Somebody waits for an answer that is usually microseconds away; polling
  // for it is cheaper than waking up from a blocking recv.
  if (from->tls() == nullptr) {
    // Polling by poll(), which leaves the socket to the kernel's delivery
    // (a read in progress holds it, and a segment that comes then waits).
    if (!wake_.wait_readable(from->fd(), [this] { return waiters_.load(std::memory_order_seq_cst) > 0; })) return -1;
    return from->read_some(area, size);
  }
  // A TLS stream may hold decrypted bytes its socket no longer shows: it
  // polls by reading, for the default window.
  if (waiters_.load(std::memory_order_relaxed) > 0) {
    auto deadline = std::chrono::steady_clock::now() + spin_duration();
    do {
      ssize_t n = from->try_read_some(area, size);
      if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return n;
    } while (std::chrono::steady_clock::now() < deadline && waiters_.load(std::memory_order_relaxed) > 0);
  }
  return from->read_some(area, size);
}

bool control_channel::read_stream(std::string& why) {
  protocol::frame_assembler assembler(protocol::max_control_payload);
  why = "server closed the connection";
  for (;;) {
    size_t available;
    uint8_t* area = assembler.write_area(64 * 1024, available);
    ssize_t n = receive(area, available);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) why = std::string("receive failed: ") + std::strerror(errno);
      return true;
    }
    assembler.commit(static_cast<size_t>(n));
    protocol::frame_view frame;
    for (;;) {
      auto r = assembler.next(frame, why);
      if (r == protocol::frame_assembler::result::need_more) break;
      if (r == protocol::frame_assembler::result::error || !on_frame(frame, why)) return false;
      // Acks are not counted (docs/protocol.md, "Resuming a session").
      if (protocol::counted_frame(frame.header.message_id))
        link_.received_control.fetch_add(1, std::memory_order_release);
    }
    // The server keeps what it sent until the client says it has it.
    if (link_.received_control.load(std::memory_order_relaxed) -
            link_.acked_control.load(std::memory_order_relaxed) >=
        128)
      request_ack();
  }
}

}  // namespace ferry::client
