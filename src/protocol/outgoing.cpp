#include "protocol/outgoing.hpp"

#include "common/bulk_window.hpp"
#include "protocol/auth.hpp"
#include "protocol/codec.hpp"
#include "protocol/dispatch.hpp"

namespace ferry::protocol {

namespace {

template <class Offer>
bool send_offer_with_memfd(int socket, const Offer& offer, int memfd) {
  std::vector<uint8_t> frame;
  append_frame(frame, offer);
  return write_all(socket, frame.data(), frame_header_size) &&
         write_with_fd(socket, frame.data() + frame_header_size, frame.size() - frame_header_size, memfd);
}

}  // namespace

bool send_window_offer(int socket, const window_offer& offer, int memfd) {
  return send_offer_with_memfd(socket, offer, memfd);
}

bool send_read_window_offer(int socket, const read_window_offer& offer, int memfd) {
  return send_offer_with_memfd(socket, offer, memfd);
}

stream_ptr open_stream(const endpoint& where, const credentials& who, int timeout_ms, std::string& error) {
  unique_fd fd = connect_endpoint(where, timeout_ms, error);
  if (!fd.valid()) return nullptr;
  if (!who.tls || where.type != endpoint::kind::tcp) return plain_stream(std::move(fd));
  auto channel = tls::channel::connect(*who.tls, fd.get(), where.host, timeout_ms, error);
  if (!channel) return nullptr;
  return std::make_shared<stream>(std::move(fd), std::move(channel));
}

bool read_frame(stream& s, frame_header& header, std::vector<uint8_t>& payload, uint32_t limit, std::string& error) {
  uint8_t raw[frame_header_size];
  if (!s.read_exact(raw, sizeof raw)) {
    error = errno == EAGAIN || errno == EWOULDBLOCK ? "no answer in time" : "the connection closed";
    return false;
  }
  header = load_header(raw);
  if (header.payload_size > limit) {
    error = "an answer of " + std::to_string(header.payload_size) + " bytes, over its limit (is this a ferryd port?)";
    return false;
  }
  payload.resize(header.payload_size);
  if (!payload.empty() && !s.read_exact(payload.data(), payload.size())) {
    error = "the connection closed inside an answer";
    return false;
  }
  return true;
}

bool exchange_hello(stream& s, const hello& h, const credentials& who, int timeout_ms, frame_header& header,
                    std::vector<uint8_t>& payload, std::string& error) {
  std::vector<uint8_t> out;
  append_frame(out, h);
  if (!s.write_all(out.data(), out.size())) {
    error = "the connection closed during the handshake";
    return false;
  }
  s.set_receive_timeout(timeout_ms);
  if (!read_frame(s, header, payload, 4096, error)) {
    error = "no answer to hello: " + error + " (is this a ferryd port?)";
    return false;
  }
  if (header.message_id != static_cast<uint16_t>(message_id::challenge)) return true;

  const char* why = "";
  challenge c;
  if (!decode_payload(payload.data(), payload.size(), c, why)) {
    error = std::string("malformed challenge: ") + why;
    return false;
  }
  if (!who.has_token()) {
    error = "the server requires a token: set FERRY_TOKEN_FILE (or 'token-file PATH' in the config file)";
    // Told, so that the daemon logs why instead of a bare close.
    out.clear();
    append_frame(out, proof{});
    s.write_all(out.data(), out.size());
    return false;
  }
  channel_binding binding = s.tls() ? s.tls()->binding() : channel_binding{};
  proof mine;
  if (!random_nonce(mine.client_nonce)) {
    error = "no randomness for a nonce";
    return false;
  }
  mine.proof_mac = who.prove(auth_role::client, c.server_nonce, mine.client_nonce, binding);
  out.clear();
  append_frame(out, mine);
  if (!s.write_all(out.data(), out.size())) {
    error = "the connection closed during authentication";
    return false;
  }
  if (!read_frame(s, header, payload, 4096, error)) {
    error = "no answer to the proof: " + error;
    return false;
  }
  if (header.message_id != static_cast<uint16_t>(message_id::proof)) return true;  // refused, surely
  proof theirs;
  if (!decode_payload(payload.data(), payload.size(), theirs, why) || theirs.client_nonce != mine.client_nonce ||
      !macs_equal(theirs.proof_mac,
                  who.prove(auth_role::server, c.server_nonce, mine.client_nonce, binding))) {
    error = "the server could not prove that it holds the token: not the daemon it claims to be";
    return false;
  }
  if (!read_frame(s, header, payload, 4096, error)) {
    error = "no answer after authentication: " + error;
    return false;
  }
  return true;
}

}  // namespace ferry::protocol
