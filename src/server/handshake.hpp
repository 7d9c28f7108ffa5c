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
};

/// Reads the hello frame from a non-blocking socket, exactly (never past its
/// end, so whatever the client sends next stays in the socket for the stream's
/// reader).
class hello_reader {
 public:
  enum class state { need_more, done, failed };
  /// Reads what is available. `failed`: `why` says what was wrong (EOF
  /// included); `done`: hello() is valid.
  state read_from(int fd, std::string& why);
  /// The same from bytes in memory (tests); consumes what it needs.
  state feed(const uint8_t*& data, size_t& size, std::string& why);

  const protocol::hello& hello() const { return hello_; }

 private:
  state take(const uint8_t* data, size_t size, size_t& used, std::string& why);
  size_t wanted() const;

  uint8_t header_[8] = {};
  size_t header_got_ = 0;
  std::vector<uint8_t> payload_;
  size_t payload_got_ = 0;
  bool have_header_ = false;
  protocol::hello hello_;
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

/// Constant-time comparison (secrets).
bool tokens_equal(const protocol::session_token& a, const protocol::session_token& b);
/// 16 random bytes from the kernel (getrandom); false when it has none to give.
bool random_token(protocol::session_token& out);
bool is_zero(const protocol::session_token& token);

}  // namespace ferry::server
