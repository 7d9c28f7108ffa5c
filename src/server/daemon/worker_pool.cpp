#include "server/daemon/worker_pool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <openssl/crypto.h>

#include "common/log.hpp"
#include "common/wait_status.hpp"
#include "protocol/auth.hpp"
#include "server/daemon/handshake.hpp"
#include "server/worker/adopted_stream.hpp"
#include "server/worker/kernel_cache.hpp"

extern char** environ;

namespace ferry::server {

namespace p = protocol;
using clock = std::chrono::steady_clock;

namespace {

/// How often the monitor looks at memory, deadlines and spares without being woken.
constexpr int tick_ms = 250;
/// How long stop() waits for workers to end their sessions before it kills them.
constexpr auto stop_wait = std::chrono::seconds(10);
/// How long a links question waits for the workers' answers.
constexpr auto links_wait = std::chrono::milliseconds(2000);

using counter_key = std::pair<p::link_kind, std::string>;

void add_counters(std::map<counter_key, p::link_counter>& sums, const std::vector<p::link_counter>& counters) {
  for (const p::link_counter& c : counters) {
    p::link_counter& to = sums[{c.kind, c.remote}];
    to.kind = c.kind;
    to.remote = c.remote;
    to.bytes_in += c.bytes_in;
    to.bytes_out += c.bytes_out;
    to.messages_in += c.messages_in;
    to.messages_out += c.messages_out;
  }
}

/// Resident set size of a process, in bytes (0 when it cannot be read).
uint64_t resident_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/statm");
  uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::string mebibytes(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

/// Sends a connection to a worker and wipes the copies of its TLS keys here.
bool send_adopt(int socket, ipc::adopt& a, int fd) {
  std::vector<uint8_t> packet = ipc::packet(ipc::kind::adopt, a);
  const bool sent = ipc::send(socket, packet, fd);
  OPENSSL_cleanse(packet.data(), packet.size());
  OPENSSL_cleanse(a.tls.data(), a.tls.size());
  return sent;
}

}  // namespace

struct worker_pool::worker {
  pid_t pid = -1;
  unique_fd socket;  // non-blocking: the monitor never waits for a worker
  unique_fd process; // pidfd: readable once the process ended
  std::string scratch;  // its directory, removed once it has ended
  clock::time_point started;
  p::worker_state state = p::worker_state::starting;
  bool has_session = false;
  p::session_token session{};
  p::session_token secret{};
  p::session_token peer_key{};
  std::string label;
  std::string client;
  uint32_t census = 0;
  std::vector<p::link_counter> last_links;  // as it last answered
  bool ended = false;           // it said its session ended: its exit is expected
  int32_t lost_code = static_cast<int32_t>(refusal::worker_lost);
  std::string killed_because;   // the main process ended it, and why
  bool reaped = false;
  bool socket_closed = false;  // the worker's end is closed: not polled any more
  clock::time_point socket_closed_at;
};

struct worker_pool::links_question {
  worker* asker = nullptr;
  uint64_t request = 0;  // the asker's number
  std::vector<worker*> waiting;
  std::map<counter_key, p::link_counter> sums;
  clock::time_point deadline;
};

worker_pool::worker_pool(worker_pool_config config) : config_(std::move(config)) {
  wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
}

worker_pool::~worker_pool() { stop("the daemon is stopping"); }

void worker_pool::wake() {
  uint64_t one = 1;
  ssize_t ignored = ::write(wake_.get(), &one, sizeof one);
  (void)ignored;
}

bool worker_pool::start(std::vector<std::string>& devices, std::string& error) {
  if (!wake_.valid()) {
    error = std::string("eventfd: ") + std::strerror(errno);
    return false;
  }
  {
    std::lock_guard lock(mutex_);
    if (!spawn(error)) return false;
  }
  monitor_ = std::thread([this] { monitor(); });
  std::unique_lock lock(mutex_);
  first_ready_.wait(lock, [&] { return first_answered_; });
  if (!first_error_.empty()) {
    error = first_error_;
    lock.unlock();
    stop("the daemon cannot start");
    return false;
  }
  devices = first_devices_;
  replenish();
  return true;
}

bool worker_pool::spawn(std::string& error) {
  ipc::configure settings = config_.settings;
  settings.scratch = server::worker::make_scratch_directory(static_cast<server::worker::kernel_cache_mode>(settings.kernel_cache),
                                                    config_.worker_uid, config_.worker_gid, error);
  if (settings.scratch.empty()) return false;
  // Whatever fails from here leaves no directory behind.
  struct scratch_guard {
    std::string path;
    ~scratch_guard() { server::worker::remove_scratch_directory(path); }
  } guard{settings.scratch};
  unique_fd mine, theirs;
  if (!ipc::socket_pair(mine, theirs, error)) return false;
  // The worker's end becomes its fd 3; dup2 onto itself would keep close-on-exec.
  if (theirs.get() == 3) theirs.reset(::fcntl(3, F_DUPFD_CLOEXEC, 4));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, theirs.get(), 3);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // The daemon's threads block its stop signals (they go to one sigwait);
  // a worker starts with none blocked. Its own process group: a terminal's
  // Ctrl-C stops the daemon, which ends the sessions in order.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  char arg0[] = "ferryd", arg1[] = "--session-worker", arg2[] = "3";
  char* argv[] = {arg0, arg1, arg2, nullptr};
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, config_.program.c_str(), &actions, &attributes, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) {
    error = "cannot start a session worker (" + config_.program + "): " + std::strerror(rc);
    return false;
  }
  auto w = std::make_unique<worker>();
  w->pid = pid;
  w->started = clock::now();
  w->socket = std::move(mine);
  w->process.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!w->process.valid()) {
    error = std::string("pidfd_open: ") + std::strerror(errno);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return false;
  }
  ::fcntl(w->socket.get(), F_SETFL, ::fcntl(w->socket.get(), F_GETFL) | O_NONBLOCK);
  settings.announce = !announced_;
  announced_ = true;
  if (!ipc::send(w->socket.get(), ipc::packet(ipc::kind::configure, settings))) {
    error = "cannot send a session worker its settings";
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return false;
  }
  FERRY_DEBUG("workers", "started worker %d", static_cast<int>(pid));
  w->scratch = std::move(guard.path);  // the worker's now: removed when it has ended
  guard.path.clear();
  workers_.push_back(std::move(w));
  return true;
}

