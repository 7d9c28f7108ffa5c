// The first frame of every connection: hello -> welcome or refused.
//
// One port serves every stream: the hello says whether a connection is a
// session's control stream (all-zero session: open a new one), its bulk
// stream (names the session and proves its secret), or a peer link. This file
// holds the incremental reader of that first frame and the checks that need
// no session state; the server (server.cpp) does the rest.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/stream.hpp"
#include "common/tls.hpp"
#include "protocol/messages.hpp"

namespace ferry::server {

/// `refused.code` values.
enum class refusal : int32_t {
  bad_magic = 1,             ///< not a Ferry client
  no_common_version = 2,     ///< protocol version ranges do not overlap
  unknown_session = 3,       ///< bulk, peer: no such session, or the secret (peer key) is wrong
  unsupported_stream = 4,    ///< unknown stream kinds
  bulk_already_attached = 5, ///< bulk: the session has its bulk stream already
  resume_unsupported = 6,    ///< protocol version 2 only: control with a session id
  shutting_down = 7,         ///< the daemon is stopping
  session_closing = 8,       ///< bulk, peer: the session is ending
  too_many_sessions = 9,     ///< control: the daemon serves --max-sessions sessions already
  not_authenticated = 10,    ///< a wrong token, or none for a daemon that requires one
  tls_required = 11,         ///< a plain connection to a daemon that takes TLS only
  worker_lost = 12,          ///< control, bulk, peer: the session's worker process ended abnormally
  worker_over_quota = 13,    ///< the same, because it exceeded a limit (memory, open files)
  no_worker = 14,            ///< control opening a session: no worker process became ready in time
  no_such_lane = 15,         ///< bulk lane: not a lane the session takes (session_state.bulk_lanes)
};

/// What the acceptor demands of every connection before it is handed over.
struct admission {
  /// Shared token the client must prove it holds (empty: no authentication).
  std::string token;
  /// TLS for TCP connections (null: plain). Unix-socket connections stay
  /// plain: they never leave the host.
  std::shared_ptr<tls::context> tls;
};

/// Reads one handshake frame (the hello, or the proof that answers a
/// challenge) from a non-blocking stream, exactly (never past its end, so
/// whatever the client sends next stays in the stream for its reader).
class hello_reader {
 public:
  enum class state { need_more, done, failed };
  explicit hello_reader(protocol::message_id expected = protocol::message_id::hello) : expected_(expected) {}
  /// Reads what is available. `failed`: `why` says what was wrong (EOF
  /// included); `done`: hello() or proof() is valid.
  state read_from(stream& s, std::string& why);
  /// The same from bytes in memory (tests); consumes what it needs.
  state feed(const uint8_t*& data, size_t& size, std::string& why);

  const protocol::hello& hello() const { return hello_; }
  const protocol::proof& proof() const { return proof_; }
  /// Nothing read yet.
  bool untouched() const { return header_got_ == 0; }

 private:
  state take(const uint8_t* data, size_t size, size_t& used, std::string& why);
  size_t wanted() const;

  uint8_t header_[8] = {};
  size_t header_got_ = 0;
  std::vector<uint8_t> payload_;
  size_t payload_got_ = 0;
  bool have_header_ = false;
  protocol::message_id expected_;
  protocol::hello hello_;
  protocol::proof proof_;
};

/// What the checks that need no session state conclude about a hello.
struct hello_verdict {
  bool accepted = false;
  uint16_t version = 0;        // negotiated, when accepted
  protocol::refused refusal;   // when not accepted
};

/// Checks magic, version overlap and the stream kind's shape: bulk streams
/// and peer links must name a session (a control stream that names one
/// resumes it).
hello_verdict check_hello(const protocol::hello& hello);

/// Sends a refusal (logged with `peer`); the caller then closes.
void send_refusal(stream& s, const std::string& peer, const protocol::refused& why);

/// Checks a client's proof of the token against the challenge it answers
/// and writes the daemon's own proof into `answer`. False with a refusal.
bool check_proof(const std::string& token, const protocol::nonce& server_nonce, const protocol::proof& client,
                 const std::array<uint8_t, 32>& binding, protocol::proof& answer, protocol::refused& why);

/// Constant-time comparison (secrets).
bool tokens_equal(const protocol::session_token& a, const protocol::session_token& b);
/// 16 random bytes from the kernel (getrandom); false when it has none to give.
bool random_token(protocol::session_token& out);
bool is_zero(const protocol::session_token& token);

}  // namespace ferry::server
