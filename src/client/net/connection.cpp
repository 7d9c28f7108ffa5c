#include "client/net/connection.hpp"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "client/core/diagnostics.hpp"
#include "client/core/event_state.hpp"
#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "protocol/bulk_head.hpp"
#include "protocol/outgoing.hpp"
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

/// How long a connection may stay silent with data unacknowledged, or fail
/// its keepalive probes, before libferry counts it as lost and resumes
/// (FERRY_LINK_TIMEOUT_MS, default 10 s).
int link_timeout_ms() {
  if (const char* text = std::getenv("FERRY_LINK_TIMEOUT_MS")) {
    int value = std::atoi(text);
    if (value > 0) return value;
  }
  return 10000;
}

/// Connects one stream of the session (TLS when configured), with dead-peer
/// detection.
stream_ptr connect_stream(const endpoint& where, const protocol::credentials& who, std::string& error) {
  stream_ptr s = protocol::open_stream(where, who, connect_timeout_ms(), error);
  if (s) detect_dead_peer(s->fd(), link_timeout_ms());
  return s;
}

/// Whether large writes to a daemon on a plain Unix socket go through a
/// shared-memory window (FERRY_BULK_WINDOW=0 sends them on the socket, to
/// compare).
bool bulk_windows_enabled() {
  static const bool value = [] {
    const char* text = std::getenv("FERRY_BULK_WINDOW");
    return !(text && std::string(text) == "0");
  }();
  return value;
}

/// Shuts a stream down, if there is one: every thread blocked on it returns.
void shut(const stream_ptr& s) {
  if (s) s->shutdown();
}

}  // namespace

std::chrono::microseconds spin_duration() {
  static const std::chrono::microseconds value = [] {
    if (const char* text = std::getenv("FERRY_SPIN_US")) return std::chrono::microseconds(std::atoi(text));
    return std::chrono::microseconds(50);
  }();
  return value;
}

outage_policy outage_policy_from_environment() {
  static const outage_policy value = [] {
    const char* text = std::getenv("FERRY_OUTAGE");
    if (text == nullptr || *text == 0 || std::string(text) == "wait") return outage_policy::wait;
    if (std::string(text) == "fail-fast") return outage_policy::fail_fast;
    FERRY_WARN("net", "FERRY_OUTAGE=%s is neither 'wait' nor 'fail-fast'; new work waits during outages", text);
    return outage_policy::wait;
  }();
  return value;
}

std::unique_ptr<connection> connection::open(const endpoint& where, const protocol::credentials& who,
                                             std::string& error) {
  std::unique_ptr<connection> c(new connection);
  c->name_ = where.to_string();
  c->where_ = where;
  c->credentials_ = who;
  protocol::session_state state;
  if (c->connect_streams(c->control_, c->bulk_, state, error) != handshake_result::ok) return nullptr;
  c->grace_ms_ = state.grace_ms;
  c->alive_ = true;
  c->out_.reserve(64 * 1024);
  c->spare_.reserve(64 * 1024);
  c->start_threads();
  return c;
}

connection::handshake_result connection::connect_streams(stream_ptr& control, stream_ptr& bulk,
                                                         protocol::session_state& state, std::string& error) {
  control = connect_stream(where_, credentials_, error);
  if (!control) return handshake_result::failed;
  if (handshake_result r = handshake(*control, protocol::stream_kind::control, error, &state);
      r != handshake_result::ok)
    return r;
  bulk = connect_stream(where_, credentials_, error);
  if (!bulk || handshake(*bulk, protocol::stream_kind::bulk, error) != handshake_result::ok) {
    error = "bulk stream: " + error;
    return handshake_result::failed;
  }
  return handshake_result::ok;
}

void connection::start_threads() {
  writer_ = std::thread([this] { writer_loop(); });
  bulk_reader_ = std::thread([this, fd = bulk_.get(), g = generation_.load()] { bulk_reader_loop(fd, g); });
  control_reader_ = std::thread([this] { control_reader_loop(); });
}

