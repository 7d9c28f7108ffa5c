// An incoming peer link: another server's outgoing link into this session
// (hello with stream peer and the session's peer key). Its thread reads
// peer_event_status frames, which complete imported events, and bulk_data
// chunks, which go straight into the transfer table as the client's bulk
// stream's do (bulk_reader::receive_chunk). Anything else, or a malformed
// frame, ends this link only; the session goes on.
#pragma once

#include <string>

#include "server/link_stats.hpp"

namespace ferry::server {

struct session_core;

class peer_reader {
 public:
  peer_reader(int fd, session_core& core, link_counter* counter) : fd_(fd), core_(core), counter_(counter) {}

  enum class end { closed, violation };
  /// The thread's body; returns when the link closes or breaks a rule (`why`).
  end run(std::string& why);

 private:
  int fd_;
  session_core& core_;
  link_counter* counter_;
};

}  // namespace ferry::server
