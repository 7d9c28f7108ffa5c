// For tests of a connection's parts: a completion_sink that records what is
// done to its events (which are fakes: net/ never looks inside an event),
// the parts of one connection wired together over socket pairs, whose other
// ends play the server, and a fake daemon on a Unix socket that plays the
// handshakes of the connections the client opens.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/net/bulk_receiver.hpp"
#include "client/net/bulk_sender.hpp"
#include "client/net/completion_sink.hpp"
#include "client/net/control_channel.hpp"
#include "client/net/event_tracker.hpp"
#include "client/net/link_state.hpp"
#include "client/net/resumer.hpp"
#include "common/test_stream_pair.hpp"
#include "protocol/bulk_head.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/frame.hpp"
#include "protocol/version.hpp"

namespace ferry::client::testing {

/// What a fake event stands for, and what happened to it.
struct fake_event {
  explicit fake_event(protocol::object_id id) : command(id) {}
  protocol::object_id command = 0;
  protocol::object_id queue = 0;
  int holds = 0;
  int releases = 0;
  std::vector<cl_int> parts;     // the statuses of the parts that arrived
  cl_int completed_with = 1;     // 1: never completed by force
  bool has_profiling = false;
};

class recording_sink final : public completion_sink {
 public:
  /// The handle the parts see for `e`.
  static event* handle(fake_event& e) { return reinterpret_cast<event*>(&e); }

  event_facts facts(event* e) override { return {of(e).command, of(e).queue, CL_COMMAND_NDRANGE_KERNEL}; }
  bool finished(event* e) override {
    std::lock_guard lock(mutex_);
    return !of(e).parts.empty() || of(e).completed_with != 1;
  }
  void hold(event* e) override {
    std::lock_guard lock(mutex_);
    ++of(e).holds;
  }
  void release(event* e) override {
    std::lock_guard lock(mutex_);
    ++of(e).releases;
  }
  void part_done(event* e, cl_int status, const std::array<cl_ulong, 4>* profiling) override {
    std::lock_guard lock(mutex_);
    of(e).parts.push_back(status);
    of(e).has_profiling = profiling != nullptr;
  }
  void complete(event* e, cl_int status) override {
    std::lock_guard lock(mutex_);
    of(e).completed_with = status;
  }
  cl_int explain(cl_int code, const std::string& reason) override {
    std::lock_guard lock(mutex_);
    explanations.push_back(reason);
    return code;
  }
  void failed_reply(const server_label&, cl_int code, std::string_view, std::string_view,
                    protocol::object_id) override {
    std::lock_guard lock(mutex_);
    failed_replies.push_back(code);
  }
  void failed_command(const server_label&, cl_int code, cl_command_type, protocol::object_id command,
                      protocol::object_id) override {
    std::lock_guard lock(mutex_);
    failed_commands[command] = code;
  }

  /// Reads `e` under the sink's lock (a reader thread may write it).
  fake_event snapshot(const fake_event& e) const {
    std::lock_guard lock(mutex_);
    return e;
  }
  /// Waits (a few seconds at most) until `e` has `count` parts.
  bool wait_for_parts(const fake_event& e, size_t count) const;
  /// Waits (a few seconds at most) until `e` was completed by force.
  bool wait_for_completion(const fake_event& e) const;

  std::vector<std::string> explanations;
  std::vector<cl_int> failed_replies;
  std::map<protocol::object_id, cl_int> failed_commands;