void worker_pool::replenish() {
  if (stopping_ || clock::now() < next_start_) return;
  size_t ready_or_starting = 0;
  for (const auto& w : workers_)
    if (!w->reaped && (w->state == p::worker_state::starting || w->state == p::worker_state::spare))
      ++ready_or_starting;
  // Sessions that wait need workers of their own, beyond the spares.
  const size_t wanted = config_.spares + waiting_.size();
  while (ready_or_starting < wanted) {
    std::string error;
    if (!spawn(error)) {
      FERRY_ERROR("workers", "%s", error.c_str());
      next_start_ = clock::now() + std::chrono::seconds(1);
      return;
    }
    ++ready_or_starting;
  }
}

void worker_pool::open_session(stream_ptr s, const std::string& peer, const p::welcome& welcome) {
  std::lock_guard lock(mutex_);
  if (stopping_) return send_refusal(*s, peer, {static_cast<int32_t>(refusal::shutting_down), "the daemon is stopping"});
  waiting_.push_back({std::move(s), peer, welcome, clock::now() + config_.start_timeout});
  serve_waiting();
  if (!waiting_.empty()) {
    FERRY_DEBUG("workers", "a session of %s waits for a ready worker", peer.c_str());
    replenish();
  }
}

bool worker_pool::hand_over(worker& w, waiting_session& s) {
  ipc::adopt a;
  a.what = ipc::role::open_session;
  a.session = s.welcome.session;
  a.secret = s.welcome.secret;
  a.peer_key = s.welcome.peer_key;
  a.version = s.welcome.version;
  a.peer = s.peer;
  std::string error;
  if (!handoff_state(*s.s, a.tls, error)) {
    FERRY_WARN("workers", "closing %s: %s", s.peer.c_str(), error.c_str());
    return true;  // that connection is lost, not the worker
  }
  if (!send_adopt(w.socket.get(), a, s.s->fd())) {
    // A spare that died meanwhile is reaped here; another one takes the session.
    if (!settle_exit(w)) kill_worker(w, "it does not take a session");
    return false;
  }
  w.state = p::worker_state::serving;
  w.has_session = true;
  w.session = a.session;
  w.secret = a.secret;
  w.peer_key = a.peer_key;
  w.label = p::session_label(a.session);
  w.client = s.peer;
  by_session_[a.session] = &w;
  FERRY_INFO("workers", "session %s of %s goes to worker %d", w.label.c_str(), s.peer.c_str(),
             static_cast<int>(w.pid));
  return true;
}

