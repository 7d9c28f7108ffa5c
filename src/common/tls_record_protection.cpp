// Record protection for connections handed over to a worker process, which
// never holds the private key (tls_record_protection.hpp; no kTLS on this
// kernel). Written from RFC 8446: the section of each rule is beside it.
#include "common/tls_record_protection.hpp"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include <cstring>
#include <string_view>

namespace ferry::tls {

namespace {

struct suite_algorithms {
  const char* cipher;
  const char* digest;
  size_t key_size;
};

bool algorithms_of(cipher_suite suite, suite_algorithms& out) {
  switch (suite) {
    case cipher_suite::aes_128_gcm_sha256: out = {"AES-128-GCM", "SHA256", 16}; return true;
    case cipher_suite::aes_256_gcm_sha384: out = {"AES-256-GCM", "SHA384", 32}; return true;
    case cipher_suite::chacha20_poly1305_sha256: out = {"ChaCha20-Poly1305", "SHA256", 32}; return true;
  }
  return false;
}

// HKDF-Expand-Label(Secret, Label, "", Length) (7.1): HKDF-Expand with the
// info HkdfLabel = uint16 length, opaque label<7..255> = "tls13 " + Label,
// opaque context<0..255> (empty for the traffic keys of 7.3).
bool expand_label(const char* digest, const wiped_bytes& secret, std::string_view label, uint8_t* out, size_t size) {
  constexpr std::string_view prefix = "tls13 ";
  uint8_t info[2 + 1 + 255 + 1];
  const size_t label_size = prefix.size() + label.size();
  if (label_size > 255 || size > 0xffff) return false;
  info[0] = static_cast<uint8_t>(size >> 8);
  info[1] = static_cast<uint8_t>(size);
  info[2] = static_cast<uint8_t>(label_size);
  std::memcpy(info + 3, prefix.data(), prefix.size());
  std::memcpy(info + 3 + prefix.size(), label.data(), label.size());
  info[3 + label_size] = 0;  // the empty context
  const size_t info_size = 3 + label_size + 1;

  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  EVP_KDF_CTX* ctx = kdf ? EVP_KDF_CTX_new(kdf) : nullptr;
  EVP_KDF_free(kdf);
  if (!ctx) return false;
  int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, const_cast<char*>(digest), 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<uint8_t*>(secret.data()), secret.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, info_size),
      OSSL_PARAM_construct_end(),
  };
  const bool ok = EVP_KDF_derive(ctx, out, size, params) == 1;
  EVP_KDF_CTX_free(ctx);
  return ok;
}

}  // namespace

std::unique_ptr<record_protection> record_protection::derive(cipher_suite suite, const wiped_bytes& secret,
                                                             uint64_t sequence, direction way, std::string& error) {
  suite_algorithms algorithms;
  if (!algorithms_of(suite, algorithms) || secret.size() != secret_size(suite)) {
    error = "TLS handover: unknown cipher suite, or a secret of the wrong size";
    return nullptr;
  }
  std::unique_ptr<record_protection> made(new record_protection(EVP_CIPHER_CTX_new(), sequence));
  // 7.3: [sender]_write_key = HKDF-Expand-Label(Secret, "key", "", key_length)
  //      [sender]_write_iv  = HKDF-Expand-Label(Secret, "iv", "", iv_length)
  std::array<uint8_t, 32> key{};
  bool ok = made->ctx_ && expand_label(algorithms.digest, secret, "key", key.data(), algorithms.key_size) &&
            expand_label(algorithms.digest, secret, "iv", made->iv_.data(), made->iv_.size());
  EVP_CIPHER* cipher = ok ? EVP_CIPHER_fetch(nullptr, algorithms.cipher, nullptr) : nullptr;
  // Both AEADs take a 12-byte nonce by default, the size of the IV.
  ok = cipher && EVP_CipherInit_ex(made->ctx_, cipher, nullptr, key.data(), nullptr, way == direction::seal) == 1;
  EVP_CIPHER_free(cipher);
  wipe(key.data(), key.size());
  if (!ok) {
    error = "TLS handover: cannot set up " + std::string(algorithms.cipher);
    return nullptr;
  }
  return made;
}

record_protection::~record_protection() {
  EVP_CIPHER_CTX_free(ctx_);  // wipes the key schedule
  wipe(iv_.data(), iv_.size());
}

bool record_protection::next_nonce(uint8_t* nonce) {
  // 5.3: a sequence number must never wrap; this one would (after 2^64 records).
  if (sequence_ == UINT64_MAX) return false;
  // 5.3: the 64-bit sequence number in network byte order, left-padded with
  // zeros to the IV's length, XORed with the IV.
  std::memcpy(nonce, iv_.data(), iv_.size());
  for (size_t i = 0; i < 8; ++i) nonce[iv_.size() - 1 - i] ^= static_cast<uint8_t>(sequence_ >> (8 * i));
  ++sequence_;
  return true;
}

bool record_protection::seal(uint8_t type, const uint8_t* content, size_t size, uint8_t* out) {
  uint8_t nonce[12];
  if (size > max_plaintext || !next_nonce(nonce)) return false;
  // 5.2: TLSCiphertext: opaque_type application_data, legacy_record_version
  // 0x0303, the length of encrypted_record; that header is the additional
  // data. TLSInnerPlaintext: the content, then its real type (no padding).
  const size_t body = size + 1 + tag_size;
  out[0] = type_application_data;
  out[1] = 0x03;
  out[2] = 0x03;
  out[3] = static_cast<uint8_t>(body >> 8);
  out[4] = static_cast<uint8_t>(body);
  uint8_t* encrypted = out + header_size;
  int n = 0;
  bool ok = EVP_CipherInit_ex(ctx_, nullptr, nullptr, nullptr, nonce, -1) == 1 &&
            EVP_CipherUpdate(ctx_, nullptr, &n, out, header_size) == 1;
  ok = ok && (size == 0 || EVP_CipherUpdate(ctx_, encrypted, &n, content, static_cast<int>(size)) == 1);
  ok = ok && EVP_CipherUpdate(ctx_, encrypted + size, &n, &type, 1) == 1 &&
       EVP_CipherFinal_ex(ctx_, encrypted + size + 1, &n) == 1 &&
       EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_GET_TAG, tag_size, encrypted + size + 1) == 1;
  return ok;
}

bool record_protection::open(uint8_t* record, size_t body_size) {
  uint8_t nonce[12];
  if (body_size < tag_size || body_size > max_body || !next_nonce(nonce)) return false;
  const size_t size = body_size - tag_size;
  uint8_t* body = record + header_size;
  int n = 0;
  bool ok = EVP_CipherInit_ex(ctx_, nullptr, nullptr, nullptr, nonce, -1) == 1 &&
            EVP_CipherUpdate(ctx_, nullptr, &n, record, header_size) == 1;
  ok = ok && (size == 0 || EVP_CipherUpdate(ctx_, body, &n, body, static_cast<int>(size)) == 1);
  ok = ok && EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_SET_TAG, tag_size, body + size) == 1 &&
       EVP_CipherFinal_ex(ctx_, body + size, &n) == 1;
  return ok;
}

}  // namespace ferry::tls
