// Ferry's own TLS 1.3 record layer, for connections handed over to a
// session's worker process, which never holds the private key (see
// tls_records.hpp; this kernel has no kTLS). Written from RFC 8446: the
// section of each rule is given beside it.
#include "common/tls_records.hpp"

#include <fcntl.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ferry::tls {

namespace {

// Content types (5.1), a handshake type (4) and alerts (6).
constexpr uint8_t type_alert = 21;
constexpr uint8_t type_handshake = 22;
constexpr uint8_t type_application_data = record_protection::type_application_data;
constexpr uint8_t handshake_key_update = 24;
constexpr uint8_t alert_close_notify = 0;
constexpr uint8_t alert_user_canceled = 90;
constexpr uint8_t alert_level_fatal = 2;

}  // namespace

// The alerts this side sends (6): why it ends a connection.
enum class record_layer::alert : uint8_t {
  none = 255,  // the peer ended it, or the socket did: nothing to tell
  unexpected_message = 10,
  bad_record_mac = 20,
  record_overflow = 22,
  decode_error = 50,
};

namespace {

static_assert(handoff_state::max_ciphertext <= read_buffer_bytes, "the records handed over must fit");
static_assert(record_protection::max_record <= read_buffer_bytes, "a record must fit");
// Records sealed before a send: up to 8 full ones go out in one system call.
constexpr size_t write_batch_records = 8;

std::string alert_name(uint8_t description) {
  return std::string(SSL_alert_desc_string_long(description)) + " (" + std::to_string(description) + ")";
}

}  // namespace

// --- the connection ----------------------------------------------------------------

std::unique_ptr<record_layer> record_layer::make(handoff_state state, int fd, std::string& error) {
  std::unique_ptr<record_layer> made(new record_layer(fd, state.suite));
  made->binding_ = state.binding;
  // The server reads with the client's keys and writes with its own.
  made->reader_ = record_protection::derive(state.suite, state.client_secret, state.read_sequence,
                                            record_protection::direction::open, error);
  if (!made->reader_) return nullptr;
  made->writer_ = record_protection::derive(state.suite, state.server_secret, state.write_sequence,
                                            record_protection::direction::seal, error);
  if (!made->writer_) return nullptr;
  if (state.plaintext.size() > handoff_state::max_plaintext || state.ciphertext.size() > handoff_state::max_ciphertext) {
    error = "TLS handover: too many received bytes";
    return nullptr;
  }
  made->carried_ = std::move(state.plaintext);
  made->in_.resize(read_buffer_bytes);
  std::copy(state.ciphertext.begin(), state.ciphertext.end(), made->in_.begin());
  made->cipher_end_ = state.ciphertext.size();
  made->out_.resize(write_batch_records * record_protection::sealed_size(record_protection::max_plaintext));
  // Waits poll, so that shutdown() of the socket wakes them, as it does
  // OpenSSL connections' (tls.cpp).
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return made;
}

record_layer::~record_layer() = default;

ssize_t record_layer::read_some(void* data, size_t size, wait_mode mode, int timeout_ms) {
  auto* out = static_cast<uint8_t*>(data);
  for (;;) {
    {
      std::lock_guard lock(read_mutex_);
      for (;;) {
        const size_t got = take_plaintext(out, size);
        // Bytes before an end or an error come first; the end or error next time.
        if (got > 0 || size == 0) return static_cast<ssize_t>(got);
        if (read_state_ == read_state::closed) return 0;
        if (read_state_ == read_state::failed) {
          errno = ECONNRESET;
          return -1;
        }
        if (receive() == received::nothing_yet) break;
      }
    }
    if (mode == wait_mode::no_wait) {
      errno = EAGAIN;
      return -1;
    }
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    // Hang-ups and errors count as ready: the next recv reports them.
    if (r == 0) {
      errno = EAGAIN;  // as a plain socket's receive timeout says it
      return -1;
    }
  }
}

size_t record_layer::take_plaintext(uint8_t* out, size_t size) {
  size_t got = 0;
  while (got < size) {
    if (carried_at_ < carried_.size()) {
      const size_t n = std::min(size - got, carried_.size() - carried_at_);
      std::memcpy(out + got, carried_.data() + carried_at_, n);
      carried_at_ += n;
      got += n;
      continue;
    }
    if (plain_at_ < plain_end_) {
      const size_t n = std::min(size - got, plain_end_ - plain_at_);
      std::memcpy(out + got, in_.data() + plain_at_, n);
      plain_at_ += n;
      got += n;
      continue;
    }
    if (read_state_ != read_state::open || !open_next_record()) break;
  }
  return got;
}

