#include "server/worker/adopted_stream.hpp"

namespace ferry::server {

stream_ptr adopted_stream(unique_fd fd, const std::vector<uint8_t>& tls_state, std::string& error) {
  if (tls_state.empty()) return plain_stream(std::move(fd));
  error = "TLS connections cannot be handed to a worker yet";
  return nullptr;
}

bool handoff_state(stream& s, std::vector<uint8_t>& out, std::string& error) {
  out.clear();
  if (!s.encrypted()) return true;
  error = "TLS connections cannot be handed to a worker yet";
  return false;
}

}  // namespace ferry::server
