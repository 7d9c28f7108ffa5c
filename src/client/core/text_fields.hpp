// Strings into the fixed char arrays of Ferry's extension structs
// (cl_ferry_worker, cl_ferry_peer_ticket, ...).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

namespace ferry::client {

/// Copies `from` into the C string field `to`, cut to fit and always
/// NUL-terminated (the rest of the field zeroed).
template <size_t N>
void copy_truncated(char (&to)[N], const std::string& from) {
  const size_t length = std::min(from.size(), N - 1);
  std::memcpy(to, from.data(), length);
  std::memset(to + length, 0, N - length);
}

}  // namespace ferry::client
