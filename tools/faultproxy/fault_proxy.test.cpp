#include "faultproxy/fault_proxy.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace ferry::tools {
namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

// How long a test waits for what should happen at once: far more than a loaded machine
// needs, far less than the few seconds a test may take.
constexpr auto patience = 2s;

template <class Condition>
bool eventually(Condition condition, clock::duration limit = patience) {
  auto deadline = clock::now() + limit;
  while (!condition()) {
    if (clock::now() >= deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

std::string random_bytes(size_t size, unsigned seed) {
  std::mt19937 generator(seed);
  std::string bytes(size, '\0');
  for (char& b : bytes) b = static_cast<char>(generator());
  return bytes;
}

// Compares without printing megabytes when they differ.
::testing::AssertionResult same_bytes(const std::string& actual, const std::string& expected) {
  if (actual == expected) return ::testing::AssertionSuccess();
  size_t common = std::min(actual.size(), expected.size());
  size_t first_difference = 0;
  while (first_difference < common && actual[first_difference] == expected[first_difference]) ++first_difference;
  return ::testing::AssertionFailure() << "got " << actual.size() << " bytes, expected " << expected.size()
                                       << ", first difference at byte " << first_difference;
}

// Blocking calls on the tests' sockets give up after a while, so a broken proxy fails a
// test instead of hanging it.
void bound_blocking_calls(int fd) {
  timeval limit{3, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
}

/// Listens on 127.0.0.1 (a port the system picks) and hands each connection it accepts to
/// the test, with the address it came from.
class loopback_server {
 public:
  struct accepted {
    unique_fd fd;
    std::string peer_address;
  };

  loopback_server() {
    std::string error;
    listener_ = listen_tcp("127.0.0.1", 0, port_, error);
    EXPECT_TRUE(listener_.valid()) << error;
    stop_.reset(::eventfd(0, EFD_CLOEXEC));
    thread_ = std::thread([this] { accept_until_stopped(); });
  }

  ~loopback_server() {
    uint64_t one = 1;
    ssize_t ignored = ::write(stop_.get(), &one, sizeof one);
    (void)ignored;
    thread_.join();
  }

  uint16_t port() const { return port_; }

  size_t accepted_count() {
    std::lock_guard lock(mutex_);
    return accepted_count_;
  }

  /// The next connection accepted; an invalid fd if none comes within `patience`.
  accepted next_connection() {
    std::unique_lock lock(mutex_);
    arrived_.wait_for(lock, patience, [&] { return !waiting_.empty(); });
    if (waiting_.empty()) return {};
    accepted next = std::move(waiting_.front());
    waiting_.pop_front();
    return next;
  }

 private:
  void accept_until_stopped() {
    for (;;) {
      pollfd fds[2] = {{stop_.get(), POLLIN, 0}, {listener_.get(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) continue;
      if (fds[0].revents != 0) return;
      sockaddr_in peer{};
      socklen_t length = sizeof peer;
      int fd = ::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&peer), &length, SOCK_CLOEXEC);
      if (fd < 0) continue;
      char address[INET_ADDRSTRLEN] = {};
      ::inet_ntop(AF_INET, &peer.sin_addr, address, sizeof address);
      bound_blocking_calls(fd);
      std::lock_guard lock(mutex_);
      waiting_.push_back({unique_fd(fd), address});
      ++accepted_count_;
      arrived_.notify_all();
    }
  }

  unique_fd listener_;
  uint16_t port_ = 0;
  unique_fd stop_;  // eventfd
  std::thread thread_;

  // Guards waiting_ and accepted_count_, filled by the accepting thread.
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<accepted> waiting_;
  size_t accepted_count_ = 0;
};

unique_fd try_connect(uint16_t port, std::string& error) {
  endpoint where;
  where.host = "127.0.0.1";
  where.port = port;
  unique_fd fd = connect_endpoint(where, 2000, error);
  if (fd.valid()) bound_blocking_calls(fd.get());
  return fd;
}

// A client offering a small receive window, so that what the proxy writes to it waits in
// the proxy's socket until the client reads.
unique_fd connect_with_small_window(uint16_t port) {
  unique_fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  // Before connect(): the window is offered in the handshake.
  int size = 16 * 1024;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0) << std::strerror(errno);
  bound_blocking_calls(fd.get());
  return fd;
}

unique_fd connect_to(uint16_t port) {
  std::string error;
  unique_fd fd = try_connect(port, error);
  EXPECT_TRUE(fd.valid()) << error;
  return fd;
}

/// How a stream looked when a test stopped reading it.
enum class stream_end {
  open,    ///< nothing ended it before the wait ran out
  closed,  ///< the peer's FIN (recv returned 0)
  reset,   ///< the peer's RST (ECONNRESET)
};

std::ostream& operator<<(std::ostream& out, stream_end end) {
  switch (end) {
    case stream_end::open: return out << "open";
    case stream_end::closed: return out << "closed";
    case stream_end::reset: return out << "reset";
  }
  return out;
}

struct received {
  std::string data;
  stream_end end = stream_end::open;
};

/// Reads until the stream ends (FIN or RST) or `limit` passes.
received read_until_end(int fd, clock::duration limit = patience) {
  received result;
  if (fd < 0) {
    ADD_FAILURE() << "read_until_end on a socket that is not connected";
    return result;
  }
  auto deadline = clock::now() + limit;
  std::vector<char> buffer(64 * 1024);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0) return result;
    pollfd readable{fd, POLLIN, 0};
    if (::poll(&readable, 1, static_cast<int>(left.count())) <= 0) continue;
    ssize_t n = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (n > 0) {
      result.data.append(buffer.data(), static_cast<size_t>(n));
    } else if (n == 0) {
      result.end = stream_end::closed;
      return result;
    } else if (errno != EAGAIN && errno != EINTR) {
      EXPECT_EQ(errno, ECONNRESET) << std::strerror(errno);
      result.end = stream_end::reset;
      return result;
    }
  }
}

/// Reads `size` bytes; fewer if the stream ends or `patience` runs out first.
std::string read_exactly(int fd, size_t size) {
  std::string data;
  if (fd < 0) {
    ADD_FAILURE() << "read_exactly on a socket that is not connected";
    return data;
  }
  auto deadline = clock::now() + patience;
  std::vector<char> buffer(64 * 1024);
  while (data.size() < size) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0) break;
    pollfd readable{fd, POLLIN, 0};
    if (::poll(&readable, 1, static_cast<int>(left.count())) <= 0) continue;
    ssize_t n = ::recv(fd, buffer.data(), std::min(buffer.size(), size - data.size()), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;
    if (n > 0) data.append(buffer.data(), static_cast<size_t>(n));
  }
  return data;
}

