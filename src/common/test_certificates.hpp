// Tests only: a throw-away certificate authority and a server certificate
// signed by it, written as PEM files, for TLS tests on 127.0.0.1. Header-only
// so that unit and integration tests can both include it.
#pragma once

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>
#include <string>

namespace ferry::tls_testing {

enum class certificate_validity { current, expired };

struct test_pki {
  std::string ca_cert;      // the CA's certificate (what clients trust)
  std::string server_cert;  // the server's, for 127.0.0.1 and localhost
  std::string server_key;
};

namespace detail {

struct pkey_free {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct x509_free {
  void operator()(X509* x) const { X509_free(x); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_free>;
using x509_ptr = std::unique_ptr<X509, x509_free>;

inline bool add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

inline x509_ptr make_certificate(EVP_PKEY* key, const char* common_name, X509* issuer, EVP_PKEY* issuer_key,
                                 long serial, long not_before_s, long not_after_s, bool is_ca) {
  x509_ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), not_before_s);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), not_after_s);
  X509_set_pubkey(cert.get(), key);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(cert.get()), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  X509* signer = issuer ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  bool ok = is_ca ? add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE") &&
                        add_extension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign")
                  : add_extension(cert.get(), signer, NID_basic_constraints, "CA:FALSE") &&
                        add_extension(cert.get(), signer, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
  if (!ok || X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) == 0) return nullptr;
  return cert;
}

template <class Write>
bool write_pem(const std::string& path, Write&& write) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (!file) return false;
  bool ok = write(file) == 1;
  return std::fclose(file) == 0 && ok;
}

}  // namespace detail

/// Writes ca.pem, server.pem and server-key.pem into `dir`. An expired
/// server certificate ended a day ago; a current one is valid for a day.
inline bool make_test_pki(const std::string& dir, certificate_validity validity, test_pki& out) {
  using namespace detail;
  constexpr long day = 24 * 3600;
  pkey_ptr ca_key(EVP_EC_gen("P-256"));
  pkey_ptr server_key(EVP_EC_gen("P-256"));
  if (!ca_key || !server_key) return false;
  x509_ptr ca = make_certificate(ca_key.get(), "Ferry test CA", nullptr, nullptr, 1, -2 * day, 2 * day, true);
  if (!ca) return false;
  const bool expired = validity == certificate_validity::expired;
  x509_ptr server = make_certificate(server_key.get(), "127.0.0.1", ca.get(), ca_key.get(), 2,
                                     expired ? -2 * day : -3600, expired ? -day : day, false);
  if (!server) return false;
  out = {dir + "/ca.pem", dir + "/server.pem", dir + "/server-key.pem"};
  return write_pem(out.ca_cert, [&](FILE* f) { return PEM_write_X509(f, ca.get()); }) &&
         write_pem(out.server_cert, [&](FILE* f) { return PEM_write_X509(f, server.get()); }) &&
         write_pem(out.server_key, [&](FILE* f) {
           return PEM_write_PrivateKey(f, server_key.get(), nullptr, nullptr, 0, nullptr, nullptr);
         });
}

}  // namespace ferry::tls_testing