connection::~connection() {
  stopping_ = true;
  {
    std::lock_guard lock(fd_mutex_);
    shut(control_);
    shut(bulk_);
  }
  {
    std::lock_guard lock(stop_mutex_);
  }
  stop_cv_.notify_all();
  online_cv_.notify_all();
  out_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (control_reader_.joinable()) control_reader_.join();
  if (bulk_reader_.joinable()) bulk_reader_.join();
}

bool connection::wait_online() {
  if (alive()) return true;  // clFinish asks every time: no lock on the common path
  std::unique_lock lock(stop_mutex_);
  online_cv_.wait(lock, [&] { return alive_ || ended_ || stopping_; });
  return alive_.load();
}

void connection::wake_online_waiters() {
  {
    std::lock_guard lock(stop_mutex_);
  }
  online_cv_.notify_all();
}

void connection::set_availability_listener(std::function<void(bool)> listener) {
  std::lock_guard lock(listener_mutex_);
  availability_listener_ = std::move(listener);
}

void connection::notify_availability(bool available) {
  // Only the control reader calls this, so the listener hears each change
  // once and in order.
  std::lock_guard lock(listener_mutex_);
  if (reported_available_ == available) return;
  reported_available_ = available;
  if (availability_listener_) availability_listener_(available);
}

connection::handshake_result connection::handshake(stream& s, protocol::stream_kind kind, std::string& error,
                                                   protocol::session_state* state) {
  protocol::hello h = protocol::make_hello(kind, session_, secret_, "libferry");
  protocol::frame_header header;
  std::vector<uint8_t> payload;
  // A peer that accepts but never answers must not hang the application.
  const int timeout = connect_timeout_ms();
  if (!protocol::exchange_hello(s, h, credentials_, timeout, header, payload, error))
    return handshake_result::failed;
  protocol::frame_header state_header{};
  std::vector<uint8_t> state_payload;
  if (kind == protocol::stream_kind::control &&
      header.message_id == static_cast<uint16_t>(protocol::message_id::welcome) &&
      !protocol::read_frame(s, state_header, state_payload, 4096, error)) {
    error = "no session_state after welcome: " + error;
    return handshake_result::failed;
  }
  s.set_receive_timeout(0);
  const char* why = "";
  if (header.message_id == static_cast<uint16_t>(protocol::message_id::refused)) {
    protocol::refused r;
    protocol::decode_payload(payload.data(), payload.size(), r, why);
    error = "refused by server: " + r.reason;
    return handshake_result::refused;
  }
  protocol::welcome w;
  if (header.message_id != static_cast<uint16_t>(protocol::message_id::welcome) ||
      !protocol::decode_payload(payload.data(), payload.size(), w, why)) {
    error = "unexpected handshake answer (is this a ferryd port?)";
    return handshake_result::refused;
  }
  if (kind == protocol::stream_kind::control) {
    protocol::session_state st;
    if (state_header.message_id != static_cast<uint16_t>(protocol::message_id::session_state) ||
        !protocol::decode_payload(state_payload.data(), state_payload.size(), st, why)) {
      error = "no session_state after welcome (a ferryd of another version?)";
      return handshake_result::refused;
    }
    if (state) *state = st;
    std::lock_guard lock(session_mutex_);
    session_ = w.session;
    secret_ = w.secret;
    peer_key_ = w.peer_key;
    version_.store(w.version, std::memory_order_release);
  }
  return handshake_result::ok;
}