bool record_layer::open_next_record() {
  const size_t available = cipher_end_ - cipher_at_;
  if (available < record_protection::header_size) return false;
  uint8_t* record = in_.data() + cipher_at_;
  const size_t body_size = static_cast<size_t>(record[3]) << 8 | record[4];
  // 5.2: once records are protected, opaque_type is always application_data
  // and legacy_record_version 0x0303.
  if (record[0] != type_application_data) {
    fail_reading("TLS: an unprotected record (type " + std::to_string(record[0]) + ") after the handshake",
                 alert::unexpected_message);
    return false;
  }
  if (record[1] != 0x03 || record[2] != 0x03) {
    fail_reading("TLS: a record of a wrong version", alert::decode_error);
    return false;
  }
  // 5.2: a record longer than 2^14 + 256 bytes is a record_overflow. Checked
  // before waiting for its body, which would not fit in the buffer.
  if (body_size > record_protection::max_body) {
    fail_reading("TLS: a record too long (" + std::to_string(body_size) + " bytes)", alert::record_overflow);
    return false;
  }
  if (body_size < record_protection::tag_size + 1) {
    fail_reading("TLS: a record too short (" + std::to_string(body_size) + " bytes)", alert::decode_error);
    return false;
  }
  if (available < record_protection::header_size + body_size) return false;
  // 5.2: a record that does not authenticate ends the connection (bad_record_mac).
  if (!reader_->open(record, body_size)) {
    fail_reading("TLS: a record failed authentication (bad record mac)", alert::bad_record_mac);
    return false;
  }
  cipher_at_ += record_protection::header_size + body_size;
  // 5.4: TLSInnerPlaintext is the content, its type (never 0) and zero
  // padding: the type is the last byte that is not 0.
  uint8_t* content = record + record_protection::header_size;
  size_t size = body_size - record_protection::tag_size;
  while (size > 0 && content[size - 1] == 0) --size;
  if (size == 0) {
    fail_reading("TLS: a record without a content type", alert::unexpected_message);
    return false;
  }
  const uint8_t type = content[--size];
  if (size > record_protection::max_plaintext) {
    fail_reading("TLS: a record's plaintext is too long", alert::record_overflow);
    return false;
  }
  switch (type) {
    case type_application_data:
      // 5.4: zero-length application data is allowed (the loop moves on).
      plain_at_ = static_cast<size_t>(content - in_.data());
      plain_end_ = plain_at_ + size;
      return true;
    case type_alert:
      if (size != 2) {
        fail_reading("TLS: a malformed alert", alert::decode_error);
        return false;
      }
      // 6.1: close_notify ends the stream; user_canceled is followed by one.
      if (content[1] == alert_close_notify) {
        read_state_ = read_state::closed;
        return false;
      }
      if (content[1] == alert_user_canceled) return true;
      fail_reading("TLS: the peer sent the alert " + alert_name(content[1]), alert::none);
      return false;
    case type_handshake:
      // 4.6.3: the Ferry client never updates its keys, and a worker could
      // not answer an update it was asked for (4.6.1: nor a ticket).
      if (size > 0 && content[0] == handshake_key_update)
        fail_reading("TLS key update after handover is not supported", alert::unexpected_message);
      else
        fail_reading("TLS: handshake message " + std::to_string(size > 0 ? content[0] : 0) +
                         " after handover is not supported",
                     alert::unexpected_message);
      return false;
    default:
      fail_reading("TLS: a record of unknown content type " + std::to_string(type), alert::unexpected_message);
      return false;
  }
}

record_layer::received record_layer::receive() {
  // Only called when every decrypted byte was read: what is left is at most
  // one record cut short, moved to the front so that reads can be large.
  plain_at_ = plain_end_ = 0;
  if (cipher_at_ > 0) {
    std::memmove(in_.data(), in_.data() + cipher_at_, cipher_end_ - cipher_at_);
    cipher_end_ -= cipher_at_;
    cipher_at_ = 0;
  }
  ssize_t n = ::recv(fd_, in_.data() + cipher_end_, in_.size() - cipher_end_, 0);
  if (n > 0) {
    cipher_end_ += static_cast<size_t>(n);
    return received::some;
  }
  if (n < 0 && errno == EINTR) return received::some;
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return received::nothing_yet;
  if (n < 0) {
    fail_reading(std::string("receive failed: ") + std::strerror(errno), alert::none);
  } else if (cipher_end_ > 0) {
    fail_reading("TLS: the connection closed inside a record", alert::none);
  } else {
    // Without close_notify: every Ferry frame says its own length, so a cut
    // one is noticed anyway (as SSL_OP_IGNORE_UNEXPECTED_EOF does in tls.cpp).
    read_state_ = read_state::closed;
  }
  return received::ended;
}

void record_layer::fail_reading(const std::string& why, alert to_send) {
  read_state_ = read_state::failed;
  plain_at_ = plain_end_ = 0;
  set_error(why);
  reading_failed_ = true;
  if (to_send == alert::none) return;
  // 6.2: tell the peer why, if no writer is busy; never wait for one.
  std::unique_lock lock(write_mutex_, std::try_to_lock);
  if (!lock.owns_lock() || write_failed_) return;
  const uint8_t content[2] = {alert_level_fatal, static_cast<uint8_t>(to_send)};
  uint8_t record[record_protection::sealed_size(sizeof content)];
  if (writer_->seal(type_alert, content, sizeof content, record))
    (void)::send(fd_, record, sizeof record, MSG_DONTWAIT | MSG_NOSIGNAL);
  write_failed_ = true;
}

bool record_layer::write_all(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  std::lock_guard lock(write_mutex_);
  while (size > 0) {
    // 6.2: nothing may follow a fatal alert.
    if (write_failed_ || reading_failed_) return false;
    size_t used = 0;
    while (size > 0) {
      const size_t n = std::min(size, record_protection::max_plaintext);
      if (used + record_protection::sealed_size(n) > out_.size()) break;
      if (!writer_->seal(type_application_data, p, n, out_.data() + used)) {
        set_error("TLS: cannot seal a record");
        write_failed_ = true;
        return false;
      }
      used += record_protection::sealed_size(n);
      p += n;
      size -= n;
    }
    if (!flush(out_.data(), used)) {
      write_failed_ = true;  // a record may have gone out in part
      return false;
    }
  }
  return true;
}

bool record_layer::flush(const uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd_, data, size, MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      // Hang-ups and errors count as ready: the next send reports them.
      while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
      }
      continue;
    }
    set_error(std::string("send failed: ") + std::strerror(n < 0 ? errno : EPIPE));
    return false;
  }
  return true;
}

void record_layer::set_error(const std::string& why) {
  std::lock_guard lock(error_mutex_);
  error_ = why;
}

std::string record_layer::last_error() const {
  std::lock_guard lock(error_mutex_);
  return error_;
}

}  // namespace ferry::tls
