#include "client/net/resumer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>
#include <vector>

#include "client/net/wake_all.hpp"
#include "common/log.hpp"
#include "common/thread_name.hpp"
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

/// The most bulk connections the client opens with a session, its bulk
/// stream included (FERRY_BULK_LANES, 1 to protocol::max_bulk_lanes; default
/// 4; 1: no lanes). The server may grant fewer.
uint32_t wanted_bulk_lanes() {
  static const uint32_t value = [] {
    constexpr uint32_t fallback = 4;
    const char* text = std::getenv("FERRY_BULK_LANES");
    if (text == nullptr || *text == '\0') return fallback;
    char* end = nullptr;
    const unsigned long n = std::strtoul(text, &end, 10);
    if (*end != '\0' || n < 1 || n > protocol::max_bulk_lanes) {
      FERRY_WARN("net", "FERRY_BULK_LANES=%s is not a number of connections from 1 to %u; using %u", text,
                 protocol::max_bulk_lanes, fallback);
      return fallback;
    }
    return static_cast<uint32_t>(n);
  }();
  return value;
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
  stream_set streams;
  int32_t refusal = 0;  // the error names it: connection::open fails either way
  if (connect_streams(streams, error, refusal) != handshake_result::ok) return false;
  link_.replace_streams(std::move(streams.control), std::move(streams.bulk), std::move(streams.lanes));
  link_.grace_ms = streams.state.grace_ms;
  link_.alive = true;
  return true;
}

void resumer::start() {
  channel_.start_writer();
  start_bulk_reader();
  control_reader_ = std::thread([this] { control_reader_loop(); });
}

