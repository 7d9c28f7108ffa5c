// What precedes a chunk's bytes on a bulk stream: the frame header and the
// bulk_data prefix, 32 bytes that both ends write and read in one piece (the
// chunk itself goes straight between the socket and its place in memory).
//
// Both ends decode a head through the codec and check it here, so that a
// hostile or broken peer cannot name a place outside the transfer: every sum
// is checked without overflow before anything is written.
#pragma once

#include <cstdint>
#include <string>

#include "protocol/frame.hpp"
#include "protocol/messages.hpp"

namespace ferry::protocol {

inline constexpr size_t bulk_head_size = frame_header_size + bulk_prefix_size;

/// Whether `size` bytes at `offset` lie inside a transfer of `total` bytes.
constexpr bool chunk_within(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}

/// Writes the head of a bulk_data frame that carries `chunk` bytes
/// (at most max_bulk_chunk).
void store_bulk_head(uint8_t* out, const bulk_data& prefix, uint64_t chunk);

/// Checks a frame header alone: a bulk_data id, no flags, a payload that
/// holds the prefix and at most max_bulk_chunk bytes. False with a reason.
bool check_bulk_header(const frame_header& h, std::string& why);

/// Decodes and checks a whole head (bulk_head_size bytes): the header as
/// above, a transfer of at most max_transfer_size bytes and a chunk inside
/// it. False with a reason.
bool load_bulk_head(const uint8_t* head, bulk_data& prefix, uint64_t& chunk, std::string& why);

/// The checks load_bulk_head makes of a chunk's place, for any chunk.
bool check_chunk_place(uint64_t offset, uint64_t chunk, uint64_t total, std::string& why);

}  // namespace ferry::protocol
