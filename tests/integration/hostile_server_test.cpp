// A hostile or broken server, as libferry meets it: a relay in front of a real ferryd
// that passes everything through except what the scenario tampers with. libferry must
// end the session with a logged reason, fail the application's work with
// CL_DEVICE_NOT_AVAILABLE, and never write outside the memory the application gave it.
// Each scenario runs in a child process, which points its own loader at the relay.
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cl_helpers.hpp"
#include "common/socket.hpp"
#include "daemon.hpp"
#include "protocol/bulk_head.hpp"
#include "protocol/codec.hpp"
#include "protocol/messages.hpp"

using namespace ferry::test;
namespace p = ferry::protocol;

suite_config ferry::test::this_suite() {
  suite_config config;
  config.start_daemon = false;    // each child starts its own
  config.set_loader_env = false;  // and points its own loader at the relay
  return config;
}

namespace {

/// Relays every connection to a daemon, byte for byte, except that the first bulk_data
/// frame the daemon sends to the client on a bulk stream has its offset replaced by
/// `offset`. The stream kind is read from the client's hello.
class tampering_relay {
 public:
  tampering_relay(uint16_t target_port, uint64_t offset) : target_port_(target_port), offset_(offset) {}
  ~tampering_relay() {
    stopping_ = true;
    if (listener_.valid()) ::shutdown(listener_.get(), SHUT_RDWR);
    if (acceptor_.joinable()) acceptor_.join();
    for (auto& c : connections_) {
      ::shutdown(c->client.get(), SHUT_RDWR);
      ::shutdown(c->target.get(), SHUT_RDWR);
    }
    for (auto& c : connections_)
      for (auto& t : c->pumps)
        if (t.joinable()) t.join();
  }

  bool start(std::string& error) {
    listener_ = ferry::listen_tcp("127.0.0.1", 0, port_, error);
    if (!listener_.valid()) return false;
    acceptor_ = std::thread([this] { accept_loop(); });
    return true;
  }
  uint16_t port() const { return port_; }
  bool tampered() const { return tampered_; }

 private:
  struct relayed {
    ferry::unique_fd client;
    ferry::unique_fd target;
    std::vector<std::thread> pumps;
  };

  void accept_loop() {
    while (!stopping_) {
      pollfd pfd{listener_.get(), POLLIN, 0};
      if (::poll(&pfd, 1, 100) <= 0) continue;
      int fd = ::accept(listener_.get(), nullptr, nullptr);
      if (fd < 0) continue;
      auto c = std::make_unique<relayed>();
      c->client = ferry::unique_fd(fd);
      relayed* raw = c.get();
      connections_.push_back(std::move(c));
      raw->pumps.emplace_back([this, raw] { open_and_relay(*raw); });
    }
  }

  void open_and_relay(relayed& c) {
    // The hello says which stream this is; it goes on unchanged.
    uint8_t header[p::frame_header_size];
    if (!ferry::read_exact(c.client.get(), header, sizeof header)) return;
    const p::frame_header h = p::load_header(header);
    if (h.payload_size > 4096) return;
    std::vector<uint8_t> payload(h.payload_size);
    if (!ferry::read_exact(c.client.get(), payload.data(), payload.size())) return;
    p::hello hello;
    const char* why = "";
    const bool bulk = p::decode_payload(payload.data(), payload.size(), hello, why) &&
                      hello.stream == p::stream_kind::bulk;
    ferry::endpoint where;
    where.host = "127.0.0.1";
    where.port = target_port_;
    std::string error;
    c.target = ferry::connect_endpoint(where, 5000, error);
    if (!c.target.valid()) return;
    if (!ferry::write_all(c.target.get(), header, sizeof header) ||
        !ferry::write_all(c.target.get(), payload.data(), payload.size()))
      return;
    std::thread to_client([this, &c, bulk] { bulk ? tamper_bulk(c) : copy(c.target.get(), c.client.get()); });
    copy(c.client.get(), c.target.get());
    to_client.join();
  }

  static void copy(int from, int to) {
    std::vector<uint8_t> buffer(64 * 1024);
    for (;;) {
      ssize_t n = ::recv(from, buffer.data(), buffer.size(), 0);
      if (n <= 0 || !ferry::write_all(to, buffer.data(), static_cast<size_t>(n))) break;
    }
    ::shutdown(to, SHUT_RDWR);
    ::shutdown(from, SHUT_RDWR);
  }

