#include "client/net/resumer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "client/net/wake_all.hpp"
#include "common/log.hpp"
#include "common/thread_name.hpp"

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

cl_int failure_after_refusal(int32_t code) {
  // The worker was stopped for using more than the daemon allows: the
  // application ran out of resources, and may try again asking for less.
  if (code == static_cast<int32_t>(refusal_code::worker_over_quota)) return CL_OUT_OF_RESOURCES;
  // Lost with its worker, unknown to the server (restarted, grace period
  // passed), or any other refusal: the device is gone for this session.
  return CL_DEVICE_NOT_AVAILABLE;
}

resumer::resumer(link_state& link, control_channel& channel, bulk_sender& sender, bulk_receiver& receiver,
                 event_tracker& tracker)
    : link_(link), channel_(channel), sender_(sender), receiver_(receiver), tracker_(tracker) {
  link_.on_end([this] { wake_pauses(); });
}

bool resumer::connect(std::string& error) {
  stream_ptr control, bulk;
  protocol::session_state state;
  int32_t refusal = 0;  // the error names it: connection::open fails either way
  if (connect_streams(control, bulk, state, error, refusal) != handshake_result::ok) return false;
  link_.replace_streams(std::move(control), std::move(bulk));
  link_.grace_ms = state.grace_ms;
  link_.alive = true;
  return true;
}

void resumer::start() {
  channel_.start_writer();
  start_bulk_reader();
  control_reader_ = std::thread([this] { control_reader_loop(); });
}

void resumer::start_bulk_reader() { receiver_.start(link_.bulk(), link_.generation()); }

void resumer::stop() {
  link_.stopping = true;
  link_.shut_streams(link_state::generation_change::keep);
  wake_all(stop_mutex_, stop_cv_);
  online_cv_.notify_all();
  channel_.wake_writer();
  // The control reader first: after a session ended it joins the writer
  // itself (start_new_session), and two threads must never join one.
  if (control_reader_.joinable()) control_reader_.join();
  channel_.join_writer();
  receiver_.join();
}

bool resumer::wait_online() {
  if (link_.alive) return true;  // clFinish asks every time: no lock on the common path
  std::unique_lock lock(stop_mutex_);
  online_cv_.wait(lock, [&] { return link_.alive || link_.ended || link_.stopping; });
  return link_.alive.load();
}

void resumer::wake_online_waiters() { wake_all(stop_mutex_, online_cv_); }

void resumer::wake_pauses() {
  wake_all(stop_mutex_, stop_cv_);
  wake_online_waiters();
}

void resumer::set_availability_listener(std::function<void(bool)> listener) {
  std::lock_guard lock(listener_mutex_);
  availability_listener_ = std::move(listener);
}

void resumer::notify_availability(bool available) {
  // Only the control reader calls this, so the listener hears each change
  // once and in order.
  std::lock_guard lock(listener_mutex_);
  if (reported_available_ == available) return;
  reported_available_ = available;
  if (availability_listener_) availability_listener_(available);
}

resumer::handshake_result resumer::handshake(stream& s, protocol::stream_kind kind, std::string& error,
                                             protocol::session_state* state, int32_t& refusal) {
  refusal = 0;
  protocol::hello h = protocol::make_hello(kind, link_.session(), link_.secret(), "libferry");
  protocol::frame_header header;
  std::vector<uint8_t> payload;
  // A peer that accepts but never answers must not hang the application.
  const int timeout = connect_timeout_ms();
  if (!protocol::exchange_hello(s, h, link_.credentials(), timeout, header, payload, error))
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
    if (!protocol::decode_payload(payload.data(), payload.size(), r, why)) {
      error = std::string("refused by server, in a malformed refused frame: ") + why;
      return handshake_result::refused;
    }
    refusal = r.code;
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
    link_.set_session(w.session, w.secret, w.peer_key);
    link_.version.store(w.version, std::memory_order_release);
  }
  return handshake_result::ok;
}