/// Connects to a proxy that should reset the connection at once, and says how it ended.
/// The reset may come before connect() returns (the kernel completes the handshake before
/// the proxy accepts), so a connect() failing with ECONNRESET counts as a reset too.
stream_end connect_and_read_until_end(uint16_t port) {
  std::string error;
  unique_fd fd = try_connect(port, error);
  if (!fd.valid()) {
    EXPECT_EQ(error, std::strerror(ECONNRESET));
    return stream_end::reset;
  }
  return read_until_end(fd.get()).end;
}

/// True if nothing arrives on `fd` for `during`: the one thing a test can only see by
/// waiting.
bool stays_quiet(int fd, std::chrono::milliseconds during) {
  pollfd readable{fd, POLLIN, 0};
  return ::poll(&readable, 1, static_cast<int>(during.count())) == 0;
}

void send_text(int fd, const std::string& text) { ASSERT_TRUE(write_all(fd, text.data(), text.size())); }

// Sends text each way through the proxy and checks it arrives.
void expect_round_trip(int client, int target_side, const std::string& text) {
  send_text(client, text);
  EXPECT_EQ(read_exactly(target_side, text.size()), text);
  send_text(target_side, text);
  EXPECT_EQ(read_exactly(client, text.size()), text);
}

// Sends back everything it reads until the stream ends, then ends its side too.
void echo_until_end(int fd) {
  std::vector<char> buffer(64 * 1024);
  for (;;) {
    ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n <= 0 || !write_all(fd, buffer.data(), static_cast<size_t>(n))) break;
  }
  ::shutdown(fd, SHUT_WR);
}

