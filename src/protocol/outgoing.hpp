// Opening a connection to a daemon, as libferry and a daemon's peer links
// both do: connect, TLS when configured, hello, and the answer to a
// challenge when the daemon asks for a token.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <functional>

#include "common/socket.hpp"
#include "common/stream.hpp"
#include "common/tls.hpp"
#include "protocol/auth.hpp"
#include "protocol/frame.hpp"
#include "protocol/messages.hpp"

namespace ferry::protocol {

/// What a connecting side shows: the token (empty: none) and the TLS
/// context that checks daemons' certificates (null: plain connections).
struct credentials {
  std::string token;
  std::shared_ptr<tls::context> tls;
  /// Makes the proofs instead of `token` where the token must stay out of
  /// this process: a session worker asks its daemon's main process.
  std::function<mac(auth_role, const nonce& server_nonce, const nonce& client_nonce, const channel_binding&)> prover{};

  bool has_token() const { return !token.empty() || prover != nullptr; }
  /// The proof `role` gives for these nonces.
  mac prove(auth_role role, const nonce& server_nonce, const nonce& client_nonce,
            const channel_binding& binding) const {
    return prover ? prover(role, server_nonce, client_nonce, binding)
                  : auth_mac(token, role, server_nonce, client_nonce, binding);
  }
};

/// Sends window_offer on a bulk stream's Unix socket: the header alone, then
/// the payload with `memfd` (SCM_RIGHTS). The daemon reads frame headers
/// without room for descriptors, which would drop one sent with them.
bool send_window_offer(int socket, const window_offer& offer, int memfd);
/// The same for read_window_offer (version 8).
bool send_read_window_offer(int socket, const read_window_offer& offer, int memfd);

/// Connects to `where`, with TLS over TCP when `who.tls` is set (Unix
/// sockets stay plain: they never leave the host). Null with a reason on
/// failure.
stream_ptr open_stream(const endpoint& where, const credentials& who, int timeout_ms, std::string& error);

/// Reads one whole frame of at most `limit` payload bytes (the stream's
/// receive timeout applies). False with a reason.
bool read_frame(stream& s, frame_header& header, std::vector<uint8_t>& payload, uint32_t limit, std::string& error);

/// Sends `h` and reads the daemon's answer to it, proving the token first
/// when the daemon challenges. True with the answer (a welcome or a refused
/// frame) in header/payload; false with a reason (no answer, no token for a
/// daemon that wants one, a daemon that cannot prove the token). Leaves a
/// receive timeout of `timeout_ms` in force.
bool exchange_hello(stream& s, const hello& h, const credentials& who, int timeout_ms, frame_header& header,
                    std::vector<uint8_t>& payload, std::string& error);

}  // namespace ferry::protocol
