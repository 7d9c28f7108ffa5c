#include "protocol/include_options.hpp"

#include <utility>

namespace ferry::protocol {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// The token that starts at or after `at`, as [begin, end) (begin == end at
// the end of the text); white space inside double quotes does not end it.
std::pair<size_t, size_t> next_token(std::string_view text, size_t at) {
  while (at < text.size() && is_space(text[at])) ++at;
  size_t end = at;
  bool quoted = false;
  while (end < text.size() && (quoted || !is_space(text[end]))) {
    if (text[end] == '"') quoted = !quoted;
    ++end;
  }
  return {at, end};
}

std::string unquoted(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token)
    if (c != '"') out.push_back(c);
  return out;
}

}  // namespace

std::vector<include_option> find_include_options(std::string_view options) {
  std::vector<include_option> found;
  size_t at = 0;
  for (;;) {
    auto [begin, end] = next_token(options, at);
    if (begin == end) break;
    at = end;
    std::string_view token = options.substr(begin, end - begin);
    if (!token.starts_with("-I")) continue;
    if (token.size() > 2) {
      found.push_back({begin, end, unquoted(token.substr(2))});
      continue;
    }
    // "-I dir": the directory is the next token.
    auto [dir_begin, dir_end] = next_token(options, end);
    if (dir_begin == dir_end) break;
    found.push_back({begin, dir_end, unquoted(options.substr(dir_begin, dir_end - dir_begin))});
    at = dir_end;
  }
  return found;
}

std::string quote_option_value(std::string_view dir) {
  for (char c : dir)
    if (is_space(c)) return "\"" + std::string(dir) + "\"";
  return std::string(dir);
}

}  // namespace ferry::protocol