// Writes everything, then ends the stream, from a thread of its own so the test can
// read the answer meanwhile.
std::thread send_then_end(int fd, const std::string& data) {
  return std::thread([fd, &data] {
    EXPECT_TRUE(write_all(fd, data.data(), data.size()));
    ::shutdown(fd, SHUT_WR);
  });
}

class fault_proxy_test : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(proxy.start(error)) << error;
    ASSERT_NE(proxy.port(), 0);
  }

  loopback_server server;
  fault_proxy proxy{"127.0.0.1", server.port()};
};

TEST_F(fault_proxy_test, relays_megabytes_both_ways_byte_for_byte_and_passes_on_the_end) {
  unique_fd client = connect_to(proxy.port());
  loopback_server::accepted target_side = server.next_connection();
  ASSERT_TRUE(target_side.fd.valid());
  std::thread echo([fd = target_side.fd.get()] { echo_until_end(fd); });
  const std::string payload = random_bytes(4 << 20, 1);

  std::thread sender = send_then_end(client.get(), payload);
  received echoed = read_until_end(client.get(), 4s);
  sender.join();
  echo.join();

  // The client's FIN reached the echo server, whose FIN came back: both ends passed on.
  EXPECT_EQ(echoed.end, stream_end::closed);
  EXPECT_TRUE(same_bytes(echoed.data, payload));
  EXPECT_EQ(proxy.bytes_forwarded(direction::to_target), payload.size());
  EXPECT_TRUE(eventually([&] { return proxy.bytes_forwarded(direction::to_client) == payload.size(); }));
}

TEST_F(fault_proxy_test, relays_many_connections_at_once) {
  constexpr size_t count = 6;
  constexpr size_t size = 512 * 1024;
  std::vector<unique_fd> clients;
  std::vector<std::thread> echoes;
  std::vector<loopback_server::accepted> target_sides;
  for (size_t i = 0; i < count; ++i) {
    clients.push_back(connect_to(proxy.port()));
    target_sides.push_back(server.next_connection());
    ASSERT_TRUE(target_sides.back().fd.valid());
  }
  for (auto& side : target_sides) echoes.emplace_back([fd = side.fd.get()] { echo_until_end(fd); });

  std::vector<std::string> payloads;
  for (size_t i = 0; i < count; ++i) payloads.push_back(random_bytes(size, 10 + i));
  std::vector<received> echoed(count);
  std::vector<std::thread> clients_at_work;
  for (size_t i = 0; i < count; ++i) {
    clients_at_work.emplace_back([&, i] {
      std::thread sender = send_then_end(clients[i].get(), payloads[i]);
      echoed[i] = read_until_end(clients[i].get(), 4s);
      sender.join();
    });
  }
  for (auto& t : clients_at_work) t.join();
  for (auto& t : echoes) t.join();

  for (size_t i = 0; i < count; ++i) {
    EXPECT_EQ(echoed[i].end, stream_end::closed) << "connection " << i;
    EXPECT_TRUE(same_bytes(echoed[i].data, payloads[i])) << "connection " << i;
  }
  EXPECT_EQ(proxy.connections_accepted(), count);
}

TEST_F(fault_proxy_test, half_close_is_passed_on_and_the_other_way_stays_open) {
  unique_fd client = connect_to(proxy.port());
  loopback_server::accepted target_side = server.next_connection();
  ASSERT_TRUE(target_side.fd.valid());

  send_text(client.get(), "request");
  ::shutdown(client.get(), SHUT_WR);
  received request = read_until_end(target_side.fd.get());
  EXPECT_EQ(request.data, "request");
  EXPECT_EQ(request.end, stream_end::closed);

  send_text(target_side.fd.get(), "response");
  ::shutdown(target_side.fd.get(), SHUT_WR);
  received response = read_until_end(client.get());
  EXPECT_EQ(response.data, "response");
  EXPECT_EQ(response.end, stream_end::closed);
}

