// Whole-range reads and writes of a file at an offset, across short counts and
// EINTR: what the daemon's file thread (server/files/file_copier) and the
// transfer library's path variants (transfer/file_commands) both need.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace ferry {

/// Reads up to `size` bytes at `at` into `to`: fewer only where the file
/// ends; -1 on an error (errno says which).
ssize_t read_at(int fd, void* to, size_t size, uint64_t at);

/// Writes all `size` bytes at `at`; false on an error (errno says which).
bool write_at(int fd, const void* from, size_t size, uint64_t at);

}  // namespace ferry
