// Protocol identity and version negotiation.
#pragma once

#include <cstdint>

namespace ferry::protocol {

/// First field of every hello: "FRY1" read as a little-endian u32.
inline constexpr uint32_t magic = 0x31595246;
/// Versions this build speaks; the handshake picks the highest common one.
/// A message whose layout changes gets a new id, and the old id keeps the old
/// layout for older peers: version 6 moved build_program and compile_program
/// (now with the client's headers) to 100 and 101, and a client sends the
/// layout of 32 and 33 (build_program_v4, compile_program_v4) to a server of
/// version 4 or 5. Version 7 adds get_workers (the daemon runs each session
/// in a worker process) and refusal codes 12-14. Version 8 adds
/// get_local_route, local_route and add_peer_route (peer links between
/// daemons of one host over a Unix socket), window_offer and window_chunk on
/// peer links, and the read window of a bulk stream on a Unix socket
/// (read_window_offer, read_window_chunk). Version 9 adds file_to_buffer and
/// buffer_to_file (files below the server's --file-root). Version 10 adds
/// the cuda_* messages (CUDA remoting, docs/cuda.md). Version 11 adds bulk
/// lanes: more connections beside the bulk stream for large transfers
/// (session_state.bulk_lanes, hello.link on a bulk stream, refusal 15).
inline constexpr uint16_t min_version = 4;
inline constexpr uint16_t max_version = 11;
/// The first version whose servers take the client's headers with a build.
inline constexpr uint16_t headers_version = 6;
/// The first version whose servers answer get_workers (session worker
/// processes, docs/workers.md). A server of an earlier version takes the
/// request for a protocol violation and ends the session, so a client asks
/// only a server that chose this version or a later one.
inline constexpr uint16_t workers_version = 7;
/// The first version whose servers answer get_local_route, take
/// add_peer_route and read shared-memory windows on incoming peer links.
/// Clients ask, and links offer windows, only at this version or later.
inline constexpr uint16_t local_route_version = 8;
/// The first version whose servers take read_window_offer and send a read's
/// large chunks through that window. A server of an earlier version takes
/// the offer for a protocol violation, so a client offers only to a server
/// that chose this version or a later one.
inline constexpr uint16_t read_window_version = 8;
/// The first version whose servers take file_to_buffer and buffer_to_file.
/// A server of an earlier version takes them for a protocol violation, so a
/// client sends them only to a server that chose this version or a later one.
inline constexpr uint16_t files_version = 9;
/// The first version whose servers take the cuda_* messages. Ferry's
/// libcuda.so.1 needs it: with an older server it has no devices.
inline constexpr uint16_t cuda_version = 10;
/// The first version whose servers take bulk lanes (docs/protocol.md, "Bulk
/// lanes"): a server of an earlier version says 0 in session_state.bulk_lanes
/// and refuses a second bulk stream, so a client opens lanes only when the
/// server granted them.
inline constexpr uint16_t bulk_lanes_version = 11;
/// Default TCP port of ferryd.
inline constexpr uint16_t default_port = 7780;

/// Picks the version both sides speak, or 0 when the ranges do not overlap.
constexpr uint16_t negotiate_version(uint16_t peer_min, uint16_t peer_max) {
  uint16_t low = peer_min > min_version ? peer_min : min_version;
  uint16_t high = peer_max < max_version ? peer_max : max_version;
  return low <= high ? high : 0;
}

}  // namespace ferry::protocol