TEST_F(fault_proxy_test, cut_resets_both_sides_and_later_connections_are_relayed) {
  unique_fd client = connect_to(proxy.port());
  loopback_server::accepted target_side = server.next_connection();
  ASSERT_TRUE(target_side.fd.valid());
  expect_round_trip(client.get(), target_side.fd.get(), "before the cut");

  proxy.cut();
  EXPECT_EQ(proxy.cuts(), 1u);
  received at_client = read_until_end(client.get());
  received at_target = read_until_end(target_side.fd.get());
  EXPECT_EQ(at_client.end, stream_end::reset);
  EXPECT_EQ(at_target.end, stream_end::reset);
  EXPECT_EQ(at_client.data, "");
  EXPECT_EQ(at_target.data, "");

  unique_fd again = connect_to(proxy.port());
  loopback_server::accepted target_again = server.next_connection();
  ASSERT_TRUE(target_again.fd.valid());
  expect_round_trip(again.get(), target_again.fd.get(), "after the cut");
  EXPECT_EQ(proxy.cuts(), 1u);
}

TEST_F(fault_proxy_test, cut_after_passes_exactly_that_many_bytes_to_the_target_once) {
  unique_fd client = connect_to(proxy.port());
  loopback_server::accepted target_side = server.next_connection();
  ASSERT_TRUE(target_side.fd.valid());
  const std::string message = random_bytes(5000, 2);

  proxy.cut_after(1000, direction::to_target);
  send_text(client.get(), message);
  received at_target = read_until_end(target_side.fd.get());
  EXPECT_EQ(at_target.end, stream_end::reset);
  EXPECT_TRUE(same_bytes(at_target.data, message.substr(0, 1000)));
  EXPECT_EQ(read_until_end(client.get()).end, stream_end::reset);
  EXPECT_EQ(proxy.cuts(), 1u);
  EXPECT_EQ(proxy.bytes_forwarded(direction::to_target), 1000u);

  // Fired once: the next connection carries the whole message.
  unique_fd again = connect_to(proxy.port());
  loopback_server::accepted target_again = server.next_connection();
  ASSERT_TRUE(target_again.fd.valid());
  send_text(again.get(), message);
  EXPECT_TRUE(same_bytes(read_exactly(target_again.fd.get(), message.size()), message));
  EXPECT_EQ(proxy.cuts(), 1u);
}

TEST_F(fault_proxy_test, cut_after_passes_exactly_that_many_bytes_to_the_client_over_several_writes) {
  unique_fd client = connect_to(proxy.port());
  loopback_server::accepted target_side = server.next_connection();
  ASSERT_TRUE(target_side.fd.valid());
  // More than one buffer's worth, so the limit applies across several writes.
  const std::string message = random_bytes(1 << 20, 3);
  constexpr size_t allowed = 300001;

  proxy.cut_after(allowed, direction::to_client);
  std::thread sender([&] {
    // The cut may reset the connection before all of it is written.
    write_all(target_side.fd.get(), message.data(), message.size());
  });
  received at_client = read_until_end(client.get());
  sender.join();
  EXPECT_EQ(at_client.end, stream_end::reset);
  EXPECT_TRUE(same_bytes(at_client.data, message.substr(0, allowed)));
  EXPECT_EQ(proxy.bytes_forwarded(direction::to_client), allowed);
  EXPECT_EQ(proxy.cuts(), 1u);
}

TEST_F(fault_proxy_test, cut_after_waits_until_a_slow_reader_has_every_byte) {
  unique_fd client = connect_with_small_window(proxy.port());
  loopback_server::accepted target_side = server.next_connection();
  ASSERT_TRUE(target_side.fd.valid());
  const std::string message = random_bytes(256 * 1024, 6);
  constexpr size_t allowed = 200000;

  proxy.cut_after(allowed, direction::to_client);
  send_text(target_side.fd.get(), message);
  // Written by the proxy, most of it still queued behind the client's small window.
  ASSERT_TRUE(eventually([&] { return proxy.bytes_forwarded(direction::to_client) == allowed; }));
  received at_client = read_until_end(client.get());
  EXPECT_EQ(at_client.end, stream_end::reset);
  EXPECT_TRUE(same_bytes(at_client.data, message.substr(0, allowed)));
  EXPECT_EQ(proxy.cuts(), 1u);
}

