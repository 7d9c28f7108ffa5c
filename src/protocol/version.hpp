// Protocol identity and version negotiation.
#pragma once

#include <cstdint>

namespace ferry::protocol {

/// First field of every hello: "FRY1" read as a little-endian u32.
inline constexpr uint32_t magic = 0x31595246;
/// Versions this build speaks; the handshake picks the highest common one.
/// Version 6 changed the layout of build_program and compile_program (their
/// build_files); the codec has no fields that depend on the version, so this
/// build speaks 6 alone and an older peer is refused at the handshake rather
/// than dropped at its first build.
inline constexpr uint16_t min_version = 6;
inline constexpr uint16_t max_version = 6;
/// Default TCP port of ferryd.
inline constexpr uint16_t default_port = 7780;

/// Picks the version both sides speak, or 0 when the ranges do not overlap.
constexpr uint16_t negotiate_version(uint16_t peer_min, uint16_t peer_max) {
  uint16_t low = peer_min > min_version ? peer_min : min_version;
  uint16_t high = peer_max < max_version ? peer_max : max_version;
  return low <= high ? high : 0;
}

}  // namespace ferry::protocol
