#include "server/daemon/listener.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <list>

#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "protocol/auth.hpp"
#include "protocol/dispatch.hpp"
#include "server/daemon/handshake.hpp"

namespace ferry::server {

using clock = std::chrono::steady_clock;

namespace {
/// How long accepting pauses when the process is out of descriptors.
constexpr std::chrono::milliseconds accept_pause{100};
}  // namespace

// A connection on its way in: TLS or not (TCP with a certificate only), the
// TLS handshake, the hello, then the answer to the challenge (with a token).
struct listener::pending {
  enum class stage { detect, tls_handshake, hello, proof };
  unique_fd fd;        // until the stream takes it
  stream_ptr s;        // from the end of `detect`
  stage at = stage::hello;
  short events = POLLIN;  // what the stage waits for
  bool from_unix = false;
  std::string peer;
  clock::time_point deadline;
  hello_reader reader;
  hello_reader proof_reader{protocol::message_id::proof};
  protocol::nonce server_nonce{};
};

bool listener::open(const std::string& address, uint16_t port, const std::string& unix_path, std::string& error) {
  tcp_ = listen_tcp(address, port, port_, error);
  if (!tcp_.valid()) return false;
  if (!unix_path.empty()) {
    unix_ = listen_unix(unix_path, error);
    if (!unix_.valid()) return false;
    unix_path_ = unix_path;
    // Connecting needs write permission on the socket file. Session workers
    // run as another user (nobody) and dial other daemons' sockets for peer
    // links, so everybody may write; who gets in is decided as on the TCP
    // port, which every local user reaches too: by the directory's
    // permissions and by admission (the token).
    if (::chmod(unix_path.c_str(), 0666) != 0) {
      error = "chmod " + unix_path + ": " + std::strerror(errno);
      return false;
    }
  }
  wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_.valid()) {
    error = std::string("eventfd: ") + std::strerror(errno);
    return false;
  }
  return true;
}

void listener::start(std::chrono::milliseconds handshake_timeout, admission rules, hello_handler on_hello,
                     wake_handler on_wake) {
  timeout_ = handshake_timeout;
  rules_ = std::move(rules);
  on_hello_ = std::move(on_hello);
  on_wake_ = std::move(on_wake);
  thread_ = std::thread([this] {
    name_this_thread("ferryd-accept");
    run();
  });
}

void listener::wake() {
  uint64_t one = 1;
  ssize_t ignored = ::write(wake_.get(), &one, sizeof one);
  (void)ignored;
}

void listener::stop() {
  if (thread_.joinable()) {
    stopping_ = true;
    wake();
    thread_.join();
  }
  tcp_.reset();
  if (unix_.valid()) {
    unix_.reset();
    ::unlink(unix_path_.c_str());
  }
}

