#include "server/daemon/handshake.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"
#include "protocol/auth.hpp"
#include "protocol/codec.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/frame.hpp"
#include "protocol/version.hpp"

namespace ferry::server {

namespace p = protocol;

size_t hello_reader::wanted() const {
  return have_header_ ? payload_.size() - payload_got_ : sizeof header_ - header_got_;
}

hello_reader::state hello_reader::take(const uint8_t* data, size_t size, size_t& used, std::string& why) {
  used = 0;
  while (used < size || (have_header_ && wanted() == 0)) {
    if (!have_header_) {
      size_t n = std::min(size - used, sizeof header_ - header_got_);
      std::memcpy(header_ + header_got_, data + used, n);
      header_got_ += n;
      used += n;
      if (header_got_ < sizeof header_) return state::need_more;
      p::frame_header h = p::load_header(header_);
      const std::string expected = p::message_name(static_cast<uint16_t>(expected_));
      if (h.message_id != static_cast<uint16_t>(expected_)) {
        const char* name = p::message_name(h.message_id);
        why = (expected_ == p::message_id::hello ? "first frame is " : "the answer to the challenge is ") +
              (name ? std::string(name) : "message " + std::to_string(h.message_id)) + ", not " + expected;
        return state::failed;
      }
      if (h.flags != 0) {
        why = expected + " frame has reserved flags " + std::to_string(h.flags);
        return state::failed;
      }
      if (h.payload_size > p::message_limit(h.message_id)) {
        why = expected + " of " + std::to_string(h.payload_size) + " bytes is over its limit of " +
              std::to_string(p::message_limit(h.message_id));
        return state::failed;
      }
      payload_.resize(h.payload_size);
      have_header_ = true;
      continue;
    }
    size_t n = std::min(size - used, payload_.size() - payload_got_);
    if (n) std::memcpy(payload_.data() + payload_got_, data + used, n);
    payload_got_ += n;
    used += n;
    if (payload_got_ < payload_.size()) return state::need_more;
    const char* error = "";
    bool decoded = expected_ == p::message_id::hello ? p::decode_payload(payload_.data(), payload_.size(), hello_, error)
                                                      : p::decode_payload(payload_.data(), payload_.size(), proof_, error);
    if (!decoded) {
      why = std::string("malformed ") + p::message_name(static_cast<uint16_t>(expected_)) + ": " + error;
      return state::failed;
    }
    return state::done;
  }
  return state::need_more;
}

hello_reader::state hello_reader::feed(const uint8_t*& data, size_t& size, std::string& why) {
  size_t used = 0;
  state s = take(data, size, used, why);
  data += used;
  size -= used;
  return s;
}

hello_reader::state hello_reader::read_from(stream& s, std::string& why) {
  uint8_t buffer[4096 + 8];
  for (;;) {
    size_t want = std::min(wanted(), sizeof buffer);
    if (want == 0) {
      size_t used;
      return take(buffer, 0, used, why);
    }
    ssize_t n = s.try_read_some(buffer, want);
    if (n == 0) {
      const std::string expected = p::message_name(static_cast<uint16_t>(expected_));
      why = (header_got_ == 0 ? "closed before " : "closed inside ") + expected;
      return state::failed;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return state::need_more;
      if (s.tls()) {
        why = "TLS: " + s.tls()->last_error();
        return state::failed;
      }
      why = std::string("receive failed: ") + std::strerror(errno);
      return state::failed;
    }
    size_t used = 0;
    state s = take(buffer, static_cast<size_t>(n), used, why);
    if (s != state::need_more) return s;
  }
}

bool is_zero(const p::session_token& token) {
  return std::all_of(token.begin(), token.end(), [](uint8_t b) { return b == 0; });
}

hello_verdict check_hello(const p::hello& hello) {
  hello_verdict v;
  auto refuse = [&](refusal code, std::string reason) {
    v.refusal = p::refused{static_cast<int32_t>(code), std::move(reason)};
    return v;
  };
  if (hello.magic != p::magic) return refuse(refusal::bad_magic, "bad magic: not a Ferry client");
  v.version = p::negotiate_version(hello.min_version, hello.max_version);
  if (v.version == 0) {
    return refuse(refusal::no_common_version,
                  "no common protocol version: the server speaks " + std::to_string(p::min_version) + ".." +
                      std::to_string(p::max_version) + ", the client " + std::to_string(hello.min_version) + ".." +
                      std::to_string(hello.max_version));
  }
  switch (hello.stream) {
    case p::stream_kind::control: break;  // a session id: a resumption
    case p::stream_kind::bulk: {
      if (is_zero(hello.session)) return refuse(refusal::unknown_session, "a bulk stream must name its session");
      uint32_t lane = 0;
      if (!p::lane_of(hello.link, lane))
        return refuse(refusal::no_such_lane, "a bulk stream's link is no bulk lane number below " +
                                                 std::to_string(p::max_bulk_lanes));
      if (lane != 0 && v.version < p::bulk_lanes_version)
        return refuse(refusal::no_such_lane, "bulk lanes need protocol version " +
                                                 std::to_string(p::bulk_lanes_version) + " or later");
      break;
    }
    case p::stream_kind::peer:
      if (is_zero(hello.session)) return refuse(refusal::unknown_session, "a peer link must name its session");
      break;
    default:
      return refuse(refusal::unsupported_stream,
                    "unknown stream kind " + std::to_string(static_cast<int>(hello.stream)));
  }
  v.accepted = true;
  return v;
}

void send_refusal(stream& s, const std::string& peer, const p::refused& why) {
  FERRY_WARN("server", "refusing %s: %s", peer.c_str(), why.reason.c_str());
  std::vector<uint8_t> frame;
  p::append_frame(frame, why);
  s.write_all(frame.data(), frame.size());
}

bool check_proof(const std::string& token, const p::nonce& server_nonce, const p::proof& client,
                 const std::array<uint8_t, 32>& binding, p::proof& answer, p::refused& why) {
  const p::proof nothing{};
  if (client == nothing) {
    why = {static_cast<int32_t>(refusal::not_authenticated), "this daemon requires a token and the client has none"};
    return false;
  }
  if (!p::macs_equal(client.proof_mac, p::auth_mac(token, p::auth_role::client, server_nonce, client.client_nonce,
                                                   binding))) {
    why = {static_cast<int32_t>(refusal::not_authenticated), "wrong token"};
    return false;
  }
  answer.client_nonce = client.client_nonce;
  answer.proof_mac = p::auth_mac(token, p::auth_role::server, server_nonce, client.client_nonce, binding);
  return true;
}

bool tokens_equal(const p::session_token& a, const p::session_token& b) {
  volatile uint8_t difference = 0;
  for (size_t i = 0; i < a.size(); ++i) difference = difference | static_cast<uint8_t>(a[i] ^ b[i]);
  return difference == 0;
}

bool random_token(p::session_token& out) { return p::random_bytes(out.data(), out.size()); }

}  // namespace ferry::server