 private:
  static fake_event& of(event* e) { return *reinterpret_cast<fake_event*>(e); }
  mutable std::mutex mutex_;
};

/// Whether `ready()` comes true within a few seconds (it is asked often).
template <class Ready>
bool eventually(Ready&& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

inline bool recording_sink::wait_for_parts(const fake_event& e, size_t count) const {
  return eventually([&] { return snapshot(e).parts.size() >= count; });
}

inline bool recording_sink::wait_for_completion(const fake_event& e) const {
  return eventually([&] { return snapshot(e).completed_with != 1; });
}

/// The server's end of a session: the other ends of its control and bulk
/// streams, and of its bulk lanes (lane k at k - 1).
struct server_end {
  stream_ptr control;
  stream_ptr bulk;
  std::vector<stream_ptr> lanes;

  template <class T>
  void send(const T& message) {
    std::vector<uint8_t> out;
    protocol::append_frame(out, message);
    ASSERT_TRUE(control->write_all(out.data(), out.size()));
  }
  /// Reads the next control frame, which must be a `T`.
  template <class T>
  T receive() {
    protocol::frame_header header;
    std::vector<uint8_t> payload;
    std::string error;
    T message;
    EXPECT_TRUE(protocol::read_frame(*control, header, payload, 1 << 20, error)) << error;
    EXPECT_EQ(header.message_id, static_cast<uint16_t>(protocol::message_traits<T>::id));
    const char* why = "";
    EXPECT_TRUE(protocol::decode_payload(payload.data(), payload.size(), message, why)) << why;
    return message;
  }
  /// Reads the next bulk frame: its prefix, and its bytes into `bytes`.
  protocol::bulk_data receive_bulk(std::vector<uint8_t>& bytes) { return receive_bulk_on(*bulk, bytes); }
  /// The same on `from` (the bulk stream or a lane).
  static protocol::bulk_data receive_bulk_on(stream& from, std::vector<uint8_t>& bytes) {
    uint8_t head[protocol::bulk_head_size];
    protocol::bulk_data prefix;
    uint64_t chunk = 0;
    std::string why;
    bytes.clear();
    if (!from.read_exact(head, sizeof head)) {
      ADD_FAILURE() << "no bulk frame";
      return prefix;
    }
    EXPECT_TRUE(protocol::load_bulk_head(head, prefix, chunk, why)) << why;
    bytes.resize(chunk);
    EXPECT_TRUE(chunk == 0 || from.read_exact(bytes.data(), chunk));
    return prefix;
  }
  /// Whether the bulk stream holds nothing to read now.
  bool bulk_is_quiet() {
    uint8_t byte;
    return bulk->try_read_some(&byte, 1) < 0 && errno == EAGAIN;
  }
};

/// A connected pair of streams: `ours` for the parts, `theirs` for the test.
inline void connect_pair(stream_ptr& ours, stream_ptr& theirs) {
  test_stream_pair pair;
  ASSERT_TRUE(make_test_stream_pair(pair));
  ours = pair.server;
  theirs = plain_stream(std::move(pair.client));
}

/// The session a fake_daemon admits the client into.
inline const protocol::session_token session_id{1, 2, 3, 4};
inline const protocol::session_token session_secret{5, 6, 7, 8};

/// Listens where the client connects and plays the daemon's handshakes.
class fake_daemon {
 public:
  fake_daemon() {
    static std::atomic<int> count{0};
    path_ = "/tmp/ferry-connection-test-" + std::to_string(::getpid()) + "-" + std::to_string(count++);
    std::string error;
    listener_ = listen_unix(path_, error);
    EXPECT_TRUE(listener_.valid()) << error;
  }
  ~fake_daemon() { close(); }

  endpoint where() const { return {endpoint::kind::unix_socket, path_, 0}; }

  /// Admits the two streams of the session: welcome, and on the control
  /// stream `state` (what the daemon has of the client's frames). Returns
  /// the hello of the control stream.
  protocol::hello admit(server_end& to, const protocol::session_state& state) {
    to.control = accept_stream();
    protocol::hello hello = receive_hello(*to.control);
    answer(*to.control, welcome());
    answer(*to.control, state);
    to.bulk = accept_stream();
    receive_hello(*to.bulk);
    answer(*to.bulk, welcome());
    return hello;
  }
  /// Refuses the next control stream with `why` (by default as a daemon
  /// that knows nothing of the session).
  void refuse(const protocol::refused& why = {3, "unknown session"}) {
    stream_ptr s = accept_stream();
    receive_hello(*s);
    answer(*s, why);
  }
  /// Stops listening: connections are refused from now on.
  void close() {
    listener_ = unique_fd();
    ::unlink(path_.c_str());
  }

 private:
  stream_ptr accept_stream() {
    int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    EXPECT_GE(fd, 0);
    return plain_stream(unique_fd(fd));
  }
  static protocol::welcome welcome() {
    return {protocol::max_version, session_id, session_secret, protocol::session_token{9}};
  }
  static protocol::hello receive_hello(stream& s) {
    protocol::frame_header header;
    std::vector<uint8_t> payload;
    std::string error;
    protocol::hello hello;
    const char* why = "";
    EXPECT_TRUE(protocol::read_frame(s, header, payload, 4096, error)) << error;
    EXPECT_TRUE(protocol::decode_payload(payload.data(), payload.size(), hello, why)) << why;
    return hello;
  }
  template <class T>
  static void answer(stream& s, const T& message) {
    std::vector<uint8_t> out;
    protocol::append_frame(out, message);
    EXPECT_TRUE(s.write_all(out.data(), out.size()));
  }

  std::string path_;
  unique_fd listener_;
};

/// One connection's parts, built as connection builds them, online over
/// fresh streams (no thread runs until a test starts one).
struct connection_parts {
  /// Parts whose reconnections go to `where` (a fake_daemon's), or nowhere.
  explicit connection_parts(const endpoint& where = {endpoint::kind::unix_socket, "test", 0}) : link(where, {}, sink) {
    link.grace_ms = 1000;
    link.alive = true;
  }
  ~connection_parts() { session.stop(); }

  recording_sink sink;
  link_state link;
  bulk_sender sender{link};
  /// What the receiver's offer of a read window gives (tests set it; none by default).
  std::function<std::unique_ptr<bulk_window>(uint64_t)> read_window_offer;
  bulk_receiver receiver{link, [this] { channel.request_ack(); },
                         [this](uint64_t generation) {
                           return read_window_offer ? read_window_offer(generation) : nullptr;
                         }};
  event_tracker tracker{link, sender, receiver};
  control_channel channel{link, tracker, sender};
  resumer session{link, channel, sender, receiver, tracker};

  /// Makes a new pair of streams current, with `lanes` bulk connections in
  /// all (the bulk stream and lanes - 1 lanes); returns the server's ends.
  server_end attach(uint32_t lanes = 1) {
    server_end theirs;
    stream_ptr control, bulk;
    connect_pair(control, theirs.control);
    connect_pair(bulk, theirs.bulk);
    std::vector<stream_ptr> ours(lanes - 1);
    theirs.lanes.resize(lanes - 1);
    for (uint32_t i = 0; i + 1 < lanes; ++i) connect_pair(ours[i], theirs.lanes[i]);
    link.replace_streams(std::move(control), std::move(bulk), std::move(ours));
    return theirs;
  }

  /// Hands `message` to the control channel as if it came from the server.
  template <class T>
  bool deliver(const T& message, std::string& why) {
    std::vector<uint8_t> bytes;
    protocol::append_frame(bytes, message);
    protocol::frame_view frame;
    frame.header = protocol::load_header(bytes.data());
    frame.payload = bytes.data() + protocol::frame_header_size;
    return channel.on_frame(frame, why);
  }
};

}  // namespace ferry::client::testing