void worker_pool::serve_waiting() {
  const auto now = clock::now();
  while (!waiting_.empty()) {
    waiting_session& s = waiting_.front();
    if (now >= s.deadline) {
      send_refusal(*s.s, s.peer,
                   {static_cast<int32_t>(refusal::no_worker),
                    "no session worker became ready within " +
                        std::to_string(config_.start_timeout.count() / 1000.0).substr(0, 4) + " s"});
      waiting_.pop_front();
      continue;
    }
    auto spare = std::find_if(workers_.begin(), workers_.end(),
                              [](const auto& w) { return !w->reaped && w->state == p::worker_state::spare; });
    if (spare == workers_.end()) return;
    if (hand_over(**spare, s)) waiting_.pop_front();
  }
}

void worker_pool::attach(ipc::role what, stream_ptr s, const std::string& peer, const p::hello& hello,
                         uint16_t version) {
  std::lock_guard lock(mutex_);
  const bool peer_link = what == ipc::role::peer_in;
  auto matches = [&](const p::session_token& secret, const p::session_token& peer_key) {
    return tokens_equal(peer_link ? peer_key : secret, hello.secret);
  };
  auto it = by_session_.find(hello.session);
  if (it == by_session_.end() || !matches(it->second->secret, it->second->peer_key)) {
    // The same answer for an unknown session and a wrong secret; the reason
    // of a lost one only to who proves it was theirs.
    auto lost = lost_.find(hello.session);
    if (it == by_session_.end() && lost != lost_.end() && matches(lost->second.secret, lost->second.peer_key))
      return send_refusal(*s, peer, {lost->second.code, lost->second.reason});
    return send_refusal(*s, peer,
                        {static_cast<int32_t>(refusal::unknown_session),
                         peer_link ? "unknown session or wrong peer key" : "unknown session or wrong secret"});
  }
  worker& w = *it->second;
  ipc::adopt a;
  a.what = what;
  a.session = hello.session;
  a.secret = peer_link ? p::session_token{} : hello.secret;
  a.link = hello.link;
  a.version = version;
  a.peer = peer;
  std::string error;
  if (!handoff_state(*s, a.tls, error)) {
    FERRY_WARN("workers", "closing %s: %s", peer.c_str(), error.c_str());
    return;
  }
  if (send_adopt(w.socket.get(), a, s->fd())) return;
  // A worker that just died (its client noticed first): its exit says why.
  const p::session_token session = hello.session;
  if (settle_exit(w)) {
    auto lost = lost_.find(session);
    if (lost != lost_.end()) return send_refusal(*s, peer, {lost->second.code, lost->second.reason});
  } else {
    kill_worker(w, "it does not take its session's connections");
  }
  send_refusal(*s, peer, {static_cast<int32_t>(refusal::session_closing), "the session's worker is ending"});
}

