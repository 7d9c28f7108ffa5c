#include "server/commands/build_headers.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <filesystem>
#include <system_error>

#include "common/log.hpp"
#include "protocol/include_options.hpp"

namespace ferry::server {

namespace fs = std::filesystem;

namespace {

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  size_t at = 0;
  while ((at = text.find(from, at)) != std::string::npos) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
}

// A name in the tree that is taken already, or a header where a directory
// must be: the client's tree cannot be; anything else is the server's trouble.
bool is_conflict(const std::error_code& ec) {
  return ec == std::errc::file_exists || ec == std::errc::not_a_directory || ec == std::errc::is_a_directory;
}

// Writes `content` to a new file at `path`: never over an existing file and
// never through a symbolic link.
std::error_code write_new_file(const std::string& path, const protocol::bytes& content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return {errno, std::generic_category()};
  size_t done = 0;
  while (done < content.size()) {
    ssize_t wrote = ::write(fd, content.data() + done, content.size() - done);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      std::error_code ec(errno, std::generic_category());
      ::close(fd);
      return ec;
    }
    done += static_cast<size_t>(wrote);
  }
  if (::close(fd) != 0) return {errno, std::generic_category()};
  return {};
}

}  // namespace

std::string client_log(std::string_view log, const client_paths& paths) {
  std::string out(log);
  for (const auto& [from, to] : paths.log_rewrites) replace_all(out, from, to);
  return out;
}

