// The -I options of a build options string, found the same way on both
// sides: the client makes each one's directory absolute (build_files), and
// the server points each one at its mirror of that directory. Both must agree
// on which options there are, so the tokenizer lives here, beside the
// message that depends on it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::protocol {

/// One -I option of an options string: "-Idir" or "-I dir".
struct include_option {
  /// Where the option stands: from its "-I" to the end of its directory.
  size_t begin = 0;
  size_t end = 0;
  /// The directory, without the double quotes that kept its white space.
  std::string dir;
};

/// The -I options of `options`, in order. Options are separated by white
/// space except inside double quotes, which are not part of the value (as
/// PoCL reads them: `-I "/a b"` names the directory `/a b`). A trailing "-I"
/// with no directory after it is not an include option (the compiler judges
/// it).
std::vector<include_option> find_include_options(std::string_view options);

/// `dir` as the value of an option: in double quotes when it holds white
/// space (a double quote in it cannot be written and stays as it is).
std::string quote_option_value(std::string_view dir);

}  // namespace ferry::protocol
