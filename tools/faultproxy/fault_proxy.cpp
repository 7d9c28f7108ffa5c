#include "faultproxy/fault_proxy.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>

#include "common/log.hpp"
#include "common/thread_name.hpp"

namespace ferry::tools {

namespace {

using clock = std::chrono::steady_clock;

// Bytes read from one side and not yet written to the other, per direction and
// connection; large enough that a bulk transfer takes few rounds of the relay loop.
constexpr size_t flow_buffer_size = 256 * 1024;

// A fired cut_after() waits for its last bytes to leave the proxy's sockets while the
// receiver keeps taking them; after this long without progress it resets anyway, since a
// receiver that stopped reading could hold them back for ever.
constexpr auto cut_drain_patience = std::chrono::milliseconds(500);

constexpr size_t not_polled = std::numeric_limits<size_t>::max();

socklen_t address_length(const sockaddr_storage& address) {
  return address.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

bool parse_ip_address(const std::string& text, sockaddr_storage& out) {
  out = {};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
  if (::inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
  if (::inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    return true;
  }
  return false;
}

// A zero linger time makes close() send RST instead of FIN and drop whatever was still
// queued: the peer sees the connection die rather than end.
void close_with_reset(unique_fd& fd) {
  if (!fd.valid()) return;
  linger abort_on_close{1, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof abort_on_close);
  fd.reset();
}

// Bytes written to the socket that the kernel has not sent to the peer yet.
int unsent_bytes(int fd) {
  int unsent = 0;
  if (::ioctl(fd, SIOCOUTQNSD, &unsent) != 0) return 0;
  return unsent;
}

bool would_block(int error) { return error == EAGAIN || error == EWOULDBLOCK || error == EINTR; }

}  // namespace

// Everything here runs on the relay thread, which alone touches the relayed sockets;
// it reads the callers' controls under control_mutex_ at the top of every round.
class fault_proxy::relay_loop {
 public:
  explicit relay_loop(fault_proxy& proxy) : proxy_(proxy) {
    std::lock_guard lock(proxy_.control_mutex_);
    // Cuts asked for while no relay ran had nothing to cut.
    cut_requests_seen_ = proxy_.controls_.cut_requests;
  }

  void run() {
    while (apply_controls()) {
      if (draining_) fire_cut_once_drained();
      build_poll_set();
      int ready = ::poll(poll_set_.data(), poll_set_.size(), draining_ ? 1 : -1);
      if (ready < 0) {
        if (errno == EINTR) continue;
        FERRY_ERROR("faultproxy", "poll failed, the relay stops: %s", std::strerror(errno));
        break;
      }
      if (poll_set_[0].revents != 0) {
        uint64_t count;
        ssize_t ignored = ::read(proxy_.wake_.get(), &count, sizeof count);
        (void)ignored;
        continue;  // apply the new controls before anything else moves
      }
      for (auto& c : connections_) {
        if (paused()) break;  // a cut_after() fired: not one more byte
        service(*c);
      }
      std::erase_if(connections_, [](std::unique_ptr<connection>& c) {
        if (c->broken) {
          close_with_reset(c->client);
          close_with_reset(c->target);
          return true;
        }
        return c->finished();
      });
      if (poll_set_[1].revents & POLLIN) accept_new_connections();
    }
    // Stopping ends the relayed connections as abruptly as a crashed middlebox would.
    reset_all_connections();
    std::lock_guard lock(proxy_.control_mutex_);
    proxy_.relay_running_ = false;
    proxy_.controls_applied_.notify_all();
  }

 private:
  // One direction of one connection: bytes read from its source wait in `buffer` until
  // they are written to its destination.
  struct flow {
    explicit flow(direction way) : way(way) {}

    direction way;
    std::vector<char> buffer;
    size_t begin = 0;           // first byte not yet written
    size_t end = 0;             // one past the last byte read
    bool source_ended = false;  // the source sent its FIN
    bool passed_on = false;     // ...and the destination got ours (shutdown SHUT_WR)

    bool holds_data() const { return begin < end; }
    // Reading only into an empty buffer keeps a slow destination from being overrun
    // and leaves the rest in the kernel, where TCP flow control slows the sender.
    bool wants_input() const { return !source_ended && !holds_data(); }
  };

  struct connection {
    unique_fd client;
    unique_fd target;
    bool connecting = true;   // the target socket's connect() has not finished
    size_t next_address = 0;  // the target address to try when this attempt fails
    flow to_target{direction::to_target};
    flow to_client{direction::to_client};
    bool broken = false;  // a socket failed: both sides get a reset
    // Where the two sockets sit in this round's poll set.
    size_t client_slot = not_polled;
    size_t target_slot = not_polled;

    bool finished() const { return to_target.passed_on && to_client.passed_on; }
  };

  bool paused() const { return stalled_ || draining_.has_value(); }

  // Takes the callers' controls; false once stop() was called. The callers' wait ends
  // only after a cut asked for is done, so cut() returns with the connections gone.
  bool apply_controls() {
    uint64_t generation = 0;
    uint64_t new_cuts = 0;
    {
      std::lock_guard lock(proxy_.control_mutex_);
      if (proxy_.stopping_) return false;
      controls& wanted = proxy_.controls_;
      stalled_ = wanted.stalled;
      refusing_ = wanted.refusing;
      if (wanted.source_address != source_text_) take_source_address(wanted.source_address);
      if (wanted.cut_after) {
        arm(*wanted.cut_after);
        wanted.cut_after.reset();
      }
      new_cuts = wanted.cut_requests - cut_requests_seen_;
      cut_requests_seen_ = wanted.cut_requests;
      generation = proxy_.requested_generation_;
    }
    if (new_cuts > 0) {
      proxy_.cuts_ += new_cuts;
      reset_all_connections();
    }
    if (generation != acknowledged_generation_) {
      acknowledged_generation_ = generation;
      {
        std::lock_guard lock(proxy_.control_mutex_);
        proxy_.applied_generation_ = generation;
      }
      proxy_.controls_applied_.notify_all();
    }
    return true;
  }

  void take_source_address(const std::string& text) {
    source_text_ = text;
    source_.reset();
    source_unusable_ = false;
    if (text.empty()) return;
    sockaddr_storage address;
    if (parse_ip_address(text, address)) {
      source_ = address;
    } else {
      FERRY_WARN("faultproxy", "source address '%s' is not an IP address; new connections will fail",
                 text.c_str());
      source_unusable_ = true;
    }
  }

  void arm(armed_cut cut) {
    // A cut that already fired and only waits for its bytes to drain is not replaced.
    if (draining_) fire_cut();
    armed_ = cut;
    if (cut.bytes == 0) start_draining();
  }

  void fire_cut() {
    // Counted first, so whoever sees the reset also sees the count.
    ++proxy_.cuts_;
    reset_all_connections();
    armed_.reset();
    draining_.reset();
  }

  void start_draining() { draining_ = drain_progress{clock::now(), std::numeric_limits<uint64_t>::max()}; }

  // The receiver of a partial message should get every byte the proxy counted as
  // forwarded; a reset drops what the kernel still holds, so wait until it left.
  void fire_cut_once_drained() {
    uint64_t unsent = 0;
    for (auto& c : connections_) {
      if (c->connecting) continue;
      unsent += unsent_bytes(armed_->way == direction::to_target ? c->target.get() : c->client.get());
    }
    auto now = clock::now();
    if (unsent < draining_->unsent) draining_ = drain_progress{now, unsent};
    if (unsent == 0 || now - draining_->since >= cut_drain_patience) fire_cut();
  }

  void reset_all_connections() {
    for (auto& c : connections_) {
      close_with_reset(c->client);
      close_with_reset(c->target);
    }
    connections_.clear();
  }

  void build_poll_set() {
    poll_set_.clear();
    poll_set_.push_back({proxy_.wake_.get(), POLLIN, 0});
    poll_set_.push_back({proxy_.listener_.get(), POLLIN, 0});
    for (auto& c : connections_) {
      c->client_slot = c->target_slot = not_polled;
      if (paused()) continue;
      if (c->connecting) {
        c->client_slot = add_to_poll_set(c->client.get(), 0);  // only to notice a reset
        c->target_slot = add_to_poll_set(c->target.get(), POLLOUT);
        continue;
      }
      c->client_slot = add_side(c->client.get(), c->to_target, c->to_client);
      c->target_slot = add_side(c->target.get(), c->to_client, c->to_target);
    }
  }

  size_t add_to_poll_set(int fd, short events) {
    poll_set_.push_back({fd, events, 0});
    return poll_set_.size() - 1;
  }

  // One socket of a connection: `inbound` is the flow it feeds, `outbound` the flow that
  // writes to it.
  size_t add_side(int fd, const flow& inbound, const flow& outbound) {
    short events = 0;
    if (inbound.wants_input()) events |= POLLIN;
    if (outbound.holds_data()) events |= POLLOUT;
    // A socket polled for nothing still reports a reset, worth knowing while we may
    // write to it; once our FIN went out, POLLHUP would be reported for ever (the peer's
    // FIN may just be unread), so the socket stays out until it is wanted again.
    if (events == 0 && outbound.passed_on) return not_polled;
    return add_to_poll_set(fd, events);
  }

  short returned_events(size_t slot) const { return slot == not_polled ? 0 : poll_set_[slot].revents; }
  short asked_events(size_t slot) const { return slot == not_polled ? 0 : poll_set_[slot].events; }

  // Error or hang-up on a socket we were not reading: the peer reset it (a half-close
  // alone raises neither).
  bool side_failed(size_t slot) const {
    return (returned_events(slot) & (POLLERR | POLLHUP)) && !(asked_events(slot) & POLLIN);
  }

  bool side_readable(size_t slot) const {
    return (asked_events(slot) & POLLIN) && (returned_events(slot) & (POLLIN | POLLHUP | POLLERR));
  }

  void service(connection& c) {
    if (c.connecting) {
      if (returned_events(c.client_slot) & (POLLERR | POLLHUP)) {
        c.broken = true;
      } else if (returned_events(c.target_slot) != 0) {
        finish_connect(c);
      }
      return;
    }
    if (side_failed(c.client_slot) || side_failed(c.target_slot)) {
      c.broken = true;
      return;
    }
    if ((side_readable(c.client_slot) && !read_into(c.to_target, c.client.get())) ||
        (side_readable(c.target_slot) && !read_into(c.to_client, c.target.get())) ||
        !write_from(c.to_target, c.target.get()) || !write_from(c.to_client, c.client.get())) {
      c.broken = true;
      return;
    }
    pass_on_end(c.to_target, c.target.get());
    pass_on_end(c.to_client, c.client.get());
  }

  // False when the source failed (reset or error).
  static bool read_into(flow& f, int source) {
    // Allocated on first use: idle connections cost no buffer.
    if (f.buffer.empty()) f.buffer.resize(flow_buffer_size);
    ssize_t n = ::recv(source, f.buffer.data(), f.buffer.size(), MSG_DONTWAIT);
    if (n > 0) {
      f.begin = 0;
      f.end = static_cast<size_t>(n);
      return true;
    }
    if (n == 0) {
      f.source_ended = true;
      return true;
    }
    return would_block(errno);
  }

  // Writes what the flow holds, no more than an armed cut allows in its direction.
  // False when the destination failed.
  bool write_from(flow& f, int destination) {
    size_t length = f.end - f.begin;
    if (armed_ && armed_->way == f.way) length = std::min<uint64_t>(length, armed_->bytes);
    if (length == 0) return true;
    ssize_t n = ::send(destination, f.buffer.data() + f.begin, length, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) return would_block(errno);
    auto written = static_cast<size_t>(n);
    f.begin += written;
    if (f.begin == f.end) f.begin = f.end = 0;
    (f.way == direction::to_target ? proxy_.bytes_to_target_ : proxy_.bytes_to_client_) += written;
    if (armed_ && armed_->way == f.way) {
      armed_->bytes -= written;
      if (armed_->bytes == 0) start_draining();
    }
    return true;
  }

  static void pass_on_end(flow& f, int destination) {
    if (!f.source_ended || f.holds_data() || f.passed_on) return;
    ::shutdown(destination, SHUT_WR);
    f.passed_on = true;
  }

  void accept_new_connections() {
    for (;;) {
      int fd = ::accept4(proxy_.listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (!would_block(errno)) FERRY_WARN("faultproxy", "accept failed: %s", std::strerror(errno));
        return;
      }
      auto c = std::make_unique<connection>();
      c->client.reset(fd);
      ++proxy_.connections_accepted_;
      if (refusing_) {
        FERRY_DEBUG("faultproxy", "refused %s", peer_name(fd).c_str());
        close_with_reset(c->client);
        continue;
      }
      tune_stream_socket(fd);
      if (!connect_next_address(*c)) {
        close_with_reset(c->client);
        continue;
      }
      FERRY_DEBUG("faultproxy", "relaying %s", peer_name(fd).c_str());
      connections_.push_back(std::move(c));
    }
  }

  // Starts a non-blocking connect to the next target address; false when none is left.
  bool connect_next_address(connection& c) {
    if (source_unusable_) return false;
    const std::vector<sockaddr_storage>& addresses = proxy_.target_addresses_;
    while (c.next_address < addresses.size()) {
      const sockaddr_storage& address = addresses[c.next_address++];
      if (source_ && source_->ss_family != address.ss_family) {
        FERRY_WARN("faultproxy", "source address %s cannot reach a target address of another family",
                   source_text_.c_str());
        continue;
      }
      unique_fd fd(::socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
      if (!fd.valid()) {
        FERRY_WARN("faultproxy", "socket failed: %s", std::strerror(errno));
        continue;
      }
      tune_stream_socket(fd.get());
      if (source_) {
        // Let connect() pick the port, so connections to different targets may share one.
        int one = 1;
        ::setsockopt(fd.get(), IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&*source_), address_length(*source_)) != 0) {
          FERRY_WARN("faultproxy", "cannot bind to source address %s: %s", source_text_.c_str(),
                     std::strerror(errno));
          continue;
        }
      }
      if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), address_length(address)) == 0 ||
          errno == EINPROGRESS) {
        c.target = std::move(fd);
        c.connecting = true;
        return true;
      }
      FERRY_WARN("faultproxy", "cannot connect to the target: %s", std::strerror(errno));
    }
    return false;
  }

  void finish_connect(connection& c) {
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(c.target.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    if (error == 0) {
      c.connecting = false;
      return;
    }
    FERRY_WARN("faultproxy", "cannot connect to the target: %s", std::strerror(error));
    c.target.reset();
    if (!connect_next_address(c)) c.broken = true;
  }

  fault_proxy& proxy_;
  std::vector<std::unique_ptr<connection>> connections_;
  std::vector<pollfd> poll_set_;  // [0] wake, [1] listener, then the connections' sockets

  // The controls as last applied.
  bool stalled_ = false;
  bool refusing_ = false;
  std::string source_text_;
  std::optional<sockaddr_storage> source_;
  bool source_unusable_ = false;
  uint64_t cut_requests_seen_ = 0;
  uint64_t acknowledged_generation_ = 0;  // the last one told to the callers

  std::optional<armed_cut> armed_;  // bytes: how many more may pass before the cut
  // Set once the armed cut's last byte was written; from then on nothing moves until
  // the cut is done (fire_cut_once_drained).
  struct drain_progress {
    clock::time_point since;  // when `unsent` last went down
    uint64_t unsent;          // bytes still in the sockets' send queues
  };
  std::optional<drain_progress> draining_;
};

