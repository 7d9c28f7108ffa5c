// One direction of TLS 1.3 record protection (RFC 8446 5.2-5.3, 7.1-7.3),
// for the record layer of a connection handed over to a worker process
// (tls_records.hpp). The worker never holds the private key, only the
// traffic secrets, and this kernel has no kTLS to give them to: so the
// traffic keys are derived and the records sealed and opened here, with
// libcrypto's HKDF and AEAD ciphers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/tls_handoff.hpp"

typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;

namespace ferry::tls {

/// One direction's record protection: an AEAD key, the IV and the sequence number.
class record_protection {
 public:
  static constexpr uint8_t type_application_data = 23;  // the content type of sealed records (5.1)
  static constexpr size_t header_size = 5;
  static constexpr size_t tag_size = 16;
  static constexpr size_t max_plaintext = 16384;                // 2^14 (5.1)
  static constexpr size_t max_body = max_plaintext + 256;       // 2^14 + 256 (5.2)
  static constexpr size_t max_record = header_size + max_body;  // on the wire
  /// A sealed record's size on the wire.
  static constexpr size_t sealed_size(size_t content) { return header_size + content + 1 + tag_size; }

  enum class direction { seal, open };
  /// Derives the key and IV from the traffic secret (7.3); the next
  /// record's sequence number is `sequence`.
  static std::unique_ptr<record_protection> derive(cipher_suite suite, const wiped_bytes& secret, uint64_t sequence,
                                                   direction way, std::string& error);
  ~record_protection();
  record_protection(const record_protection&) = delete;
  record_protection& operator=(const record_protection&) = delete;

  /// Writes one record of `type` holding `size` bytes (at most
  /// max_plaintext) to `out`: header_size + size + 1 + tag_size bytes.
  bool seal(uint8_t type, const uint8_t* content, size_t size, uint8_t* out);
  /// Decrypts the record at `record` (its header, then a body of
  /// `body_size` bytes) in place: the plaintext, content type and padding
  /// then start at record + header_size, body_size - tag_size bytes long.
  /// False when it does not authenticate.
  bool open(uint8_t* record, size_t body_size);

 private:
  record_protection(EVP_CIPHER_CTX* ctx, uint64_t sequence) : ctx_(ctx), sequence_(sequence) {}
  /// The per-record nonce (5.3); false when the sequence numbers are spent.
  bool next_nonce(uint8_t* nonce);

  EVP_CIPHER_CTX* ctx_;  // holds the key
  std::array<uint8_t, 12> iv_{};
  uint64_t sequence_;
};

}  // namespace ferry::tls
