#include "common/tls.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/tls_records.hpp"
#include "common/tls_socket_bio.hpp"

namespace ferry::tls {

namespace {

/// OpenSSL's reasons queued on this thread, joined; clears the queue.
std::string drain_errors() {
  std::string text;
  while (unsigned long code = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(code);
    if (!text.empty()) text += "; ";
    text += reason ? reason : "error " + std::to_string(code);
  }
  return text;
}

// AES-128-GCM first: as safe as the others for this use and the fastest with
// AES instructions, which every server CPU has.
constexpr const char* ciphersuites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

SSL_CTX* new_context(const SSL_METHOD* method, std::string& error) {
  SSL_CTX* ctx = SSL_CTX_new(method);
  if (!ctx) {
    error = "cannot create a TLS context: " + drain_errors();
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_ciphersuites(ctx, ciphersuites);
  // Partial writes let a writer loop over a non-blocking socket itself.
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // A connection that simply closes ends its stream: every Ferry frame says
  // its own length, so a cut one is noticed without close_notify.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  // Read whatever the socket holds, not a record header and then its body:
  // half the system calls on bulk data. What is read beyond a frame stays in
  // the channel for the stream's next reader. (Server connections read
  // ahead in their socket BIO instead: channel::accept.)
  SSL_CTX_set_read_ahead(ctx, 1);
  // A buffer of several records: bulk data then comes in with one system call
  // (and at most one wake-up) per 8 records instead of per record.
  SSL_CTX_set_default_read_buffer_len(ctx, read_buffer_bytes);
  return ctx;
}

/// "certificate expired on <date>" when `cert` is outside its validity period.
std::string validity_problem(X509* cert) {
  auto when = [](const ASN1_TIME* t) {
    BIO* bio = BIO_new(BIO_s_mem());
    ASN1_TIME_print(bio, t);
    char* data = nullptr;
    long size = BIO_get_mem_data(bio, &data);
    std::string text(data, static_cast<size_t>(size));
    BIO_free(bio);
    return text;
  };
  if (X509_cmp_current_time(X509_get0_notAfter(cert)) < 0) return "expired on " + when(X509_get0_notAfter(cert));
  if (X509_cmp_current_time(X509_get0_notBefore(cert)) > 0)
    return "is not valid before " + when(X509_get0_notBefore(cert));
  return {};
}

/// An OpenSSL connection over `fd` (non-blocking from now on).
SSL* new_connection(const context& ctx, int fd, detail::bio_buffering buffering, std::string& error) {
  ERR_clear_error();
  SSL* ssl = SSL_new(ctx.native());
  BIO* bio = ssl ? detail::new_socket_bio(fd, buffering) : nullptr;
  if (!bio) {
    error = "cannot start TLS: " + drain_errors();
    SSL_free(ssl);
    return nullptr;
  }
  SSL_set_bio(ssl, bio, bio);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return ssl;
}

}  // namespace

void init_openssl() {
  static const bool done = [] {
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
    OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_SSL_STRINGS, nullptr);
    return true;
  }();
  (void)done;
}

std::shared_ptr<context> context::for_server(const std::string& cert_file, const std::string& key_file,
                                             std::string& warning, std::string& error) {
  init_openssl();
  ERR_clear_error();
  SSL_CTX* ctx = new_context(TLS_server_method(), error);
  if (!ctx) return nullptr;
  std::shared_ptr<context> made(new context(ctx, true));
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    error = "cannot load the certificate " + cert_file + ": " + drain_errors();
    return nullptr;
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    error = "cannot load the private key " + key_file + ": " + drain_errors();
    return nullptr;
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    error = "the private key " + key_file + " does not match the certificate " + cert_file;
    return nullptr;
  }
  // Sessions are resumed by Ferry itself, never by TLS: no tickets, which
  // would also be messages a client reads outside its handshake.
  SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  // Its connections can be handed over to a session's worker process.
  detail::capture_secrets(ctx);
  if (std::string problem = validity_problem(SSL_CTX_get0_certificate(ctx)); !problem.empty())
    warning = "the certificate " + cert_file + " " + problem + ": clients will refuse it";
  return made;
}

std::shared_ptr<context> context::client_checking_peers(std::string& error) {
  init_openssl();
  ERR_clear_error();
  SSL_CTX* ctx = new_context(TLS_client_method(), error);
  if (!ctx) return nullptr;
  std::shared_ptr<context> made(new context(ctx, false));
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  return made;
}