void resumer::start_bulk_reader() {
  const uint64_t generation = link_.generation();
  receiver_.start(link_.bulk(), generation);
  for (uint32_t lane = 1; lane < link_.lane_count(); ++lane) receiver_.start(link_.lane(lane), generation, lane);
}

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
                                             protocol::session_state* state, int32_t& refusal, uint32_t lane) {
  refusal = 0;
  protocol::hello h = protocol::make_hello(kind, link_.session(), link_.secret(), "libferry", protocol::lane_token(lane));
  // A control stream's welcome and a bulk lane's are followed by a session_state.
  const bool with_state = kind == protocol::stream_kind::control || lane != 0;
  protocol::frame_header header;
  std::vector<uint8_t> payload;
  // A peer that accepts but never answers must not hang the application.
  const int timeout = connect_timeout_ms();
  if (!protocol::exchange_hello(s, h, link_.credentials(), timeout, header, payload, error))
    return handshake_result::failed;
  protocol::frame_header state_header{};
  std::vector<uint8_t> state_payload;
  if (with_state && header.message_id == static_cast<uint16_t>(protocol::message_id::welcome) &&
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
  if (with_state) {
    protocol::session_state st;
    if (state_header.message_id != static_cast<uint16_t>(protocol::message_id::session_state) ||
        !protocol::decode_payload(state_payload.data(), state_payload.size(), st, why)) {
      error = "no session_state after welcome (a ferryd of another version?)";
      return handshake_result::refused;
    }
    if (state) *state = st;
  }
  if (lane != 0) {
    // A lane's first frame says what the client has of the lane's frames; the
    // server sends again what follows (its readers are joined: the count is final).
    std::vector<uint8_t> ack;
    protocol::append_frame(ack, protocol::ack{0, link_.received_lanes[lane].load(std::memory_order_acquire)});
    if (!s.write_all(ack.data(), ack.size())) {
      error = "connection closed after the welcome";
      return handshake_result::failed;
    }
  }
  if (kind == protocol::stream_kind::control) {
    link_.set_session(w.session, w.secret, w.peer_key);
    link_.version.store(w.version, std::memory_order_release);
  }
  return handshake_result::ok;
}

uint32_t resumer::lanes_to_open(uint32_t granted) const {
  if (granted < 2 || link_.version.load(std::memory_order_acquire) < protocol::bulk_lanes_version) return 1;
  // On a Unix socket the shared-memory windows already pass what one stream
  // moves; lanes are for TCP.
  if (link_.where().type == endpoint::kind::unix_socket) return 1;
  return std::min({granted, wanted_bulk_lanes(), protocol::max_bulk_lanes});
}

std::vector<std::unique_lock<std::mutex>> resumer::lock_lanes() {
  std::vector<std::unique_lock<std::mutex>> locks;
  for (uint32_t lane = 1; lane < protocol::max_bulk_lanes; ++lane) {
    locks.emplace_back(sender_.lanes_[lane]->send_mutex_);
    locks.emplace_back(sender_.lanes_[lane]->log().mutex());
  }
  return locks;
}

resumer::handshake_result resumer::connect_streams(stream_set& streams, std::string& error, int32_t& refusal) {
  refusal = 0;
  streams.control = connect_stream(link_.where(), link_.credentials(), error);
  if (!streams.control) return handshake_result::failed;
  if (handshake_result r = handshake(*streams.control, protocol::stream_kind::control, error, &streams.state, refusal);
      r != handshake_result::ok)
    return r;
  streams.bulk = connect_stream(link_.where(), link_.credentials(), error);
  // The bulk stream's refusal is not the session's: the next attempt's
  // control stream says what became of the session. So for the lanes.
  int32_t bulk_refusal = 0;
  if (!streams.bulk ||
      handshake(*streams.bulk, protocol::stream_kind::bulk, error, nullptr, bulk_refusal) != handshake_result::ok) {
    error = "bulk stream: " + error;
    return handshake_result::failed;
  }
  // The lanes connect at once, each on a thread of its own: one after the
  // other they would add a handshake each (the daemon hands every connection
  // to the session's worker) to the session's start.
  struct lane_connection {
    stream_ptr s;
    protocol::session_state state;
    std::string error;
  };
  const uint32_t lanes = lanes_to_open(streams.state.bulk_lanes);
  std::vector<std::future<lane_connection>> connecting;
  for (uint32_t lane = 1; lane < lanes; ++lane)
    connecting.push_back(std::async(std::launch::async, [this, lane] {
      lane_connection c;
      int32_t refusal = 0;
      c.s = connect_stream(link_.where(), link_.credentials(), c.error);
      if (c.s && handshake(*c.s, protocol::stream_kind::bulk, c.error, &c.state, refusal, lane) != handshake_result::ok)
        c.s.reset();
      return c;
    }));
  handshake_result result = handshake_result::ok;
  for (uint32_t lane = 1; lane < lanes; ++lane) {
    lane_connection c = connecting[lane - 1].get();
    if (!c.s && result == handshake_result::ok) {
      error = "bulk lane " + std::to_string(lane) + ": " + c.error;
      result = handshake_result::failed;
    }
    streams.lanes.push_back(std::move(c.s));
    streams.lane_states.push_back(c.state);
  }
  return result;
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
  stream_set streams;
  switch (connect_streams(streams, error, refusal)) {
    case handshake_result::ok: break;
    case handshake_result::refused: return resume_result::refused;
    case handshake_result::failed: return resume_result::failed;
  }
  return resume_streams(std::move(streams), error);
}

resumer::resume_result resumer::resume_streams(stream_set streams, std::string& error) {
  const protocol::session_state& state = streams.state;
  {
    // Nothing else writes meanwhile: what is flushed or sent from now on
    // follows what goes again here.
    std::scoped_lock locks(channel_.send_mutex_, channel_.log_mutex_, sender_.send_mutex_, sender_.log_.mutex());
    const std::vector<std::unique_lock<std::mutex>> lane_locks = lock_lanes();
    protocol::replay_log& control_log = channel_.control_log_;
    bulk_log& bulk_log = sender_.log_.log_locked();
    if (state.control > control_log.sent() || state.bulk > bulk_log.sent()) {
      error = "the server claims frames never sent";
      return resume_result::refused;
    }
    if (state.control < control_log.acknowledged() || state.bulk < bulk_log.acknowledged()) {
      error = "the server lost frames it had acknowledged";
      return resume_result::refused;
    }
    // Each lane's frames go again on that lane, so a lane with frames
    // unacknowledged must be there (the same server grants the same lanes).
    for (uint32_t lane = 1; lane < protocol::max_bulk_lanes; ++lane) {
      const client::bulk_log& log = sender_.lanes_[lane]->log().log_locked();
      if (lane > streams.lanes.size()) {
        if (log.sent() > log.acknowledged()) {
          error = "bulk lane " + std::to_string(lane) + " has frames to send again and the server took no such lane";
          return resume_result::failed;
        }
        continue;
      }
      const uint64_t has = streams.lane_states[lane - 1].bulk;
      if (has > log.sent()) {
        error = "the server claims frames never sent on bulk lane " + std::to_string(lane);
        return resume_result::refused;
      }
      if (has < log.acknowledged()) {
        error = "the server lost frames it had acknowledged on bulk lane " + std::to_string(lane);
        return resume_result::refused;
      }
    }
    control_log.acknowledge(state.control);
    bulk_log.acknowledge(state.bulk);
    for (uint32_t lane = 1; lane <= streams.lanes.size(); ++lane)
      sender_.lanes_[lane]->log().log_locked().acknowledge(streams.lane_states[lane - 1].bulk);
    // The server waits for the client's ack first, then sends again what
    // follows it.
    const uint64_t received_control = link_.received_control.load();
    const uint64_t received_bulk = link_.received_bulk.load();
    std::vector<uint8_t> out;
    protocol::append_frame(out, protocol::ack{received_control, received_bulk});
    control_log.replay(state.control, out);
    if (!write_all(streams.control.get(), out.data(), out.size())) {
      error = "connection closed while resuming";
      return resume_result::failed;
    }
    link_.acked_control = received_control;
    link_.acked_bulk = received_bulk;
    if (!sender_.log_.replay_locked(state.bulk, streams.bulk.get())) {
      error = "connection closed while resuming";
      return resume_result::failed;
    }
    for (uint32_t lane = 1; lane <= streams.lanes.size(); ++lane)
      if (!sender_.lanes_[lane]->log().replay_locked(streams.lane_states[lane - 1].bulk, streams.lanes[lane - 1].get())) {
        error = "connection closed while resuming";
        return resume_result::failed;
      }
    link_.replace_streams(std::move(streams.control), std::move(streams.bulk), std::move(streams.lanes));
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
    // The new session's lanes start from nothing: each attaches with an ack of
    // what the client has of it (connect_stream), which must not be the old
    // session's count (ferryd closed the new session for frames never sent).
    // Nothing reads or acknowledges on the old streams any more.
    for (uint32_t lane = 0; lane < protocol::max_bulk_lanes; ++lane) {
      link_.received_lanes[lane] = 0;
      link_.acked_lanes[lane] = 0;
    }
    stream_set streams;
    int32_t refusal = 0;  // a refused new session is tried again, whatever the code
    if (connect_streams(streams, error, refusal) != handshake_result::ok) continue;
    {
      std::scoped_lock locks(channel_.send_mutex_, channel_.log_mutex_, sender_.send_mutex_, sender_.log_.mutex(),
                             channel_.out_mutex_);
      const std::vector<std::unique_lock<std::mutex>> lane_locks = lock_lanes();
      // Nothing of the old session carries over: what was posted for it
      // names objects the new one does not have.
      channel_.reset_locked();
      sender_.log_.reset_locked();
      for (uint32_t lane = 1; lane < protocol::max_bulk_lanes; ++lane) sender_.lanes_[lane]->log().reset_locked();
      link_.received_control = 0;
      link_.received_bulk = 0;
      link_.acked_control = 0;
      link_.acked_bulk = 0;
      link_.grace_ms = streams.state.grace_ms;
      link_.replace_streams(std::move(streams.control), std::move(streams.bulk), std::move(streams.lanes));
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
