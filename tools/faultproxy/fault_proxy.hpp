// A TCP relay that breaks the connections it carries on command, so resilience tests can
// cut, stall and refuse a client's links to ferryd (or a daemon's peer links) and make
// the client appear to come from another address.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/socket.hpp"

namespace ferry::tools {

/// Which way bytes travel through the proxy.
enum class direction {
  to_target,  ///< from the connecting client to the target
  to_client,  ///< from the target back to the client
};

/// Listens on 127.0.0.1 and relays every connection to one target, byte for byte, until
/// told to break them.
///
/// One thread relays every connection (poll over non-blocking sockets), so it alone ever
/// closes a relayed socket. The controls may be called from any thread; each returns once
/// the relay thread has applied it, so a test may act on its effect at once: after cut()
/// the connections are gone, after stall(true) no further byte is forwarded, after
/// refuse(true) the next connection is refused.
class fault_proxy {
 public:
  /// The target's host is resolved by start(), once.
  fault_proxy(std::string target_host, uint16_t target_port);
  ~fault_proxy();
  fault_proxy(const fault_proxy&) = delete;
  fault_proxy& operator=(const fault_proxy&) = delete;

  /// Resolves the target, listens on 127.0.0.1 with a port the system picks and starts
  /// relaying. False, with the reason in `error`, if either fails or it already runs.
  bool start(std::string& error);
  /// Same, listening on `listen_port` (0 picks one).
  bool start(uint16_t listen_port, std::string& error);
  /// The port listened on (0 before start()).
  uint16_t port() const;
  /// Resets every relayed connection, stops listening and joins the relay thread.
  /// Idempotent; the destructor calls it.
  void stop();

  /// Ends every relayed connection now, on both sides, with a reset (RST) rather than
  /// an orderly close. New connections are accepted afterwards as before.
  void cut();
  /// Arms a one-shot cut: once `bytes` more bytes have been forwarded in `way`, counted
  /// over all connections, nothing more is forwarded and every connection is cut as by
  /// cut(), so the receiving side sees a partial message. The cut waits (briefly) until
  /// those bytes have left the proxy's socket, so the receiver gets exactly `bytes`.
  /// Arming again replaces a cut not yet fired.
  void cut_after(uint64_t bytes, direction way);
  /// While on, nothing is forwarded either way; data waits in the proxy and the kernel's
  /// socket buffers, none is dropped. Connections are still accepted and connected to the
  /// target. Off resumes forwarding.
  void stall(bool on);
  /// While on, every new connection is accepted and reset at once, as if the server were
  /// unreachable; connections already relayed carry on (cut() ends those too).
  void refuse(bool on);
  /// Connections to the target made from now on are bound to this local IP first, so the
  /// target sees the client's address change (any 127.x.y.z works on Linux loopback).
  /// An empty string restores the default. An address that cannot be bound makes the
  /// new connections fail (reset).
  void set_source_address(std::string ip);

  /// Connections accepted from clients, refused ones included.
  uint64_t connections_accepted() const;
  /// Cuts performed: one per cut() while running, one per fired cut_after().
  uint64_t cuts() const;
  /// Bytes written to the receiving side in `way`, over all connections.
  uint64_t bytes_forwarded(direction way) const;

 private:
  class relay_loop;  // the relay thread's state and work (fault_proxy.cpp)

  struct armed_cut {
    uint64_t bytes = 0;
    direction way = direction::to_target;
  };

  /// What the callers asked for; the relay thread takes a copy at the top of each round.
  struct controls {
    bool stalled = false;
    bool refusing = false;
    std::string source_address;
    uint64_t cut_requests = 0;           // cut() calls so far
    std::optional<armed_cut> cut_after;  // armed, not yet taken by the relay thread
  };

  /// Applies `change` to the controls and waits until the relay thread has acted on it.
  template <class Change>
  void change_controls(Change change);
  void wake_relay();

  std::string target_host_;
  uint16_t target_port_;

  // Set by start() before the relay thread exists, read by it afterwards.
  std::vector<sockaddr_storage> target_addresses_;
  unique_fd listener_;
  unique_fd wake_;  // eventfd: the controls changed or stop() was called
  std::atomic<uint16_t> port_{0};
  std::thread relay_thread_;

  // Guards controls_, the two generations, stopping_ and relay_running_.
  std::mutex control_mutex_;
  std::condition_variable controls_applied_;  // signalled when applied_generation_ moves
  controls controls_;
  uint64_t requested_generation_ = 0;  // bumped by every control call
  uint64_t applied_generation_ = 0;    // the last generation the relay thread acted on
  bool stopping_ = false;
  bool relay_running_ = false;

  std::atomic<uint64_t> connections_accepted_{0};
  std::atomic<uint64_t> cuts_{0};
  std::atomic<uint64_t> bytes_to_target_{0};
  std::atomic<uint64_t> bytes_to_client_{0};
};

}  // namespace ferry::tools
