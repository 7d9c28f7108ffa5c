// A minimal protocol client for the daemon's unit tests: speaks hello, sends
// messages, collects completions, replies, printf output and bulk data.
// Test-only (header-only, included by *.test.cpp).
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/socket.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/version.hpp"

namespace ferry::server::testing {

namespace p = protocol;

inline unique_fd connect_loopback(uint16_t port) {
  endpoint where;
  where.host = "127.0.0.1";
  where.port = port;
  std::string error;
  return connect_endpoint(where, 5000, error);
}

/// A command's header: reported when done (`notify`) unless told otherwise.
inline p::command_header header(p::object_id command, p::object_id queue, uint32_t flags = p::notify,
                                std::vector<p::object_id> wait = {}) {
  p::command_header h;
  h.command = command;
  h.queue = queue;
  h.wait_list.assign(wait.begin(), wait.end());
  h.flags = flags;
  return h;
}

/// A buffer kernel argument.
inline p::kernel_arg mem_arg(uint32_t index, p::object_id buffer) {
  return p::kernel_arg{index, p::kernel_arg_kind::mem, sizeof(void*), {}, buffer};
}

inline p::hello make_hello(p::stream_kind stream, const p::session_token& session = {},
                           const p::session_token& secret = {}, const p::session_token& link = {}) {
  return p::make_hello(stream, session, secret, "server-test", link);
}

/// One bulk_data frame: `size` bytes at `data`, which are [offset, offset +
/// size) of transfer `transfer` of `total` bytes.
inline std::vector<uint8_t> bulk_frame(uint64_t transfer, uint64_t offset, uint64_t total, const void* data,
                                       uint64_t size) {
  std::vector<uint8_t> frame(p::frame_header_size);
  p::writer w(frame);
  p::encode_value(w, p::bulk_data{transfer, offset, total});
  frame.insert(frame.end(), static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + size);
  p::frame_header h{static_cast<uint32_t>(frame.size() - p::frame_header_size),
                    static_cast<uint16_t>(p::message_id::bulk_data), 0};
  p::store_header(frame.data(), h);
  return frame;
}

/// One connection with a frame reader.
class connection {
 public:
  connection() : assembler_(p::max_control_payload) {}
  explicit connection(unique_fd fd) : fd_(std::move(fd)), assembler_(p::max_control_payload) {}

  bool valid() const { return fd_.valid(); }
  int fd() const { return fd_.get(); }
  void reset() { fd_.reset(); }

  bool send_raw(const void* data, size_t size) { return write_all(fd_.get(), data, size); }
  template <class T>
  bool send(const T& message) {
    std::vector<uint8_t> out;
    p::append_frame(out, message);
    return send_raw(out.data(), out.size());
  }

  /// The next whole frame, waiting up to `timeout_ms`. False on timeout, EOF or error.
  bool next(p::frame_header& header, std::vector<uint8_t>& payload, int timeout_ms = 20000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      p::frame_view frame;
      std::string why;
      auto r = assembler_.next(frame, why);
      if (r == p::frame_assembler::result::error) return false;
      if (r == p::frame_assembler::result::frame) {
        header = frame.header;
        payload.assign(frame.payload, frame.payload + frame.header.payload_size);
        return true;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd pfd{fd_.get(), POLLIN, 0};
      if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) return false;
      size_t available = 0;
      uint8_t* area = assembler_.write_area(64 * 1024, available);
      ssize_t n = ::recv(fd_.get(), area, available, 0);
      if (n <= 0) {
        eof_ = true;
        return false;
      }
      assembler_.commit(static_cast<size_t>(n));
    }
  }

