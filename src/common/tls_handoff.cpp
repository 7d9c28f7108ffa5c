// Export (main process) and adoption (worker process) of a TLS 1.3 server
// connection: see tls_handoff.hpp for why. The worker never gets the private
// key or the token, and this kernel has no kTLS, so the worker's record layer
// is Ferry's own (tls_records.cpp).
#include "common/tls_handoff.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>

#include <cstring>
#include <string_view>

#include "common/tls.hpp"
#include "common/tls_records.hpp"
#include "common/tls_socket_bio.hpp"

namespace ferry::tls {

void wipe(void* data, size_t size) { OPENSSL_cleanse(data, size); }

const char* cipher_suite_name(cipher_suite suite) {
  switch (suite) {
    case cipher_suite::aes_128_gcm_sha256: return "TLS_AES_128_GCM_SHA256";
    case cipher_suite::aes_256_gcm_sha384: return "TLS_AES_256_GCM_SHA384";
    case cipher_suite::chacha20_poly1305_sha256: return "TLS_CHACHA20_POLY1305_SHA256";
  }
  return "unknown";
}

size_t secret_size(cipher_suite suite) { return suite == cipher_suite::aes_256_gcm_sha384 ? 48 : 32; }

namespace {

bool known_suite(uint16_t value) { return value >= 0x1301 && value <= 0x1303; }

// --- the state as bytes ------------------------------------------------------

// "FTLS" and a format number: a worker of another build refuses a state it
// would misread.
constexpr uint8_t magic[4] = {'F', 'T', 'L', 'S'};
constexpr uint8_t format = 1;

void put(wiped_bytes& out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void put_bytes(wiped_bytes& out, const uint8_t* data, size_t size) { out.insert(out.end(), data, data + size); }

/// Reads big-endian fields, never past the end.
class field_reader {
 public:
  field_reader(const uint8_t* data, size_t size) : data_(data), left_(size) {}
  bool get(uint64_t& value, int bytes) {
    if (left_ < static_cast<size_t>(bytes)) return false;
    value = 0;
    for (int i = 0; i < bytes; ++i) value = (value << 8) | data_[i];
    advance(static_cast<size_t>(bytes));
    return true;
  }
  bool get_bytes(size_t size, const uint8_t*& out) {
    if (left_ < size) return false;
    out = data_;
    advance(size);
    return true;
  }
  size_t left() const { return left_; }

 private:
  void advance(size_t n) {
    data_ += n;
    left_ -= n;
  }
  const uint8_t* data_;
  size_t left_;
};

// --- what OpenSSL tells about a server connection --------------------------

/// What a server connection's callbacks collected since its handshake began.
struct handoff_tracker {
  wiped_bytes client_secret;  // from the key log lines, never written anywhere
  wiped_bytes server_secret;
  uint64_t records_read = 0;  // application records, after the handshake (their headers)
  uint64_t records_written = 0;
  uint64_t records_opened = 0;  // records read whose body was decrypted too
  bool established = false;                     // the handshake had finished at an earlier callback
  std::optional<uint8_t> post_handshake_message;  // the first one's type (a KeyUpdate: 24)
};

void free_tracker(void*, void* tracker, CRYPTO_EX_DATA*, int, long, void*) {
  delete static_cast<handoff_tracker*>(tracker);
}

int tracker_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, free_tracker);
  return index;
}

handoff_tracker* tracker_of(const SSL* ssl) {
  return static_cast<handoff_tracker*>(SSL_get_ex_data(ssl, tracker_index()));
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Hex digits into bytes; false (and `out` empty) for anything else.
bool parse_hex(std::string_view hex, wiped_bytes& out) {
  out.clear();
  if (hex.size() % 2 != 0 || hex.size() / 2 > 64) return false;
  out.reserve(hex.size() / 2);  // no reallocation leaves a copy behind
  for (size_t i = 0; i < hex.size(); i += 2) {
    int high = hex_digit(hex[i]), low = hex_digit(hex[i + 1]);
    if (high < 0 || low < 0) {
      out.clear();
      return false;
    }
    out.push_back(static_cast<uint8_t>(high << 4 | low));
  }
  return true;
}

// OpenSSL's key log line: "<label> <client random> <secret>", all but the
// label in hex. Only the application traffic secrets are kept.
void on_key_log(const SSL* ssl, const char* line) {
  handoff_tracker* tracker = tracker_of(ssl);
  if (!tracker) return;
  std::string_view text(line);
  size_t first = text.find(' '), last = text.rfind(' ');
  if (first == std::string_view::npos || last == first) return;
  std::string_view label = text.substr(0, first);
  std::string_view secret = text.substr(last + 1);
  if (label == "CLIENT_TRAFFIC_SECRET_0") parse_hex(secret, tracker->client_secret);
  if (label == "SERVER_TRAFFIC_SECRET_0") parse_hex(secret, tracker->server_secret);
}

// Called for every record header read or written, and for every handshake
// message. Once the handshake is over, each record is protected with the
// application keys: its header is counted, so that the counts are the next
// records' sequence numbers. OpenSSL marks itself "in handshake" again while
// it handles a post-handshake message, hence the latch.
void on_message(int write_p, int, int content_type, const void* buf, size_t len, SSL* ssl, void* arg) {
  auto* tracker = static_cast<handoff_tracker*>(arg);
  if (!tracker->established && SSL_is_init_finished(ssl)) tracker->established = true;
  if (!tracker->established) return;
  if (content_type == SSL3_RT_HEADER) {
    ++(write_p ? tracker->records_written : tracker->records_read);
  } else if (content_type == SSL3_RT_INNER_CONTENT_TYPE && !write_p) {
    ++tracker->records_opened;
  } else if (content_type == SSL3_RT_HANDSHAKE && len > 0 && !tracker->post_handshake_message) {
    tracker->post_handshake_message = static_cast<const uint8_t*>(buf)[0];
  }
}

}  // namespace

namespace detail {

void capture_secrets(SSL_CTX* ctx) { SSL_CTX_set_keylog_callback(ctx, on_key_log); }

bool track_for_handoff(SSL* ssl) {
  auto* tracker = new (std::nothrow) handoff_tracker;
  if (!tracker || SSL_set_ex_data(ssl, tracker_index(), tracker) != 1) {
    delete tracker;
    return false;
  }
  // Both secrets are at most 48 bytes: reserved now, never reallocated.
  tracker->client_secret.reserve(64);
  tracker->server_secret.reserve(64);
  SSL_set_msg_callback(ssl, on_message);
  SSL_set_msg_callback_arg(ssl, tracker);
  return true;
}

}  // namespace detail

wiped_bytes handoff_state::encode() const {
  wiped_bytes out;
  // Reserved at once: a reallocation would leave a copy of the secrets behind.
  out.reserve(sizeof magic + 1 + 2 + 2 + client_secret.size() + server_secret.size() + 16 + binding.size() + 8 +
              plaintext.size() + ciphertext.size());
  put_bytes(out, magic, sizeof magic);
  put(out, format, 1);
  put(out, static_cast<uint16_t>(suite), 2);
  put(out, client_secret.size(), 1);
  put_bytes(out, client_secret.data(), client_secret.size());
  put(out, server_secret.size(), 1);
  put_bytes(out, server_secret.data(), server_secret.size());
  put(out, read_sequence, 8);
  put(out, write_sequence, 8);
  put_bytes(out, binding.data(), binding.size());
  put(out, plaintext.size(), 4);
  put_bytes(out, plaintext.data(), plaintext.size());
  put(out, ciphertext.size(), 4);
  put_bytes(out, ciphertext.data(), ciphertext.size());
  return out;
}

std::optional<handoff_state> handoff_state::decode(const uint8_t* data, size_t size, std::string& error) {
  field_reader in(data, size);
  handoff_state state;
  const uint8_t* bytes = nullptr;
  uint64_t value = 0;
  auto fail = [&](const char* why) {
    error = std::string("TLS handover state: ") + why;
    return std::nullopt;
  };
  if (!in.get_bytes(sizeof magic, bytes) || std::memcmp(bytes, magic, sizeof magic) != 0) return fail("bad magic");
  if (!in.get(value, 1) || value != format) return fail("unknown format");
  if (!in.get(value, 2) || !known_suite(static_cast<uint16_t>(value))) return fail("unknown cipher suite");
  state.suite = static_cast<cipher_suite>(value);
  for (wiped_bytes* secret : {&state.client_secret, &state.server_secret}) {
    if (!in.get(value, 1) || value != secret_size(state.suite)) return fail("wrong secret size for the cipher suite");
    if (!in.get_bytes(value, bytes)) return fail("cut short");
    secret->assign(bytes, bytes + value);
  }
  if (!in.get(state.read_sequence, 8) || !in.get(state.write_sequence, 8)) return fail("cut short");
  if (!in.get_bytes(state.binding.size(), bytes)) return fail("cut short");
  std::memcpy(state.binding.data(), bytes, state.binding.size());
  if (!in.get(value, 4)) return fail("cut short");
  if (value > max_plaintext) return fail("too much received plaintext");
  if (!in.get_bytes(value, bytes)) return fail("cut short");
  state.plaintext.assign(bytes, bytes + value);
  if (!in.get(value, 4)) return fail("cut short");
  if (value > max_ciphertext) return fail("too much received ciphertext");
  if (!in.get_bytes(value, bytes)) return fail("cut short");
  state.ciphertext.assign(bytes, bytes + value);
  if (in.left() != 0) return fail("trailing bytes");
  return state;
}

std::optional<handoff_state> channel::export_for_handoff(std::string& error) {
  if (!ssl_) {
    error = "this connection was handed over before";
    return std::nullopt;
  }
  const std::array<uint8_t, 32> bound = binding();
  std::lock_guard lock(mutex_);
  handoff_tracker* tracker = tracker_of(ssl_);
  auto fail = [&](std::string why) {
    error = "cannot hand the TLS connection over: " + why;
    return std::nullopt;
  };
  if (handed_over_) return fail("it was handed over before");
  if (!SSL_is_server(ssl_) || !tracker) return fail("not a server connection");
  if (!SSL_is_init_finished(ssl_)) return fail("its handshake is not finished");
  if (SSL_version(ssl_) != TLS1_3_VERSION) return fail("not TLS 1.3");
  if (tracker->post_handshake_message)
    return fail(*tracker->post_handshake_message == SSL3_MT_KEY_UPDATE
                    ? std::string("a key update happened")
                    : "a handshake message (" + std::to_string(*tracker->post_handshake_message) +
                          ") came after the handshake");
  if (SSL_get_shutdown(ssl_) != 0) return fail("it is closing");
  if (SSL_want_write(ssl_)) return fail("a write is unfinished");
  // A read that stopped after a record's header, waiting for its body:
  // OpenSSL holds the header, which SSL_has_pending below does not see.
  if (tracker->records_opened != tracker->records_read) return fail("a record is half read");
  const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl_);
  const uint16_t id = cipher ? SSL_CIPHER_get_protocol_id(cipher) : 0;
  if (!known_suite(id)) return fail("unknown cipher suite");
  handoff_state state;
  state.suite = static_cast<cipher_suite>(id);
  if (tracker->client_secret.size() != secret_size(state.suite) ||
      tracker->server_secret.size() != secret_size(state.suite))
    return fail("its traffic secrets were not captured");
  // Moved: this process keeps no copy (the next export is refused anyway).
  state.client_secret = std::move(tracker->client_secret);
  state.server_secret = std::move(tracker->server_secret);
  state.read_sequence = tracker->records_read;
  state.write_sequence = tracker->records_written;
  state.binding = bound;

