// The socket BIOs that connect OpenSSL's connections to Ferry's sockets.
//
// Both send with MSG_NOSIGNAL (OpenSSL's own socket BIO writes with write(),
// which raises SIGPIPE on a closed connection and would kill an application
// that does not ignore it). A server's also buffers what it reads: its
// connection reads without OpenSSL's read-ahead, so that every byte OpenSSL
// has not yet taken stays here, where a handover to a session's worker
// process can collect it (tls_handoff.hpp), while bulk data still comes in
// with one system call per buffer rather than two per record.
#pragma once

#include "common/tls_handoff.hpp"

typedef struct bio_st BIO;

namespace ferry::tls::detail {

enum class bio_buffering {
  none,        // OpenSSL reads the socket directly (clients: read-ahead does the buffering)
  own_buffer,  // reads fill a buffer of socket_bio_buffer_bytes first (servers)
};

constexpr size_t socket_bio_buffer_bytes = 128 * 1024;

/// A BIO over `fd`, which it does not own.
BIO* new_socket_bio(int fd, bio_buffering buffering);

/// Moves the bytes the BIO has read from the socket but OpenSSL has not yet
/// taken to the end of `out`. The BIO is empty afterwards.
void take_buffered(BIO* bio, wiped_bytes& out);

}  // namespace ferry::tls::detail