  template <class T>
  std::optional<T> expect(int timeout_ms = 20000) {
    p::frame_header header;
    std::vector<uint8_t> payload;
    // The server's acks (and lane acks) ride ahead of its answers; they are skipped unless asked for.
    do {
      if (!next(header, payload, timeout_ms)) return std::nullopt;
    } while ((header.message_id == static_cast<uint16_t>(p::message_id::ack) && !std::is_same_v<T, p::ack>) ||
             (header.message_id == static_cast<uint16_t>(p::message_id::lane_ack) && !std::is_same_v<T, p::lane_ack>));
    if (header.message_id != static_cast<uint16_t>(p::message_traits<T>::id)) return std::nullopt;
    T message;
    const char* error = "";
    if (!p::decode_payload(payload.data(), payload.size(), message, error)) return std::nullopt;
    return message;
  }

  /// Waits until the peer closes the connection (true) or `timeout_ms` passes.
  bool closed_by_peer(int timeout_ms = 20000) {
    p::frame_header header;
    std::vector<uint8_t> payload;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      if (!next(header, payload, 100) && eof_) return true;
    }
    return false;
  }

 private:
  unique_fd fd_;
  p::frame_assembler assembler_;
  bool eof_ = false;
};

/// A whole session: control + bulk connections, and what came back on them.
class client {
 public:
  bool open(uint16_t port, bool with_bulk = true) {
    control = connection(connect_loopback(port));
    if (!control.valid() || !control.send(make_hello(p::stream_kind::control))) return false;
    auto w = control.expect<p::welcome>();
    if (!w) return false;
    welcome = *w;
    auto s = control.expect<p::session_state>();
    if (!s) return false;
    state = *s;
    if (!with_bulk) return true;
    bulk = connection(connect_loopback(port));
    if (!bulk.valid() || !bulk.send(make_hello(p::stream_kind::bulk, welcome.session, welcome.secret))) return false;
    return bulk.expect<p::welcome>().has_value();
  }

  template <class T>
  bool send(const T& message) {
    return control.send(message);
  }

  /// Sends `size` bytes of `data` as transfer `transfer` in chunks of `chunk` bytes.
  bool send_bulk(uint64_t transfer, const void* data, uint64_t size, uint64_t chunk = 1 << 20) {
    uint64_t offset = 0;
    do {
      uint64_t n = std::min(chunk, size - offset);
      std::vector<uint8_t> frame = bulk_frame(transfer, offset, size, static_cast<const uint8_t*>(data) + offset, n);
      if (!bulk.send_raw(frame.data(), frame.size())) return false;
      offset += n;
    } while (offset < size);
    return true;
  }

  /// Connects bulk lane `lane` of the session (version 11): its welcome and
  /// session_state, or the refusal in `refusal`; then says it has received
  /// `received` of the lane's frames (the client's first frame on a lane).
  /// Empty on anything else.
  std::optional<p::session_state> open_lane(uint16_t port, uint32_t lane, connection& to,
                                            std::optional<p::refused>* refusal = nullptr, uint64_t received = 0) {
    return open_lane(port, p::lane_token(lane), to, refusal, received);
  }
  std::optional<p::session_state> open_lane(uint16_t port, const p::session_token& link, connection& to,
                                            std::optional<p::refused>* refusal = nullptr, uint64_t received = 0) {
    to = connection(connect_loopback(port));
    if (!to.valid() || !to.send(make_hello(p::stream_kind::bulk, welcome.session, welcome.secret, link)))
      return std::nullopt;
    p::frame_header header;
    std::vector<uint8_t> payload;
    if (!to.next(header, payload)) return std::nullopt;
    const char* error = "";
    if (header.message_id == static_cast<uint16_t>(p::message_id::refused)) {
      p::refused r;
      if (refusal && p::decode_payload(payload.data(), payload.size(), r, error)) *refusal = r;
      return std::nullopt;
    }
    if (header.message_id != static_cast<uint16_t>(p::message_id::welcome)) return std::nullopt;
    auto state = to.expect<p::session_state>();
    if (state && !to.send(p::ack{0, received})) return std::nullopt;
    return state;
  }