void connection::write_control_locked(const std::vector<uint8_t>& batch) {
  const uint64_t control = received_control_.load(std::memory_order_acquire);
  const uint64_t bulk = received_bulk_.load(std::memory_order_acquire);
  iovec pieces[2];
  int count = 0;
  // What the client has received rides ahead of what it sends, so the server
  // can let go of it.
  const bool ack = control != acked_control_.load(std::memory_order_relaxed) ||
                   bulk != acked_bulk_.load(std::memory_order_relaxed);
  if (ack) {
    ack_frame_.clear();
    protocol::append_frame(ack_frame_, protocol::ack{control, bulk});
    pieces[count++] = {ack_frame_.data(), ack_frame_.size()};
  }
  if (!batch.empty()) pieces[count++] = {const_cast<uint8_t*>(batch.data()), batch.size()};
  if (count == 0) return;
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  if (!writev_all(control_.get(), pieces, count)) {
    if (!stopping_) broken(generation, "cannot send to server");
    return;
  }
  if (ack) {
    acked_control_.store(control, std::memory_order_relaxed);
    acked_bulk_.store(bulk, std::memory_order_relaxed);
  }
}

void connection::flush() {
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
  if (alive_.load(std::memory_order_acquire)) write_control_locked(spare_);
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
  if (overclaimed) end_session("server acknowledged control frames never sent");
}

void connection::request_ack() {
  bool wake;
  {
    std::lock_guard lock(out_mutex_);
    ack_due_ = true;
    wake = writer_idle_;
  }
  if (wake) out_cv_.notify_one();
}

void connection::writer_loop() {
  name_this_thread(thread_name("wr", where_.to_string()));
  for (;;) {
    {
      std::unique_lock lock(out_mutex_);
      writer_idle_ = true;
      out_cv_.wait(lock, [&] { return !out_.empty() || ack_due_ || stopping_ || ended_; });
      writer_idle_ = false;
      if (stopping_ || ended_) return;
    }
    flush();
  }
}

namespace {

bool write_bulk_frame(stream* fd, protocol::object_id transfer, uint64_t offset, uint64_t total, const uint8_t* data,
                      uint64_t size) {
  uint8_t head[protocol::bulk_head_size];
  protocol::store_bulk_head(head, protocol::bulk_data{transfer, offset, total}, size);
  iovec pieces[2] = {{head, sizeof head}, {const_cast<uint8_t*>(data), size}};
  return writev_all(fd, pieces, size ? 2 : 1);
}

}  // namespace

bulk_window* connection::window_for_chunk(uint64_t chunk) {
  if (chunk <= bulk_log::copy_limit) return nullptr;  // small: one socket write costs less than a hand-off
  if (window_decided_) return window_.get();
  // One offer per bulk stream: a resumed session gets a new stream, and a
  // new window with it (forget_window).
  window_decided_ = true;
  stream* s = bulk_.get();
  if (!bulk_windows_enabled() || version_.load(std::memory_order_acquire) < 5 ||
      where_.type != endpoint::kind::unix_socket || s->encrypted())
    return nullptr;
  std::string why;
  std::unique_ptr<bulk_window> w = bulk_window::create(window_slots, protocol::max_bulk_chunk, why);
  if (!w) {
    FERRY_WARN("net", "%s: no shared-memory window (%s); large writes go on the socket", name_.c_str(), why.c_str());
    return nullptr;
  }
  if (!protocol::send_window_offer(s->fd(), protocol::window_offer{window_slots, protocol::max_bulk_chunk}, w->fd()))
    return nullptr;  // the next write finds the stream broken
  FERRY_DEBUG("net", "%s: large writes go through a shared-memory window of %u x %u bytes", name_.c_str(),
              window_slots, protocol::max_bulk_chunk);
  window_ = std::move(w);
  return window_.get();
}

void connection::forget_window() {
  window_.reset();
  window_decided_ = false;
}

bool connection::send_chunk(uint64_t generation, protocol::object_id transfer, uint64_t offset, uint64_t total,
                            const uint8_t* data, uint64_t size) {
  bulk_window* window = window_for_chunk(size);
  if (!window) return write_bulk_frame(bulk_.get(), transfer, offset, total, data, size);
  uint32_t slot = 0;
  // The daemon frees a slot as soon as it has copied it; a daemon that has
  // gone never does, so keep asking whether the streams still live.
  while (!window->wait_for_slot(100, slot))
    if (stopping_ || ended_ || generation != generation_.load(std::memory_order_acquire)) return false;
  std::memcpy(window->slot(slot), data, size);
  std::vector<uint8_t> frame;
  protocol::append_frame(frame, protocol::window_chunk{transfer, offset, total, slot, size});
  if (!write_all(bulk_.get(), frame.data(), frame.size())) return false;
  window->slot_sent();
  return true;
}

