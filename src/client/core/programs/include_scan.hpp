// The application's headers that a program source includes, found on the
// client so that they travel with the build (build_files).
//
// Through Ferry the OpenCL C preprocessor runs on the server, where neither
// the application's -I directories nor its working directory exist. The
// client therefore looks the #include lines up itself, as the server's
// compiler will look them up in the server's mirror of the client's files:
//   - a quoted include first in the directory of the file that holds it (the
//     program source counts as a file in the working directory);
//   - then, for both forms, the working directory (PoCL puts "-I." before
//     the application's options, and the server puts its mirror of the
//     client's working directory first) and the -I directories in order.
// A header found is shipped under its absolute, lexically normal path and
// scanned for includes in turn. One not found is not shipped: it may be one
// of the compiler's own headers, and if it is missing the server's compiler
// says "file not found" as a local one would. Lines under #if are scanned
// too (shipping a header nobody includes costs only bytes); an #include of a
// macro name cannot be resolved and is left to the compiler.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "client/core/result.hpp"
#include "protocol/limits.hpp"
#include "protocol/messages.hpp"

namespace ferry::client {

enum class include_form : uint8_t { quoted, angle };

/// One #include line with a header name.
struct include_directive {
  std::string name;
  include_form form = include_form::quoted;
  bool operator==(const include_directive&) const = default;
};

/// The #include lines of a source, after joining continued lines and
/// dropping comments (a commented-out include is not one).
std::vector<include_directive> include_directives(std::string_view text);

/// What one build may ship at most.
struct include_limits {
  size_t max_files = protocol::max_build_headers;
  /// Paths and contents together.
  size_t max_bytes = protocol::max_build_header_bytes;
};

struct include_scan_input {
  std::string options;
  /// The program source, and for clCompileProgram the sources of the header
  /// programs (their includes resolve like the source's).
  std::vector<std::string_view> sources;
  /// Include names that clCompileProgram's header programs provide: the
  /// compiler takes those, so they are not looked up.
  std::vector<std::string_view> provided;
  /// The client's working directory (absolute); empty when unknown, and then
  /// nothing relative is resolved.
  std::string working_dir;
  include_limits limits;
};

/// The working directory, -I directories and headers of one build.
/// CL_OUT_OF_RESOURCES when the headers exceed the limits, with the reason
/// in `why`.
result<protocol::build_files> scan_includes(const include_scan_input& input, std::string& why);

/// `path` made absolute against `base` and lexically normal, without a
/// trailing slash; empty when `path` is relative and `base` is empty.
std::string absolute_normal(std::string_view path, std::string_view base);

}  // namespace ferry::client
