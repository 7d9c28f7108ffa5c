// The main process's side of session workers (docs/workers.md): it starts
// worker processes ahead of need, hands each new session's connection to a
// ready one, routes the session's later connections (bulk stream,
// resumptions, peer links) to the same worker, answers what workers may not
// know themselves (proofs of the token, daemon-wide counters, the list of
// workers), and notices when a worker ends: a worker that crashes, is killed
// or exceeds its memory ends its own session only, and a client that comes
// back for that session learns why.
//
// One thread (the monitor) polls every worker's socket and process
// descriptor; the acceptor thread calls open_session and attach. Both take
// the pool's mutex, which is never held across anything that waits.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/socket.hpp"
#include "common/stream.hpp"
#include "protocol/messages.hpp"
#include "server/worker/ipc.hpp"

namespace ferry::server {

struct worker_pool_config {
  /// The ferryd binary to start as `PROGRAM --session-worker 3`.
  std::string program;
  /// Sent to every worker as it starts.
  ipc::configure settings;
  /// Workers kept started and ready, waiting for a session (--spare-workers).
  size_t spares = 2;
  /// A worker not ready within this long is ended, and a session that waited
  /// for it is refused (--worker-start-timeout).
  std::chrono::milliseconds start_timeout{30000};
  /// Resident memory above which a worker is ended, its session with it
  /// (--worker-memory; 0: no limit).
  uint64_t memory_limit = 0;
  /// How long the reason of a lost session is kept for its client (its grace period).
  std::chrono::milliseconds remember_lost{60000};
  /// The daemon's token, for the proofs of workers' peer links (empty: none).
  std::string token;
  /// The user workers run as (-1: the daemon's own), who owns their scratch
  /// directories.
  uid_t worker_uid = static_cast<uid_t>(-1);
  gid_t worker_gid = static_cast<gid_t>(-1);
};

class worker_pool {
 public:
  explicit worker_pool(worker_pool_config config);
  ~worker_pool();
  worker_pool(const worker_pool&) = delete;
  worker_pool& operator=(const worker_pool&) = delete;

  /// Starts the spares and waits until the first is ready: false with the
  /// reason when it cannot load the native platforms (no device matches the
  /// flags, no platform at all), which the daemon reports before it listens.
  /// `devices` gets a line per device that the worker found.
  bool start(std::vector<std::string>& devices, std::string& error);
  /// Stops every worker (their sessions end), waits for them a moment and
  /// kills what is left. Idempotent.
  void stop(const std::string& reason);

  /// A new session (the acceptor made its ids): handed to a ready worker now,
  /// or as soon as one is (refused if none is within the start timeout).
  void open_session(stream_ptr s, const std::string& peer, const protocol::welcome& welcome);
  /// A connection for an existing session: the secret (peer key for a peer
  /// link) is checked here, then the worker takes it. Refused, with the
  /// reason, for an unknown session or one whose worker was lost.
  void attach(ipc::role what, stream_ptr s, const std::string& peer, const protocol::hello& hello,
              uint16_t version);

  /// Sessions served or waiting for a worker.
  size_t session_count() const;
  /// Client and peer connections the workers hold open (as they last said).
  size_t open_connections() const;
  /// A row per worker process.
  std::vector<protocol::worker_entry> table() const;

 private:
  struct worker;
  struct waiting_session {
    stream_ptr s;
    std::string peer;
    protocol::welcome welcome;
    std::chrono::steady_clock::time_point deadline;
  };
  struct lost_session {
    protocol::session_token secret{};
    protocol::session_token peer_key{};
    int32_t code = 0;
    std::string reason;
    std::chrono::steady_clock::time_point forget_at;
  };
  struct links_question;

  void monitor();
  /// Starts spares until `spares` are starting or ready (mutex held).
  void replenish();
  bool spawn(std::string& error);
  /// Hands waiting sessions to ready workers, refuses those that waited too long.
  void serve_waiting();
  bool hand_over(worker& w, waiting_session& s);
  void on_message(worker& w, ipc::received& message);
  void on_exit(worker& w);
  /// When the worker's process has ended (waiting up to 0.2 s for it to):
  /// takes in what it said last and reaps it. False when it lives on.
  bool settle_exit(worker& w);
  /// Start timeouts, memory limits, broken sockets (each tick).
  void check_workers();
  void answer_links(links_question& q);
  std::vector<protocol::worker_entry> table_locked() const;
  /// Ends a worker that broke a rule of the main process or lost its socket.
  void kill_worker(worker& w, const std::string& why);
  void wake();

  const worker_pool_config config_;
  unique_fd wake_;  // eventfd: the monitor looks again
  std::thread monitor_;

  mutable std::mutex mutex_;
  std::condition_variable first_ready_;
  std::vector<std::unique_ptr<worker>> workers_;
  std::map<protocol::session_token, worker*> by_session_;
  std::map<protocol::session_token, lost_session> lost_;
  std::deque<waiting_session> waiting_;
  std::map<uint64_t, std::unique_ptr<links_question>> questions_;
  uint64_t next_question_ = 1;
  /// The final link counters of workers that ended, summed.
  std::map<std::pair<protocol::link_kind, std::string>, protocol::link_counter> retired_;
  bool stopping_ = false;
  bool first_answered_ = false;  // the first worker said whether it is ready
  std::string first_error_;
  std::vector<std::string> first_devices_;
  bool announced_ = false;  // a worker was told to describe the platforms
  uint32_t failed_starts_ = 0;  // in a row: starts are spaced out after failures
  std::chrono::steady_clock::time_point next_start_{};
};

}  // namespace ferry::server
