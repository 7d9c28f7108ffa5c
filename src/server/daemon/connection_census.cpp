#include "server/daemon/connection_census.hpp"

#include <sys/stat.h>

#include <algorithm>

namespace ferry::server {

void connection_census::track(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return;
  tracked_.push_back({fd, st.st_dev, st.st_ino});
}

size_t connection_census::open() {
  auto closed = std::remove_if(tracked_.begin(), tracked_.end(), [](const entry& e) {
    struct stat st {};
    return ::fstat(e.fd, &st) != 0 || st.st_dev != e.device || st.st_ino != e.inode;
  });
  tracked_.erase(closed, tracked_.end());
  return tracked_.size();
}

}  // namespace ferry::server
