// Ferry's socket BIOs (tls_socket_bio.hpp). A server connection's buffers
// what it reads so that a handover to a worker process, which never holds the
// private key and on this kernel cannot be given the keys through kTLS, finds
// every received byte that OpenSSL has not taken.
#include "common/tls_socket_bio.hpp"

#include <openssl/bio.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ferry::tls::detail {

namespace {

struct socket_state {
  int fd;
  wiped_bytes buffer;  // empty unless bio_buffering::own_buffer
  size_t start = 0;    // what OpenSSL has not taken: [start, end)
  size_t end = 0;
};

socket_state* state_of(BIO* bio) { return static_cast<socket_state*>(BIO_get_data(bio)); }

/// recv() as a BIO reports it: retry on EAGAIN and EINTR, errno 0 at the end of the stream.
ssize_t receive(BIO* bio, int fd, void* data, size_t size) {
  ssize_t n = ::recv(fd, data, size, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_read(bio);
  if (n == 0) errno = 0;  // the end of the stream, not an error
  return n;
}

int socket_write(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  ssize_t n = ::send(state_of(bio)->fd, data, static_cast<size_t>(size), MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_write(bio);
  return static_cast<int>(n);
}

int socket_read(BIO* bio, char* data, int size) {
  socket_state* s = state_of(bio);
  BIO_clear_retry_flags(bio);
  if (s->buffer.empty()) return static_cast<int>(receive(bio, s->fd, data, static_cast<size_t>(size)));
  if (s->start == s->end) {
    // Only an empty buffer is refilled: OpenSSL then never waits on the
    // socket while bytes it needs sit here.
    ssize_t n = receive(bio, s->fd, s->buffer.data(), s->buffer.size());
    if (n <= 0) return static_cast<int>(n);
    s->start = 0;
    s->end = static_cast<size_t>(n);
  }
  size_t given = std::min(static_cast<size_t>(size), s->end - s->start);
  std::memcpy(data, s->buffer.data() + s->start, given);
  s->start += given;
  return static_cast<int>(given);
}

long socket_ctrl(BIO*, int command, long, void*) { return command == BIO_CTRL_FLUSH ? 1 : 0; }

int socket_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

int socket_destroy(BIO* bio) {
  delete state_of(bio);
  BIO_set_data(bio, nullptr);
  return 1;
}

const BIO_METHOD* socket_method() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "ferry socket");
    BIO_meth_set_write(m, socket_write);
    BIO_meth_set_read(m, socket_read);
    BIO_meth_set_ctrl(m, socket_ctrl);
    BIO_meth_set_create(m, socket_create);
    BIO_meth_set_destroy(m, socket_destroy);
    return m;
  }();
  return method;
}

}  // namespace

BIO* new_socket_bio(int fd, bio_buffering buffering) {
  BIO* bio = BIO_new(socket_method());
  if (!bio) return nullptr;
  auto* s = new socket_state{fd, {}};
  if (buffering == bio_buffering::own_buffer) s->buffer.resize(socket_bio_buffer_bytes);
  BIO_set_data(bio, s);
  return bio;
}

void take_buffered(BIO* bio, wiped_bytes& out) {
  socket_state* s = state_of(bio);
  out.insert(out.end(), s->buffer.begin() + static_cast<ptrdiff_t>(s->start),
             s->buffer.begin() + static_cast<ptrdiff_t>(s->end));
  s->start = s->end = 0;
}

}  // namespace ferry::tls::detail
