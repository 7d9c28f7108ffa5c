#include "server/worker/ipc.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ferry::server::ipc {

bool socket_pair(unique_fd& a, unique_fd& b, std::string& error) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    error = std::string("socketpair: ") + std::strerror(errno);
    return false;
  }
  a.reset(fds[0]);
  b.reset(fds[1]);
  return true;
}

bool send(int socket, const std::vector<uint8_t>& packet, int fd) {
  iovec piece{const_cast<uint8_t*>(packet.data()), packet.size()};
  msghdr m{};
  m.msg_iov = &piece;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  for (;;) {
    ssize_t n = ::sendmsg(socket, &m, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<size_t>(n) == packet.size();
    if (errno != EINTR) return false;
  }
}

receive_result receive(int socket, received& out, std::string& why) {
  out.fd.reset();
  // The packet's size first (MSG_TRUNC gives a packet's whole length even to a
  // peek with no room), so that the buffer is just as large: a buffer of the
  // largest size, made and cleared for every packet, cost a fresh worker a
  // millisecond per connection handed to it.
  ssize_t size;
  do {
    size = ::recv(socket, nullptr, 0, MSG_PEEK | MSG_TRUNC);
  } while (size < 0 && errno == EINTR);
  if (size < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return receive_result::would_block;
    if (errno == ECONNRESET) return receive_result::closed;
    why = std::string("receive from the worker socket: ") + std::strerror(errno);
    return receive_result::failed;
  }
  // Over the limit: room for the limit only, and the cut is noticed below.
  out.payload.resize(std::min(static_cast<size_t>(size), max_packet) + 1);
  iovec piece{out.payload.data(), out.payload.size()};
  msghdr m{};
  m.msg_iov = &piece;
  m.msg_iovlen = 1;
  // Room for more descriptors than a packet may carry, so that a packet with
  // several is noticed (and each closed) instead of being cut silently.
  alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = ::recvmsg(socket, &m, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return receive_result::would_block;
    if (errno == ECONNRESET) return receive_result::closed;
    why = std::string("receive from the worker socket: ") + std::strerror(errno);
    return receive_result::failed;
  }
  if (n == 0) return receive_result::closed;
  int descriptors = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (descriptors++ == 0) out.fd.reset(fd);
      else ::close(fd);
    }
  }
  if ((m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 || static_cast<size_t>(n) > max_packet) {
    why = "a worker message over its size limit, or with too many descriptors";
    out.fd.reset();
    return receive_result::failed;
  }
  if (descriptors > 1) {
    why = "a worker message with several descriptors";
    out.fd.reset();
    return receive_result::failed;
  }
  if (n < 2) {
    why = "a worker message without its kind";
    out.fd.reset();
    return receive_result::failed;
  }
  uint16_t k;
  std::memcpy(&k, out.payload.data(), sizeof k);
  out.what = static_cast<kind>(k);
  out.payload.erase(out.payload.begin(), out.payload.begin() + 2);
  out.payload.resize(static_cast<size_t>(n) - 2);
  return receive_result::ok;
}

}  // namespace ferry::server::ipc
