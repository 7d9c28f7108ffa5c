#include "server/daemon/server.hpp"

#include <sys/un.h>

#include <algorithm>
#include <filesystem>

#include "common/log.hpp"
#include "protocol/dispatch.hpp"
#include "server/daemon/handshake.hpp"
#include "server/daemon/host_identity.hpp"

namespace ferry::server {

namespace p = protocol;

namespace {

local_routes local_routes_of(const server_config& config) {
  local_routes routes;
  routes.enabled = config.peer_shared_memory;
  routes.host = this_host_identity();
  if (!config.unix_path.empty()) {
    // Other daemons dial it from their own working directories.
    std::error_code ec;
    routes.unix_path = std::filesystem::absolute(config.unix_path, ec).lexically_normal().string();
    if (ec || routes.unix_path.size() >= sizeof(sockaddr_un::sun_path)) routes.unix_path.clear();
  }
  return routes;
}

}  // namespace

server::server(server_config config, const session_services& services)
    : config_(std::move(config)), services_(services) {
  services_.links = &links_;
  services_.grace = std::chrono::milliseconds(static_cast<int64_t>(config_.session_grace_s * 1000));
  services_.bulk_lanes = std::clamp<uint32_t>(config_.bulk_lanes, 1, protocol::max_bulk_lanes);
}

bool server::start(std::string& error) {
  if (!listener_.open(config_.listen, config_.port, config_.unix_path, error)) return false;
  if (!config_.peer_address.empty()) {
    endpoint announced;
    if (!parse_endpoint(config_.peer_address, listener_.port(), announced, error)) {
      error = "bad peer address: " + error;
      listener_.stop();
      return false;
    }
    services_.peer_address = announced.to_string();
  }
  services_.routes = local_routes_of(config_);
  if (config_.workers) {
    // Before anything is accepted: a worker that cannot serve (no device
    // matches) stops the daemon before it says READY.
    worker_pool_config pool = *config_.workers;
    pool.settings.peer_address = services_.peer_address;
    pool.settings.local_unix_path = services_.routes.unix_path;
    pool.settings.host_identity = services_.routes.host;
    pool.settings.peer_shared_memory = services_.routes.enabled ? 1 : 0;
    workers_ = std::make_unique<worker_pool>(std::move(pool));
    if (!workers_->start(worker_devices_, error)) {
      listener_.stop();
      return false;
    }
  }
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(config_.handshake_timeout_s * 1000));
  listener_.limit_connections(config_.max_connections);
  if (workers_) listener_.count_elsewhere([this] { return workers_->open_connections(); });
  listener_.start(
      timeout, config_.rules,
      [this](stream_ptr s, const std::string& peer, const p::hello& hello) { on_hello(std::move(s), peer, hello); },
      [this] { reap(); });
  FERRY_INFO("server", "listening on %s:%u%s%s", config_.listen.c_str(), listener_.port(),
             config_.unix_path.empty() ? "" : " and unix:", config_.unix_path.c_str());
  return true;
}