bool worker_pool::settle_exit(worker& w) {
  pollfd ended{w.process.get(), POLLIN, 0};
  int n;
  do {
    n = ::poll(&ended, 1, 200);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  for (;;) {
    ipc::received message;
    std::string why;
    if (ipc::receive(w.socket.get(), message, why) != ipc::receive_result::ok) break;
    on_message(w, message);
  }
  on_exit(w);
  return w.reaped;
}

void worker_pool::kill_worker(worker& w, const std::string& why) {
  if (w.reaped || !w.killed_because.empty()) return;
  FERRY_WARN("workers", "ending worker %d%s%s: %s", static_cast<int>(w.pid), w.has_session ? " of session " : "",
             w.label.c_str(), why.c_str());
  w.killed_because = why;
  ::kill(w.pid, SIGKILL);
}

void worker_pool::on_message(worker& w, ipc::received& message) {
  std::string why;
  auto broke = [&](const std::string& what) { kill_worker(w, "it broke the rules: " + what); };
  switch (message.what) {
    case ipc::kind::ready: {
      ipc::ready r;
      if (!ipc::decode(message, r, why)) return broke(why);
      if (w.state != p::worker_state::starting) return broke("ready twice");
      if (clock::now() - w.started > config_.start_timeout) {
        // Late is as bad as never: the same rule whether or not a tick saw it first.
        kill_worker(w, "not ready within the start timeout (--worker-start-timeout)");
        return;
      }
      if (!first_answered_) {
        first_answered_ = true;
        if (!r.ok) first_error_ = r.error;
        first_devices_ = r.descriptions;
        first_ready_.notify_all();
      }
      if (!r.ok) {
        FERRY_ERROR("workers", "worker %d cannot serve: %s", static_cast<int>(w.pid), r.error.c_str());
        ++failed_starts_;
        next_start_ = clock::now() + std::chrono::seconds(std::min<uint32_t>(30, 1u << std::min(failed_starts_, 5u)));
        return;
      }
      failed_starts_ = 0;
      w.state = p::worker_state::spare;
      FERRY_DEBUG("workers", "worker %d ready after %.0f ms", static_cast<int>(w.pid),
                  std::chrono::duration<double, std::milli>(clock::now() - w.started).count());
      serve_waiting();
      return;
    }
    case ipc::kind::session_state: {
      ipc::session_state st;
      if (!ipc::decode(message, st, why)) return broke(why);
      if (!w.has_session) return broke("a session state without a session");
      if (st.state == p::worker_state::serving || st.state == p::worker_state::detached) {
        w.state = st.state;
        if (!st.client.empty()) w.client = st.client;
      }
      return;
    }
    case ipc::kind::prove: {
      ipc::prove q;
      if (!ipc::decode(message, q, why)) return broke(why);
      if (q.role > static_cast<uint8_t>(p::auth_role::server)) return broke("an unknown role to prove");
      ipc::proof answer{q.request, {}};
      if (config_.token.empty()) {
        FERRY_WARN("workers", "worker %d asks for a proof of a token this daemon does not have",
                   static_cast<int>(w.pid));
      } else {
        answer.value = p::auth_mac(config_.token, static_cast<p::auth_role>(q.role), q.server_nonce, q.client_nonce,
                                   q.binding);
      }
      ipc::send(w.socket.get(), ipc::packet(ipc::kind::proof, answer));
      return;
    }
    case ipc::kind::links_request: {
      ipc::links_request q;
      if (!ipc::decode(message, q, why)) return broke(why);
      auto question = std::make_unique<links_question>();
      question->asker = &w;
      question->request = q.request;
      question->sums = retired_;
      question->deadline = clock::now() + links_wait;
      const uint64_t id = next_question_++;
      for (const auto& other : workers_) {
        if (other->reaped || other->state == p::worker_state::starting) continue;
        if (ipc::send(other->socket.get(), ipc::packet(ipc::kind::links_request, ipc::links_request{id})))
          question->waiting.push_back(other.get());
      }
      links_question& asked = *question;
      questions_[id] = std::move(question);
      if (asked.waiting.empty()) answer_links(asked);
      return;
    }
    case ipc::kind::links: {
      ipc::links answer;
      if (!ipc::decode(message, answer, why)) return broke(why);
      w.last_links = answer.counters;
      auto q = questions_.find(answer.request);
      if (q == questions_.end()) return;  // answered without it already
      auto& waiting = q->second->waiting;
      auto self = std::find(waiting.begin(), waiting.end(), &w);
      if (self == waiting.end()) return;
      waiting.erase(self);
      add_counters(q->second->sums, answer.counters);
      if (waiting.empty()) answer_links(*q->second);
      return;
    }
    case ipc::kind::workers_request: {
      ipc::workers_request q;
      if (!ipc::decode(message, q, why)) return broke(why);
      ipc::send(w.socket.get(), ipc::packet(ipc::kind::workers, ipc::workers{q.request, table_locked()}));
      return;
    }
    case ipc::kind::census: {
      ipc::census c;
      if (!ipc::decode(message, c, why)) return broke(why);
      w.census = c.open;
      return;
    }
    case ipc::kind::ended: {
      ipc::ended e;
      if (!ipc::decode(message, e, why)) return broke(why);
      w.ended = true;
      w.last_links = e.counters;
      w.state = p::worker_state::ending;
      if (w.has_session) {
        by_session_.erase(w.session);
        FERRY_DEBUG("workers", "session %s ended in worker %d: %s", w.label.c_str(), static_cast<int>(w.pid),
                    e.reason.c_str());
      }
      return;
    }
    default: return broke("an unknown message " + std::to_string(static_cast<unsigned>(message.what)));
  }
}

void worker_pool::answer_links(links_question& q) {
  // Those that did not answer in time count with what they said last.
  for (worker* w : q.waiting) add_counters(q.sums, w->last_links);
  ipc::links reply;
  reply.request = q.request;
  for (auto& [key, c] : q.sums) reply.counters.push_back(c);
  if (q.asker && !q.asker->reaped) ipc::send(q.asker->socket.get(), ipc::packet(ipc::kind::links, reply));
  for (auto it = questions_.begin(); it != questions_.end(); ++it) {
    if (it->second.get() == &q) {
      questions_.erase(it);
      return;
    }
  }
}

void worker_pool::on_exit(worker& w) {
  int status = 0;
  pid_t got;
  do {
    got = ::waitpid(w.pid, &status, WNOHANG);
  } while (got < 0 && errno == EINTR);
  if (got == 0) return;  // not yet (a spurious wake-up)
  w.reaped = true;
  // Made by this process for it: removed here however it ended (a crash included).
  server::worker::remove_scratch_directory(w.scratch);
  add_counters(retired_, w.last_links);
  // Questions must not wait for it, nor answer it.
  for (auto& [id, q] : questions_) {
    q->waiting.erase(std::remove(q->waiting.begin(), q->waiting.end(), &w), q->waiting.end());
    if (q->asker == &w) q->asker = nullptr;
  }
  const std::string how = describe_wait_status(status);
  if (w.has_session && !w.ended) {
    by_session_.erase(w.session);
    const bool over_quota = !w.killed_because.empty() && w.lost_code == static_cast<int32_t>(refusal::worker_over_quota);
    std::string reason = "the session's worker (pid " + std::to_string(w.pid) + ") " +
                         (w.killed_because.empty() ? how : "was ended: " + w.killed_because);
    FERRY_WARN("workers", "session %s of %s is lost: %s; the daemon and its other sessions go on", w.label.c_str(),
               w.client.c_str(), reason.c_str());
    lost_[w.session] = {w.secret, w.peer_key,
                        over_quota ? static_cast<int32_t>(refusal::worker_over_quota)
                                   : static_cast<int32_t>(refusal::worker_lost),
                        reason, clock::now() + config_.remember_lost};
  } else if (!w.ended && !stopping_) {
    FERRY_WARN("workers", "spare worker %d %s", static_cast<int>(w.pid), how.c_str());
    if (w.state == p::worker_state::starting && !first_answered_) {
      first_answered_ = true;
      first_error_ = "the first session worker " +
                     (w.killed_because.empty() ? how : "was ended: " + w.killed_because) + " before it was ready";
      first_ready_.notify_all();
    }
  } else if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0)) {
    FERRY_INFO("workers", "worker %d %s after its session ended", static_cast<int>(w.pid), how.c_str());
  }
}

