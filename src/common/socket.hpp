// Thin RAII layer over POSIX stream sockets (TCP and Unix), used by both sides.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace ferry {

/// Owns one file descriptor; closes it on destruction.
class unique_fd {
 public:
  unique_fd() = default;
  explicit unique_fd(int fd) : fd_(fd) {}
  unique_fd(unique_fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  unique_fd& operator=(unique_fd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

/// A server address as configured: "host[:port]" or "unix:/path".
struct endpoint {
  enum class kind { tcp, unix_socket } type = kind::tcp;
  std::string host;   // tcp: host name or address; unix: socket path
  uint16_t port = 0;  // tcp only

  std::string to_string() const;
};

/// Parses one configured address. Returns false with a reason for bad input.
bool parse_endpoint(const std::string& text, uint16_t default_port, endpoint& out, std::string& error);

/// Connects (blocking, with a timeout in milliseconds). On failure returns an
/// invalid fd and describes why in `error` (e.g. "connection refused").
unique_fd connect_endpoint(const endpoint& where, int timeout_ms, std::string& error);

/// Listens on address:port (port 0 picks one); stores the bound port.
unique_fd listen_tcp(const std::string& address, uint16_t port, uint16_t& bound_port, std::string& error);
unique_fd listen_unix(const std::string& path, std::string& error);

/// Low-latency options for a connected TCP socket (no Nagle); harmless on Unix sockets.
void tune_stream_socket(int fd);

/// Makes a silently dead TCP connection (a half-open one after the peer's
/// address changed) fail within about `timeout_ms`: keepalive probes while
/// idle, and TCP_USER_TIMEOUT while data waits for an acknowledgement.
/// Harmless on Unix sockets.
void detect_dead_peer(int fd, int timeout_ms);

/// Writes everything or fails (false: peer gone or error). Retries on EINTR.
bool write_all(int fd, const void* data, size_t size);
/// Gathers several pieces in as few system calls as possible.
bool writev_all(int fd, iovec* pieces, int count);
/// Reads exactly `size` bytes; false on EOF or error.
bool read_exact(int fd, void* data, size_t size);

/// Describes the connected peer as "address:port" (or "unix") for logs.
std::string peer_name(int fd);

}  // namespace ferry
