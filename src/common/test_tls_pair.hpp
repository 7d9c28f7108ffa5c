// For tests: a TLS connection over a Unix socket pair, both ends in this
// process: a Ferry client channel (or a bare OpenSSL client, for what the
// client channel never does: close_notify, key updates) and a server
// channel whose handshake is done, as the daemon's listener leaves it.
#pragma once

#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/socket.hpp"
#include "common/test_certificates.hpp"
#include "common/tls.hpp"

namespace ferry::tls_testing {

/// A temporary directory removed at the end of the test.
struct scratch_dir {
  scratch_dir() {
    char pattern[] = "/tmp/ferry-tls-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~scratch_dir() { std::filesystem::remove_all(path); }
  std::string path;
};

/// A server context and a client context that trusts it.
struct test_contexts {
  scratch_dir dir;
  test_pki pki;
  std::shared_ptr<tls::context> server, client;
};

/// `suites`: the client's TLS 1.3 cipher suites (empty: OpenSSL's list as Ferry sets it).
inline bool make_test_contexts(test_contexts& out, const std::string& suites, std::string& error) {
  std::string warning;
  if (!make_test_pki(out.dir.path, certificate_validity::current, out.pki)) {
    error = "cannot write test certificates";
    return false;
  }
  out.server = tls::context::for_server(out.pki.server_cert, out.pki.server_key, warning, error);
  out.client = out.server ? tls::context::for_client(out.pki.ca_cert, error) : nullptr;
  if (!out.client) return false;
  if (!suites.empty() && SSL_CTX_set_ciphersuites(out.client->native(), suites.c_str()) != 1) {
    error = "unknown cipher suites " + suites;
    return false;
  }
  return true;
}

/// Drives a server channel's handshake as the listener does: false with `error`.
inline bool finish_server_handshake(tls::channel& server, int fd, std::string& error) {
  for (;;) {
    short events = 0;
    switch (server.handshake(error)) {
      case tls::channel::step::done: return true;
      case tls::channel::step::failed: return false;
      case tls::channel::step::want_read: events = POLLIN; break;
      case tls::channel::step::want_write: events = POLLOUT; break;
    }
    pollfd p{fd, events, 0};
    if (::poll(&p, 1, 10000) <= 0) {
      error = "server handshake: no progress in 10 s";
      return false;
    }
  }
}

struct ssl_free {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};

/// Both ends of one connection.
struct tls_pair {
  unique_fd client_fd, server_fd;
  std::unique_ptr<tls::channel> client;       // unless `raw_client` is used
  std::unique_ptr<SSL, ssl_free> raw_client;  // a blocking OpenSSL client on client_fd
  std::unique_ptr<tls::channel> server;
  // connection_path::relayed: the test's ends, between client_fd and server_fd.
  unique_fd relay_client, relay_server;
};

enum class client_kind { ferry_channel, raw_openssl };

enum class connection_path {
  direct,   // client_fd and server_fd are the two ends of one socket pair
  relayed,  // through the test: it carries the handshake, and then what it wants
};

/// Copies bytes each way between two sockets until `stop`.
inline void relay_until(int a, int b, const std::atomic<bool>& stop) {
  uint8_t buffer[16384];
  while (!stop) {
    pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
    if (::poll(p, 2, 5) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (!(p[i].revents & POLLIN)) continue;
      ssize_t n = ::recv(p[i].fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n <= 0 || !write_all(i == 0 ? b : a, buffer, static_cast<size_t>(n))) return;
    }
  }
}

inline bool make_tls_pair(const test_contexts& contexts, client_kind kind, tls_pair& out, std::string& error,
                          connection_path path = connection_path::direct) {
  int fds[2], relay[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0 ||
      (path == connection_path::relayed && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, relay) != 0)) {
    error = "socketpair failed";
    return false;
  }
  out.client_fd = unique_fd(fds[0]);
  if (path == connection_path::relayed) {
    out.relay_client = unique_fd(fds[1]);
    out.relay_server = unique_fd(relay[0]);
    out.server_fd = unique_fd(relay[1]);
  } else {
    out.server_fd = unique_fd(fds[1]);
  }
  const int server_fd = out.server_fd.get(), client_fd = out.client_fd.get();
  out.server = tls::channel::accept(*contexts.server, server_fd, error);
  if (!out.server) return false;
  std::atomic<bool> handshake_over{false};
  std::thread relaying;
  if (path == connection_path::relayed)
    relaying = std::thread([&] { relay_until(out.relay_client.get(), out.relay_server.get(), handshake_over); });
  std::string server_error;
  bool server_done = false;
  std::thread server_side([&] { server_done = finish_server_handshake(*out.server, server_fd, server_error); });
  bool client_done = false;
  if (kind == client_kind::ferry_channel) {
    out.client = tls::channel::connect(*contexts.client, client_fd, "127.0.0.1", 10000, error);
    client_done = out.client != nullptr;
  } else {
    out.raw_client.reset(SSL_new(contexts.client->native()));
    SSL* ssl = out.raw_client.get();
    client_done = ssl && SSL_set_fd(ssl, client_fd) == 1 && SSL_connect(ssl) == 1;
    if (!client_done) error = "the OpenSSL client's handshake failed";
  }
  if (!client_done) ::shutdown(server_fd, SHUT_RDWR);  // unblocks the server side
  server_side.join();
  // Both ends are done: nothing is on its way (no tickets).
  handshake_over = true;
  if (relaying.joinable()) relaying.join();
  if (client_done && !server_done) error = server_error;
  if (!client_done || !server_done) return false;
  // A test that goes wrong fails rather than hangs.
  out.server->set_receive_timeout(10000);
  if (out.client) out.client->set_receive_timeout(10000);
  return true;
}

/// `size` bytes that differ with `seed`.
inline std::vector<uint8_t> test_bytes(size_t size, uint32_t seed) {
  std::vector<uint8_t> bytes(size);
  std::mt19937 random(seed);
  for (auto& b : bytes) b = static_cast<uint8_t>(random());
  return bytes;
}

/// Reads exactly `size` bytes from a socket, blocking or not; empty on failure.
inline std::vector<uint8_t> read_raw(int fd, size_t size) {
  std::vector<uint8_t> bytes(size);
  size_t done = 0;
  while (done < size) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) return {};
    ssize_t n = ::recv(fd, bytes.data() + done, size - done, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return {};
    if (n > 0) done += static_cast<size_t>(n);
  }
  return bytes;
}

