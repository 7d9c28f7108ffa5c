#include "server/worker/session_worker.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/log.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/outgoing.hpp"
#include "server/daemon/connection_census.hpp"
#include "server/daemon/handshake.hpp"
#include "server/daemon/link_stats.hpp"
#include "server/daemon/printf_capture.hpp"
#include "server/native/api.hpp"
#include "server/native/catalog.hpp"
#include "server/native/context_releaser.hpp"
#include "server/session/session.hpp"
#include "server/worker/adopted_stream.hpp"
#include "cuda/server/cuda_session.hpp"
#include "cuda/server/driver.hpp"
#include "server/worker/confinement.hpp"
#include "server/worker/kernel_cache.hpp"
#include "server/worker/ipc.hpp"

namespace ferry::server {

namespace {

namespace p = protocol;
using clock = std::chrono::steady_clock;

/// How long a question to the main process may take before the session
/// answers without it (the main process answers at once unless it is
/// stopping).
constexpr auto answer_timeout = std::chrono::seconds(10);

class session_worker final : public daemon_queries {
 public:
  explicit session_worker(int ipc_fd) : ipc_(ipc_fd) {}

  int run();

  std::vector<p::link_counter> link_counters() override {
    ipc::links answer;
    if (!ask(ipc::kind::links_request, ipc::links_request{}, ipc::kind::links, answer)) return links_.snapshot();
    return std::move(answer.counters);
  }
  std::vector<p::worker_entry> workers() override {
    ipc::workers answer;
    if (!ask(ipc::kind::workers_request, ipc::workers_request{}, ipc::kind::workers, answer)) return {};
    return std::move(answer.entries);
  }

 private:
  bool configure(std::string& error);
  bool load_platforms(std::string& error);
  /// Handles one message from the main process; false ends the worker.
  bool handle(ipc::received& message);
  bool adopt(const ipc::adopt& a, unique_fd fd);
  void send_census();
  int finish(const std::string& reason);

  /// Sends a question and waits for the answer of kind `reply` with the same
  /// request number. False when the main process is gone or silent.
  template <class Question, class Answer>
  bool ask(ipc::kind k, Question q, ipc::kind reply, Answer& answer);
  /// A proof of the daemon's token, made by the main process.
  p::mac prove(p::auth_role role, const p::nonce& server, const p::nonce& client, const p::channel_binding& binding);

  unique_fd ipc_;
  ipc::configure config_;
  native::device_catalog catalog_;
  link_stats links_;
  std::unique_ptr<printf_capture> printf_;
  std::shared_ptr<p::credentials> peer_credentials_;
  std::unique_ptr<session_services> services_;
  std::shared_ptr<session> session_;
  unique_fd finished_;  // eventfd: the session's control reader ended
  connection_census census_;
  uint32_t census_sent_ = 0;

