// What the daemon's main process and a session worker say to each other
// (docs/workers.md).
//
// One SOCK_SEQPACKET socket pair per worker: every message is one packet, so
// no framing is needed and a socket descriptor travels with the packet that
// names it (SCM_RIGHTS). A packet is a u16 kind followed by the message's
// fields in the wire protocol's codec, so every length in it is checked the
// same way. The worker is the less trusted side: the main process checks what
// a worker says as it checks what a client says, and a worker that breaks a
// rule is ended.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/socket.hpp"
#include "protocol/codec.hpp"
#include "protocol/messages.hpp"

namespace ferry::server::ipc {

/// The largest packet either side sends (a links or workers table of a busy
/// daemon fits many times over).
inline constexpr size_t max_packet = 4u << 20;

enum class kind : uint16_t {
  // main -> worker
  configure = 1,  ///< the worker's settings; the first message a worker gets
  adopt = 2,      ///< a connection for the worker's session (with its socket)
  stop = 3,       ///< end the session now (the daemon is stopping)
  proof = 4,      ///< the answer to prove
  links = 5,      ///< the worker's link counters (asked: links_request; or the daemon's sums)
  workers = 6,    ///< the daemon's workers, for the worker's client
  // worker -> main
  ready = 20,          ///< the native platforms are loaded (or failed to)
  session_state = 21,  ///< the session's client is connected or detached
  prove = 22,          ///< authenticate a peer link with the daemon's token
  links_request = 23,  ///< main -> worker: your counters; worker -> main: the daemon's sums
  workers_request = 24,
  census = 25,         ///< connections the worker holds open
  ended = 26,          ///< the session ended; the worker exits next
};

/// The worker's settings. Paths, never secrets: the worker holds no token
/// and no private key.
struct configure {
  std::string platform;                 // --platform
  uint64_t device_type = 0;             // --device-type (cl_device_type)
  std::vector<uint32_t> devices;        // --device
  uint8_t completions = 0;              // --completions (native::completion_mode)
  uint8_t log_level = 0;
  uint64_t grace_ms = 0;
  uint32_t bulk_lanes = 1;              // --bulk-lanes
  uint64_t memory_limit = 0;            // session quotas (session_limits)
  uint64_t objects_limit = 0;
  uint64_t queued_limit = 0;
  uint64_t in_flight_limit = 0;
  uint64_t open_files = 0;              // RLIMIT_NOFILE (0: as inherited)
  std::string peer_address;             // announced in server_info
  std::string peer_ca_pem;              // --tls-ca's certificates (PEM text; empty: the system's)
  uint8_t peer_tls = 0;                 // peer links use TLS over TCP
  uint8_t peer_token = 0;               // peer links prove the token (through `prove`)
  std::string worker_user;              // drop to this user (empty: stay)
  std::vector<std::string> forbidden;   // files the worker must not open (token, key)
  uint8_t announce = 0;                 // log what the native platforms are like (the first worker only)
  uint8_t kernel_cache = 0;             // worker::kernel_cache_mode
  std::string kernel_cache_dir;         // shared mode: the directory (empty: the driver's default)
  std::string scratch;                  // this worker's directory, made by the main process (kernel_cache.hpp)
  std::string local_unix_path;          // local_route: the daemon's --unix, absolute
  std::string host_identity;            // local_route: the host (host_identity.hpp), read by the main process
  uint8_t peer_shared_memory = 0;       // --peer-shared-memory
  std::string file_root;                // --file-root, absolute (empty: no files)
  FERRY_FIELDS(platform, device_type, devices, completions, log_level, grace_ms, bulk_lanes, memory_limit, objects_limit,
               queued_limit, in_flight_limit, open_files, peer_address, peer_ca_pem, peer_tls, peer_token, worker_user,
               forbidden, announce, kernel_cache, kernel_cache_dir, scratch, local_unix_path, host_identity,
               peer_shared_memory, file_root)
};

struct ready {
  uint8_t ok = 0;
  std::string error;        // why the native platforms could not be loaded
  uint32_t devices = 0;
  std::vector<std::string> descriptions;  // one line per device, for the daemon's log
  FERRY_FIELDS(ok, error, devices, descriptions)
};

/// What a connection that the worker adopts is for.
enum class role : uint8_t { open_session = 0, resume = 1, bulk = 2, peer_in = 3 };

struct adopt {
  role what = role::open_session;
  protocol::session_token session{};
  protocol::session_token secret{};
  protocol::session_token peer_key{};
  protocol::session_token link{};  // peer_in: the source's link id
  uint16_t version = 0;            // the negotiated protocol version
  std::string peer;                // the remote address, for logs and counters
  std::vector<uint8_t> tls;        // the TLS connection's state (tls_handoff); empty: plain
  FERRY_FIELDS(what, session, secret, peer_key, link, version, peer, tls)
};

struct stop {
  std::string reason;
  FERRY_FIELDS(reason)
};

struct session_state {
  protocol::worker_state state = protocol::worker_state::serving;
  std::string client;
  FERRY_FIELDS(state, client)
};

struct prove {
  uint64_t request = 0;
  uint8_t role = 0;  // protocol::auth_role
  protocol::nonce server_nonce{};
  protocol::nonce client_nonce{};
  std::array<uint8_t, 32> binding{};
  FERRY_FIELDS(request, role, server_nonce, client_nonce, binding)
};

struct proof {
  uint64_t request = 0;
  protocol::mac value{};
  FERRY_FIELDS(request, value)
};

struct links_request {
  uint64_t request = 0;
  FERRY_FIELDS(request)
};

struct links {
  uint64_t request = 0;
  std::vector<protocol::link_counter> counters;
  FERRY_FIELDS(request, counters)
};

struct workers_request {
  uint64_t request = 0;
  FERRY_FIELDS(request)
};

struct workers {
  uint64_t request = 0;
  std::vector<protocol::worker_entry> entries;
  FERRY_FIELDS(request, entries)
};

struct census {
  uint32_t open = 0;
  FERRY_FIELDS(open)
};

struct ended {
  std::string reason;
  std::vector<protocol::link_counter> counters;  // the final ones
  FERRY_FIELDS(reason, counters)
};

/// Encodes `message` as a packet of kind `k`.
template <class T>
std::vector<uint8_t> packet(kind k, const T& message) {
  std::vector<uint8_t> out;
  protocol::writer w(out);
  w.put_scalar(static_cast<uint16_t>(k));
  protocol::encode_value(w, message);
  return out;
}

/// A packet received: its kind, payload and the descriptor that came with it.
struct received {
  kind what{};
  std::vector<uint8_t> payload;
  unique_fd fd;
};

/// Decodes a received payload; false with a reason.
template <class T>
bool decode(const received& r, T& out, std::string& why) {
  const char* error = "";
  if (protocol::decode_payload(r.payload.data(), r.payload.size(), out, error)) return true;
  why = std::string("malformed worker message ") + std::to_string(static_cast<unsigned>(r.what)) + ": " + error;
  return false;
}

/// A connected SOCK_SEQPACKET pair (close-on-exec), or false with a reason.
bool socket_pair(unique_fd& a, unique_fd& b, std::string& error);

/// Sends one packet, with `fd` attached when it is not -1. Blocks; false
/// when the other side is gone. Safe from several threads at once (one
/// packet is one system call).
bool send(int socket, const std::vector<uint8_t>& packet, int fd = -1);

enum class receive_result { ok, closed, failed, would_block };
/// Receives one packet. `closed`: the other side is gone; `failed`: a packet
/// that breaks the rules (truncated, too short, several descriptors), with
/// `why`; `would_block` on a non-blocking socket with nothing to read.
receive_result receive(int socket, received& out, std::string& why);

}  // namespace ferry::server::ipc
