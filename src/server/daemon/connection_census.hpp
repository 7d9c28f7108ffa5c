// Which of the connections the acceptor handed over are still open, for
// --max-connections.
//
// Sessions close their sockets on many paths (goodbye, a lost or replaced
// connection, a refused hello); instead of a hook on each, the census asks
// the kernel: a tracked descriptor still counts while it refers to the same
// socket (device and inode) as when it was handed over. A descriptor number
// reused for another file or socket has another inode. Acceptor thread only.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <vector>

namespace ferry::server {

class connection_census {
 public:
  /// Starts counting `fd` (an open socket).
  void track(int fd);
  /// How many tracked sockets are still open; forgets the closed ones.
  size_t open();

 private:
  struct entry {
    int fd;
    dev_t device;
    ino_t inode;
  };
  std::vector<entry> tracked_;
};

}  // namespace ferry::server
