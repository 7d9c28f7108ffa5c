// An environment block ("NAME=value" entries) built for a child process.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::cli {

/// A copy of a process environment that can be changed without touching the real one,
/// so that each child (the embedded daemon, the wrapped program) gets exactly its own.
class environment {
 public:
  environment() = default;
  explicit environment(std::vector<std::string> entries);

  /// A copy of this process's environment as it is now.
  static environment current();

  /// The value of `name`, or nothing when unset.
  std::optional<std::string_view> get(std::string_view name) const;
  /// True when `name` is set to a non-empty value.
  bool has_non_empty(std::string_view name) const;
  void set(std::string_view name, std::string_view value);
  void unset(std::string_view name);

  const std::vector<std::string>& entries() const { return entries_; }
  /// NULL-terminated pointers into this object, for execve/posix_spawn; valid until the
  /// next change to it.
  std::vector<char*> envp();

 private:
  std::vector<std::string>::iterator find(std::string_view name);
  std::vector<std::string>::const_iterator find(std::string_view name) const;

  std::vector<std::string> entries_;
};

}  // namespace ferry::cli