std::shared_ptr<context> context::for_client(const std::string& ca_file, std::string& error) {
  auto made = client_checking_peers(error);
  if (!made) return nullptr;
  int loaded = ca_file.empty() ? SSL_CTX_set_default_verify_paths(made->ctx_)
                               : SSL_CTX_load_verify_locations(made->ctx_, ca_file.c_str(), nullptr);
  if (loaded != 1) {
    error = "cannot load the CA certificates " + (ca_file.empty() ? std::string("of the system") : ca_file) + ": " +
            drain_errors();
    return nullptr;
  }
  return made;
}

std::shared_ptr<context> context::for_client_trusting(const std::string& ca_pem, std::string& error) {
  auto made = client_checking_peers(error);
  if (!made) return nullptr;
  BIO* text = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
  int added = 0;
  while (X509* cert = text ? PEM_read_bio_X509(text, nullptr, nullptr, nullptr) : nullptr) {
    if (X509_STORE_add_cert(SSL_CTX_get_cert_store(made->ctx_), cert) == 1) ++added;
    X509_free(cert);
  }
  BIO_free(text);
  ERR_clear_error();  // the end of the text reads as an error
  if (added == 0) {
    error = "no CA certificate in the PEM text given";
    return nullptr;
  }
  return made;
}

context::~context() { SSL_CTX_free(ctx_); }

bool looks_like_tls(const uint8_t* bytes, size_t size) {
  // Content type 22 (handshake), protocol version 3.x (x from 1 to 4).
  return size >= 3 && bytes[0] == 0x16 && bytes[1] == 0x03 && bytes[2] >= 0x01 && bytes[2] <= 0x04;
}

std::unique_ptr<channel> channel::accept(const context& ctx, int fd, std::string& error) {
  SSL* ssl = new_connection(ctx, fd, detail::bio_buffering::own_buffer, error);
  if (!ssl) return nullptr;
  // No read-ahead, for a handover: OpenSSL then reads a record at a time and
  // what it has not taken stays in the socket BIO's buffer, where an export
  // finds it (bulk data still comes in with one system call per buffer).
  // Its own buffer can then be one record's, the default.
  SSL_set_read_ahead(ssl, 0);
  SSL_set_default_read_buffer_len(ssl, 0);
  if (!detail::track_for_handoff(ssl)) {
    error = "cannot start TLS: out of memory";
    SSL_free(ssl);
    return nullptr;
  }
  SSL_set_accept_state(ssl);
  return std::unique_ptr<channel>(new channel(ssl, fd));
}

std::unique_ptr<channel> channel::connect(const context& ctx, int fd, const std::string& host, int timeout_ms,
                                          std::string& error) {
  SSL* ssl = new_connection(ctx, fd, detail::bio_buffering::none, error);
  if (!ssl) return nullptr;
  std::unique_ptr<channel> made(new channel(ssl, fd));
  // The certificate must name the host as it was configured: an address
  // (IP SAN) or a DNS name (which also goes out as SNI).
  unsigned char address[16];
  bool is_address = ::inet_pton(AF_INET, host.c_str(), address) == 1 || ::inet_pton(AF_INET6, host.c_str(), address) == 1;
  if (is_address) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  } else {
    SSL_set1_host(ssl, host.c_str());
    SSL_set_tlsext_host_name(ssl, host.c_str());
  }
  SSL_set_connect_state(ssl);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int r = SSL_do_handshake(ssl);
    if (r == 1) return made;
    int code = SSL_get_error(ssl, r);
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if ((code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) && left > 0) {
      if (!made->wait_for(code == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, left)) {
        error = "TLS handshake: no answer within " + std::to_string(timeout_ms) + " ms";
        return nullptr;
      }
      continue;
    }
    if (left <= 0) {
      error = "TLS handshake: no answer within " + std::to_string(timeout_ms) + " ms";
      return nullptr;
    }
    long verify = SSL_get_verify_result(ssl);
    std::string reasons = drain_errors();
    if (verify != X509_V_OK) {
      error = std::string("the server's certificate is refused: ") + X509_verify_cert_error_string(verify);
    } else if (code == SSL_ERROR_SYSCALL || code == SSL_ERROR_ZERO_RETURN || reasons.empty()) {
      error = "TLS handshake: the server closed the connection (does it use --tls-cert?)";
    } else {
      error = "TLS handshake failed: " + reasons;
      if (reasons.find("wrong version number") != std::string::npos ||
          reasons.find("packet length too long") != std::string::npos)
        error += " (the server does not speak TLS: is it started with --tls-cert?)";
    }
    return nullptr;
  }
}

