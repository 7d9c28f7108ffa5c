// One connection's byte stream, plain or under TLS: what every reader and
// writer of a Ferry connection uses instead of the raw socket.
//
// A stream is shared (std::shared_ptr) by the threads that read and write
// it; the socket closes when the last of them lets go. shutdown() wakes every
// thread blocked on it, whichever kind it is.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <memory>
#include <string>

#include "common/socket.hpp"
#include "common/tls.hpp"

namespace ferry {

class stream {
 public:
  /// A plain stream over a blocking socket.
  explicit stream(unique_fd fd) : fd_(std::move(fd)) {}
  /// A TLS stream (the channel's socket is `fd`).
  stream(unique_fd fd, std::unique_ptr<tls::channel> tls) : fd_(std::move(fd)), tls_(std::move(tls)) {}
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;

  int fd() const { return fd_.get(); }
  bool encrypted() const { return tls_ != nullptr; }
  tls::channel* tls() const { return tls_.get(); }

  /// Writes everything or fails (false: peer gone or error).
  bool write_all(const void* data, size_t size);
  /// Gathers several pieces in as few writes as possible.
  bool writev_all(iovec* pieces, int count);
  /// Writes what the socket takes now without waiting: the bytes written
  /// (0 when it takes none), or -1 on errors. Plain streams only (a TLS
  /// record cannot be cut short): -1 with EOPNOTSUPP on a TLS stream.
  ssize_t try_writev(const iovec* pieces, int count);
  /// Reads exactly `size` bytes; false on EOF, error or receive timeout.
  bool read_exact(void* data, size_t size);
  /// Blocks until some bytes come; 0 at the end of the stream, -1 on errors
  /// (errno EAGAIN: the receive timeout passed).
  ssize_t read_some(void* data, size_t size);
  /// Never blocks: -1 with errno EAGAIN when nothing is there.
  ssize_t try_read_some(void* data, size_t size);
  /// How long reads may wait (milliseconds; 0: forever).
  void set_receive_timeout(int ms);
  /// Shuts the socket down both ways: every blocked call returns.
  void shutdown();

 private:
  unique_fd fd_;
  std::unique_ptr<tls::channel> tls_;
};

using stream_ptr = std::shared_ptr<stream>;

inline stream_ptr plain_stream(unique_fd fd) { return std::make_shared<stream>(std::move(fd)); }

// The free functions of socket.hpp, for streams.
inline bool write_all(stream* s, const void* data, size_t size) { return s->write_all(data, size); }
inline bool writev_all(stream* s, iovec* pieces, int count) { return s->writev_all(pieces, count); }
inline bool read_exact(stream* s, void* data, size_t size) { return s->read_exact(data, size); }

}  // namespace ferry