void listener::run() {
  std::list<pending> waiting;
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    fds.push_back({wake_.get(), POLLIN, 0});
    auto now = clock::now();
    const bool accepting = now >= accept_paused_until_;
    fds.push_back({accepting ? tcp_.get() : -1, POLLIN, 0});
    fds.push_back({accepting && unix_.valid() ? unix_.get() : -1, POLLIN, 0});
    int timeout_ms = accepting ? -1 : static_cast<int>(accept_pause.count());
    for (pending& p : waiting) {
      fds.push_back({p.s ? p.s->fd() : p.fd.get(), p.events, 0});
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(p.deadline - now).count() + 1;
      if (left < 0) left = 0;
      if (timeout_ms < 0 || left < timeout_ms) timeout_ms = static_cast<int>(left);
    }
    int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
      FERRY_ERROR("server", "poll failed in the acceptor: %s", std::strerror(errno));
      break;
    }
    if (fds[0].revents) {
      uint64_t count;
      ssize_t ignored = ::read(wake_.get(), &count, sizeof count);
      (void)ignored;
      if (stopping_) break;
      on_wake_();
    }
    for (size_t i = 1; i <= 2; ++i) {
      if (!(fds[i].revents & POLLIN)) continue;
      for (;;) {
        int fd = ::accept4(fds[i].fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
          if (errno == EINTR) continue;
          if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            // Out of descriptors (or memory): the connection waits in the
            // backlog, and the listening socket stays readable. Accepting
            // pauses a moment instead of spinning; what is open goes on.
            if (out_of_descriptors_++ % 100 == 0)
              FERRY_WARN("server", "cannot accept a connection: %s; pausing new connections for %d ms (%llu times so far)",
                         std::strerror(errno), static_cast<int>(accept_pause.count()),
                         static_cast<unsigned long long>(out_of_descriptors_));
            accept_paused_until_ = clock::now() + accept_pause;
          } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED) {
            FERRY_WARN("server", "accept failed: %s", std::strerror(errno));
          }
          break;
        }
        if (max_connections_ != 0 &&
            waiting.size() + handed_over_.open() + (elsewhere_ ? elsewhere_() : 0) >= max_connections_) {
          // Over --max-connections: closed at once, so that the daemon goes
          // on serving the connections it has. Logged now and then only: a
          // flood must not flood the log too.
          if (turned_away_++ % 1000 == 0)
            FERRY_WARN("server", "closing a new connection from %s: %zu connections are open, the limit "
                       "(--max-connections); %llu turned away so far",
                       peer_name(fd).c_str(), max_connections_, static_cast<unsigned long long>(turned_away_));
          ::close(fd);
          break;
        }
        pending p;
        p.fd.reset(fd);
        p.from_unix = i == 2;
        p.peer = peer_name(fd);
        p.deadline = clock::now() + timeout_;
        tune_stream_socket(fd);
        if (rules_.tls && !p.from_unix) {
          p.at = pending::stage::detect;
        } else {
          p.s = plain_stream(std::move(p.fd));
        }
        FERRY_DEBUG("server", "connection from %s", p.peer.c_str());
        waiting.push_back(std::move(p));
        // Listening sockets are blocking: take one connection per readiness.
        break;
      }
    }
    now = clock::now();
    size_t index = 3;
    for (auto it = waiting.begin(); it != waiting.end(); ++index) {
      pending& p = *it;
      // New arrivals have no pollfd yet (index past the end): they get polled next round.
      bool ready = index < fds.size() && (fds[index].revents & (p.events | POLLHUP | POLLERR));
      progress result = ready ? advance(p) : progress::waiting;
      if (result == progress::waiting && now >= p.deadline) {
        static constexpr const char* waited_for[] = {"no first bytes", "no TLS handshake", "no hello",
                                                     "no answer to the challenge"};
        FERRY_INFO("server", "closing %s: %s within %.3g s", p.peer.c_str(), waited_for[static_cast<int>(p.at)],
                   timeout_.count() / 1000.0);
        it = waiting.erase(it);
        continue;
      }
      if (result == progress::waiting) {
        ++it;
        continue;
      }
      if (result == progress::admitted) {
        if (!p.s->encrypted()) ::fcntl(p.s->fd(), F_SETFL, ::fcntl(p.s->fd(), F_GETFL) & ~O_NONBLOCK);
        if (max_connections_ != 0) handed_over_.track(p.s->fd());
        on_hello_(std::move(p.s), p.peer, p.reader.hello());
      }
      it = waiting.erase(it);
    }
  }
  // Pending connections close with `waiting`.
}