TEST_F(fault_proxy_test, stall_holds_data_both_ways_until_released) {
  unique_fd client = connect_to(proxy.port());
  loopback_server::accepted target_side = server.next_connection();
  ASSERT_TRUE(target_side.fd.valid());
  expect_round_trip(client.get(), target_side.fd.get(), "x");
  ASSERT_TRUE(eventually([&] { return proxy.bytes_forwarded(direction::to_client) == 1; }));

  proxy.stall(true);
  const std::string up = random_bytes(100000, 4);
  const std::string down = random_bytes(100000, 5);
  send_text(client.get(), up);
  send_text(target_side.fd.get(), down);
  EXPECT_TRUE(stays_quiet(target_side.fd.get(), 200ms));
  EXPECT_TRUE(stays_quiet(client.get(), 50ms));
  EXPECT_EQ(proxy.bytes_forwarded(direction::to_target), 1u);
  EXPECT_EQ(proxy.bytes_forwarded(direction::to_client), 1u);

  proxy.stall(false);
  EXPECT_TRUE(same_bytes(read_exactly(target_side.fd.get(), up.size()), up));
  EXPECT_TRUE(same_bytes(read_exactly(client.get(), down.size()), down));
}

TEST_F(fault_proxy_test, refuse_resets_new_connections_and_leaves_existing_ones_alone) {
  unique_fd client = connect_to(proxy.port());
  loopback_server::accepted target_side = server.next_connection();
  ASSERT_TRUE(target_side.fd.valid());

  proxy.refuse(true);
  auto began = clock::now();
  EXPECT_EQ(connect_and_read_until_end(proxy.port()), stream_end::reset);
  EXPECT_LT(clock::now() - began, 1s);
  EXPECT_EQ(server.accepted_count(), 1u);
  expect_round_trip(client.get(), target_side.fd.get(), "still here");

  proxy.refuse(false);
  unique_fd later = connect_to(proxy.port());
  loopback_server::accepted target_later = server.next_connection();
  ASSERT_TRUE(target_later.fd.valid());
  expect_round_trip(later.get(), target_later.fd.get(), "welcome back");
  EXPECT_EQ(proxy.connections_accepted(), 3u);
}

TEST_F(fault_proxy_test, source_address_changes_the_address_the_target_sees) {
  proxy.set_source_address("127.0.0.2");
  unique_fd roamed = connect_to(proxy.port());
  loopback_server::accepted seen_roamed = server.next_connection();
  ASSERT_TRUE(seen_roamed.fd.valid());
  EXPECT_EQ(seen_roamed.peer_address, "127.0.0.2");
  expect_round_trip(roamed.get(), seen_roamed.fd.get(), "from elsewhere");

  proxy.set_source_address("");
  unique_fd home = connect_to(proxy.port());
  loopback_server::accepted seen_home = server.next_connection();
  ASSERT_TRUE(seen_home.fd.valid());
  EXPECT_EQ(seen_home.peer_address, "127.0.0.1");
  // Changing the address leaves the connections made before alone.
  expect_round_trip(roamed.get(), seen_roamed.fd.get(), "still from elsewhere");
}

TEST_F(fault_proxy_test, a_source_address_that_is_no_ip_address_fails_new_connections) {
  proxy.set_source_address("not-an-address");
  EXPECT_EQ(connect_and_read_until_end(proxy.port()), stream_end::reset);
  EXPECT_EQ(server.accepted_count(), 0u);
}

