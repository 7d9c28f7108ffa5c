// The stream of a connection handed over by the main process: the socket,
// and, for TLS, the connection's state (common/tls_handoff.hpp) so that the
// worker goes on with the same TLS connection without the daemon's key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/stream.hpp"

namespace ferry::server {

/// Null with a reason when the TLS state cannot be taken over.
stream_ptr adopted_stream(unique_fd fd, const std::vector<uint8_t>& tls_state, std::string& error);

/// The state to send with a stream's socket (empty for a plain stream); false
/// with a reason when a TLS connection cannot be handed over.
bool handoff_state(stream& s, std::vector<uint8_t>& out, std::string& error);

}  // namespace ferry::server