void server::on_hello(stream_ptr fd, const std::string& peer, const p::hello& hello) {
  hello_verdict verdict = check_hello(hello);
  if (!verdict.accepted) return refuse(*fd, peer, verdict.refusal);
  if (workers_) return route_to_worker(std::move(fd), peer, hello, verdict.version);
  if (hello.stream == p::stream_kind::control && !is_zero(hello.session)) {
    // A client resumes its session after a lost connection. The same answer
    // for an unknown (expired, or another daemon's) session and a wrong secret.
    std::lock_guard lock(mutex_);
    auto it = by_id_.find(hello.session);
    if (it == by_id_.end() || !tokens_equal(it->second->secret(), hello.secret))
      return refuse(*fd, peer, {static_cast<int32_t>(refusal::unknown_session), "unknown session or wrong secret"});
    p::refused why;
    p::welcome welcome{verdict.version, hello.session, hello.secret, it->second->peer_key()};
    if (!it->second->resume(fd, peer, welcome, why)) refuse(*fd, peer, why);
    return;
  }
  if (hello.stream == p::stream_kind::control) {
    p::welcome welcome{verdict.version, {}, {}, {}};
    if (!random_token(welcome.session) || !random_token(welcome.secret) || !random_token(welcome.peer_key)) {
      return refuse(*fd, peer, {static_cast<int32_t>(refusal::shutting_down), "no randomness for a session id"});
    }
    std::shared_ptr<session> s;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return refuse(*fd, peer, {static_cast<int32_t>(refusal::shutting_down), "the daemon is stopping"});
      if (config_.max_sessions != 0 && by_id_.size() >= config_.max_sessions)
        return refuse(*fd, peer,
                      {static_cast<int32_t>(refusal::too_many_sessions),
                       "the daemon serves " + std::to_string(by_id_.size()) + " sessions, its limit (--max-sessions)"});
      std::vector<uint8_t> frame;
      p::append_frame(frame, welcome);
      p::append_frame(frame, p::session_state{0, 0, static_cast<uint32_t>(services_.grace.count()),
                                              services_.bulk_lanes});
      if (!fd->write_all(frame.data(), frame.size())) {
        FERRY_INFO("server", "%s left before its welcome", peer.c_str());
        return;
      }
      s = std::make_shared<session>(welcome.session, welcome.secret, welcome.peer_key, std::move(fd), peer, services_,
                                    [this](session& done) { on_session_finished(done); });
      by_id_[welcome.session] = s.get();
      all_.push_back(s);
      s->start();
    }
    FERRY_DEBUG("server", "%zu sessions", session_count());
    return;
  }
  if (hello.stream == p::stream_kind::peer) {
    // Another server's link into one of our sessions, proven by its peer key.
    std::lock_guard lock(mutex_);
    auto it = by_id_.find(hello.session);
    if (it == by_id_.end() || !tokens_equal(it->second->peer_key(), hello.secret))
      return refuse(*fd, peer, {static_cast<int32_t>(refusal::unknown_session), "unknown session or wrong peer key"});
    // The client's secret and peer key stay out of a peer's welcome.
    p::refused why;
    p::welcome welcome{verdict.version, hello.session, {}, {}};
    if (!it->second->attach_peer_in(fd, peer, hello.link, welcome, why)) refuse(*fd, peer, why);
    return;
  }
  // A bulk stream joins its session.
  std::lock_guard lock(mutex_);
  auto it = by_id_.find(hello.session);
  // The same answer for an unknown session and a wrong secret.
  if (it == by_id_.end() || !tokens_equal(it->second->secret(), hello.secret))
    return refuse(*fd, peer, {static_cast<int32_t>(refusal::unknown_session), "unknown session or wrong secret"});
  p::refused why;
  p::welcome welcome{verdict.version, hello.session, hello.secret, {}};
  uint32_t lane = 0;
  p::lane_of(hello.link, lane);  // check_hello took only lane numbers
  const bool attached = lane == 0 ? it->second->attach_bulk(fd, peer, welcome, why)
                                  : it->second->attach_lane(fd, peer, lane, welcome, why);
  if (!attached) refuse(*fd, peer, why);
}

void server::route_to_worker(stream_ptr fd, const std::string& peer, const p::hello& hello, uint16_t version) {
  switch (hello.stream) {
    case p::stream_kind::control:
      if (!is_zero(hello.session)) return workers_->attach(ipc::role::resume, std::move(fd), peer, hello, version);
      break;
    case p::stream_kind::bulk: return workers_->attach(ipc::role::bulk, std::move(fd), peer, hello, version);
    case p::stream_kind::peer: return workers_->attach(ipc::role::peer_in, std::move(fd), peer, hello, version);
  }
  p::welcome welcome{version, {}, {}, {}};
  if (!random_token(welcome.session) || !random_token(welcome.secret) || !random_token(welcome.peer_key))
    return refuse(*fd, peer, {static_cast<int32_t>(refusal::shutting_down), "no randomness for a session id"});
  if (const size_t sessions = workers_->session_count(); config_.max_sessions != 0 && sessions >= config_.max_sessions)
    return refuse(*fd, peer,
                  {static_cast<int32_t>(refusal::too_many_sessions),
                   "the daemon serves " + std::to_string(sessions) + " sessions, its limit (--max-sessions)"});
  workers_->open_session(std::move(fd), peer, welcome);
}

void server::on_session_finished(session& s) {
  {
    std::lock_guard lock(mutex_);
    by_id_.erase(s.id());
    finished_.push_back(&s);
  }
  listener_.wake();
}

void server::reap() {
  std::vector<std::shared_ptr<session>> done;
  {
    std::lock_guard lock(mutex_);
    for (session* s : finished_) {
      auto it = std::find_if(all_.begin(), all_.end(), [&](const auto& p) { return p.get() == s; });
      if (it != all_.end()) {
        done.push_back(std::move(*it));
        all_.erase(it);
      }
    }
    finished_.clear();
  }
  for (auto& s : done) s->join();
}

void server::stop() {
  listener_.stop();
  if (workers_) workers_->stop("the daemon is stopping");
  std::vector<std::shared_ptr<session>> sessions;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    sessions = all_;
  }
  for (auto& s : sessions) s->close("the daemon is stopping");
  for (auto& s : sessions) s->join();
  std::lock_guard lock(mutex_);
  all_.clear();
  finished_.clear();
  by_id_.clear();
}

size_t server::session_count() const {
  if (workers_) return workers_->session_count();
  std::lock_guard lock(mutex_);
  return all_.size();
}

}  // namespace ferry::server
