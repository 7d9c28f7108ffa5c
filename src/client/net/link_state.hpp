// What the parts of a connection share (control_channel, bulk_sender,
// bulk_receiver, event_tracker, resumer): the server, the current pair of
// streams, what is known of the session, and how far each side has got.
//
// Locks: fd_mutex_ guards shutting down and replacing the streams. The
// resumer replaces them while it also holds the control channel's and the
// bulk sender's send mutexes, so a writer's stream stays put while it writes
// (a writer reads control() or bulk() only under its own send mutex).
// session_mutex_ guards the session's tokens; failures_mutex_ guards what each
// ended session's work fails with (and orders it before `ended`, so that
// whoever sees a session ended finds its failure). Both are leaves: nothing
// is taken under them. Everything else here is atomic.
#pragma once

#include <CL/cl.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "client/net/completion_sink.hpp"
#include "common/socket.hpp"
#include "common/stream.hpp"
#include "protocol/messages.hpp"
#include "protocol/outgoing.hpp"

namespace ferry::client {

/// What new work meets while a server is offline (FERRY_OUTAGE).
enum class outage_policy {
  /// Taken, and sent on resumption; fails only when the session cannot be
  /// resumed (the default: unmodified programs ride out short outages).
  wait,
  /// Refused at once with CL_DEVICE_NOT_AVAILABLE (FERRY_OUTAGE=fail-fast),
  /// for programs that move their work to another device as soon as the
  /// availability callback tells them (the PoCL-R paper's Fig. 4).
  fail_fast,
};
/// FERRY_OUTAGE, read once: "wait" (default) or "fail-fast"; anything else
/// is logged and taken as the default.
outage_policy outage_policy_from_environment();

class link_state {
 public:
  link_state(const endpoint& where, const protocol::credentials& who, completion_sink& sink);
  link_state(const link_state&) = delete;
  link_state& operator=(const link_state&) = delete;

  const std::string& name() const { return name_; }
  const endpoint& where() const { return where_; }
  const protocol::credentials& credentials() const { return credentials_; }
  completion_sink& sink() const { return sink_; }

  /// The current streams. The control reader reads control(); writers use
  /// them under their send mutex (see the file comment).
  stream* control() const { return control_.get(); }
  stream* bulk() const { return bulk_.get(); }
  /// Bulk lane `lane` (1 to lane_count() - 1; docs/protocol.md, "Bulk
  /// lanes"), which its writer uses under its own send mutex.
  stream* lane(uint32_t lane) const { return lanes_[lane - 1].get(); }
  /// The bulk connections of the current streams, the bulk stream included.
  uint32_t lane_count() const { return lane_count_.load(std::memory_order_acquire); }
  /// Which pair of streams is current: a write that fails on an older one
  /// was expected.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  /// Makes `control`, `bulk` and the bulk lanes `lanes` (lane k at k - 1)
  /// current, closing the old ones; the caller holds every send mutex.
  void replace_streams(stream_ptr control, stream_ptr bulk, std::vector<stream_ptr> lanes = {});
  /// The streams of `generation` broke: shuts both down so that the control
  /// reader notices and resumes. A stale generation is ignored.
  void broken(uint64_t generation, const char* why);
  /// Shuts both streams down, moving on to the next generation first when
  /// `next` says so (writes that fail from then on are expected).
  enum class generation_change { keep, next };
  void shut_streams(generation_change change);
  /// Shuts the bulk stream and the bulk lanes down: their readers return.
  void shut_bulk();