resumer::handshake_result resumer::connect_streams(stream_ptr& control, stream_ptr& bulk,
                                                   protocol::session_state& state, std::string& error,
                                                   int32_t& refusal) {
  refusal = 0;
  control = connect_stream(link_.where(), link_.credentials(), error);
  if (!control) return handshake_result::failed;
  if (handshake_result r = handshake(*control, protocol::stream_kind::control, error, &state, refusal);
      r != handshake_result::ok)
    return r;
  bulk = connect_stream(link_.where(), link_.credentials(), error);
  // The bulk stream's refusal is not the session's: the next attempt's
  // control stream says what became of the session.
  int32_t bulk_refusal = 0;
  if (!bulk || handshake(*bulk, protocol::stream_kind::bulk, error, nullptr, bulk_refusal) != handshake_result::ok) {
    error = "bulk stream: " + error;
    return handshake_result::failed;
  }
  return handshake_result::ok;
}

void resumer::control_reader_loop() {
  name_this_thread(thread_name("rd", link_.name()));
  do {
    serve_session();
    fail_outstanding();
    // A server that lost the session (it restarted, or the grace period
    // passed) is usable again in a new one; the old one's objects are not.
  } while (!link_.stopping && start_new_session());
}

void resumer::serve_session() {
  for (;;) {
    std::string why;
    const bool intact = channel_.read_stream(why);
    if (link_.stopping || link_.ended) break;
    if (!intact) {
      link_.end_session(why, CL_DEVICE_NOT_AVAILABLE);
      break;
    }
    if (link_.grace_ms == 0) {
      link_.end_session(why + " (the server keeps no detached sessions)", CL_DEVICE_NOT_AVAILABLE);
      break;
    }
    go_offline(why);
    if (!reconnect()) break;
  }
}

void resumer::go_offline(const std::string& why) {
  link_.alive.store(false, std::memory_order_release);
  FERRY_WARN("net", "connection to %s lost: %s; resuming the session (grace period %u ms)", link_.name().c_str(),
             why.c_str(), link_.grace_ms);
  link_.shut_streams(link_state::generation_change::next);
  receiver_.join();
  notify_availability(false);
}

bool resumer::reconnect() {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::milliseconds(link_.grace_ms);
  auto pause = std::chrono::milliseconds(5);
  const auto longest = max_reconnect_pause();
  std::string error;
  int32_t refusal = 0;
  for (;;) {
    if (link_.stopping || link_.ended) return false;
    switch (try_resume(error, refusal)) {
      case resume_result::resumed:
        FERRY_INFO("net", "session with %s resumed", link_.name().c_str());
        return true;
      case resume_result::refused:
        // Code 13: the server stopped the session's worker for exceeding a
        // limit, and the session's work fails with CL_OUT_OF_RESOURCES.
        link_.end_session("cannot resume: " + error, failure_after_refusal(refusal));
        return false;
      case resume_result::failed:
        break;
    }
    const auto now = clock::now();
    if (now >= deadline) {
      link_.end_session("not back within the grace period of " + std::to_string(link_.grace_ms) +
                        " ms (last try: " + error + ")",
                        CL_DEVICE_NOT_AVAILABLE);
      return false;
    }
    std::unique_lock lock(stop_mutex_);
    stop_cv_.wait_until(lock, std::min(now + pause, deadline), [&] { return link_.stopping || link_.ended; });
    pause = std::min(pause * 2, longest);
  }
}

resumer::resume_result resumer::try_resume(std::string& error, int32_t& refusal) {
  stream_ptr control, bulk;
  protocol::session_state state;
  switch (connect_streams(control, bulk, state, error, refusal)) {
    case handshake_result::ok: break;
    case handshake_result::refused: return resume_result::refused;
    case handshake_result::failed: return resume_result::failed;
  }
  return resume_streams(std::move(control), std::move(bulk), state, error);
}

