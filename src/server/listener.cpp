#include "server/listener.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <list>

#include "common/log.hpp"
#include "server/handshake.hpp"

namespace ferry::server {

using clock = std::chrono::steady_clock;

struct listener::pending {
  unique_fd fd;
  std::string peer;
  clock::time_point deadline;
  hello_reader reader;
};

bool listener::open(const std::string& address, uint16_t port, const std::string& unix_path, std::string& error) {
  tcp_ = listen_tcp(address, port, port_, error);
  if (!tcp_.valid()) return false;
  if (!unix_path.empty()) {
    unix_ = listen_unix(unix_path, error);
    if (!unix_.valid()) return false;
    unix_path_ = unix_path;
  }
  wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_.valid()) {
    error = std::string("eventfd: ") + std::strerror(errno);
    return false;
  }
  return true;
}

void listener::start(std::chrono::milliseconds handshake_timeout, hello_handler on_hello, wake_handler on_wake) {
  timeout_ = handshake_timeout;
  on_hello_ = std::move(on_hello);
  on_wake_ = std::move(on_wake);
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "ferryd-accept");
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
    fds.push_back({tcp_.get(), POLLIN, 0});
    fds.push_back({unix_.valid() ? unix_.get() : -1, POLLIN, 0});
    auto now = clock::now();
    int timeout_ms = -1;
    for (pending& p : waiting) {
      fds.push_back({p.fd.get(), POLLIN, 0});
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
          if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED)
            FERRY_WARN("server", "accept failed: %s", std::strerror(errno));
          break;
        }
        if (max_connections_ != 0 && waiting.size() + handed_over_.open() >= max_connections_) {
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
        p.peer = peer_name(fd);
        p.deadline = clock::now() + timeout_;
        tune_stream_socket(fd);
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
      bool readable = index < fds.size() && (fds[index].revents & (POLLIN | POLLHUP | POLLERR));
      std::string why;
      hello_reader::state s = readable ? p.reader.read_from(p.fd.get(), why) : hello_reader::state::need_more;
      if (s == hello_reader::state::need_more && now >= p.deadline) {
        FERRY_INFO("server", "closing %s: no hello within %.3g s", p.peer.c_str(), timeout_.count() / 1000.0);
        it = waiting.erase(it);
        continue;
      }
      if (s == hello_reader::state::need_more) {
        ++it;
        continue;
      }
      if (s == hello_reader::state::failed) {
        FERRY_WARN("server", "closing %s: %s", p.peer.c_str(), why.c_str());
        it = waiting.erase(it);
        continue;
      }
      int flags = ::fcntl(p.fd.get(), F_GETFL);
      ::fcntl(p.fd.get(), F_SETFL, flags & ~O_NONBLOCK);
      if (max_connections_ != 0) handed_over_.track(p.fd.get());
      on_hello_(std::move(p.fd), p.peer, p.reader.hello());
      it = waiting.erase(it);
    }
  }
  // Pending connections close with `waiting`.
}

}  // namespace ferry::server