  /// Ends the session for good (no resumption) and wakes whoever waits on
  /// it: the control reader then fails everything outstanding with
  /// `failure`, and the session's later work fails with it too (failure_of).
  /// CL_DEVICE_NOT_AVAILABLE, or CL_OUT_OF_RESOURCES when the server ended
  /// the session because its worker process exceeded a limit. The first end
  /// of a session counts; later calls only wake again.
  void end_session(const std::string& why, cl_int failure);
  /// How end_session's log line names what the work fails with: by its
  /// OpenCL name unless `namer` is set (Ferry's libcuda.so.1 names the CUDA
  /// error its calls return).
  void name_failures(std::function<std::string(cl_int)> namer);
  /// What the work of session `epoch` fails with once it ended: the failure
  /// its end_session named, CL_DEVICE_NOT_AVAILABLE for a session that ended
  /// without one (the connection was destroyed) or has not ended.
  cl_int failure_of(uint64_t session_epoch) const;
  /// The same for the current session.
  cl_int failure() const { return failure_of(epoch.load(std::memory_order_acquire)); }
  /// Adds what end_session wakes (each part's waiting threads). Only while
  /// the connection is being built: end_session reads the list unlocked.
  void on_end(std::function<void()> wake) { wakers_.push_back(std::move(wake)); }

  /// Whether the server takes new work (connection::accepting).
  bool accepting() const { return policy == outage_policy::fail_fast ? alive.load() : !ended.load(); }

  protocol::session_token session() const {
    std::lock_guard lock(session_mutex_);
    return session_;
  }
  protocol::session_token peer_key() const {
    std::lock_guard lock(session_mutex_);
    return peer_key_;
  }
  /// The tokens to show in the next hello (zero: ask for a new session).
  protocol::session_token secret() const {
    std::lock_guard lock(session_mutex_);
    return secret_;
  }
  /// What a welcome told: the session, its secret and its peer key.
  void set_session(const protocol::session_token& session, const protocol::session_token& secret,
                   const protocol::session_token& peer_key);
  /// Forgets the session, so that the next handshake opens a new one.
  void forget_session();

  /// Whether the server is reachable now; whether the session is over for
  /// good; whether the connection is being destroyed or said goodbye.
  std::atomic<bool> alive{false};
  std::atomic<bool> ended{false};
  std::atomic<bool> stopping{false};
  /// Which session with the server this is (connection::epoch).
  std::atomic<uint64_t> epoch{1};
  /// The protocol version the server chose at the handshake.
  std::atomic<uint16_t> version{0};
  const outage_policy policy = outage_policy_from_environment();
  /// session_state.grace_ms: 0 means no resumption. Written by the control
  /// reader only (and by open() before it starts).
  uint32_t grace_ms = 0;

  // What the client has received (and handled) of the session's frames, and
  // the counts its last ack carried.
  std::atomic<uint64_t> received_control{0};
  std::atomic<uint64_t> received_bulk{0};
  std::atomic<uint64_t> acked_control{0};
  std::atomic<uint64_t> acked_bulk{0};
  /// The same for each bulk lane ([k]: lane k's; [0] unused), which
  /// lane_ack reports.
  std::array<std::atomic<uint64_t>, protocol::max_bulk_lanes> received_lanes{};
  std::array<std::atomic<uint64_t>, protocol::max_bulk_lanes> acked_lanes{};

 private:
  /// Shuts every stream down (fd_mutex_ held).
  void shut_all_locked();

  const std::string name_;
  const endpoint where_;
  const protocol::credentials credentials_;
  completion_sink& sink_;

  std::mutex fd_mutex_;  // guards shutting down and replacing control_, bulk_ and lanes_
  stream_ptr control_;
  stream_ptr bulk_;
  std::vector<stream_ptr> lanes_;          // lane k at k - 1
  std::atomic<uint32_t> lane_count_{1};  // 1 + lanes_.size()
  std::atomic<uint64_t> generation_{1};  // of the current pair of streams

  mutable std::mutex session_mutex_;  // guards session_, secret_, peer_key_
  protocol::session_token session_{};
  protocol::session_token secret_{};
  protocol::session_token peer_key_{};

  mutable std::mutex failures_mutex_;  // guards failures_ and failure_namer_; taken around the first store of `ended`
  std::map<uint64_t, cl_int> failures_;  // epoch -> what the work of that ended session fails with
  std::function<std::string(cl_int)> failure_namer_;

  std::vector<std::function<void()>> wakers_;
};

}  // namespace ferry::client