  // The daemon's side of a bulk stream, frame by frame: its welcome, then chunks.
  void tamper_bulk(relayed& c) {
    std::vector<uint8_t> frame;
    for (;;) {
      frame.resize(p::frame_header_size);
      if (!ferry::read_exact(c.target.get(), frame.data(), frame.size())) break;
      const p::frame_header h = p::load_header(frame.data());
      if (h.payload_size > p::max_bulk_chunk + p::bulk_prefix_size) break;
      frame.resize(p::frame_header_size + h.payload_size);
      if (!ferry::read_exact(c.target.get(), frame.data() + p::frame_header_size, h.payload_size)) break;
      if (h.message_id == static_cast<uint16_t>(p::message_id::bulk_data) && !tampered_.exchange(true)) {
        // The prefix is transfer, offset, total (u64 each, little endian).
        std::memcpy(frame.data() + p::frame_header_size + 8, &offset_, 8);
      }
      if (!ferry::write_all(c.client.get(), frame.data(), frame.size())) break;
    }
    ::shutdown(c.client.get(), SHUT_RDWR);
    ::shutdown(c.target.get(), SHUT_RDWR);
  }

  const uint16_t target_port_;
  const uint64_t offset_;
  uint16_t port_ = 0;
  ferry::unique_fd listener_;
  std::thread acceptor_;
  std::vector<std::unique_ptr<relayed>> connections_;  // accept thread only, then the destructor
  std::atomic<bool> stopping_{false};
  std::atomic<bool> tampered_{false};
};

// The first Ferry device with a context and an in-order queue.
struct session {
  bool open() {
    cl_platform_id platform = find_ferry_platform();
    if (platform == nullptr) return false;
    auto devices = platform_devices(platform);
    if (devices.empty()) return false;
    device = devices.front();
    cl_int rc = CL_SUCCESS;
    context.reset(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc));
    if (rc != CL_SUCCESS) return false;
    queue.reset(clCreateCommandQueueWithProperties(context, device, nullptr, &rc));
    return rc == CL_SUCCESS;
  }
  cl_device_id device = nullptr;
  context_handle context;
  queue_handle queue;
};

// A read's bulk frame whose offset, added to its chunk size, wraps around 2^64 to a
// place inside the read: a check of `offset + chunk <= total` passes it, and the chunk
// lands 16 bytes before the application's destination.
FERRY_IT_CHILD(wrapping_read_offset) {
  const std::string log_path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                               "/ferry-hostile-server-" + std::to_string(::getpid()) + ".log";
  ::setenv("FERRY_LOG_FILE", log_path.c_str(), 1);
  ferry::test::daemon server;
  CHILD_CHECK(server.started(), "no daemon");
  constexpr size_t size = 4096;
  tampering_relay relay(server.port(), UINT64_MAX - 15);
  std::string error;
  CHILD_CHECK(relay.start(error), "relay: %s", error.c_str());
  set_ferry_env(loader_mode::ferry_only, "127.0.0.1:" + std::to_string(relay.port()));
  session s;
  CHILD_CHECK(s.open(), "no Ferry device, context or queue");

  std::vector<uint8_t> pattern(size);
  for (size_t i = 0; i < size; ++i) pattern[i] = static_cast<uint8_t>(i * 7 + 1);
  mem_handle buffer = create_buffer(s.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, size, pattern.data());
  CHILD_CHECK(buffer, "buffer");
  // The destination sits between two guards of a known value.
  constexpr size_t guard = 4096;
  std::vector<uint8_t> memory(guard + size + guard, 0xA5);
  uint8_t* destination = memory.data() + guard;
  const cl_int rc = clEnqueueReadBuffer(s.queue, buffer, CL_TRUE, 0, size, destination, 0, nullptr, nullptr);
  CHILD_CHECK(relay.tampered(), "the read's bytes never passed the relay");
  CHILD_CHECK(rc == CL_DEVICE_NOT_AVAILABLE, "the read returned %d", rc);
  for (size_t i = 0; i < guard; ++i) {
    CHILD_CHECK(memory[i] == 0xA5, "byte %zu before the destination changed", guard - i);
    CHILD_CHECK(memory[guard + size + i] == 0xA5, "byte %zu after the destination changed", i);
  }
  const std::string log = read_file(log_path);
  std::remove(log_path.c_str());
  CHILD_CHECK(log.find("runs past") != std::string::npos, "no reason in the log:\n%s", log.c_str());
  std::printf("PASS\n");
  return 0;
}

}  // namespace

TEST(hostile_server, a_read_chunk_whose_offset_wraps_ends_the_session_and_writes_nothing_outside) {
  expect_child_passes("wrapping_read_offset", std::chrono::seconds(60));
}
