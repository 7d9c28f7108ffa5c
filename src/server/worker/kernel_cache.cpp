#include "server/worker/kernel_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace ferry::server::worker {

bool parse_kernel_cache(const std::string& text, kernel_cache_mode& out) {
  if (text == "shared") out = kernel_cache_mode::shared;
  else if (text == "private") out = kernel_cache_mode::isolated;
  else return false;
  return true;
}

std::optional<std::string> shared_cache_for(uid_t uid, gid_t gid, std::string& error) {
  if (const char* set = std::getenv("POCL_CACHE_DIR"); set != nullptr && *set != '\0') return std::string(set);
  const std::string path = "/var/tmp/ferryd-kernels-" + std::to_string(uid);
  if (::mkdir(path.c_str(), 0700) == 0) {
    if (::chown(path.c_str(), uid, gid) != 0) {
      error = "cannot give " + path + " to the workers' user: " + std::strerror(errno);
      return std::nullopt;
    }
    return path;
  }
  if (errno != EEXIST) {
    error = "cannot make the kernel cache " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  // It was there: in a directory anybody may write, it must be the workers'
  // own, not somebody's trap (a link, another owner, open to others).
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077) != 0) {
    error = "the kernel cache " + path + " is not a directory that only the workers' user (uid " +
            std::to_string(uid) + ") may use: remove it, or set POCL_CACHE_DIR";
    return std::nullopt;
  }
  return path;
}

std::string make_scratch_directory(kernel_cache_mode mode, uid_t uid, gid_t gid, std::string& error) {
  const char* tmp = std::getenv("TMPDIR");
  const bool own_user = uid == static_cast<uid_t>(-1);
  std::string path = std::string(own_user && tmp && *tmp ? tmp : "/tmp") + "/ferryd-worker-XXXXXX";
  if (::mkdtemp(path.data()) == nullptr) {
    error = "cannot make the worker's scratch directory " + path + ": " + std::strerror(errno);
    return {};
  }
  const std::string kernels = path + "/kernels";
  if (mode == kernel_cache_mode::isolated && ::mkdir(kernels.c_str(), 0700) != 0) {
    error = "cannot make the worker's kernel cache " + kernels + ": " + std::strerror(errno);
    remove_scratch_directory(path);
    return {};
  }
  if (uid != static_cast<uid_t>(-1) &&
      (::chown(path.c_str(), uid, gid) != 0 ||
       (mode == kernel_cache_mode::isolated && ::chown(kernels.c_str(), uid, gid) != 0))) {
    error = "cannot give the scratch directory " + path + " to the worker's user: " + std::strerror(errno);
    remove_scratch_directory(path);
    return {};
  }
  return path;
}

void use_scratch_directory(kernel_cache_mode mode, const std::string& path) {
  ::setenv("TMPDIR", path.c_str(), 1);
  if (mode == kernel_cache_mode::isolated) ::setenv("POCL_CACHE_DIR", (path + "/kernels").c_str(), 1);
}

std::string fall_back_from_unusable_cache(const std::string& scratch) {
  const char* cache = std::getenv("POCL_CACHE_DIR");
  if (cache == nullptr || *cache == '\0' || scratch.empty()) return {};
  // The driver makes what is missing: the nearest existing directory decides.
  std::filesystem::path at = cache;
  std::error_code ec;
  while (!at.empty() && at != at.root_path() && !std::filesystem::exists(at, ec)) at = at.parent_path();
  if (::access(at.c_str(), W_OK | X_OK) == 0) return {};
  const std::string reason = std::string("the kernel cache ") + cache + " is not writable by the worker's user (" +
                             std::strerror(errno) + "): this session compiles into a cache of its own";
  const std::string kernels = scratch + "/kernels";
  ::mkdir(kernels.c_str(), 0700);
  ::setenv("POCL_CACHE_DIR", kernels.c_str(), 1);
  return reason;
}

void remove_scratch_directory(const std::string& path) {
  if (path.empty()) return;
  // remove_all removes links, never what they point to (as build_headers relies on).
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

}  // namespace ferry::server::worker