uint64_t connection::send_chunks(protocol::object_id transfer, const uint8_t* bytes, uint64_t size, bulk_log::hold how,
                                 const std::shared_ptr<const void>& keeper, protocol::object_id queue) {
  uint64_t last = 0;
  std::lock_guard lock(bulk_send_mutex_);
  // Offline (or once a write fails) the chunks go into the log only; the
  // resumption sends them.
  bool writing = alive_.load(std::memory_order_acquire);
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  uint64_t offset = 0;
  do {
    uint64_t chunk = std::min<uint64_t>(size - offset, protocol::max_bulk_chunk);
    const uint8_t* from;
    {
      std::lock_guard log(bulk_log_mutex_);
      const bulk_log::frame& f = bulk_log_.append(transfer, offset, size, bytes + offset, chunk, how, keeper, queue);
      last = f.number;
      from = f.data;  // stays put until written() says the write is over
      borrowing_.store(bulk_log_.borrowing(), std::memory_order_release);
    }
    if (writing && !send_chunk(generation, transfer, offset, size, from, chunk)) {
      if (!stopping_) broken(generation, "cannot send bulk data to server");
      writing = false;
    }
    {
      std::lock_guard log(bulk_log_mutex_);
      bulk_log_.written(last);
    }
    offset += chunk;
  } while (offset < size);
  return last;
}

bool connection::send_data(protocol::object_id transfer, const void* data, uint64_t size, bytes_lifetime lifetime,
                           protocol::object_id queue) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  const uint64_t epoch = epoch_.load(std::memory_order_acquire);
  auto over = [&] { return ended_ || stopping_ || epoch_.load(std::memory_order_acquire) != epoch; };
  if (size <= bulk_log::copy_limit) {
    send_chunks(transfer, bytes, size, bulk_log::hold::copy, nullptr, 0);
    return !over();
  }
  if (lifetime == bytes_lifetime::until_completion) {
    send_chunks(transfer, bytes, size, bulk_log::hold::borrow, nullptr, queue);
    return !over();
  }
  // The log points into the caller's memory: keep it until the server has it.
  const uint64_t last = send_chunks(transfer, bytes, size, bulk_log::hold::borrow, nullptr, 0);
  std::unique_lock lock(bulk_log_mutex_);
  bulk_acked_cv_.wait(lock, [&] { return over() || bulk_log_.acknowledged() >= last; });
  return !over();
}

bool connection::send_data(protocol::object_id transfer, std::vector<uint8_t> bytes) {
  const uint64_t epoch = epoch_.load(std::memory_order_acquire);
  auto keeper = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  send_chunks(transfer, keeper->data(), keeper->size(), bulk_log::hold::keep, keeper, 0);
  return !(ended_ || stopping_ || epoch_.load(std::memory_order_acquire) != epoch);
}

void connection::settle_borrowed(protocol::object_id queue, protocol::object_id command, cl_int status) {
  if (!borrowing_.load(std::memory_order_acquire)) return;
  std::lock_guard log(bulk_log_mutex_);
  if (queue == 0) queue = bulk_log_.borrowed_queue(command);
  uint64_t copied = 0;
  if (status < 0)
    copied = bulk_log_.settle_all(command);
  else if (queue != 0)
    copied = bulk_log_.settle(queue, command);
  if (copied)
    FERRY_DEBUG("net", "%s: command %llu completed before the server had %llu bytes of its queue's writes; copied them",
                name_.c_str(), static_cast<unsigned long long>(command), static_cast<unsigned long long>(copied));
  borrowing_.store(bulk_log_.borrowing(), std::memory_order_release);
}

