#include "common/socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace ferry {

void unique_fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

std::string endpoint::to_string() const {
  if (type == kind::unix_socket) return "unix:" + host;
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

bool parse_endpoint(const std::string& text, uint16_t default_port, endpoint& out, std::string& error) {
  out = endpoint{};
  if (text.rfind("unix:", 0) == 0) {
    out.type = endpoint::kind::unix_socket;
    out.host = text.substr(5);
    if (out.host.empty() || out.host.size() >= sizeof(sockaddr_un::sun_path)) {
      error = "bad unix socket path in '" + text + "'";
      return false;
    }
    return true;
  }
  std::string host = text;
  std::string port_text;
  if (!host.empty() && host.front() == '[') {  // [v6]:port
    auto close = host.find(']');
    if (close == std::string::npos) {
      error = "unterminated '[' in '" + text + "'";
      return false;
    }
    if (close + 1 < host.size()) {
      if (host[close + 1] != ':') {
        error = "expected ':' after ']' in '" + text + "'";
        return false;
      }
      port_text = host.substr(close + 2);
    }
    host = host.substr(1, close - 1);
  } else if (auto colon = host.rfind(':'); colon != std::string::npos && host.find(':') == colon) {
    port_text = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  if (host.empty()) {
    error = "empty host in '" + text + "'";
    return false;
  }
  out.host = host;
  out.port = default_port;
  if (!port_text.empty()) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc{} || end != port_text.data() + port_text.size() || value == 0 || value > 65535) {
      error = "bad port '" + port_text + "' in '" + text + "'";
      return false;
    }
    out.port = static_cast<uint16_t>(value);
  }
  return true;
}

void tune_stream_socket(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // Large socket buffers let bulk transfers keep the loopback stream busy.
  int size = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
}

void detect_dead_peer(int fd, int timeout_ms) {
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  int idle = std::max(1, timeout_ms / 2000);  // seconds idle before the first probe
  int interval = std::max(1, timeout_ms / 6000);
  int probes = 3;
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
  unsigned timeout = static_cast<unsigned>(timeout_ms);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout, sizeof timeout);
}

namespace {

// Connects a non-blocking socket and waits for the outcome, so an address that
// drops packets cannot hang the caller.
bool connect_with_timeout(int fd, const sockaddr* address, socklen_t length, int timeout_ms,
                          std::string& error) {
  int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int rc = ::connect(fd, address, length);
  if (rc != 0 && errno != EINPROGRESS) {
    error = std::strerror(errno);
    return false;
  }
  if (rc != 0) {
    pollfd p{fd, POLLOUT, 0};
    int ready;
    do {
      ready = ::poll(&p, 1, timeout_ms);
    } while (ready < 0 && errno == EINTR);
    if (ready == 0) {
      error = "timed out after " + std::to_string(timeout_ms) + " ms";
      return false;
    }
    int so_error = 0;
    socklen_t so_length = sizeof so_error;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &so_length);
    if (so_error != 0) {
      error = std::strerror(so_error);
      return false;
    }
  }
  ::fcntl(fd, F_SETFL, flags);
  return true;
}

}  // namespace

unique_fd connect_endpoint(const endpoint& where, int timeout_ms, std::string& error) {
  if (where.type == endpoint::kind::unix_socket) {
    unique_fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, where.host.c_str(), sizeof address.sun_path - 1);
    if (!connect_with_timeout(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address, timeout_ms,
                              error))
      return unique_fd();
    return fd;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* results = nullptr;
  std::string port = std::to_string(where.port);
  if (int rc = ::getaddrinfo(where.host.c_str(), port.c_str(), &hints, &results); rc != 0) {
    error = std::string("cannot resolve host: ") + ::gai_strerror(rc);
    return unique_fd();
  }
  unique_fd connected;
  for (addrinfo* a = results; a != nullptr; a = a->ai_next) {
    unique_fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) continue;
    if (connect_with_timeout(fd.get(), a->ai_addr, a->ai_addrlen, timeout_ms, error)) {
      tune_stream_socket(fd.get());
      connected = std::move(fd);
      break;
    }
  }
  ::freeaddrinfo(results);
  return connected;
}

unique_fd listen_tcp(const std::string& address, uint16_t port, uint16_t& bound_port, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* results = nullptr;
  std::string port_text = std::to_string(port);
  if (int rc = ::getaddrinfo(address.empty() ? nullptr : address.c_str(), port_text.c_str(), &hints, &results);
      rc != 0) {
    error = std::string("cannot resolve listen address '") + address + "': " + ::gai_strerror(rc);
    return unique_fd();
  }
  unique_fd listening;
  for (addrinfo* a = results; a != nullptr && !listening.valid(); a = a->ai_next) {
    unique_fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) continue;
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd.get(), 128) != 0) {
      error = std::string("cannot listen on ") + address + ":" + port_text + ": " + std::strerror(errno);
      continue;
    }
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &length);
    bound_port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                   : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    listening = std::move(fd);
  }
  ::freeaddrinfo(results);
  return listening;
}

unique_fd listen_unix(const std::string& path, std::string& error) {
  sockaddr_un address{};
  if (path.empty() || path.size() >= sizeof address.sun_path) {
    error = "unix socket path is empty or too long: '" + path + "'";
    return unique_fd();
  }
  unique_fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  ::unlink(path.c_str());  // a stale socket file from a previous run
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd.get(), 128) != 0) {
    error = "cannot listen on unix:" + path + ": " + std::strerror(errno);
    return unique_fd();
  }
  return fd;
}

bool write_all(int fd, const void* data, size_t size) {
  auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool writev_all(int fd, iovec* pieces, int count) {
  while (count > 0) {
    msghdr message{};
    message.msg_iov = pieces;
    message.msg_iovlen = static_cast<size_t>(count < IOV_MAX ? count : IOV_MAX);
    ssize_t n = ::sendmsg(fd, &message, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    auto done = static_cast<size_t>(n);
    while (count > 0 && done >= pieces->iov_len) {
      done -= pieces->iov_len;
      ++pieces;
      --count;
    }
    if (count > 0) {
      pieces->iov_base = static_cast<char*>(pieces->iov_base) + done;
      pieces->iov_len -= done;
    }
  }
  return true;
}

bool read_exact(int fd, void* data, size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, 0);
    if (n == 0) return false;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

std::string peer_name(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "?";
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    return std::string(text) + ":" + std::to_string(ntohs(v4->sin_port));
  }
  if (address.ss_family == AF_INET6) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(v6->sin6_port));
  }
  return "unix";
}

}  // namespace ferry
