// Who may connect: a shared token, proven by challenge-response and never
// sent (docs/protocol.md, "Authentication").
//
// After the hello, a daemon that has a token sends a challenge with a fresh
// nonce; the client answers with its own nonce and
//   HMAC-SHA256(token, "ferry client" | server nonce | client nonce | binding)
// and the daemon, once satisfied, proves the token in turn with the label
// "ferry server". `binding` is 32 bytes exported from the TLS connection
// (zeros without TLS), so a proof made for one TLS connection is worthless
// on another. Fresh nonces on both sides make every proof single-use.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "protocol/messages.hpp"

namespace ferry::protocol {

/// Shortest token accepted: 16 bytes (128 bits when random).
inline constexpr size_t min_token_size = 16;

/// Reads a token file: its contents without trailing whitespace. Fails with
/// a reason for an unreadable, empty or too short file; `warning` says when
/// others than the owner may read it.
bool load_token(const std::string& path, std::string& token, std::string& warning, std::string& error);

/// `size` random bytes from the kernel (getrandom); false when it has none to give.
bool random_bytes(uint8_t* out, size_t size);
/// 32 random bytes for a challenge or a proof.
bool random_nonce(nonce& out);

enum class auth_role { client, server };
using channel_binding = std::array<uint8_t, 32>;

/// The proof `role` gives of holding `token` for these nonces.
mac auth_mac(const std::string& token, auth_role role, const nonce& server_nonce, const nonce& client_nonce,
             const channel_binding& binding);

/// Constant-time comparison.
bool macs_equal(const mac& a, const mac& b);

}  // namespace ferry::protocol