  // From here on the channel gives its bytes away: it is finished whatever
  // follows, or a caller could read what the worker will read too.
  handed_over_ = true;
  state.plaintext.reserve(handoff_state::max_plaintext);
  while (SSL_pending(ssl_) > 0) {
    const size_t at = state.plaintext.size();
    const size_t pending = static_cast<size_t>(SSL_pending(ssl_));
    if (at + pending > handoff_state::max_plaintext) return fail("more decrypted data than one record");
    state.plaintext.resize(at + pending);
    size_t got = 0;
    if (SSL_read_ex(ssl_, state.plaintext.data() + at, pending, &got) != 1 || got == 0)
      return fail("its decrypted data cannot be read");
    state.plaintext.resize(at + got);
  }
  // Without read-ahead, OpenSSL reads a record at a time: left-overs are a
  // record of which it had part when a read stopped, and they cannot be
  // taken out of it.
  if (SSL_has_pending(ssl_)) return fail("a record is half read");
  state.ciphertext.reserve(detail::socket_bio_buffer_bytes);
  detail::take_buffered(SSL_get_rbio(ssl_), state.ciphertext);
  return state;
}

std::unique_ptr<channel> channel::adopt(handoff_state state, int fd, std::string& error) {
  init_openssl();
  auto records = record_layer::make(std::move(state), fd, error);
  if (!records) return nullptr;
  return std::unique_ptr<channel>(new channel(std::move(records), fd));
}

}  // namespace ferry::tls
