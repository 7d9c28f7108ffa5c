// The TLS 1.3 record layer (RFC 8446 sections 5.1-5.5 and 7.1-7.3) of a
// connection handed over to a worker process (tls_handoff.hpp).
//
// The worker holds neither the private key nor the token, only the
// application traffic secrets, and this kernel has no kTLS that could take
// them: so the worker frames, protects and checks the records itself
// (tls_record_protection.hpp: libcrypto's AEAD ciphers and HKDF), buffering
// what it receives as OpenSSL's read-ahead did. No handshake messages are possible
// after the handover: a key update (which the Ferry client never asks for)
// ends the connection with a clear error.
//
// Threads: one reader and any number of writers at once. Reading and
// writing have their own locks; each write_all() writes its bytes as one
// unbroken run of records.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "common/tls_handoff.hpp"
#include "common/tls_record_protection.hpp"

namespace ferry::tls {

/// Bytes of ciphertext read at once, by OpenSSL during the handshake and by the
/// record layer after it: several records, so that bulk data comes in with one
/// system call per 8 records.
inline constexpr size_t read_buffer_bytes = 128 * 1024;

/// The connection after the handover: what tls::channel runs on then.
class record_layer {
 public:
  static std::unique_ptr<record_layer> make(handoff_state state, int fd, std::string& error);
  ~record_layer();
  record_layer(const record_layer&) = delete;
  record_layer& operator=(const record_layer&) = delete;

  enum class wait_mode { wait, no_wait };
  /// As channel::read_some.
  ssize_t read_some(void* data, size_t size, wait_mode mode, int timeout_ms);
  /// As channel::write_all.
  bool write_all(const void* data, size_t size);

  cipher_suite suite() const { return suite_; }
  const std::array<uint8_t, 32>& binding() const { return binding_; }
  std::string last_error() const;

 private:
  enum class read_state { open, closed, failed };
  record_layer(int fd, cipher_suite suite) : fd_(fd), suite_(suite) {}

  // Under read_mutex_.
  size_t take_plaintext(uint8_t* out, size_t size);
  bool open_next_record();
  enum class received { some, nothing_yet, ended };  // ended: read_state_ changed
  received receive();
  enum class alert : uint8_t;
  void fail_reading(const std::string& why, alert to_send);

  bool flush(const uint8_t* data, size_t size);  // under write_mutex_
  void set_error(const std::string& why);

  const int fd_;
  const cipher_suite suite_;
  std::array<uint8_t, 32> binding_{};

  std::mutex read_mutex_;  // guards everything up to write_mutex_
  std::unique_ptr<record_protection> reader_;
  read_state read_state_ = read_state::open;
  wiped_bytes carried_;  // plaintext OpenSSL had decrypted before the handover
  size_t carried_at_ = 0;
  wiped_bytes in_;                         // received records, decrypted in place
  size_t plain_at_ = 0, plain_end_ = 0;    // plaintext not yet read, in in_
  size_t cipher_at_ = 0, cipher_end_ = 0;  // records not yet decrypted, in in_

  std::mutex write_mutex_;  // guards writer_, out_ and write_failed_
  std::unique_ptr<record_protection> writer_;
  wiped_bytes out_;  // sealed records on their way out
  bool write_failed_ = false;
  std::atomic<bool> reading_failed_{false};  // the connection is broken (6.2): no more writes

  mutable std::mutex error_mutex_;  // guards error_
  std::string error_;
};

}  // namespace ferry::tls