std::optional<std::string> mirror_relative(std::string_view client_path) {
  if (client_path.find('\0') != std::string_view::npos) return std::nullopt;
  std::string out;
  size_t at = 0;
  while (at <= client_path.size()) {
    size_t slash = std::min(client_path.find('/', at), client_path.size());
    std::string_view part = client_path.substr(at, slash - at);
    at = slash + 1;
    if (part.empty() || part == ".") continue;
    // A ".." could climb out of the tree; the client sends lexically normal
    // paths, so one is never honest.
    if (part == "..") return std::nullopt;
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

std::string temp_base() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? std::string(dir) : std::string("/tmp");
}

std::string build_base() {
  const char* cache = std::getenv("POCL_CACHE_DIR");
  if (cache == nullptr || *cache == '\0') return temp_base();
  std::string dir = std::string(cache) + "/ferry-builds";
  if (::mkdir(dir.c_str(), 0700) == 0) return dir;
  // One that was there must be this user's own directory, and nobody else's
  // to write: otherwise the trees go where they always may.
  struct stat st {};
  if (errno == EEXIST && ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
      (st.st_mode & 022) == 0)
    return dir;
  return temp_base();
}

std::string tree_name(const protocol::build_files& files, std::string_view options) {
  // FNV-1a over every field, each preceded by its length so that no two
  // different requests feed the same bytes. A clash costs nothing but a
  // second name (make() finds the first taken): the compiler's cache keys on
  // the preprocessed source, which holds the headers themselves.
  uint64_t hash = 0xcbf29ce484222325ull;
  auto feed = [&hash](std::string_view bytes) {
    const uint64_t length = bytes.size();
    for (size_t i = 0; i < sizeof length; ++i) hash = (hash ^ ((length >> (8 * i)) & 0xff)) * 0x100000001b3ull;
    for (unsigned char c : bytes) hash = (hash ^ c) * 0x100000001b3ull;
  };
  feed(options);
  feed(files.working_dir);
  for (const std::string& dir : files.include_dirs) feed(dir);
  for (const protocol::client_header& header : files.headers) {
    feed(header.path);
    feed(std::string_view(reinterpret_cast<const char*>(header.content.data()), header.content.size()));
  }
  char name[32];
  std::snprintf(name, sizeof name, "ferry-build-%016llx", static_cast<unsigned long long>(hash));
  return name;
}

std::unique_ptr<build_tree> build_tree::make(const protocol::build_files& files, std::string_view options,
                                             const std::string& base, tree_error& error, std::string& why) {
  // The same request gets the same directory, so that the options and the
  // line markers the compiler sees are the same in every build of it and the
  // driver's kernel cache (PoCL's, NVIDIA's) finds the earlier build: a fresh
  // random name per build made every build of a program with headers a cold
  // compile. While that name is taken (the same build running beside this
  // one, or a tree a killed process left), the tree gets a random name.
  // mkdir and mkdtemp make the directory with mode 0700: no other user can
  // read the client's headers or put anything into the tree.
  std::string dir = base + "/" + tree_name(files, options);
  bool made = ::mkdir(dir.c_str(), 0700) == 0;
  if (!made && errno == EEXIST) {
    dir = base + "/ferry-build-XXXXXX";
    made = ::mkdtemp(dir.data()) != nullptr;
  }
  if (!made) {
    error = tree_error::io;
    why = "cannot make a build directory under " + base + ": " + std::strerror(errno);
    return nullptr;
  }
  // From here on the destructor removes the directory, on failure too.
  std::unique_ptr<build_tree> tree(new build_tree(std::move(dir)));
  error = tree->fill(files, options, why);
  if (error != tree_error::none) return nullptr;
  return tree;
}

build_tree::~build_tree() {
  // remove_all removes symbolic links rather than following them (the tree
  // has none of its own making anyway).
  std::error_code ec;
  fs::remove_all(dir_, ec);
  if (ec) FERRY_WARN("session", "cannot remove build directory %s: %s", dir_.c_str(), ec.message().c_str());
}

std::string build_tree::mirror(std::string_view relative) const {
  std::string out = dir_ + "/root";
  if (!relative.empty()) {
    out += '/';
    out += relative;
  }
  return out;
}

tree_error build_tree::fill(const protocol::build_files& files, std::string_view options, std::string& why) {
  std::error_code ec;
  const std::string unnamed = dir_ + "/unnamed";
  if (!fs::create_directory(mirror({}), ec) || !fs::create_directory(unnamed, ec)) {
    why = "cannot make " + mirror({}) + ": " + ec.message();
    return tree_error::io;
  }
  for (const protocol::client_header& header : files.headers) {
    auto relative = mirror_relative(header.path);
    if (!relative) {
      why = "header path \"" + header.path + "\" has a \"..\" component or a NUL byte";
      return tree_error::bad_path;
    }
    if (relative->empty()) {
      why = "header path \"" + header.path + "\" names no file";
      return tree_error::bad_path;
    }
    const std::string path = mirror(*relative);
    fs::create_directories(fs::path(path).parent_path(), ec);
    if (!ec) ec = write_new_file(path, header.content);
    if (ec) {
      why = "cannot write header \"" + header.path + "\": " + ec.message();
      return is_conflict(ec) ? tree_error::bad_path : tree_error::io;
    }
  }
  // Every directory the compiler gets is inside the tree, made here when no
  // header put it there: a directory the client could not name (relative,
  // without a working directory) is an empty one of its own.
  auto mirror_dir = [&](const std::string& client_dir, std::string& out) {
    if (client_dir.empty()) {
      out = unnamed;
      return tree_error::none;
    }
    auto relative = mirror_relative(client_dir);
    if (!relative) {
      why = "directory \"" + client_dir + "\" has a \"..\" component or a NUL byte";
      return tree_error::bad_path;
    }
    out = mirror(*relative);
    fs::create_directories(out, ec);
    if (!ec && !fs::is_directory(out, ec)) ec = std::make_error_code(std::errc::not_a_directory);
    if (ec) {
      why = "cannot make directory \"" + client_dir + "\": " + ec.message();
      return is_conflict(ec) ? tree_error::bad_path : tree_error::io;
    }
    return tree_error::none;
  };

  const std::vector<protocol::include_option> found = protocol::find_include_options(options);
  if (found.size() != files.include_dirs.size()) {
    why = "the options have " + std::to_string(found.size()) + " -I options, the request names " +
          std::to_string(files.include_dirs.size()) + " directories";
    return tree_error::bad_path;
  }
  // The working directory's mirror comes first, as "-I." does in a local
  // PoCL build: the program source's own includes are found there.
  std::string dir;
  if (tree_error e = mirror_dir(files.working_dir, dir); e != tree_error::none) return e;
  options_ = "-I" + protocol::quote_option_value(dir) + " ";
  size_t copied = 0;
  for (size_t i = 0; i < found.size(); ++i) {
    if (tree_error e = mirror_dir(files.include_dirs[i], dir); e != tree_error::none) return e;
    options_.append(options.substr(copied, found[i].begin - copied));
    options_ += "-I" + protocol::quote_option_value(dir);
    copied = found[i].end;
  }
  options_.append(options.substr(copied));

  // The log names the tree as the compiler saw it: by this path, or by its
  // real path when the base is reached through a symbolic link. The longer
  // goes first, so that neither is replaced inside the other.
  std::vector<std::string> spellings{dir_};
  if (char* real = ::realpath(dir_.c_str(), nullptr)) {
    if (dir_ != real) spellings.emplace_back(real);
    std::free(real);
  }
  std::sort(spellings.begin(), spellings.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  for (const std::string& spelling : spellings) {
    paths_.log_rewrites.emplace_back(spelling + "/root/", "/");
    paths_.log_rewrites.emplace_back(spelling + "/root", "/");
    paths_.log_rewrites.emplace_back(spelling + "/unnamed", "(unnamed directory)");
    paths_.log_rewrites.emplace_back(spelling, "(build directory)");
  }
  paths_.client_options = std::string(options);
  return tree_error::none;
}

}  // namespace ferry::server
