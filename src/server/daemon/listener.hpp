// Listening sockets and the acceptor thread. Every new connection must send
// its hello within the handshake timeout; the acceptor reads hellos of all
// pending connections with poll (a slow client never holds up the others)
// and hands each complete one to the server.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/socket.hpp"
#include "common/stream.hpp"
#include "protocol/messages.hpp"
#include "server/daemon/connection_census.hpp"
#include "server/daemon/handshake.hpp"

namespace ferry::server {

class listener {
 public:
  /// Called on the acceptor thread with a stream whose hello was read (and,
  /// when the daemon has a token, whose client proved it). A plain stream's
  /// socket is blocking.
  using hello_handler = std::function<void(stream_ptr s, const std::string& peer, const protocol::hello& hello)>;
  /// Called on the acceptor thread after wake().
  using wake_handler = std::function<void()>;

  listener() = default;
  ~listener() { stop(); }
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;

  /// Listens on TCP address:port (0 picks one) and, if `unix_path` is not
  /// empty, on that Unix socket too.
  bool open(const std::string& address, uint16_t port, const std::string& unix_path, std::string& error);
  uint16_t port() const { return port_; }

  /// At most `max` open connections, pending handshakes included (0: no
  /// limit); more are closed as they are accepted. Call before start().
  void limit_connections(size_t max) { max_connections_ = max; }
  /// Connections that count against the limit but are held by other
  /// processes (session workers). Call before start().
  void count_elsewhere(std::function<size_t()> count) { elsewhere_ = std::move(count); }
  /// Every connection must finish its handshake (TLS, hello and, with a
  /// token, the challenge) within `handshake_timeout`.
  void start(std::chrono::milliseconds handshake_timeout, admission rules, hello_handler on_hello,
             wake_handler on_wake);
  /// Makes the acceptor call on_wake soon (thread-safe).
  void wake();
  /// Stops accepting, closes the listening sockets and pending connections,
  /// joins the acceptor. Idempotent.
  void stop();

 private:
  struct pending;
  enum class progress { waiting, dropped, admitted };
  /// Takes a pending connection as far as it can go without blocking.
  progress advance(pending& p);
  void run();

  unique_fd tcp_;
  unique_fd unix_;
  std::string unix_path_;
  unique_fd wake_;  // eventfd
  uint16_t port_ = 0;
  std::chrono::milliseconds timeout_{5000};
  admission rules_;
  hello_handler on_hello_;
  wake_handler on_wake_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  size_t max_connections_ = 0;
  std::function<size_t()> elsewhere_;
  connection_census handed_over_;  // connections past their hello (acceptor thread only)
  uint64_t turned_away_ = 0;       // connections closed over the limit (acceptor thread only)
  uint64_t out_of_descriptors_ = 0;  // accepts that failed for want of descriptors (acceptor thread only)
  std::chrono::steady_clock::time_point accept_paused_until_{};  // (acceptor thread only)
};

}  // namespace ferry::server
