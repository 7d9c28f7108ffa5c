#include "common/file_io.hpp"

#include <unistd.h>

#include <cerrno>

namespace ferry {

ssize_t read_at(int fd, void* to, size_t size, uint64_t at) {
  auto* bytes = static_cast<uint8_t*>(to);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, bytes + done, size - done, static_cast<off_t>(at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

bool write_at(int fd, const void* from, size_t size, uint64_t at) {
  const auto* bytes = static_cast<const uint8_t*>(from);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pwrite(fd, bytes + done, size - done, static_cast<off_t>(at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = EIO;  // no progress and no error: never loop on it
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace ferry