TEST_F(fault_proxy_test, counters_count_connections_cuts_and_bytes_per_direction) {
  EXPECT_EQ(proxy.connections_accepted(), 0u);
  EXPECT_EQ(proxy.cuts(), 0u);
  EXPECT_EQ(proxy.bytes_forwarded(direction::to_target), 0u);
  EXPECT_EQ(proxy.bytes_forwarded(direction::to_client), 0u);

  unique_fd client = connect_to(proxy.port());
  loopback_server::accepted target_side = server.next_connection();
  ASSERT_TRUE(target_side.fd.valid());
  send_text(client.get(), std::string(300, 'u'));
  EXPECT_EQ(read_exactly(target_side.fd.get(), 300).size(), 300u);
  send_text(target_side.fd.get(), std::string(700, 'd'));
  EXPECT_EQ(read_exactly(client.get(), 700).size(), 700u);
  EXPECT_TRUE(eventually([&] { return proxy.bytes_forwarded(direction::to_target) == 300; }));
  EXPECT_TRUE(eventually([&] { return proxy.bytes_forwarded(direction::to_client) == 700; }));
  EXPECT_EQ(proxy.connections_accepted(), 1u);

  proxy.cut();
  EXPECT_EQ(proxy.cuts(), 1u);

  proxy.cut_after(10, direction::to_client);
  unique_fd second = connect_to(proxy.port());
  loopback_server::accepted second_target = server.next_connection();
  ASSERT_TRUE(second_target.fd.valid());
  send_text(second_target.fd.get(), std::string(20, 'd'));
  EXPECT_EQ(read_until_end(second.get()).data.size(), 10u);
  EXPECT_EQ(proxy.cuts(), 2u);
  EXPECT_EQ(proxy.bytes_forwarded(direction::to_client), 710u);
  EXPECT_EQ(proxy.bytes_forwarded(direction::to_target), 300u);
  EXPECT_EQ(proxy.connections_accepted(), 2u);
}

TEST(fault_proxy, a_target_that_is_down_resets_the_client) {
  // A port that was free a moment ago; nothing listens on it now.
  uint16_t dead_port = 0;
  std::string error;
  listen_tcp("127.0.0.1", 0, dead_port, error);
  ASSERT_NE(dead_port, 0);

  fault_proxy proxy("127.0.0.1", dead_port);
  ASSERT_TRUE(proxy.start(error)) << error;
  EXPECT_EQ(connect_and_read_until_end(proxy.port()), stream_end::reset);
  EXPECT_EQ(proxy.connections_accepted(), 1u);
}

TEST(fault_proxy, stop_resets_relayed_connections_even_stalled_ones) {
  loopback_server server;
  fault_proxy proxy("127.0.0.1", server.port());
  std::string error;
  ASSERT_TRUE(proxy.start(error)) << error;
  unique_fd client = connect_to(proxy.port());
  loopback_server::accepted target_side = server.next_connection();
  ASSERT_TRUE(target_side.fd.valid());
  proxy.stall(true);
  send_text(client.get(), "held");

  proxy.stop();
  EXPECT_EQ(read_until_end(client.get()).end, stream_end::reset);
  EXPECT_EQ(read_until_end(target_side.fd.get()).end, stream_end::reset);
  // Controls after stop() return at once.
  proxy.cut();
  proxy.stall(false);
  EXPECT_EQ(proxy.cuts(), 0u);
}

TEST(fault_proxy, controls_given_before_start_apply_once_it_runs) {
  loopback_server server;
  fault_proxy proxy("127.0.0.1", server.port());
  proxy.refuse(true);
  proxy.cut();  // nothing to cut yet: not counted
  std::string error;
  ASSERT_TRUE(proxy.start(error)) << error;
  EXPECT_EQ(connect_and_read_until_end(proxy.port()), stream_end::reset);
  EXPECT_EQ(server.accepted_count(), 0u);
  EXPECT_EQ(proxy.cuts(), 0u);
}

TEST(fault_proxy, listens_on_the_port_it_is_given) {
  uint16_t free_port = 0;
  std::string error;
  listen_tcp("127.0.0.1", 0, free_port, error);  // closed at once: the port is free again
  ASSERT_NE(free_port, 0);

  loopback_server server;
  fault_proxy proxy("127.0.0.1", server.port());
  ASSERT_TRUE(proxy.start(free_port, error)) << error;
  EXPECT_EQ(proxy.port(), free_port);
  unique_fd client = connect_to(free_port);
  loopback_server::accepted target_side = server.next_connection();
  ASSERT_TRUE(target_side.fd.valid());
  expect_round_trip(client.get(), target_side.fd.get(), "on a chosen port");
}

}  // namespace
}  // namespace ferry::tools