void connection::track(event* e) {
  retain_internal(e);
  {
    std::lock_guard lock(tracked_mutex_);
    if (!ended_) {
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
    if (!ended_) {
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
  if (ended_) return;  // track() fails the event
  retain_internal(e);
  transfers_.emplace(id, transfer{static_cast<uint8_t*>(destination), size, 0, e});
}

bool connection::wait_reply(uint64_t request, uint64_t epoch, uint16_t& id, std::vector<uint8_t>& payload) {
  // Over when the session ends or a new one replaced it.
  auto over = [&] { return ended_ || epoch_.load(std::memory_order_acquire) != epoch; };
  // Look for the reply a little while before sleeping (see spin_duration).
  auto deadline = std::chrono::steady_clock::now() + spin_duration();
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

cl_int connection::unreachable(std::string_view kind, const char* what) const {
  return explain(CL_DEVICE_NOT_AVAILABLE, "server %s unreachable: %s (request %.*s, session %s)", name_.c_str(), what,
                 static_cast<int>(kind.size()), kind.data(), session_label().c_str());
}

void connection::failed_reply(cl_int status, std::string_view kind, const char* object_kind,
                              protocol::object_id object) const {
  const std::string session = session_label();
  explain(status, "answered by server %s (session %s) to %.*s for %s %llu", name_.c_str(), session.c_str(),
          static_cast<int>(kind.size()), kind.data(), object_kind, static_cast<unsigned long long>(object));
  report_failed_reply({name_, session}, status, kind, object_kind, object);
}

void connection::say_goodbye() {
  stopping_ = true;  // the server closes the streams next: no resumption
  if (!alive()) return;
  post(protocol::goodbye{});
  flush();
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

void connection::broken(uint64_t generation, const char* why) {
  std::lock_guard lock(fd_mutex_);
  if (generation != generation_.load(std::memory_order_acquire)) return;  // those streams are gone already
  FERRY_DEBUG("net", "%s: %s", name_.c_str(), why);
  // Wakes the control reader, which takes the server offline and resumes.
  shut(control_);
  shut(bulk_);
}

void connection::end_session(const std::string& why) {
  if (!ended_.exchange(true)) FERRY_WARN("net", "session with %s ends: %s", name_.c_str(), why.c_str());
  {
    std::lock_guard lock(fd_mutex_);
    shut(control_);
    shut(bulk_);
  }
  {
    std::lock_guard lock(stop_mutex_);
  }
  stop_cv_.notify_all();
  wake_online_waiters();
  out_cv_.notify_all();
  requests_cv_.notify_all();
}

void connection::go_offline(const std::string& why) {
  alive_.store(false, std::memory_order_release);
  FERRY_WARN("net", "connection to %s lost: %s; resuming the session (grace period %u ms)", name_.c_str(),
             why.c_str(), grace_ms_);
  {
    std::lock_guard lock(fd_mutex_);
    generation_.fetch_add(1, std::memory_order_acq_rel);  // writes that fail from now on are expected
    shut(control_);
    shut(bulk_);
  }
  if (bulk_reader_.joinable()) bulk_reader_.join();
  notify_availability(false);
}

namespace {

/// The longest pause between two reconnection attempts: short, because the
/// time from a link's return to the first completed command is what users
/// notice, and a refused connection costs next to nothing.
std::chrono::milliseconds max_reconnect_pause() {
  if (const char* text = std::getenv("FERRY_RECONNECT_MAX_MS")) {
    int value = std::atoi(text);
    if (value > 0) return std::chrono::milliseconds(value);
  }
  return std::chrono::milliseconds(20);
}

}  // namespace

bool connection::reconnect() {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::milliseconds(grace_ms_);
  auto pause = std::chrono::milliseconds(5);
  const auto longest = max_reconnect_pause();
  std::string error;
  for (;;) {
    if (stopping_ || ended_) return false;
    switch (try_resume(error)) {
      case resume_result::resumed:
        FERRY_INFO("net", "session with %s resumed", name_.c_str());
        return true;
      case resume_result::refused:
        end_session("cannot resume: " + error);
        return false;
      case resume_result::failed:
        break;
    }
    const auto now = clock::now();
    if (now >= deadline) {
      end_session("not back within the grace period of " + std::to_string(grace_ms_) + " ms (last try: " + error +
                  ")");
      return false;
    }
    std::unique_lock lock(stop_mutex_);
    stop_cv_.wait_until(lock, std::min(now + pause, deadline), [&] { return stopping_ || ended_; });
    pause = std::min(pause * 2, longest);
  }
}

connection::resume_result connection::try_resume(std::string& error) {
  stream_ptr control, bulk;
  protocol::session_state state;
  switch (connect_streams(control, bulk, state, error)) {
    case handshake_result::ok: break;
    case handshake_result::refused: return resume_result::refused;
    case handshake_result::failed: return resume_result::failed;
  }
  return resume_streams(std::move(control), std::move(bulk), state, error);
}

connection::resume_result connection::resume_streams(stream_ptr control, stream_ptr bulk,
                                                     const protocol::session_state& state, std::string& error) {
  {
    // Nothing else writes meanwhile: what is flushed or sent from now on
    // follows what goes again here.
    std::scoped_lock locks(send_mutex_, log_mutex_, bulk_send_mutex_, bulk_log_mutex_);
    if (state.control > control_log_.sent() || state.bulk > bulk_log_.sent()) {
      error = "the server claims frames never sent";
      return resume_result::refused;
    }
    if (state.control < control_log_.acknowledged() || state.bulk < bulk_log_.acknowledged()) {
      error = "the server lost frames it had acknowledged";
      return resume_result::refused;
    }
    control_log_.acknowledge(state.control);
    bulk_log_.acknowledge(state.bulk);
    // The server waits for the client's ack first, then sends again what
    // follows it.
    const uint64_t received_control = received_control_.load();
    const uint64_t received_bulk = received_bulk_.load();
    std::vector<uint8_t> out;
    protocol::append_frame(out, protocol::ack{received_control, received_bulk});
    control_log_.replay(state.control, out);
    if (!write_all(control.get(), out.data(), out.size())) {
      error = "connection closed while resuming";
      return resume_result::failed;
    }
    acked_control_ = received_control;
    acked_bulk_ = received_bulk;
    bool sent = bulk_log_.replay(state.bulk, [&](const bulk_log::frame& f) {
      return write_bulk_frame(bulk.get(), f.transfer, f.offset, f.total, f.data, f.size);
    });
    if (!sent) {
      error = "connection closed while resuming";
      return resume_result::failed;
    }
    {
      std::lock_guard lock(fd_mutex_);
      control_ = std::move(control);  // closes the broken streams
      bulk_ = std::move(bulk);
      generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    forget_window();
    alive_.store(true, std::memory_order_release);
    bulk_reader_ = std::thread([this, fd = bulk_.get(), g = generation_.load()] { bulk_reader_loop(fd, g); });
  }
  out_cv_.notify_all();  // what was posted offline goes now
  wake_online_waiters();
  notify_availability(true);
  return resume_result::resumed;
}

bool connection::on_ack(const protocol::ack& a) {
  {
    std::lock_guard lock(log_mutex_);
    // The ack may overtake its frames' entry into the log (they enter it
    // right after they are written); flush() settles it then.
    if (a.control <= control_log_.sent())
      control_log_.acknowledge(a.control);
    else
      early_ack_ = std::max(early_ack_, a.control);
  }
  {
    // Bulk frames enter the log before they are written.
    std::lock_guard lock(bulk_log_mutex_);
    if (!bulk_log_.acknowledge(a.bulk)) return false;
    borrowing_.store(bulk_log_.borrowing(), std::memory_order_release);
  }
  bulk_acked_cv_.notify_all();
  return true;
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
    // Before anybody can hear of this completion: no replayed frame may read
    // the memory of a write it lets the application reuse.
    settle_borrowed(e && e->queue ? e->queue->id : 0, c.command, c.status);
    const bool hooked = static_cast<bool>(hook);
    if (hooked) {
      if (c.status < 0) hook(c.status);  // outside the lock: it posts to other servers
      hook = nullptr;                    // and lets go of what it held
      retire_hooks(1);
    }
    // A failure the server reports: the log names it once per kind. (A
    // hooked one is passed on: the commands that wait for it fail, and
    // their own reports name them.)
    if (c.status < 0 && !hooked)
      report_failed_command({name_, session_label()}, c.status, e ? e->command_type : 0, c.command,
                            e && e->queue ? e->queue->id : 0);
    if (e == nullptr) continue;  // a command nobody observes: only the log tells
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
    case message_id::ack: {
      protocol::ack a;
      const char* error = "";
      if (!protocol::decode_payload(frame.payload, frame.header.payload_size, a, error)) {
        why = std::string("malformed ack: ") + error;
        return false;
      }
      if (!on_ack(a)) {
        why = "ack of bulk frames never sent";
        return false;
      }
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
      ssize_t n = control_->try_read_some(area, size);
      if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return n;
    } while (std::chrono::steady_clock::now() < deadline && waiters_.load(std::memory_order_relaxed) > 0);
  }
  return control_->read_some(area, size);
}

bool connection::read_control_stream(std::string& why) {
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
      if (frame.header.message_id != static_cast<uint16_t>(protocol::message_id::ack))
        received_control_.fetch_add(1, std::memory_order_release);
    }
    // The server keeps what it sent until the client says it has it.
    if (received_control_.load(std::memory_order_relaxed) - acked_control_.load(std::memory_order_relaxed) >= 128)
      request_ack();
  }
}

void connection::control_reader_loop() {
  name_this_thread(thread_name("rd", where_.to_string()));
  do {
    serve_session();
    fail_outstanding();
    // A server that lost the session (it restarted, or the grace period
    // passed) is usable again in a new one; the old one's objects are not.
  } while (!stopping_ && start_new_session());
}

void connection::serve_session() {
  for (;;) {
    std::string why;
    const bool intact = read_control_stream(why);
    if (stopping_ || ended_) break;
    if (!intact) {
      end_session(why);
      break;
    }
    if (grace_ms_ == 0) {
      end_session(why + " (the server keeps no detached sessions)");
      break;
    }
    go_offline(why);
    if (!reconnect()) break;
  }
}

void connection::fail_outstanding() {
  ended_ = true;
  alive_ = false;
  // The bulk reader may be writing into an application buffer: wait for it to
  // stop before failing the events that own those buffers.
  {
    std::lock_guard lock(fd_mutex_);
    shut(bulk_);
  }
  if (bulk_reader_.joinable()) bulk_reader_.join();
  if (!stopping_) notify_availability(false);
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
  {
    std::lock_guard lock(requests_mutex_);
  }
  requests_cv_.notify_all();
  {
    std::lock_guard lock(bulk_log_mutex_);
  }
  bulk_acked_cv_.notify_all();
  out_cv_.notify_all();
  wake_online_waiters();
}

bool connection::start_new_session() {
  if (writer_.joinable()) writer_.join();  // it stops when the session ends
  auto pause = std::chrono::milliseconds(5);
  for (;;) {
    {
      std::unique_lock lock(stop_mutex_);
      if (stop_cv_.wait_for(lock, pause, [&] { return stopping_.load(); })) return false;
    }
    pause = std::min(pause * 2, std::chrono::milliseconds(1000));
    std::string error;
    {
      std::lock_guard lock(session_mutex_);
      session_ = {};
      secret_ = {};
    }
    stream_ptr control, bulk;
    protocol::session_state state;
    if (connect_streams(control, bulk, state, error) != handshake_result::ok) continue;
    {
      std::scoped_lock locks(send_mutex_, log_mutex_, bulk_send_mutex_, bulk_log_mutex_, out_mutex_);
      // Nothing of the old session carries over: what was posted for it
      // names objects the new one does not have.
      out_.clear();
      out_frames_ = 0;
      posted_ = 0;
      ack_due_ = false;
      control_log_ = protocol::replay_log{};
      early_ack_ = 0;
      bulk_log_ = bulk_log{};
      borrowing_ = false;
      received_control_ = 0;
      received_bulk_ = 0;
      acked_control_ = 0;
      acked_bulk_ = 0;
      grace_ms_ = state.grace_ms;
      {
        std::lock_guard lock(fd_mutex_);
        control_ = std::move(control);
        bulk_ = std::move(bulk);
        generation_.fetch_add(1, std::memory_order_acq_rel);
      }
      forget_window();
      // The new epoch first: a waiter of the old session that has not seen
      // it end must not take the new one for its own.
      epoch_.fetch_add(1, std::memory_order_acq_rel);
      ended_ = false;
      alive_ = true;
    }
    FERRY_WARN("net", "%s: new session opened; objects of the lost one stay unavailable", name_.c_str());
    writer_ = std::thread([this] { writer_loop(); });
    bulk_reader_ = std::thread([this, fd = bulk_.get(), g = generation_.load()] { bulk_reader_loop(fd, g); });
    wake_online_waiters();
    notify_availability(true);
    return true;
  }
}

void connection::bulk_reader_loop(stream* fd, uint64_t generation) {
  name_this_thread(thread_name("bulk", where_.to_string()));
  for (;;) {
    uint8_t head[protocol::bulk_head_size];
    if (!read_exact(fd, head, sizeof head)) break;
    bulk_busy_.store(1, std::memory_order_release);
    struct not_busy {
      std::atomic<int>& flag;
      ~not_busy() { flag.store(0, std::memory_order_release); }
    } busy_until_done{bulk_busy_};
    // Decoded and checked as the daemon checks what clients send: a hostile
    // or broken server must not place a chunk outside its read.
    protocol::bulk_data prefix;
    uint64_t chunk = 0;
    std::string why;
    if (!protocol::load_bulk_head(head, prefix, chunk, why)) {
      end_session("malformed bulk frame: " + why);
      return;
    }
    uint8_t* destination = nullptr;
    {
      std::lock_guard lock(tracked_mutex_);
      auto it = transfers_.find(prefix.transfer);
      if (it == transfers_.end()) {
        why = "bulk data for unknown transfer " + std::to_string(prefix.transfer);
      } else if (prefix.total > it->second.size) {
        // A content-size buffer's read may bring fewer bytes than were asked
        // for, never more.
        why = "bulk data of " + std::to_string(prefix.total) + " bytes for a read of " +
              std::to_string(it->second.size) + " (transfer " + std::to_string(prefix.transfer) + ")";
      } else if (it->second.received > prefix.total || chunk > prefix.total - it->second.received) {
        why = "bulk data beyond the " + std::to_string(prefix.total) + " bytes of transfer " +
              std::to_string(prefix.transfer);
      } else {
        // load_bulk_head checked offset + chunk <= total without overflow.
        destination = it->second.destination + prefix.offset;
        it->second.size = prefix.total;
      }
    }
    if (destination == nullptr) {
      end_session(why);
      return;
    }
    // A chunk cut in the middle is not counted: it comes again whole.
    if (chunk != 0 && !read_exact(fd, destination, chunk)) break;
    event* done = nullptr;
    {
      std::lock_guard lock(tracked_mutex_);
      received_bulk_.fetch_add(1, std::memory_order_release);
      auto it = transfers_.find(prefix.transfer);
      if (it != transfers_.end() && (it->second.received += chunk) == it->second.size) {
        done = it->second.owner;
        transfers_.erase(it);
      }
    }
    if (done) {
      request_ack();  // the server keeps the staging of the read until then
      event_part_done(done, CL_COMPLETE, nullptr);
      release_internal(done);  // the reference expect_data() took
    }
  }
  if (!stopping_) broken(generation, "bulk stream closed");
}

}  // namespace ferry::client
