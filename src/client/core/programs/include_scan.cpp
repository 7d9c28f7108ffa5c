#include "client/core/programs/include_scan.hpp"

#include <sys/stat.h>

#include <cctype>
#include <deque>
#include <filesystem>
#include <optional>
#include <fstream>
#include <unordered_map>
#include <unordered_set>

#include "common/log.hpp"
#include "protocol/include_options.hpp"

namespace ferry::client {

namespace fs = std::filesystem;

namespace {

// Translation phases 2 and 3, as far as finding #include lines needs them:
// backslash-newline pairs are removed and each comment becomes one space.
// String and character literals are kept whole so that a "//" or "/*" inside
// one starts no comment; an unterminated one ends at the end of its line.
std::string without_comments(std::string_view text) {
  std::string spliced;
  spliced.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      continue;
    }
    if (text[i] == '\\' && i + 2 < text.size() && text[i + 1] == '\r' && text[i + 2] == '\n') {
      i += 2;
      continue;
    }
    spliced.push_back(text[i]);
  }
  std::string out;
  out.reserve(spliced.size());
  size_t i = 0;
  while (i < spliced.size()) {
    char c = spliced[i];
    if (c == '/' && i + 1 < spliced.size() && spliced[i + 1] == '/') {
      while (i < spliced.size() && spliced[i] != '\n') ++i;
      out.push_back(' ');
    } else if (c == '/' && i + 1 < spliced.size() && spliced[i + 1] == '*') {
      size_t end = spliced.find("*/", i + 2);
      i = end == std::string::npos ? spliced.size() : end + 2;
      out.push_back(' ');
    } else if (c == '"' || c == '\'') {
      out.push_back(c);
      ++i;
      while (i < spliced.size() && spliced[i] != c && spliced[i] != '\n') {
        if (spliced[i] == '\\' && i + 1 < spliced.size() && spliced[i + 1] != '\n') out.push_back(spliced[i++]);
        out.push_back(spliced[i++]);
      }
      if (i < spliced.size() && spliced[i] == c) out.push_back(spliced[i++]);
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r'; }

// The header name of one logical line, if it is an #include with one.
bool parse_include(std::string_view line, include_directive& out) {
  size_t i = 0;
  auto skip_blanks = [&] {
    while (i < line.size() && is_blank(line[i])) ++i;
  };
  skip_blanks();
  if (i >= line.size() || line[i] != '#') return false;
  ++i;
  skip_blanks();
  constexpr std::string_view keyword = "include";
  if (line.substr(i, keyword.size()) != keyword) return false;
  i += keyword.size();
  // "#include_next" and "#includefoo" are other directives.
  if (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_')) return false;
  skip_blanks();
  if (i >= line.size()) return false;
  char close;
  if (line[i] == '"') {
    close = '"';
    out.form = include_form::quoted;
  } else if (line[i] == '<') {
    close = '>';
    out.form = include_form::angle;
  } else {
    return false;  // a macro: resolved only by the preprocessor
  }
  size_t end = line.find(close, i + 1);
  if (end == std::string_view::npos || end == i + 1) return false;
  out.name.assign(line.substr(i + 1, end - i - 1));
  return true;
}

// What is known of a path on this machine.
enum class file_state : uint8_t { absent, shipped };

class scanner {
 public:
  scanner(const include_scan_input& input, protocol::build_files& files, std::string& why)
      : input_(input), files_(files), why_(why) {
    provided_.insert(input.provided.begin(), input.provided.end());
  }

  // False when a limit was exceeded.
  bool run() {
    for (std::string_view source : input_.sources) pending_.push_back({input_.working_dir, std::string(source)});
    while (!pending_.empty()) {
      // The text is moved out: scanning it adds more work to the queue.
      work job = std::move(pending_.front());
      pending_.pop_front();
      for (const include_directive& d : include_directives(job.text)) {
        if (provided_.count(d.name) != 0) continue;
        if (!resolve(d, job.dir)) return false;
      }
    }
    return true;
  }

 private:
  struct work {
    std::string dir;  // where the text's quoted includes are looked up first
    std::string text;
  };

  // Looks `d` up in the search order; ships what it finds first. False only
  // when shipping it would exceed a limit.
  bool resolve(const include_directive& d, const std::string& includer_dir) {
    if (fs::path(d.name).is_absolute()) return try_candidate(absolute_normal(d.name, {})).value_or(true);
    if (d.form == include_form::quoted) {
      if (auto found = try_candidate(absolute_normal(d.name, includer_dir))) return *found;
    }
    if (auto found = try_candidate(absolute_normal(d.name, input_.working_dir))) return *found;
    for (const std::string& dir : files_.include_dirs) {
      if (auto found = try_candidate(absolute_normal(d.name, dir))) return *found;
    }
    return true;  // not here: left to the compiler
  }

  // nullopt: nothing usable at `path`, go on searching. Otherwise the
  // search ends here: true when the header is shipped (now or before),
  // false when a limit stopped it.
  std::optional<bool> try_candidate(const std::string& path) {
    if (path.empty()) return std::nullopt;
    auto known = states_.find(path);
    if (known != states_.end()) {
      if (known->second == file_state::shipped) return true;
      return std::nullopt;
    }
    // Only regular files (a symbolic link to one is read as the file): a
    // directory, a FIFO or a device of the same name is not a header, and
    // reading a FIFO could block the build for ever.
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      states_.emplace(path, file_state::absent);
      return std::nullopt;
    }
    if (files_.headers.size() + 1 > input_.limits.max_files) {
      why_ = "the headers the program includes are more than " + std::to_string(input_.limits.max_files) +
             " files (at " + path + ")";
      return false;
    }
    const size_t budget = input_.limits.max_bytes - bytes_;
    if (static_cast<uint64_t>(st.st_size) + path.size() > budget) {
      why_ = "the headers the program includes are more than " + std::to_string(input_.limits.max_bytes) +
             " bytes (at " + path + ", " + std::to_string(st.st_size) + " bytes)";
      return false;
    }
    protocol::client_header header;
    header.path = path;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      // Unreadable here: the server's compiler reports it as not found.
      FERRY_DEBUG("program", "header %s exists but cannot be read; not shipped", path.c_str());
      states_.emplace(path, file_state::absent);
      return std::nullopt;
    }
    // At most the budget, however much the file grew since stat.
    header.content.resize(static_cast<size_t>(st.st_size));
    in.read(reinterpret_cast<char*>(header.content.data()), static_cast<std::streamsize>(header.content.size()));
    header.content.resize(static_cast<size_t>(in.gcount()));
    bytes_ += header.path.size() + header.content.size();
    states_.emplace(path, file_state::shipped);
    pending_.push_back({fs::path(path).parent_path().string(),
                        std::string(header.content.begin(), header.content.end())});
    files_.headers.push_back(std::move(header));
    return true;
  }

  const include_scan_input& input_;
  protocol::build_files& files_;
  std::string& why_;
  std::unordered_set<std::string_view> provided_;
  std::unordered_map<std::string, file_state> states_;
  std::deque<work> pending_;
  size_t bytes_ = 0;
};

}  // namespace

std::vector<include_directive> include_directives(std::string_view text) {
  std::vector<include_directive> out;
  const std::string clean = without_comments(text);
  std::string_view rest = clean;
  while (!rest.empty()) {
    size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    include_directive d;
    if (parse_include(line, d)) out.push_back(std::move(d));
    if (newline == std::string_view::npos) break;
    rest.remove_prefix(newline + 1);
  }
  return out;
}

std::string absolute_normal(std::string_view path, std::string_view base) {
  fs::path p(path);
  if (p.is_relative()) {
    if (base.empty()) return {};
    p = fs::path(base) / p;
  }
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

result<protocol::build_files> scan_includes(const include_scan_input& input, std::string& why) {
  protocol::build_files files;
  files.working_dir = input.working_dir;
  for (const protocol::include_option& option : protocol::find_include_options(input.options))
    files.include_dirs.push_back(absolute_normal(option.dir, input.working_dir));
  scanner scan(input, files, why);
  if (!scan.run()) return fail(CL_OUT_OF_RESOURCES);
  return files;
}

}  // namespace ferry::client
