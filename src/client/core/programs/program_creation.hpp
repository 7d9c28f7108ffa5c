// Programs made on the servers of their devices: from source (posted: the
// id is ours, so nothing waits), from binaries and from IL (round trips,
// since the native answer is what the call returns).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "client/core/objects.hpp"
#include "client/core/result.hpp"
#include "protocol/limits.hpp"

namespace ferry::client {

/// The most bytes of source, binaries or IL one creation can carry (the rest
/// of its frame holds the other fields).
inline constexpr size_t max_program_text = protocol::max_control_payload - 4096;

/// The program object for a program the servers of `devices` hold under `id`
/// (API count 1, holding its context).
program* make_program(cl_context c, protocol::object_id id, std::vector<cl_device_id> devices);

/// A program of `c` from `source`, on every server of the context.
cl_program create_from_source(cl_context c, std::string source);

/// A program of the listed devices from their binaries (`lengths[i]` bytes
/// at `binaries[i]`); each server gets those of its own devices.
/// `binary_status` (when not NULL) gets each device's native answer.
result<cl_program> create_from_binaries(cl_context c, const std::vector<cl_device_id>& devices, const size_t* lengths,
                                        const unsigned char** binaries, cl_int* binary_status);

/// A program of `c` from `length` bytes of IL (the native answer when a
/// server refuses it).
result<cl_program> create_from_il(cl_context c, const void* il, size_t length);

}  // namespace ferry::client
