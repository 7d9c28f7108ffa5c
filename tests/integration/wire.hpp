// Raw protocol sessions for integration tests that play a client other than libferry:
// the daemon's own test client (server/testing/test_client.hpp, header-only, built on
// src/protocol) plus the few helpers the isolation and hostile-input tests share.
// libferry itself is still reached only through the loader; these tests link the
// protocol library, never the ICD.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <vector>

#include "server/testing/test_client.hpp"

namespace ferry::test::wire {

namespace p = ::ferry::protocol;
using ::ferry::server::testing::client;
using ::ferry::server::testing::connection;
using ::ferry::server::testing::connect_loopback;

/// How long a test waits for the daemon to close a connection it must close.
inline constexpr int close_timeout_ms = 15000;

using ::ferry::server::testing::header;
using ::ferry::server::testing::mem_arg;

/// The encoded fields of `message`, without a frame header.
template <class T>
std::vector<uint8_t> payload_of(const T& message) {
  std::vector<uint8_t> out;
  p::writer w(out);
  p::encode_value(w, message);
  return out;
}

/// A frame with whatever header the caller wants in front of `payload`: the
/// header's size field need not match the payload (that is the point).
inline std::vector<uint8_t> raw_frame(uint32_t payload_size, uint16_t message_id, uint16_t flags,
                                      const std::vector<uint8_t>& payload = {}) {
  std::vector<uint8_t> out(p::frame_header_size);
  p::store_header(out.data(), p::frame_header{payload_size, message_id, flags});
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

/// A well-formed frame of `message` with `flags` in its header.
template <class T>
std::vector<uint8_t> frame_of(const T& message, uint16_t flags = 0) {
  std::vector<uint8_t> payload = payload_of(message);
  return raw_frame(static_cast<uint32_t>(payload.size()), static_cast<uint16_t>(p::message_traits<T>::id), flags,
                   payload);
}

/// A bulk_data frame: the 24-byte prefix, then `chunk` raw bytes.
inline std::vector<uint8_t> bulk_frame(uint64_t transfer, uint64_t offset, uint64_t total,
                                       const std::vector<uint8_t>& chunk, uint16_t flags = 0) {
  std::vector<uint8_t> payload = payload_of(p::bulk_data{transfer, offset, total});
  payload.insert(payload.end(), chunk.begin(), chunk.end());
  return raw_frame(static_cast<uint32_t>(payload.size()), static_cast<uint16_t>(p::message_id::bulk_data), flags,
                   payload);
}

inline bool send_bytes(connection& c, const std::vector<uint8_t>& bytes) { return c.send_raw(bytes.data(), bytes.size()); }

/// Ends our side of the stream, as a client that dies mid-frame would.
inline void half_close(connection& c) { ::shutdown(c.fd(), SHUT_WR); }

/// A control connection that has sent nothing yet.
inline connection dial(uint16_t port) { return connection(connect_loopback(port)); }

}  // namespace ferry::test::wire