fault_proxy::fault_proxy(std::string target_host, uint16_t target_port)
    : target_host_(std::move(target_host)), target_port_(target_port) {}

fault_proxy::~fault_proxy() { stop(); }

bool fault_proxy::start(std::string& error) { return start(0, error); }

bool fault_proxy::start(uint16_t listen_port, std::string& error) {
  if (relay_thread_.joinable()) {
    error = "the proxy already runs";
    return false;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* results = nullptr;
  std::string port_text = std::to_string(target_port_);
  if (int rc = ::getaddrinfo(target_host_.c_str(), port_text.c_str(), &hints, &results); rc != 0) {
    error = "cannot resolve target '" + target_host_ + "': " + ::gai_strerror(rc);
    return false;
  }
  target_addresses_.clear();
  for (addrinfo* a = results; a != nullptr; a = a->ai_next) {
    if (a->ai_family != AF_INET && a->ai_family != AF_INET6) continue;
    sockaddr_storage address{};
    std::memcpy(&address, a->ai_addr, a->ai_addrlen);
    target_addresses_.push_back(address);
  }
  ::freeaddrinfo(results);
  if (target_addresses_.empty()) {
    error = "target '" + target_host_ + "' has no IP address";
    return false;
  }

  uint16_t bound_port = 0;
  listener_ = listen_tcp("127.0.0.1", listen_port, bound_port, error);
  if (!listener_.valid()) return false;
  // The relay thread accepts until EAGAIN rather than once per poll round.
  ::fcntl(listener_.get(), F_SETFL, ::fcntl(listener_.get(), F_GETFL) | O_NONBLOCK);
  wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_.valid()) {
    error = std::string("eventfd: ") + std::strerror(errno);
    listener_.reset();
    return false;
  }
  port_ = bound_port;
  {
    std::lock_guard lock(control_mutex_);
    stopping_ = false;
    relay_running_ = true;
  }
  relay_thread_ = std::thread([this] {
    name_this_thread("faultproxy");
    relay_loop(*this).run();
  });
  return true;
}

