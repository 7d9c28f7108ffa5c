#include "server/files/file_root.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "protocol/limits.hpp"

namespace ferry::server {
namespace {

std::string quoted(const std::string& path) { return "'" + path + "'"; }

}  // namespace

bool file_root::acceptable(const std::string& path, std::string& why) {
  if (path.empty()) {
    why = "an empty path";
    return false;
  }
  if (path.size() > protocol::max_file_path) {
    why = "a path of " + std::to_string(path.size()) + " bytes (at most " + std::to_string(protocol::max_file_path) +
          ")";
    return false;
  }
  if (path.find('\0') != std::string::npos) {
    why = "a path with a NUL byte";
    return false;
  }
  return true;
}

int file_root::root_fd(std::string& why) const {
  std::lock_guard lock(mutex_);
  if (!root_.valid()) {
    root_.reset(::open(directory_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root_.valid()) {
      why = "the file root " + quoted(directory_) + " cannot be opened: " + std::strerror(errno);
      return -1;
    }
  }
  return root_.get();
}

file_root::opened file_root::open(const std::string& path, access how) const {
  opened out;
  auto refuse = [&](cl_int status, std::string cause) {
    out.fd.reset();
    out.status = status;
    out.cause = std::move(cause);
    return std::move(out);
  };
  if (!configured()) return refuse(CL_INVALID_OPERATION, "this server serves no files (ferryd --file-root)");
  std::string why;
  if (!acceptable(path, why)) return refuse(CL_INVALID_VALUE, why);
  const int root = root_fd(why);
  if (root < 0) return refuse(CL_OUT_OF_RESOURCES, why);
  open_how request{};
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer; the
  // type is checked below, before any byte moves.
  request.flags = O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (how == access::read ? O_RDONLY : O_WRONLY | O_CREAT);
  request.mode = how == access::read ? 0 : 0644;
  request.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const long fd = ::syscall(SYS_openat2, root, path.c_str(), &request, sizeof request);
  if (fd < 0) {
    const int error = errno;
    switch (error) {
      case EXDEV:
      case ELOOP: return refuse(CL_INVALID_VALUE, quoted(path) + " leads outside the file root");
      case ENOENT:
        return refuse(CL_INVALID_VALUE, how == access::read ? quoted(path) + " does not exist"
                                                            : quoted(path) + ": a directory on the way does not exist");
      case EACCES:
      case EPERM: return refuse(CL_INVALID_VALUE, quoted(path) + " is not allowed: " + std::strerror(error));
      case EISDIR:
      case ENOTDIR:
      case ENXIO:  // a FIFO without a reader, a socket
        return refuse(CL_INVALID_VALUE, quoted(path) + " is no regular file: " + std::strerror(error));
      case ENOSYS: return refuse(CL_OUT_OF_RESOURCES, "openat2 is missing (Linux 5.6 or later serves files)");
      default: return refuse(CL_OUT_OF_RESOURCES, quoted(path) + " cannot be opened: " + std::strerror(error));
    }
  }
  out.fd.reset(static_cast<int>(fd));
  struct stat info {};
  if (::fstat(out.fd.get(), &info) != 0) return refuse(CL_OUT_OF_RESOURCES, quoted(path) + ": " + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return refuse(CL_INVALID_VALUE, quoted(path) + " is no regular file");
  const int flags = ::fcntl(out.fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(out.fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return out;
}

}  // namespace ferry::server
