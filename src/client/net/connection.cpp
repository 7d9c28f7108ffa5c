#include "client/net/connection.hpp"

#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>

#include "client/core/event_state.hpp"
#include "common/log.hpp"
#include "protocol/version.hpp"

namespace ferry::client {

namespace {

int connect_timeout_ms() {
  if (const char* text = std::getenv("FERRY_CONNECT_TIMEOUT_MS")) {
    int value = std::atoi(text);
    if (value > 0) return value;
  }
  return 3000;
}

// Reads one whole frame (header + payload) from a blocking socket; used only
// during the handshake, before the reader threads exist.
bool read_frame(int fd, protocol::frame_header& header, std::vector<uint8_t>& payload, uint32_t limit) {
  uint8_t raw[protocol::frame_header_size];
  if (!read_exact(fd, raw, sizeof raw)) return false;
  header = protocol::load_header(raw);
  if (header.payload_size > limit) return false;
  payload.resize(header.payload_size);
  return read_exact(fd, payload.data(), payload.size());
}

}  // namespace

std::chrono::microseconds spin_duration() {
  static const std::chrono::microseconds value = [] {
    if (const char* text = std::getenv("FERRY_SPIN_US")) return std::chrono::microseconds(std::atoi(text));
    return std::chrono::microseconds(50);
  }();
  return value;
}

std::unique_ptr<connection> connection::open(const endpoint& where, std::string& error) {
  std::unique_ptr<connection> c(new connection);
  c->name_ = where.to_string();
  int timeout = connect_timeout_ms();
  c->control_ = connect_endpoint(where, timeout, error);
  if (!c->control_.valid() || !c->handshake(c->control_.get(), protocol::stream_kind::control, error))
    return nullptr;
  c->bulk_ = connect_endpoint(where, timeout, error);
  if (!c->bulk_.valid() || !c->handshake(c->bulk_.get(), protocol::stream_kind::bulk, error)) {
    error = "bulk stream: " + error;
    return nullptr;
  }
  c->alive_ = true;
  c->out_.reserve(64 * 1024);
  c->spare_.reserve(64 * 1024);
  c->writer_ = std::thread([p = c.get()] { p->writer_loop(); });
  c->bulk_reader_ = std::thread([p = c.get()] { p->bulk_reader_loop(); });
  c->control_reader_ = std::thread([p = c.get()] { p->control_reader_loop(); });
  return c;
}

connection::~connection() {
  stopping_ = true;
  if (control_.valid()) ::shutdown(control_.get(), SHUT_RDWR);
  if (bulk_.valid()) ::shutdown(bulk_.get(), SHUT_RDWR);
  out_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (control_reader_.joinable()) control_reader_.join();
  if (bulk_reader_.joinable()) bulk_reader_.join();
}

bool connection::handshake(int fd, protocol::stream_kind kind, std::string& error) {
  protocol::hello h = protocol::make_hello(kind, session_, secret_, "libferry");
  std::vector<uint8_t> frame;
  protocol::append_frame(frame, h);
  if (!write_all(fd, frame.data(), frame.size())) {
    error = "connection closed during handshake";
    return false;
  }
  protocol::frame_header header;
  std::vector<uint8_t> payload;
  // A peer that accepts but never answers must not hang the application.
  int timeout = connect_timeout_ms();
  timeval limit{timeout / 1000, (timeout % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  bool answered = read_frame(fd, header, payload, 4096);
  int saved_errno = errno;
  timeval forever{0, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof forever);
  if (!answered) {
    error = saved_errno == EAGAIN || saved_errno == EWOULDBLOCK
                ? "no handshake answer within " + std::to_string(timeout) + " ms (is this a ferryd port?)"
                : "connection closed during handshake (is this a ferryd port?)";
    return false;
  }
  const char* why = "";
  if (header.message_id == static_cast<uint16_t>(protocol::message_id::refused)) {
    protocol::refused r;
    protocol::decode_payload(payload.data(), payload.size(), r, why);
    error = "refused by server: " + r.reason;
    return false;
  }
  protocol::welcome w;
  if (header.message_id != static_cast<uint16_t>(protocol::message_id::welcome) ||
      !protocol::decode_payload(payload.data(), payload.size(), w, why)) {
    error = "unexpected handshake answer (is this a ferryd port?)";
    return false;
  }
  if (kind == protocol::stream_kind::control) {
    session_ = w.session;
    secret_ = w.secret;
    peer_key_ = w.peer_key;
  }
  return true;
}

void connection::flush() {
  std::lock_guard send(send_mutex_);
  {
    std::lock_guard lock(out_mutex_);
    if (out_.empty()) return;
    out_.swap(spare_);
  }
  if (!write_all(control_.get(), spare_.data(), spare_.size()) && !stopping_)
    lost("cannot send to server");
  spare_.clear();
}

void connection::writer_loop() {
  pthread_setname_np(pthread_self(), "ferry-writer");
  for (;;) {
    {
      std::unique_lock lock(out_mutex_);
      writer_idle_ = true;
      out_cv_.wait(lock, [&] { return !out_.empty() || stopping_ || !alive_; });
      writer_idle_ = false;
      if (stopping_ || !alive_) return;
    }
    flush();
  }
}

bool connection::send_data(protocol::object_id transfer, const void* data, uint64_t size) {
  std::lock_guard lock(bulk_send_mutex_);
  uint64_t offset = 0;
  do {
    uint64_t chunk = std::min<uint64_t>(size - offset, protocol::max_bulk_chunk);
    uint8_t head[protocol::frame_header_size + protocol::bulk_prefix_size];
    protocol::frame_header h{static_cast<uint32_t>(protocol::bulk_prefix_size + chunk),
                             static_cast<uint16_t>(protocol::message_id::bulk_data), 0};
    protocol::store_header(head, h);
    protocol::bulk_data prefix{transfer, offset, size};
    std::memcpy(head + 8, &prefix.transfer, 8);
    std::memcpy(head + 16, &prefix.offset, 8);
    std::memcpy(head + 24, &prefix.total, 8);
    iovec pieces[2] = {{head, sizeof head}, {const_cast<uint8_t*>(static_cast<const uint8_t*>(data) + offset), chunk}};
    if (!writev_all(bulk_.get(), pieces, chunk ? 2 : 1)) {
      lost("cannot send bulk data to server");
      return false;
    }
    offset += chunk;
  } while (offset < size);
  return true;
}

void connection::track(event* e) {
  retain_internal(e);
  {
    std::lock_guard lock(tracked_mutex_);
    if (alive_) {
      tracked_.emplace(e->id, e);
      return;
    }
  }
  // Nothing will ever arrive for it.
  complete_event(e, CL_DEVICE_NOT_AVAILABLE);
  release_internal(e);
}

void connection::on_failure(protocol::object_id command, std::function<void(cl_int)> hook) {
  {
    std::lock_guard lock(tracked_mutex_);
    if (alive_) {
      failure_hooks_.emplace(command, std::move(hook));
      ++hooks_alive_;
      return;
    }
  }
  // Nothing will ever arrive for it.
  hook(CL_DEVICE_NOT_AVAILABLE);
}

void connection::forget_failure(protocol::object_id command) {
  std::function<void(cl_int)> dropped;
  {
    std::lock_guard lock(tracked_mutex_);
    auto it = failure_hooks_.find(command);
    if (it == failure_hooks_.end()) return;
    dropped = std::move(it->second);
    failure_hooks_.erase(it);
  }
  dropped = nullptr;  // outside the lock: what it holds may be freed now
  retire_hooks(1);
}

void connection::retire_hooks(size_t count) {
  {
    std::lock_guard lock(tracked_mutex_);
    hooks_alive_ -= count;
  }
  hooks_cv_.notify_all();
}

void connection::settle() {
  std::unique_lock lock(tracked_mutex_);
  // Every hook ends with its command's report or the connection's loss, and
  // so does the tracking of an event the client already completed itself (a
  // failed migration fails its command before that command's server says
  // so); the bound only keeps a broken server from hanging a leak check.
  hooks_cv_.wait_for(lock, std::chrono::seconds(30), [&] {
    if (hooks_alive_ != 0) return false;
    for (const auto& [id, e] : tracked_)
      if (e->status.load() <= CL_COMPLETE) return false;
    return true;
  });
}

void connection::expect_data(protocol::object_id id, void* destination, uint64_t size, event* e) {
  std::lock_guard lock(tracked_mutex_);
  if (!alive_) return;  // track() fails the event
  retain_internal(e);
  transfers_.emplace(id, transfer{static_cast<uint8_t*>(destination), size, 0, e});
}

bool connection::wait_reply(uint64_t request, uint16_t& id, std::vector<uint8_t>& payload) {
  // Look for the reply a little while before sleeping (see spin_duration).
  auto deadline = std::chrono::steady_clock::now() + spin_duration();
  while (std::chrono::steady_clock::now() < deadline) {
    std::lock_guard lock(requests_mutex_);
    if (requests_[request].done || !alive_) break;
  }
  std::unique_lock lock(requests_mutex_);
  requests_cv_.wait(lock, [&] { return requests_[request].done || !alive_; });
  auto it = requests_.find(request);
  bool done = it->second.done;
  id = it->second.id;
  payload = std::move(it->second.payload);
  requests_.erase(it);
  return done;
}

result<uint64_t> connection::ping() {
  auto start = std::chrono::steady_clock::now();
  protocol::ping p;
  auto reply = call<protocol::pong>(p);
  if (!reply) return fail(reply.error());
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

void connection::quiesce_bulk() const {
  while (bulk_busy_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

void connection::lost(const std::string& reason) {
  if (alive_.exchange(false)) FERRY_WARN("net", "connection to %s lost: %s", name_.c_str(), reason.c_str());
  // Wake the readers; the control reader fails what is outstanding.
  ::shutdown(control_.get(), SHUT_RDWR);
  ::shutdown(bulk_.get(), SHUT_RDWR);
  out_cv_.notify_all();
  requests_cv_.notify_all();
}

void connection::on_completions(const protocol::completions& batch) {
  for (const auto& c : batch.entries) {
    event* e = nullptr;
    event* abandoned_transfer = nullptr;
    std::function<void(cl_int)> hook;
    {
      std::lock_guard lock(tracked_mutex_);
      if (auto h = failure_hooks_.find(c.command); h != failure_hooks_.end()) {
        hook = std::move(h->second);
        failure_hooks_.erase(h);
      }
      auto it = tracked_.find(c.command);
      if (it != tracked_.end()) {
        e = it->second;
        tracked_.erase(it);
        if (c.status < 0) {  // no data follows a failure
          auto t = transfers_.find(c.command);
          if (t != transfers_.end()) {
            abandoned_transfer = t->second.owner;
            transfers_.erase(t);
          }
        }
      }
    }
    const bool hooked = static_cast<bool>(hook);
    if (hooked) {
      if (c.status < 0) hook(c.status);  // outside the lock: it posts to other servers
      hook = nullptr;                    // and lets go of what it held
      retire_hooks(1);
    }
    if (e == nullptr) {
      // A failure of a command nobody observes: only the log can tell.
      if (c.status < 0 && !hooked)
        FERRY_WARN("net", "%s: command %llu failed with %d", name_.c_str(),
                   static_cast<unsigned long long>(c.command), c.status);
      continue;
    }
    std::array<cl_ulong, 4> profiling{c.profiling[0], c.profiling[1], c.profiling[2], c.profiling[3]};
    event_part_done(e, c.status, &profiling);
    release_internal(e);  // the reference track() took
    if (abandoned_transfer) release_internal(abandoned_transfer);
  }
  hooks_cv_.notify_all();  // settle() may wait for these reports
}

bool connection::on_frame(const protocol::frame_view& frame, std::string& why) {
  using protocol::message_id;
  auto id = static_cast<message_id>(frame.header.message_id);
  switch (id) {
    case message_id::completions: {
      protocol::completions batch;
      const char* error = "";
      if (!protocol::decode_payload(frame.payload, frame.header.payload_size, batch, error)) {
        why = std::string("malformed completions: ") + error;
        return false;
      }
      on_completions(batch);
      return true;
    }
    case message_id::printf_output: {
      protocol::printf_output text;
      const char* error = "";
      if (!protocol::decode_payload(frame.payload, frame.header.payload_size, text, error)) {
        why = std::string("malformed printf_output: ") + error;
        return false;
      }
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
    case message_id::status_reply: {
      // Every reply starts with its request id; the waiting caller decodes it.
      if (frame.header.payload_size < 8) {
        why = "reply without request id";
        return false;
      }
      uint64_t request;
      std::memcpy(&request, frame.payload, 8);
      {
        std::lock_guard lock(requests_mutex_);
        auto it = requests_.find(request);
        if (it == requests_.end()) {
          why = "reply to unknown request " + std::to_string(request);
          return false;
        }
        it->second.done = true;
        it->second.id = frame.header.message_id;
        it->second.payload.assign(frame.payload, frame.payload + frame.header.payload_size);
      }
      requests_cv_.notify_all();
      return true;
    }
    default: {
      const char* name = protocol::message_name(frame.header.message_id);
      why = name ? std::string("unexpected message ") + name
                 : "unknown message id " + std::to_string(frame.header.message_id);
      return false;
    }
  }
}

ssize_t connection::receive(void* area, size_t size) {
  if (waiters_.load(std::memory_order_relaxed) > 0) {
    // Somebody waits for an answer that is usually microseconds away;
    // polling for it is cheaper than waking up from a blocking recv.
    auto deadline = std::chrono::steady_clock::now() + spin_duration();
    do {
      ssize_t n = ::recv(control_.get(), area, size, MSG_DONTWAIT);
      if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return n;
    } while (std::chrono::steady_clock::now() < deadline && waiters_.load(std::memory_order_relaxed) > 0);
  }
  return ::recv(control_.get(), area, size, 0);
}

void connection::control_reader_loop() {
  pthread_setname_np(pthread_self(), "ferry-reader");
  protocol::frame_assembler assembler(protocol::max_control_payload);
  std::string why = "server closed the connection";
  for (bool running = true; running;) {
    size_t available;
    uint8_t* area = assembler.write_area(64 * 1024, available);
    ssize_t n = receive(area, available);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      break;
    }
    assembler.commit(static_cast<size_t>(n));
    protocol::frame_view frame;
    for (;;) {
      auto r = assembler.next(frame, why);
      if (r == protocol::frame_assembler::result::need_more) break;
      if (r == protocol::frame_assembler::result::error || !on_frame(frame, why)) {
        running = false;
        break;
      }
    }
  }
  if (!stopping_) lost(why);
  alive_ = false;
  // The bulk reader may be writing into an application buffer: wait for it to
  // stop before failing the events that own those buffers.
  if (bulk_reader_.joinable()) bulk_reader_.join();
  std::vector<event*> orphans;
  std::unordered_map<protocol::object_id, std::function<void(cl_int)>> hooks;
  {
    std::lock_guard lock(tracked_mutex_);
    for (auto& [id, e] : tracked_) orphans.push_back(e);
    for (auto& [id, t] : transfers_) orphans.push_back(t.owner);
    tracked_.clear();
    transfers_.clear();
    hooks.swap(failure_hooks_);
  }
  for (auto& [id, hook] : hooks) hook(CL_DEVICE_NOT_AVAILABLE);
  const size_t ran = hooks.size();
  hooks.clear();
  if (ran) retire_hooks(ran);
  for (event* e : orphans) {
    complete_event(e, CL_DEVICE_NOT_AVAILABLE);
    release_internal(e);
  }
  requests_cv_.notify_all();
  out_cv_.notify_all();
}

void connection::bulk_reader_loop() {
  pthread_setname_np(pthread_self(), "ferry-bulk-in");
  std::vector<uint8_t> discard;
  for (;;) {
    uint8_t head[protocol::frame_header_size + protocol::bulk_prefix_size];
    if (!read_exact(bulk_.get(), head, sizeof head)) break;
    bulk_busy_.store(1, std::memory_order_release);
    struct not_busy {
      std::atomic<int>& flag;
      ~not_busy() { flag.store(0, std::memory_order_release); }
    } busy_until_done{bulk_busy_};
    protocol::frame_header h = protocol::load_header(head);
    uint64_t transfer_id, offset, total;
    std::memcpy(&transfer_id, head + 8, 8);
    std::memcpy(&offset, head + 16, 8);
    std::memcpy(&total, head + 24, 8);
    if (h.message_id != static_cast<uint16_t>(protocol::message_id::bulk_data) ||
        h.payload_size < protocol::bulk_prefix_size ||
        h.payload_size > protocol::max_bulk_chunk + protocol::bulk_prefix_size) {
      lost("malformed bulk frame");
      break;
    }
    uint64_t chunk = h.payload_size - protocol::bulk_prefix_size;
    uint8_t* destination = nullptr;
    {
      std::lock_guard lock(tracked_mutex_);
      auto it = transfers_.find(transfer_id);
      // A content-size buffer's read may bring fewer bytes than were asked for.
      if (it != transfers_.end() && total <= it->second.size && offset + chunk <= total) {
        destination = it->second.destination + offset;
        it->second.size = total;
      }
    }
    if (destination == nullptr) {
      lost("bulk data for unknown transfer " + std::to_string(transfer_id));
      break;
    }
    if (chunk != 0 && !read_exact(bulk_.get(), destination, chunk)) break;
    event* done = nullptr;
    {
      std::lock_guard lock(tracked_mutex_);
      auto it = transfers_.find(transfer_id);
      if (it != transfers_.end() && (it->second.received += chunk) == it->second.size) {
        done = it->second.owner;
        transfers_.erase(it);
      }
    }
    if (done) {
      event_part_done(done, CL_COMPLETE, nullptr);
      release_internal(done);  // the reference expect_data() took
    }
  }
  if (!stopping_ && alive_) lost("bulk stream closed");
}

}  // namespace ferry::client