/// One whole TLS record (header and body) as it is on the wire.
inline std::vector<uint8_t> read_raw_record(int fd) {
  std::vector<uint8_t> record = read_raw(fd, 5);
  if (record.empty()) return record;
  std::vector<uint8_t> body = read_raw(fd, size_t{record[3]} << 8 | record[4]);
  record.insert(record.end(), body.begin(), body.end());
  return record;
}

/// Reads exactly `size` bytes from a channel, waiting; false on an end or error.
inline bool read_exact(tls::channel& c, void* data, size_t size) {
  auto* p = static_cast<uint8_t*>(data);
  while (size > 0) {
    ssize_t n = c.read_some(p, size, true);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

inline std::vector<uint8_t> read_bytes(tls::channel& c, size_t size) {
  std::vector<uint8_t> bytes(size);
  if (!read_exact(c, bytes.data(), size)) bytes.clear();
  return bytes;
}

}  // namespace ferry::tls_testing

namespace ferry::tls_testing {

/// What the main process does: exports the server channel's state, then lets
/// the OpenSSL channel go. The state's secrets are wiped when it is.
inline std::optional<tls::handoff_state> export_and_free(tls_pair& pair, std::string& error) {
  auto state = pair.server->export_for_handoff(error);
  pair.server.reset();
  return state;
}

/// What the worker does: continues the connection over `fd` (the pair's
/// server socket, or another that carries its bytes).
inline bool adopt_into(tls_pair& pair, tls::handoff_state state, int fd, std::string& error) {
  pair.server = tls::channel::adopt(std::move(state), fd, error);
  if (!pair.server) return false;
  pair.server->set_receive_timeout(10000);
  return true;
}

/// Some messages each way on the channels as they are (OpenSSL's before a
/// handover): small ones and several records' worth, so that the record
/// sequence numbers are well past 0.
inline bool exchange_messages(tls_pair& pair, uint32_t seed) {
  for (size_t size : {1u, 17u, 500u, 40000u, 3u}) {
    std::vector<uint8_t> up = test_bytes(size, seed++), down = test_bytes(size, seed++);
    if (!pair.client->write_all(up.data(), up.size()) || read_bytes(*pair.server, size) != up) return false;
    if (!pair.server->write_all(down.data(), down.size()) || read_bytes(*pair.client, size) != down) return false;
  }
  return true;
}

/// The raw OpenSSL client's writes and reads, whole.
inline bool raw_write(SSL* ssl, const std::vector<uint8_t>& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    size_t n = 0;
    if (SSL_write_ex(ssl, bytes.data() + done, bytes.size() - done, &n) != 1) return false;
    done += n;
  }
  return true;
}

inline std::vector<uint8_t> raw_read(SSL* ssl, size_t size) {
  std::vector<uint8_t> bytes(size);
  size_t done = 0;
  while (done < size) {
    size_t n = 0;
    if (SSL_read_ex(ssl, bytes.data() + done, size - done, &n) != 1) return {};
    done += n;
  }
  return bytes;
}

}  // namespace ferry::tls_testing
