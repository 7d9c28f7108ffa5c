// Handing a TLS 1.3 connection over to another process.
//
// The daemon's main process holds the TLS private key and the token; a
// session runs in a worker process of its own, which must never hold
// either. So the main process does the handshake and the authentication,
// then passes the socket (SCM_RIGHTS) together with this state: the
// connection's application traffic secrets and record sequence numbers, and
// the bytes it had already received. The worker continues the same
// connection with a record layer of Ferry's own (tls_records.hpp): this
// kernel has no kTLS to take the keys instead, and an OpenSSL connection
// object cannot be rebuilt from keys alone.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace ferry::tls {

/// Zeroes memory so that no copy of a secret outlives its use.
void wipe(void* data, size_t size);

/// An allocator whose memory is wiped before it is freed: for secrets, and
/// for application data that must not linger in freed memory either.
template <class T>
struct wiping_allocator {
  using value_type = T;
  wiping_allocator() = default;
  template <class U>
  wiping_allocator(const wiping_allocator<U>&) noexcept {}
  T* allocate(size_t n) { return std::allocator<T>{}.allocate(n); }
  void deallocate(T* p, size_t n) noexcept {
    wipe(p, n * sizeof(T));
    std::allocator<T>{}.deallocate(p, n);
  }
  friend bool operator==(const wiping_allocator&, const wiping_allocator&) { return true; }
};

using wiped_bytes = std::vector<uint8_t, wiping_allocator<uint8_t>>;

/// The TLS 1.3 cipher suites a Ferry server offers (their IANA numbers).
enum class cipher_suite : uint16_t {
  aes_128_gcm_sha256 = 0x1301,
  aes_256_gcm_sha384 = 0x1302,
  chacha20_poly1305_sha256 = 0x1303,
};

/// "TLS_AES_128_GCM_SHA256", as OpenSSL names it.
const char* cipher_suite_name(cipher_suite suite);
/// The size of the suite's hash, which is the size of its traffic secrets.
size_t secret_size(cipher_suite suite);

/// A server connection's TLS state, taken from OpenSSL after its handshake
/// (channel::export_for_handoff) and continued by channel::adopt.
struct handoff_state {
  /// Limits that decode() enforces: a state crosses a process boundary.
  /// One record's plaintext, and the server socket BIO's buffer.
  static constexpr size_t max_plaintext = 16384;
  static constexpr size_t max_ciphertext = 128 * 1024;

  cipher_suite suite = cipher_suite::aes_128_gcm_sha256;
  wiped_bytes client_secret;  // client_application_traffic_secret_0: what the server reads with
  wiped_bytes server_secret;  // server_application_traffic_secret_0: what it writes with
  uint64_t read_sequence = 0;   // records read with the client's keys so far
  uint64_t write_sequence = 0;  // records written with the server's keys so far
  std::array<uint8_t, 32> binding{};  // what channel::binding() said
  wiped_bytes plaintext;   // decrypted, not yet read by the application: comes first
  wiped_bytes ciphertext;  // received, not yet decrypted: records (the last may be cut short)

  /// For the worker. Holds the secrets: send it, then let it go (it wipes itself).
  wiped_bytes encode() const;
  /// Checks every length and value; nullopt with a reason otherwise.
  static std::optional<handoff_state> decode(const uint8_t* data, size_t size, std::string& error);
};

namespace detail {

// For tls.cpp: what an export needs is collected from the handshake on.
/// Makes a server context hand each connection's traffic secrets to its
/// tracker (no key log file is ever written).
void capture_secrets(SSL_CTX* ctx);
/// Tracks a server connection's secrets and records; false if out of memory.
bool track_for_handoff(SSL* ssl);

}  // namespace detail

}  // namespace ferry::tls
