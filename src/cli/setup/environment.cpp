#include "cli/setup/environment.hpp"

#include <algorithm>

extern char** environ;

namespace ferry::cli {

namespace {

bool names(std::string_view entry, std::string_view name) {
  return entry.size() > name.size() && entry.substr(0, name.size()) == name &&
         entry[name.size()] == '=';
}

}  // namespace

environment::environment(std::vector<std::string> entries) : entries_(std::move(entries)) {}

environment environment::current() {
  std::vector<std::string> entries;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) entries.emplace_back(*e);
  return environment(std::move(entries));
}

std::vector<std::string>::iterator environment::find(std::string_view name) {
  return std::find_if(entries_.begin(), entries_.end(),
                      [&](const std::string& e) { return names(e, name); });
}

std::vector<std::string>::const_iterator environment::find(std::string_view name) const {
  return std::find_if(entries_.begin(), entries_.end(),
                      [&](const std::string& e) { return names(e, name); });
}

std::optional<std::string_view> environment::get(std::string_view name) const {
  auto it = find(name);
  if (it == entries_.end()) return std::nullopt;
  return std::string_view(*it).substr(name.size() + 1);
}

bool environment::has_non_empty(std::string_view name) const {
  auto v = get(name);
  return v && !v->empty();
}

void environment::set(std::string_view name, std::string_view value) {
  std::string entry = std::string(name) + "=" + std::string(value);
  auto it = find(name);
  if (it == entries_.end()) {
    entries_.push_back(std::move(entry));
  } else {
    *it = std::move(entry);
  }
}

void environment::unset(std::string_view name) {
  std::erase_if(entries_, [&](const std::string& e) { return names(e, name); });
}

std::vector<char*> environment::envp() {
  std::vector<char*> out;
  out.reserve(entries_.size() + 1);
  for (std::string& e : entries_) out.push_back(e.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace ferry::cli
