#include "common/stream.hpp"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>

#include <cerrno>
#include <climits>
#include <cstring>

namespace ferry {

bool stream::write_all(const void* data, size_t size) {
  if (!tls_) return ferry::write_all(fd_.get(), data, size);
  return tls_->write_all(data, size);
}

bool stream::writev_all(iovec* pieces, int count) {
  if (!tls_) return ferry::writev_all(fd_.get(), pieces, count);
  // Small pieces (a frame header, an ack ahead of a batch) are gathered into
  // one TLS record; each record costs a header, a tag and a system call. On
  // the stack: a thread-local buffer would be gone when an exit handler
  // (libferry's goodbye) writes after the thread's destructors ran.
  constexpr size_t gather_limit = 4096;
  uint8_t gathered[gather_limit];
  size_t used = 0;
  for (int i = 0; i < count; ++i) {
    const auto* p = static_cast<const uint8_t*>(pieces[i].iov_base);
    const size_t size = pieces[i].iov_len;
    if (size == 0) continue;  // an empty chunk's piece may have no address at all
    if (used + size <= gather_limit) {
      std::memcpy(gathered + used, p, size);
      used += size;
      continue;
    }
    if (used > 0 && !tls_->write_all(gathered, used)) return false;
    used = 0;
    if (!tls_->write_all(p, size)) return false;
  }
  return used == 0 || tls_->write_all(gathered, used);
}

bool stream::read_exact(void* data, size_t size) {
  if (!tls_) return ferry::read_exact(fd_.get(), data, size);
  auto* p = static_cast<uint8_t*>(data);
  while (size > 0) {
    ssize_t n = tls_->read_some(p, size, true);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

ssize_t stream::read_some(void* data, size_t size) {
  if (tls_) return tls_->read_some(data, size, true);
  for (;;) {
    ssize_t n = ::recv(fd_.get(), data, size, 0);
    if (n < 0 && errno == EINTR) continue;
    return n;
  }
}

ssize_t stream::try_writev(const iovec* pieces, int count) {
  if (tls_) {
    errno = EOPNOTSUPP;
    return -1;
  }
  msghdr message{};
  message.msg_iov = const_cast<iovec*>(pieces);
  message.msg_iovlen = static_cast<size_t>(count < IOV_MAX ? count : IOV_MAX);
  for (;;) {
    ssize_t n = ::sendmsg(fd_.get(), &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  }
}

ssize_t stream::try_read_some(void* data, size_t size) {
  if (tls_) return tls_->read_some(data, size, false);
  for (;;) {
    ssize_t n = ::recv(fd_.get(), data, size, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    return n;
  }
}

void stream::set_receive_timeout(int ms) {
  if (tls_) {
    tls_->set_receive_timeout(ms > 0 ? ms : -1);
    return;
  }
  timeval limit{ms / 1000, (ms % 1000) * 1000};
  ::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
}

void stream::shutdown() {
  if (fd_.valid()) ::shutdown(fd_.get(), SHUT_RDWR);
}

}  // namespace ferry
