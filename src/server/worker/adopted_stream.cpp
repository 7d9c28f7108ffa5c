#include "server/worker/adopted_stream.hpp"

#include "common/tls_handoff.hpp"

namespace ferry::server {

stream_ptr adopted_stream(unique_fd fd, const std::vector<uint8_t>& tls_state, std::string& error) {
  if (tls_state.empty()) return plain_stream(std::move(fd));
  auto state = tls::handoff_state::decode(tls_state.data(), tls_state.size(), error);
  if (!state) {
    error = "its TLS state does not decode: " + error;
    return nullptr;
  }
  auto channel = tls::channel::adopt(std::move(*state), fd.get(), error);
  if (!channel) return nullptr;
  return std::make_shared<stream>(std::move(fd), std::move(channel));
}

bool handoff_state(stream& s, std::vector<uint8_t>& out, std::string& error) {
  out.clear();
  if (!s.encrypted()) return true;
  auto state = s.tls()->export_for_handoff(error);
  if (!state) {
    error = "its TLS connection cannot be handed to a worker: " + error;
    return false;
  }
  // The copy in `out` travels to the worker at once; the caller wipes nothing
  // else of it, so wipe this one as soon as it is sent (the pool's message).
  auto encoded = state->encode();
  out.assign(encoded.begin(), encoded.end());
  return true;
}

}  // namespace ferry::server