resumer::resume_result resumer::resume_streams(stream_ptr control, stream_ptr bulk,
                                               const protocol::session_state& state, std::string& error) {
  {
    // Nothing else writes meanwhile: what is flushed or sent from now on
    // follows what goes again here.
    std::scoped_lock locks(channel_.send_mutex_, channel_.log_mutex_, sender_.send_mutex_, sender_.log_mutex_);
    protocol::replay_log& control_log = channel_.control_log_;
    bulk_log& bulk_log = sender_.log_;
    if (state.control > control_log.sent() || state.bulk > bulk_log.sent()) {
      error = "the server claims frames never sent";
      return resume_result::refused;
    }
    if (state.control < control_log.acknowledged() || state.bulk < bulk_log.acknowledged()) {
      error = "the server lost frames it had acknowledged";
      return resume_result::refused;
    }
    control_log.acknowledge(state.control);
    bulk_log.acknowledge(state.bulk);
    // The server waits for the client's ack first, then sends again what
    // follows it.
    const uint64_t received_control = link_.received_control.load();
    const uint64_t received_bulk = link_.received_bulk.load();
    std::vector<uint8_t> out;
    protocol::append_frame(out, protocol::ack{received_control, received_bulk});
    control_log.replay(state.control, out);
    if (!write_all(control.get(), out.data(), out.size())) {
      error = "connection closed while resuming";
      return resume_result::failed;
    }
    link_.acked_control = received_control;
    link_.acked_bulk = received_bulk;
    if (!sender_.replay_locked(state.bulk, bulk.get())) {
      error = "connection closed while resuming";
      return resume_result::failed;
    }
    link_.replace_streams(std::move(control), std::move(bulk));
    sender_.forget_window();
    link_.alive.store(true, std::memory_order_release);
    start_bulk_reader();
  }
  channel_.wake_writer();  // what was posted offline goes now
  wake_online_waiters();
  notify_availability(true);
  return resume_result::resumed;
}

void resumer::fail_outstanding() {
  link_.ended = true;
  link_.alive = false;
  // The bulk reader may be writing into an application buffer: wait for it to
  // stop before failing the events that own those buffers.
  link_.shut_bulk();
  receiver_.join();
  if (!link_.stopping) notify_availability(false);
  tracker_.fail_outstanding();
  channel_.wake_callers();
  sender_.wake_waiters();
  channel_.wake_writer();
  wake_online_waiters();
}

bool resumer::start_new_session() {
  channel_.join_writer();  // it stops when the session ends
  auto pause = std::chrono::milliseconds(5);
  for (;;) {
    {
      std::unique_lock lock(stop_mutex_);
      if (stop_cv_.wait_for(lock, pause, [&] { return link_.stopping.load(); })) return false;
    }
    pause = std::min(pause * 2, std::chrono::milliseconds(1000));
    std::string error;
    link_.forget_session();
    stream_ptr control, bulk;
    protocol::session_state state;
    int32_t refusal = 0;  // a refused new session is tried again, whatever the code
    if (connect_streams(control, bulk, state, error, refusal) != handshake_result::ok) continue;
    {
      std::scoped_lock locks(channel_.send_mutex_, channel_.log_mutex_, sender_.send_mutex_, sender_.log_mutex_,
                             channel_.out_mutex_);
      // Nothing of the old session carries over: what was posted for it
      // names objects the new one does not have.
      channel_.reset_locked();
      sender_.reset_locked();
      link_.received_control = 0;
      link_.received_bulk = 0;
      link_.acked_control = 0;
      link_.acked_bulk = 0;
      link_.grace_ms = state.grace_ms;
      link_.replace_streams(std::move(control), std::move(bulk));
      sender_.forget_window();
      // The new epoch first: a waiter of the old session that has not seen
      // it end must not take the new one for its own.
      link_.epoch.fetch_add(1, std::memory_order_acq_rel);
      link_.ended = false;
      link_.alive = true;
    }
    FERRY_WARN("net", "%s: new session opened; objects of the lost one stay unavailable", link_.name().c_str());
    channel_.start_writer();
    start_bulk_reader();
    wake_online_waiters();
    notify_availability(true);
    return true;
  }
}

}  // namespace ferry::client