channel::channel(SSL* ssl, int fd) : ssl_(ssl), fd_(fd) {}

channel::channel(std::unique_ptr<record_layer>&& records, int fd) : records_(std::move(records)), fd_(fd) {}

channel::~channel() { SSL_free(ssl_); }

ssize_t channel::refuse_after_handover() {
  error_ = "the connection was handed over to another process";
  errno = ECONNRESET;
  return -1;
}

bool channel::wait_for(short events, int timeout_ms) {
  pollfd p{fd_, events, 0};
  for (;;) {
    int r = ::poll(&p, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    // Hang-ups and errors count as ready: the next call reports them.
    return r > 0;
  }
}

channel::step channel::handshake(std::string& error) {
  if (records_) return step::done;  // adopted: the handshake was done before the handover
  std::lock_guard lock(mutex_);
  ERR_clear_error();
  int r = SSL_do_handshake(ssl_);
  if (r == 1) return step::done;
  int code = SSL_get_error(ssl_, r);
  if (code == SSL_ERROR_WANT_READ) return step::want_read;
  if (code == SSL_ERROR_WANT_WRITE) return step::want_write;
  std::string reasons = drain_errors();
  if (reasons.empty()) reasons = "connection closed";
  error = "TLS handshake failed: " + reasons;
  if (reasons.find("certificate") != std::string::npos && reasons.find("alert") != std::string::npos)
    error += " (the client refused this daemon's certificate)";
  return step::failed;
}

ssize_t channel::read_some(void* data, size_t size, bool wait) {
  if (records_)
    return records_->read_some(data, size, wait ? record_layer::wait_mode::wait : record_layer::wait_mode::no_wait,
                               receive_timeout_ms_);
  for (;;) {
    int code;
    {
      std::lock_guard lock(mutex_);
      if (handed_over_) return refuse_after_handover();
      ERR_clear_error();
      size_t got = 0;
      int r = SSL_read_ex(ssl_, data, size, &got);
      if (r == 1) return static_cast<ssize_t>(got);
      code = SSL_get_error(ssl_, r);
      if (code == SSL_ERROR_ZERO_RETURN) return 0;
      if (code != SSL_ERROR_WANT_READ && code != SSL_ERROR_WANT_WRITE) {
        error_ = drain_errors();
        if (errno == 0) errno = ECONNRESET;
        return -1;
      }
    }
    if (!wait) {
      errno = EAGAIN;
      return -1;
    }
    if (!wait_for(code == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, receive_timeout_ms_)) {
      errno = EAGAIN;  // as a plain socket's receive timeout says it
      return -1;
    }
  }
}

bool channel::write_all(const void* data, size_t size) {
  if (records_) return records_->write_all(data, size);
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    int code;
    {
      std::lock_guard lock(mutex_);
      if (handed_over_) {
        refuse_after_handover();
        return false;
      }
      ERR_clear_error();
      size_t written = 0;
      int r = SSL_write_ex(ssl_, p, size, &written);
      if (r == 1) {
        p += written;
        size -= written;
        continue;
      }
      code = SSL_get_error(ssl_, r);
      if (code != SSL_ERROR_WANT_READ && code != SSL_ERROR_WANT_WRITE) {
        error_ = drain_errors();
        return false;
      }
    }
    wait_for(code == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, -1);
  }
  return true;
}

std::array<uint8_t, 32> channel::binding() const {
  if (records_) return records_->binding();
  std::array<uint8_t, 32> out{};
  static constexpr char label[] = "EXPORTER-ferry-authentication";
  std::lock_guard lock(mutex_);
  SSL_export_keying_material(ssl_, out.data(), out.size(), label, sizeof label - 1, nullptr, 0, 0);
  return out;
}

std::string channel::last_error() const {
  if (records_) return records_->last_error();
  std::lock_guard lock(mutex_);
  return error_;
}

std::string channel::describe() const {
  if (records_) return std::string("TLSv1.3 ") + cipher_suite_name(records_->suite()) + " (handed over)";
  std::lock_guard lock(mutex_);
  return std::string(SSL_get_version(ssl_)) + " " + SSL_get_cipher_name(ssl_);
}

}  // namespace ferry::tls
