// For tests: a connected Unix socket pair, one end a raw descriptor (the
// test's "client"), the other a plain stream (the side under test).
#pragma once

#include <sys/socket.h>

#include "common/socket.hpp"
#include "common/stream.hpp"

namespace ferry {

struct test_stream_pair {
  unique_fd client;
  stream_ptr server;
};

/// False (errno set) when the pair cannot be made.
inline bool make_test_stream_pair(test_stream_pair& out) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return false;
  out.client = unique_fd(pair[0]);
  out.server = plain_stream(unique_fd(pair[1]));
  return true;
}

}  // namespace ferry
