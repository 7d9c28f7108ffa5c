// The client's headers of one build, as files the server's compiler can read.
//
// A build_program or compile_program may carry the headers the program
// includes, found on the client under the client's paths, with the client's
// working directory and the directory of each -I option (build_files). The
// server writes them into a private directory per build, named after the
// request (the same one each time, which the driver's kernel cache needs), under
// root/ at their client paths (re-rooted, never outside it), points every -I
// option at its mirror there and puts the mirror of the client's working
// directory first, so that the compiler finds each header where the client
// found it. It never hands the compiler a directory of its own on the
// client's behalf: an -I directory the client did not find is mirrored as an
// empty one. The directory goes away with the build_tree, whatever the
// build's outcome. The build log names the mirrors; client_log turns them
// back into the client's paths (docs/protocol.md, "Headers from the client").
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/messages.hpp"

namespace ferry::server {

/// How a build named the client's files: what to replace in its log, and
/// the options as the client gave them (the compiler got other ones).
struct client_paths {
  /// (server text, client text) pairs, applied in order.
  std::vector<std::pair<std::string, std::string>> log_rewrites;
  std::string client_options;
};

/// `log` with the server's paths of the client's files as the client's.
std::string client_log(std::string_view log, const client_paths& paths);

/// A client path as a path under the mirror's root: its components without
/// empty and "." ones, joined by '/' ("/a//./b.h" -> "a/b.h"; "" for the
/// root itself). nullopt for a path the server refuses: a ".." component or
/// a NUL byte.
std::optional<std::string> mirror_relative(std::string_view client_path);

/// $TMPDIR, or /tmp when it is unset or empty.
std::string temp_base();

/// Where build trees are made: "ferry-builds" (made with mode 0700 when
/// missing) in the driver's kernel cache, POCL_CACHE_DIR, which every session
/// worker has (server/worker/kernel_cache.hpp), so that the sessions sharing
/// compiled kernels also share the trees' names (build_tree::make);
/// temp_base() without that variable, or when that directory is not this
/// user's alone.
std::string build_base();

/// The name of the tree of a request under its base: "ferry-build-" and 16
/// hex digits that depend on the options and every field of `files` alone.
std::string tree_name(const protocol::build_files& files, std::string_view options);

enum class tree_error : uint8_t {
  none,
  /// The request names a path the server refuses, or an inconsistent tree
  /// (a header where a directory must be, twice the same header, an -I
  /// option count other than the options have).
  bad_path,
  /// The server could not write the tree (disk full, permissions).
  io,
};

class build_tree {
 public:
  /// Makes the tree for `files` and the options the compiler gets instead of
  /// `options`, in a fresh directory under `base`: base/tree_name() unless
  /// that is taken, then one of a random name. nullptr on failure, with
  /// the kind in `error` and the reason in `why`; nothing is left behind.
  static std::unique_ptr<build_tree> make(const protocol::build_files& files, std::string_view options,
                                          const std::string& base, tree_error& error, std::string& why);
  ~build_tree();
  build_tree(const build_tree&) = delete;
  build_tree& operator=(const build_tree&) = delete;

  /// The directory (mode 0700), removed by the destructor.
  const std::string& dir() const { return dir_; }
  /// The options for the native compiler.
  const std::string& options() const { return options_; }
  const client_paths& paths() const { return paths_; }

 private:
  explicit build_tree(std::string dir) : dir_(std::move(dir)) {}
  std::string mirror(std::string_view relative) const;
  tree_error fill(const protocol::build_files& files, std::string_view options, std::string& why);

  std::string dir_;
  std::string options_;
  client_paths paths_;
};

}  // namespace ferry::server