  // Questions to the main process and their answers, by request number.
  std::mutex questions_mutex_;
  std::condition_variable answered_;
  uint64_t next_request_ = 1;
  std::map<uint64_t, ipc::received> answers_;
  bool main_gone_ = false;
};

template <class Question, class Answer>
bool session_worker::ask(ipc::kind k, Question q, ipc::kind reply, Answer& answer) {
  std::unique_lock lock(questions_mutex_);
  if (main_gone_) return false;
  q.request = next_request_++;
  const uint64_t request = q.request;
  if (!ipc::send(ipc_.get(), ipc::packet(k, q))) return false;
  if (!answered_.wait_for(lock, answer_timeout, [&] { return main_gone_ || answers_.count(request) != 0; })) {
    FERRY_WARN("worker", "the main process did not answer within %lld s",
               static_cast<long long>(answer_timeout.count()));
    return false;
  }
  auto it = answers_.find(request);
  if (it == answers_.end()) return false;
  ipc::received got = std::move(it->second);
  answers_.erase(it);
  std::string why;
  if (got.what != reply || !ipc::decode(got, answer, why)) {
    FERRY_WARN("worker", "a wrong answer from the main process: %s", why.c_str());
    return false;
  }
  return true;
}

p::mac session_worker::prove(p::auth_role role, const p::nonce& server, const p::nonce& client,
                             const p::channel_binding& binding) {
  ipc::prove question;
  question.role = static_cast<uint8_t>(role);
  question.server_nonce = server;
  question.client_nonce = client;
  question.binding = binding;
  ipc::proof answer;
  // No answer: a proof of zeros, which the other daemon refuses (and logs).
  if (!ask(ipc::kind::prove, question, ipc::kind::proof, answer)) return {};
  return answer.value;
}

bool session_worker::configure(std::string& error) {
  ipc::received first;
  std::string why;
  if (ipc::receive(ipc_.get(), first, why) != ipc::receive_result::ok || first.what != ipc::kind::configure ||
      !ipc::decode(first, config_, why)) {
    error = "no settings from the main process" + (why.empty() ? std::string() : ": " + why);
    return false;
  }
  set_log_level(static_cast<log_level>(config_.log_level));
  const auto mode = config_.kernel_cache == static_cast<uint8_t>(worker::kernel_cache_mode::isolated)
                        ? worker::kernel_cache_mode::isolated
                        : worker::kernel_cache_mode::shared;
  if (!config_.scratch.empty()) worker::use_scratch_directory(mode, config_.scratch);
  if (mode == worker::kernel_cache_mode::shared && !config_.kernel_cache_dir.empty())
    ::setenv("POCL_CACHE_DIR", config_.kernel_cache_dir.c_str(), 1);
  worker::confinement_options confine;
  confine.worker_user = config_.worker_user;
  confine.forbidden_files = config_.forbidden;
  confine.limits.open_files = config_.open_files;
  std::vector<std::string> warnings;
  // While it may still read any directory (a test's stand-in driver sits in the build tree).
  cuda::map_driver_library();
  if (!worker::confine_worker(confine, warnings, error)) return false;
  for (const std::string& w : warnings) FERRY_DEBUG("worker", "%s", w.c_str());
  // As the worker's user, while this process has one thread.
  cuda::choose_jit_cache(mode == worker::kernel_cache_mode::shared ? config_.kernel_cache_dir : std::string());
  // Checked as the worker's user, which the main process cannot do for it.
  if (std::string why = worker::fall_back_from_unusable_cache(config_.scratch); !why.empty()) {
    if (config_.announce) FERRY_WARN("worker", "%s", why.c_str());
    else FERRY_DEBUG("worker", "%s", why.c_str());
  }
  return true;
}

bool session_worker::load_platforms(std::string& error) {
  native::catalog_filter filter{config_.platform, static_cast<cl_device_type>(config_.device_type), config_.devices};
  // Every worker finds the same platforms; the first one says what they are like.
  const log_level level = current_log_level();
  if (!config_.announce && level == log_level::info) set_log_level(log_level::warn);
  const bool found = native::device_catalog::discover(filter, catalog_, error);
  set_log_level(level);
  if (!found) return false;
  catalog_.choose_completions(static_cast<native::completion_mode>(config_.completions));
  // Kernel printf output goes to fd 1; in a worker that is a pipe of its own,
  // so all of it belongs to this worker's session.
  unique_fd original_stdout, read_end;
  if (!printf_capture::redirect_stdout(original_stdout, read_end, error)) return false;
  printf_ = std::make_unique<printf_capture>(std::move(read_end), STDERR_FILENO);
  printf_->start();

  auto shown = std::make_shared<p::credentials>();
  if (config_.peer_tls) {
    // The main process read --tls-ca for it: the file may be the daemon's user's alone.
    shown->tls = config_.peer_ca_pem.empty() ? tls::context::for_client({}, error)
                                             : tls::context::for_client_trusting(config_.peer_ca_pem, error);
    if (!shown->tls) return false;
  }
  if (config_.peer_token) {
    shown->prover = [this](p::auth_role role, const p::nonce& server, const p::nonce& client,
                           const p::channel_binding& binding) { return prove(role, server, client, binding); };
  }
  peer_credentials_ = std::move(shown);
  services_ = std::make_unique<session_services>(session_services{catalog_, native::real_api(), printf_.get(), &links_,
                                                                  config_.peer_address});
  services_->grace = std::chrono::milliseconds(config_.grace_ms);
  services_->bulk_lanes = std::clamp<uint32_t>(config_.bulk_lanes, 1, p::max_bulk_lanes);
  services_->routes = local_routes{config_.local_unix_path, config_.host_identity, config_.peer_shared_memory != 0};
  if (!config_.file_root.empty()) services_->files = std::make_shared<const file_root>(config_.file_root);
  services_->limits = session_limits{config_.memory_limit, config_.objects_limit, config_.queued_limit,
                                     config_.in_flight_limit};
  services_->peer_credentials = peer_credentials_;
  services_->daemon = this;
  services_->on_client_state = [this](p::worker_state state, const std::string& client) {
    ipc::send(ipc_.get(), ipc::packet(ipc::kind::session_state, ipc::session_state{state, client}));
  };
  finished_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!finished_.valid()) {
    error = std::string("eventfd: ") + std::strerror(errno);
    return false;
  }
  return true;
}

bool session_worker::adopt(const ipc::adopt& a, unique_fd fd) {
  std::string error;
  const int raw_fd = fd.get();
  stream_ptr s = adopted_stream(std::move(fd), a.tls, error);
  if (!s) {
    FERRY_WARN("worker", "cannot take the connection of %s: %s", a.peer.c_str(), error.c_str());
    return true;  // that connection alone is lost; the session goes on
  }
  census_.track(raw_fd);
  auto refuse = [&](const p::refused& why) { send_refusal(*s, a.peer, why); };
  if (a.what == ipc::role::open_session) {
    if (session_) {
      FERRY_ERROR("worker", "the main process handed a second session to this worker");
      return false;
    }
    p::welcome welcome{a.version, a.session, a.secret, a.peer_key};
    std::vector<uint8_t> frames;
    p::append_frame(frames, welcome);
    p::append_frame(frames, p::session_state{0, 0, static_cast<uint32_t>(config_.grace_ms), services_->bulk_lanes});
    if (!s->write_all(frames.data(), frames.size())) {
      FERRY_INFO("worker", "%s left before its welcome", a.peer.c_str());
      return false;  // no session: this worker has nothing left to do
    }
    session_ = std::make_shared<session>(a.session, a.secret, a.peer_key, std::move(s), a.peer, *services_,
                                         [this](session&) {
                                           uint64_t one = 1;
                                           ssize_t ignored = ::write(finished_.get(), &one, sizeof one);
                                           (void)ignored;
                                         });
    session_->start();
    services_->on_client_state(p::worker_state::serving, a.peer);
    return true;
  }
  if (!session_ || !tokens_equal(session_->id(), a.session)) {
    refuse({static_cast<int32_t>(refusal::unknown_session), "unknown session"});
    return true;
  }
  p::refused why;
  switch (a.what) {
    case ipc::role::resume: {
      p::welcome welcome{a.version, a.session, a.secret, session_->peer_key()};
      if (!session_->resume(s, a.peer, welcome, why)) refuse(why);
      break;
    }
    case ipc::role::bulk: {
      p::welcome welcome{a.version, a.session, a.secret, {}};
      uint32_t lane = 0;
      p::lane_of(a.link, lane);  // the main process took only lane numbers (check_hello)
      const bool attached = lane == 0 ? session_->attach_bulk(s, a.peer, welcome, why)
                                      : session_->attach_lane(s, a.peer, lane, welcome, why);
      if (!attached) refuse(why);
      break;
    }
    case ipc::role::peer_in: {
      p::welcome welcome{a.version, a.session, {}, {}};
      if (!session_->attach_peer_in(s, a.peer, a.link, welcome, why)) refuse(why);
      break;
    }
    case ipc::role::open_session: break;
  }
  return true;
}

bool session_worker::handle(ipc::received& message) {
  std::string why;
  switch (message.what) {
    case ipc::kind::adopt: {
      ipc::adopt a;
      if (!ipc::decode(message, a, why) || !message.fd.valid()) {
        FERRY_ERROR("worker", "a connection from the main process without its socket or malformed: %s", why.c_str());
        return false;
      }
      return adopt(a, std::move(message.fd));
    }
    case ipc::kind::stop: {
      ipc::stop s;
      ipc::decode(message, s, why);
      if (!session_) return false;
      session_->close(s.reason.empty() ? "the daemon is stopping" : s.reason);
      return true;
    }
    case ipc::kind::links_request: {
      ipc::links_request q;
      if (!ipc::decode(message, q, why)) return false;
      ipc::send(ipc_.get(), ipc::packet(ipc::kind::links, ipc::links{q.request, links_.snapshot()}));
      return true;
    }
    case ipc::kind::proof:
    case ipc::kind::links:
    case ipc::kind::workers: {
      // An answer to a question of a session thread.
      uint64_t request = 0;  // every answer starts with its request number
      protocol::reader r(message.payload.data(), message.payload.size());
      protocol::decode_value(r, request);
      if (!r.ok()) return false;
      std::lock_guard lock(questions_mutex_);
      answers_[request] = std::move(message);
      answered_.notify_all();
      return true;
    }
    default:
      FERRY_ERROR("worker", "unexpected message %u from the main process", static_cast<unsigned>(message.what));
      return false;
  }
}

void session_worker::send_census() {
  const uint32_t open = static_cast<uint32_t>(census_.open());
  if (open == census_sent_) return;
  census_sent_ = open;
  ipc::send(ipc_.get(), ipc::packet(ipc::kind::census, ipc::census{open}));
}

int session_worker::finish(const std::string& reason) {
  {
    std::lock_guard lock(questions_mutex_);
    main_gone_ = true;  // nothing waits for an answer any more
    answered_.notify_all();
  }
  if (session_) {
    session_->close(reason);
    session_->join();
    session_.reset();
  }
  if (printf_) printf_->stop();
  ipc::send(ipc_.get(), ipc::packet(ipc::kind::ended, ipc::ended{reason, links_.snapshot()}));
  // Native exit handlers may wait for contexts the driver still releases
  // (server/native/context_releaser.hpp), and nothing else is left to do.
  std::fflush(stderr);
  std::_Exit(0);
}

int session_worker::run() {
  std::string error;
  if (!configure(error) || !load_platforms(error)) {
    ipc::ready r;
    r.error = error;
    ipc::send(ipc_.get(), ipc::packet(ipc::kind::ready, r));
    FERRY_ERROR("worker", "%s", error.c_str());
      return 1;
  }
  ipc::ready r;
  r.ok = 1;
  r.devices = catalog_.size();
  for (uint32_t i = 0; i < catalog_.size(); ++i) r.descriptions.push_back(native::describe_device(i, *catalog_.find(i)));
  if (!ipc::send(ipc_.get(), ipc::packet(ipc::kind::ready, r))) return 1;

  for (;;) {
    pollfd fds[2] = {{ipc_.get(), POLLIN, 0}, {finished_.get(), POLLIN, 0}};
    int n = ::poll(fds, 2, 1000);
    if (n < 0 && errno != EINTR) return finish(std::string("poll: ") + std::strerror(errno));
    if (n > 0 && fds[1].revents) return finish("the session ended");
    if (n > 0 && fds[0].revents) {
      ipc::received message;
      std::string why;
      switch (ipc::receive(ipc_.get(), message, why)) {
        case ipc::receive_result::ok:
          if (!handle(message)) return finish("ended by the main process");
          break;
        case ipc::receive_result::would_block: break;
        case ipc::receive_result::closed: return finish("the daemon's main process is gone");
        case ipc::receive_result::failed: return finish(why);
      }
    }
    send_census();
  }
}

}  // namespace

int run_session_worker(int ipc_fd) {
  // A worker never outlives its main process: its sessions' sockets would
  // stay open with nobody to route to them.
  // (Had it gone already, the socket is closed and the worker ends there.)
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  set_log_component("ferryd-worker");
  session_worker worker(ipc_fd);
  return worker.run();
}

}  // namespace ferry::server
