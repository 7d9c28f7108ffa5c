// TLS 1.3 over Ferry's stream sockets (OpenSSL).
//
// Several threads use one connection at once (a reader and one or more
// writers), but an OpenSSL connection object is not safe for concurrent use.
// A channel therefore keeps its socket non-blocking and makes every OpenSSL
// call under a short lock; a call that must wait for the socket drops the
// lock and polls, so a reader waiting for data never holds up a writer.
// shutdown() on the socket wakes every waiting call, as for plain sockets.
//
// A server connection can be handed over to another process after its
// handshake (export_for_handoff, adopt: see tls_handoff.hpp); the adopted
// channel runs on Ferry's own record layer instead of OpenSSL's, behind the
// same interface.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/tls_handoff.hpp"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace ferry::tls {

class record_layer;

/// Initialises OpenSSL (once) without its exit-time cleanup, which would free
/// its global state under the connection threads libferry keeps until the
/// process ends. Every use of OpenSSL in Ferry calls this first.
void init_openssl();

/// Certificates and keys, loaded once and shared by every connection.
class context {
 public:
  /// A server's: its certificate chain and private key (PEM files). Fails
  /// with a reason for an unreadable file or a key that does not match.
  /// A certificate outside its validity period is loaded, and `warning`
  /// says so (clients will refuse it).
  static std::shared_ptr<context> for_server(const std::string& cert_file, const std::string& key_file,
                                             std::string& warning, std::string& error);
  /// A client's: trusts the certificates in `ca_file` (PEM), or the system's
  /// when it is empty, and checks the server's name or address.
  static std::shared_ptr<context> for_client(const std::string& ca_file, std::string& error);
  /// The same, trusting the certificates of `ca_pem` (PEM text, read by a
  /// process that may open the file: a session worker may not).
  static std::shared_ptr<context> for_client_trusting(const std::string& ca_pem, std::string& error);
  ~context();
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  bool is_server() const { return server_; }
  SSL_CTX* native() const { return ctx_; }

 private:
  context(SSL_CTX* ctx, bool server) : ctx_(ctx), server_(server) {}
  /// A client's context that checks the server's certificate, trusting none yet.
  static std::shared_ptr<context> client_checking_peers(std::string& error);
  SSL_CTX* ctx_;
  bool server_;
};

/// Whether the first bytes of a connection are a TLS handshake record. Needs
/// three bytes: a Ferry frame header never starts this way (the payload size
/// it would announce is over the hello's limit).
bool looks_like_tls(const uint8_t* bytes, size_t size);

/// One TLS connection over a connected socket (which it does not own).
class channel {
 public:
  /// Server side, after accept: handshake() then completes it step by step.
  static std::unique_ptr<channel> accept(const context& ctx, int fd, std::string& error);
  /// Client side: connects over `fd` to `host` (a name or an address, checked
  /// against the certificate), blocking up to `timeout_ms`.
  static std::unique_ptr<channel> connect(const context& ctx, int fd, const std::string& host, int timeout_ms,
                                          std::string& error);
  /// A worker's side of a handover: continues the connection `state` came
  /// from over `fd` (the same socket, passed over), without OpenSSL's
  /// connection object or the private key.
  static std::unique_ptr<channel> adopt(handoff_state state, int fd, std::string& error);
  ~channel();
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;

  enum class step { done, want_read, want_write, failed };
  /// Advances a server handshake without blocking (the acceptor polls for
  /// what it wants). `failed`: `error` says why.
  step handshake(std::string& error);

  /// Reads what is there, up to `size` bytes. `wait`: blocks until something
  /// comes (up to the receive timeout); otherwise returns -1 with errno
  /// EAGAIN when nothing is. 0 at the end of the stream, -1 on errors.
  ssize_t read_some(void* data, size_t size, bool wait);
  /// Writes everything (blocking); false when the connection is gone.
  bool write_all(const void* data, size_t size);
  /// How long a waiting read may take (milliseconds; negative: forever).
  void set_receive_timeout(int ms) { receive_timeout_ms_ = ms; }

  /// 32 bytes that only the two ends of this connection can compute (a
  /// keying-material export): binds an authentication to the connection.
  std::array<uint8_t, 32> binding() const;
  /// A server's side of a handover, after its handshake (and whatever was
  /// read and written since): what adopt() needs, including the bytes
  /// received but not yet read. Afterwards this channel neither reads nor
  /// writes: a second writer of the same keys would reuse their nonces.
  /// Refused with `error` for a client, an unfinished handshake, TLS below
  /// 1.3, after a key update, or while a record is half read.
  std::optional<handoff_state> export_for_handoff(std::string& error);

  /// What went wrong last (OpenSSL's reason), for logs.
  std::string last_error() const;
  /// "TLSv1.3 TLS_AES_128_GCM_SHA256", for logs ("... (handed over)" after adopt).
  std::string describe() const;

 private:
  channel(SSL* ssl, int fd);
  channel(std::unique_ptr<record_layer>&& records, int fd);
  bool wait_for(short events, int timeout_ms);
  ssize_t refuse_after_handover();  // under mutex_

  // One of the two: OpenSSL's connection, or (adopted) Ferry's record layer,
  // which has locks of its own.
  SSL* ssl_ = nullptr;
  std::unique_ptr<record_layer> records_;
  int fd_;
  mutable std::mutex mutex_;  // guards every use of ssl_, error_ and handed_over_
  std::string error_;
  bool handed_over_ = false;  // exported: ssl_ must not read or write again
  int receive_timeout_ms_ = -1;
};

}  // namespace ferry::tls