void worker_pool::check_workers() {
  const auto now = clock::now();
  for (const auto& w : workers_) {
    if (w->reaped) continue;
    if (w->state == p::worker_state::starting && now - w->started > config_.start_timeout) {
      kill_worker(*w, "not ready within the start timeout (--worker-start-timeout)");
      continue;
    }
    if (w->socket_closed && !w->ended && now - w->socket_closed_at > std::chrono::seconds(2)) {
      kill_worker(*w, "it closed its socket to the main process");
      continue;
    }
    if (config_.memory_limit == 0) continue;
    const uint64_t resident = resident_bytes(w->pid);
    if (resident > config_.memory_limit) {
      w->lost_code = static_cast<int32_t>(refusal::worker_over_quota);
      kill_worker(*w, "its memory (" + mebibytes(resident) + ") exceeded --worker-memory (" +
                          mebibytes(config_.memory_limit) + ")");
    }
  }
}

std::vector<p::worker_entry> worker_pool::table_locked() const {
  std::vector<p::worker_entry> rows;
  const auto now = clock::now();
  for (const auto& w : workers_) {
    if (w->reaped) continue;
    p::worker_entry e;
    e.pid = static_cast<uint32_t>(w->pid);
    e.state = w->state;
    e.session = w->label;
    e.client = w->client;
    e.memory_bytes = resident_bytes(w->pid);
    e.age_ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now - w->started).count());
    rows.push_back(std::move(e));
  }
  return rows;
}

