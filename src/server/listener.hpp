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
#include "protocol/messages.hpp"
#include "server/connection_census.hpp"

namespace ferry::server {

class listener {
 public:
  /// Called on the acceptor thread with a blocking socket whose hello was read.
  using hello_handler = std::function<void(unique_fd fd, const std::string& peer, const protocol::hello& hello)>;
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
  void start(std::chrono::milliseconds handshake_timeout, hello_handler on_hello, wake_handler on_wake);
  /// Makes the acceptor call on_wake soon (thread-safe).
  void wake();
  /// Stops accepting, closes the listening sockets and pending connections,
  /// joins the acceptor. Idempotent.
  void stop();

 private:
  struct pending;
  void run();

  unique_fd tcp_;
  unique_fd unix_;
  std::string unix_path_;
  unique_fd wake_;  // eventfd
  uint16_t port_ = 0;
  std::chrono::milliseconds timeout_{5000};
  hello_handler on_hello_;
  wake_handler on_wake_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  size_t max_connections_ = 0;
  connection_census handed_over_;  // connections past their hello (acceptor thread only)
  uint64_t turned_away_ = 0;       // connections closed over the limit (acceptor thread only)
};

}  // namespace ferry::server