listener::progress listener::advance(pending& p) {
  std::string why;
  if (p.at == pending::stage::detect) {
    uint8_t first[3];
    ssize_t n = ::recv(p.fd.get(), first, sizeof first, MSG_PEEK);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      FERRY_INFO("server", "closing %s: closed before its first bytes", p.peer.c_str());
      return progress::dropped;
    }
    if (n < static_cast<ssize_t>(sizeof first)) return progress::waiting;
    if (!tls::looks_like_tls(first, sizeof first)) {
      p.s = plain_stream(std::move(p.fd));
      send_refusal(*p.s, p.peer,
                   {static_cast<int32_t>(refusal::tls_required),
                    "this daemon takes TLS connections only: set FERRY_TLS_CA to the CA file that signed its "
                    "certificate"});
      return progress::dropped;
    }
    auto channel = tls::channel::accept(*rules_.tls, p.fd.get(), why);
    if (!channel) {
      FERRY_WARN("server", "closing %s: %s", p.peer.c_str(), why.c_str());
      return progress::dropped;
    }
    unique_fd fd = std::move(p.fd);
    p.s = std::make_shared<stream>(std::move(fd), std::move(channel));
    p.at = pending::stage::tls_handshake;
  }
  if (p.at == pending::stage::tls_handshake) {
    switch (p.s->tls()->handshake(why)) {
      case tls::channel::step::want_read: p.events = POLLIN; return progress::waiting;
      case tls::channel::step::want_write: p.events = POLLOUT; return progress::waiting;
      case tls::channel::step::failed:
        FERRY_WARN("server", "closing %s: %s", p.peer.c_str(), why.c_str());
        return progress::dropped;
      case tls::channel::step::done:
        FERRY_DEBUG("server", "%s: %s", p.peer.c_str(), p.s->tls()->describe().c_str());
        p.events = POLLIN;
        p.at = pending::stage::hello;
        break;
    }
  }
  if (p.at == pending::stage::hello) {
    uint8_t first[3];
    // A TLS client of a daemon without a certificate: say so rather than
    // "first frame is message 790, not hello".
    if (!p.s->encrypted() && p.reader.untouched() && ::recv(p.s->fd(), first, sizeof first, MSG_PEEK) == 3 &&
        tls::looks_like_tls(first, sizeof first)) {
      FERRY_WARN("server", "closing %s: it starts TLS, but this daemon has no certificate (--tls-cert)",
                 p.peer.c_str());
      return progress::dropped;
    }
    switch (p.reader.read_from(*p.s, why)) {
      case hello_reader::state::need_more: return progress::waiting;
      case hello_reader::state::failed:
        FERRY_WARN("server", "closing %s: %s", p.peer.c_str(), why.c_str());
        return progress::dropped;
      case hello_reader::state::done: break;
    }
    if (rules_.token.empty()) return progress::admitted;
    // Checks of the hello itself come after the client proved the token, so
    // that strangers learn nothing about the daemon's sessions.
    if (!protocol::random_nonce(p.server_nonce)) {
      FERRY_ERROR("server", "closing %s: no randomness for a challenge", p.peer.c_str());
      return progress::dropped;
    }
    std::vector<uint8_t> frame;
    protocol::append_frame(frame, protocol::challenge{p.server_nonce});
    if (!p.s->write_all(frame.data(), frame.size())) {
      FERRY_INFO("server", "closing %s: it left before its challenge", p.peer.c_str());
      return progress::dropped;
    }
    p.at = pending::stage::proof;
  }
  switch (p.proof_reader.read_from(*p.s, why)) {
    case hello_reader::state::need_more: return progress::waiting;
    case hello_reader::state::failed:
      FERRY_WARN("server", "closing %s: %s", p.peer.c_str(), why.c_str());
      return progress::dropped;
    case hello_reader::state::done: break;
  }
  protocol::proof answer;
  protocol::refused refusal;
  std::array<uint8_t, 32> binding = p.s->encrypted() ? p.s->tls()->binding() : std::array<uint8_t, 32>{};
  if (!check_proof(rules_.token, p.server_nonce, p.proof_reader.proof(), binding, answer, refusal)) {
    send_refusal(*p.s, p.peer, refusal);
    return progress::dropped;
  }
  std::vector<uint8_t> frame;
  protocol::append_frame(frame, answer);
  if (!p.s->write_all(frame.data(), frame.size())) {
    FERRY_INFO("server", "closing %s: it left during authentication", p.peer.c_str());
    return progress::dropped;
  }
  return progress::admitted;
}

}  // namespace ferry::server