  /// Reads control frames until `done` holds; false on timeout or close.
  template <class Done>
  bool pump_until(Done&& done, int timeout_ms = 20000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!done()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      p::frame_header header;
      std::vector<uint8_t> payload;
      if (!control.next(header, payload, static_cast<int>(left.count()))) return false;
      const char* error = "";
      if (header.message_id == static_cast<uint16_t>(p::message_id::completions)) {
        p::completions c;
        if (!p::decode_payload(payload.data(), payload.size(), c, error)) return false;
        ++completion_frames;
        for (auto& e : c.entries) {
          completions[e.command] = e;
          completion_order.push_back(e.command);
        }
      } else if (header.message_id == static_cast<uint16_t>(p::message_id::printf_output)) {
        p::printf_output out;
        if (!p::decode_payload(payload.data(), payload.size(), out, error)) return false;
        printf_text.append(out.text.begin(), out.text.end());
        printf_seen_at.push_back(completion_order.size());
      } else if (header.message_id == static_cast<uint16_t>(p::message_id::ack)) {
        p::ack a;
        if (!p::decode_payload(payload.data(), payload.size(), a, error)) return false;
        last_ack = a;
      } else if (header.message_id == static_cast<uint16_t>(p::message_id::lane_ack)) {
        p::lane_ack a;
        if (!p::decode_payload(payload.data(), payload.size(), a, error)) return false;
        last_lane_ack = a;
      } else {
        replies.emplace_back(header.message_id, std::move(payload));
      }
    }
    return true;
  }

  std::optional<p::completion> wait_completion(p::object_id command, int timeout_ms = 20000) {
    if (!pump_until([&] { return completions.count(command) != 0; }, timeout_ms)) return std::nullopt;
    return completions[command];
  }

  template <class T>
  std::optional<T> wait_reply(int timeout_ms = 20000) {
    uint16_t id = static_cast<uint16_t>(p::message_traits<T>::id);
    auto has = [&] {
      for (auto& r : replies)
        if (r.first == id) return true;
      return false;
    };
    if (!pump_until(has, timeout_ms)) return std::nullopt;
    for (auto it = replies.begin(); it != replies.end(); ++it) {
      if (it->first != id) continue;
      T message;
      const char* error = "";
      bool ok = p::decode_payload(it->second.data(), it->second.size(), message, error);
      replies.erase(it);
      if (!ok) return std::nullopt;
      return message;
    }
    return std::nullopt;
  }

  /// Reads bulk frames until transfer `transfer` is complete.
  std::optional<std::vector<uint8_t>> wait_bulk(uint64_t transfer, int timeout_ms = 20000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      auto it = bulk_data.find(transfer);
      if (it != bulk_data.end() && bulk_received[transfer] == it->second.size()) return it->second;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      p::frame_header header;
      std::vector<uint8_t> payload;
      if (!bulk.next(header, payload, static_cast<int>(left.count()))) return std::nullopt;
      if (header.message_id != static_cast<uint16_t>(p::message_id::bulk_data) ||
          payload.size() < p::bulk_prefix_size)
        return std::nullopt;
      p::bulk_data prefix;
      const char* error = "";
      if (!p::decode_payload(payload.data(), p::bulk_prefix_size, prefix, error)) return std::nullopt;
      auto& data = bulk_data[prefix.transfer];
      data.resize(prefix.total);
      size_t chunk = payload.size() - p::bulk_prefix_size;
      if (prefix.offset + chunk > prefix.total) return std::nullopt;
      std::memcpy(data.data() + prefix.offset, payload.data() + p::bulk_prefix_size, chunk);
      bulk_received[prefix.transfer] += chunk;
    }
  }

  connection control;
  connection bulk;
  p::welcome welcome;
  p::session_state state;
  p::ack last_ack;  // the server's latest
  p::lane_ack last_lane_ack;  // the server's latest
  std::map<p::object_id, p::completion> completions;
  std::vector<p::object_id> completion_order;
  size_t completion_frames = 0;
  std::string printf_text;
  std::vector<size_t> printf_seen_at;  // completions received before each printf frame
  std::vector<std::pair<uint16_t, std::vector<uint8_t>>> replies;
  std::map<uint64_t, std::vector<uint8_t>> bulk_data;
  std::map<uint64_t, uint64_t> bulk_received;
};

}  // namespace ferry::server::testing