std::vector<p::worker_entry> worker_pool::table() const {
  std::lock_guard lock(mutex_);
  return table_locked();
}

size_t worker_pool::session_count() const {
  std::lock_guard lock(mutex_);
  return by_session_.size() + waiting_.size();
}

size_t worker_pool::open_connections() const {
  std::lock_guard lock(mutex_);
  size_t open = 0;
  for (const auto& w : workers_)
    if (!w->reaped) open += w->census;
  return open;
}

void worker_pool::monitor() {
  std::vector<pollfd> fds;
  std::vector<worker*> owners;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      // Forget what is done with: reaped workers, old lost sessions, answered or late questions.
      const auto now = clock::now();
      for (auto it = lost_.begin(); it != lost_.end();) it = now >= it->second.forget_at ? lost_.erase(it) : ++it;
      for (auto it = questions_.begin(); it != questions_.end();) {
        if (now >= it->second->deadline) {
          links_question& q = *it->second;
          ++it;
          answer_links(q);  // erases it
        } else {
          ++it;
        }
      }
      workers_.erase(std::remove_if(workers_.begin(), workers_.end(), [](const auto& w) { return w->reaped; }),
                     workers_.end());
      if (stopping_ && workers_.empty()) return;
      serve_waiting();
      replenish();
      fds.clear();
      owners.clear();
      fds.push_back({wake_.get(), POLLIN, 0});
      owners.push_back(nullptr);
      for (const auto& w : workers_) {
        fds.push_back({w->socket_closed ? -1 : w->socket.get(), POLLIN, 0});
        owners.push_back(w.get());
        fds.push_back({w->process.get(), POLLIN, 0});
        owners.push_back(w.get());
      }
    }
    int n = ::poll(fds.data(), fds.size(), tick_ms);
    if (n < 0 && errno != EINTR) {
      FERRY_ERROR("workers", "poll failed in the worker monitor: %s", std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(tick_ms));
    }
    std::lock_guard lock(mutex_);
    if (fds[0].revents) {
      uint64_t count;
      ssize_t ignored = ::read(wake_.get(), &count, sizeof count);
      (void)ignored;
    }
    for (size_t i = 1; n > 0 && i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      worker& w = *owners[i];
      if (w.reaped) continue;
      if (fds[i].fd == w.process.get()) {
        // Reads what it said last before it ended (its final counters).
        settle_exit(w);
        continue;
      }
      for (int budget = 64; budget > 0; --budget) {
        ipc::received message;
        std::string why;
        ipc::receive_result r = ipc::receive(w.socket.get(), message, why);
        if (r == ipc::receive_result::ok) {
          on_message(w, message);
          continue;
        }
        if (r == ipc::receive_result::failed) kill_worker(w, why);
        if (r == ipc::receive_result::closed && !w.socket_closed) {
          // A process that ends closes its socket first: its exit (the pidfd)
          // says how it ended. One whose socket closed but that lives on is
          // broken, and ended after a moment (check_workers).
          w.socket_closed = true;
          w.socket_closed_at = clock::now();
        }
        break;
      }
    }
    check_workers();
  }
}

void worker_pool::stop(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !monitor_.joinable()) return;
    stopping_ = true;
    for (auto& s : waiting_) send_refusal(*s.s, s.peer, {static_cast<int32_t>(refusal::shutting_down), reason});
    waiting_.clear();
    for (const auto& w : workers_)
      if (!w->reaped) ipc::send(w->socket.get(), ipc::packet(ipc::kind::stop, ipc::stop{reason}));
  }
  if (!monitor_.joinable()) {
    // Never started: the first spawn may have left a process.
    std::lock_guard lock(mutex_);
    for (const auto& w : workers_) {
      ::kill(w->pid, SIGKILL);
      ::waitpid(w->pid, nullptr, 0);
    }
    workers_.clear();
    return;
  }
  const auto deadline = clock::now() + stop_wait;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      bool all_gone = std::all_of(workers_.begin(), workers_.end(), [](const auto& w) { return w->reaped; });
      if (all_gone) break;
      if (clock::now() >= deadline) {
        for (const auto& w : workers_)
          if (!w->reaped) kill_worker(*w, "it did not end its session within " + std::to_string(stop_wait.count()) + " s");
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  wake();
  monitor_.join();
}

}  // namespace ferry::server
