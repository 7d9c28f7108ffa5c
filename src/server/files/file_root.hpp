// The directory a daemon serves files from (ferryd --file-root), for the
// file commands of its sessions (file_to_buffer, buffer_to_file).
//
// A client names a file by a path relative to the root. Every path is opened
// with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) from the root
// directory, so neither "..", an absolute path nor a symbolic link leads out
// of it, and by the session's worker under its own user (nobody when ferryd
// runs as root): the worker's Landlock rules and the file's permissions apply
// as well. Only regular files are served (a FIFO would block the session's
// file thread, a device file is no client's business).
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <mutex>
#include <string>

#include "common/socket.hpp"

namespace ferry::server {

class file_root {
 public:
  /// `directory` empty: the daemon serves no files.
  explicit file_root(std::string directory) : directory_(std::move(directory)) {}

  bool configured() const { return !directory_.empty(); }
  const std::string& directory() const { return directory_; }

  enum class access { read, write };
  /// A file opened for a command, or why not.
  struct opened {
    unique_fd fd;
    cl_int status = CL_SUCCESS;  // CL_INVALID_OPERATION, CL_INVALID_VALUE or CL_OUT_OF_RESOURCES
    std::string cause;           // for the log, naming the path
  };
  /// Opens `path` below the root: for reading, an existing regular file; for
  /// writing, a regular file created (mode 0644, less the umask) when missing
  /// and never truncated.
  opened open(const std::string& path, access how) const;

  /// Whether `path` could name a file below a root at all (not empty, at most
  /// protocol::max_file_path bytes, no NUL byte); `why` says what is wrong.
  static bool acceptable(const std::string& path, std::string& why);

 private:
  /// The root directory's descriptor, opened on first use (as the worker's
  /// user, after its confinement); -1 with `why` when it cannot be.
  int root_fd(std::string& why) const;

  const std::string directory_;
  mutable std::mutex mutex_;  // guards root_
  mutable unique_fd root_;
};

}  // namespace ferry::server
