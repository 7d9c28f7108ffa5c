// Limits the decoder enforces before it allocates anything.
//
// A peer that announces more than these is malformed: the connection is closed
// with a logged reason. They are generous for honest traffic (program binaries
// of tens of MiB, kernel argument lists of hundreds of entries) and small enough
// that no single frame can exhaust the daemon's memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ferry::protocol {

/// Largest payload of one control frame (program sources and binaries travel here).
inline constexpr uint32_t max_control_payload = 64u << 20;
/// Largest data chunk of one bulk frame (the frame adds a 24-byte prefix);
/// bigger transfers are split into chunks.
inline constexpr uint32_t max_bulk_chunk = 8u << 20;
/// Largest single transfer (one buffer read or write).
inline constexpr uint64_t max_transfer_size = uint64_t{1} << 40;
/// Largest element count of any array field.
inline constexpr uint32_t max_array_elements = 1u << 20;
/// Largest piece of a CUDA host<->device copy on the control stream
/// (cuda_copy_to_device, cuda_data); larger copies travel as several pieces.
inline constexpr uint32_t max_cuda_copy_piece = 4u << 20;
/// Largest piece of a CUDA copy back on the bulk stream
/// (cuda_copy_from_device_bulk): what the daemon stages at once for it.
inline constexpr uint64_t max_cuda_bulk_piece = uint64_t{64} << 20;
/// The pieces libferry's libcuda.so.1 cuts large copies into, to the device
/// (cuda_copy_to_device_bulk) and back (cuda_copy_from_device_bulk): the
/// daemon pins staging of these sizes for each context before its first copy.
inline constexpr uint64_t cuda_copy_in_piece = uint64_t{64} << 20;
inline constexpr uint64_t cuda_copy_back_piece = uint64_t{16} << 20;
static_assert(cuda_copy_in_piece <= max_cuda_bulk_piece && cuda_copy_back_piece <= max_cuda_bulk_piece);
/// Largest string or byte-array field.
inline constexpr uint32_t max_bytes_field = 64u << 20;
/// Largest number of events in one wait list.
inline constexpr uint32_t max_wait_list = 1u << 16;
/// Longest path of a file on the server (file_to_buffer, buffer_to_file),
/// Linux's PATH_MAX less its NUL.
inline constexpr uint32_t max_file_path = 4095;

/// Headers a build or compile carries from the client's file system
/// (build_files): at most this many files, and this many bytes of paths and
/// contents together. Kernel headers are small; the caps keep one build from
/// filling the server's temporary directory.
inline constexpr uint32_t max_build_headers = 1024;
inline constexpr uint32_t max_build_header_bytes = 16u << 20;
/// Most -I options one build may carry.
inline constexpr uint32_t max_build_include_dirs = 4096;
/// Payload limit of build_program and compile_program (version 6): the headers plus 1 MiB
/// for the options, the directories and the other fields.
inline constexpr uint32_t max_build_payload = max_build_header_bytes + (1u << 20);

}  // namespace ferry::protocol