uint16_t fault_proxy::port() const { return port_; }

void fault_proxy::stop() {
  if (!relay_thread_.joinable()) return;
  {
    std::lock_guard lock(control_mutex_);
    stopping_ = true;
    wake_relay();
  }
  relay_thread_.join();
  listener_.reset();
  wake_.reset();
}

void fault_proxy::wake_relay() {
  uint64_t one = 1;
  ssize_t ignored = ::write(wake_.get(), &one, sizeof one);
  (void)ignored;
}

template <class Change>
void fault_proxy::change_controls(Change change) {
  std::unique_lock lock(control_mutex_);
  change(controls_);
  uint64_t generation = ++requested_generation_;
  if (!relay_running_) return;  // the next relay thread starts from these controls
  wake_relay();
  controls_applied_.wait(lock, [&] { return applied_generation_ >= generation || !relay_running_; });
}

void fault_proxy::cut() {
  change_controls([](controls& c) { ++c.cut_requests; });
}

void fault_proxy::cut_after(uint64_t bytes, direction way) {
  change_controls([&](controls& c) { c.cut_after = armed_cut{bytes, way}; });
}

void fault_proxy::stall(bool on) {
  change_controls([&](controls& c) { c.stalled = on; });
}

void fault_proxy::refuse(bool on) {
  change_controls([&](controls& c) { c.refusing = on; });
}

void fault_proxy::set_source_address(std::string ip) {
  change_controls([&](controls& c) { c.source_address = std::move(ip); });
}

uint64_t fault_proxy::connections_accepted() const { return connections_accepted_.load(); }

uint64_t fault_proxy::cuts() const { return cuts_.load(); }

uint64_t fault_proxy::bytes_forwarded(direction way) const {
  return way == direction::to_target ? bytes_to_target_.load() : bytes_to_client_.load();
}

}  // namespace ferry::tools
