#include "common/log.hpp"

#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>

namespace ferry {
namespace {

struct log_state {
  std::atomic<int> level{static_cast<int>(log_level::warn)};
  const char* component = "ferry";
  int fd = 2;

  log_state() {
    if (const char* env = std::getenv("FERRY_LOG")) {
      log_level parsed;
      if (parse_log_level(env, parsed)) level = static_cast<int>(parsed);
    }
    if (const char* file = std::getenv("FERRY_LOG_FILE"); file && *file) {
      int f = ::open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (f >= 0) fd = f;
    }
  }
};

log_state& state() {
  static log_state s;
  return s;
}

const char* level_name(log_level level) {
  switch (level) {
    case log_level::error: return "error";
    case log_level::warn: return "warn";
    case log_level::info: return "info";
    case log_level::debug: return "debug";
    case log_level::trace: return "trace";
  }
  return "?";
}

}  // namespace

bool parse_log_level(std::string_view text, log_level& out) {
  static constexpr std::pair<std::string_view, log_level> names[] = {
      {"error", log_level::error}, {"warn", log_level::warn},   {"warning", log_level::warn},
      {"info", log_level::info},   {"debug", log_level::debug}, {"trace", log_level::trace}};
  for (auto& [name, level] : names) {
    if (text == name) {
      out = level;
      return true;
    }
  }
  return false;
}

log_level current_log_level() { return static_cast<log_level>(state().level.load(std::memory_order_relaxed)); }

void set_log_level(log_level level) { state().level = static_cast<int>(level); }

void set_log_component(const char* name) { state().component = name; }

void log_line(log_level level, const char* category, const char* format, ...) {
  char buffer[2048];
  timeval now;
  gettimeofday(&now, nullptr);
  tm local;
  localtime_r(&now.tv_sec, &local);
  int n = std::snprintf(buffer, sizeof buffer, "%02d:%02d:%02d.%06ld %s[%d] %s %s: ", local.tm_hour,
                        local.tm_min, local.tm_sec, static_cast<long>(now.tv_usec), state().component,
                        static_cast<int>(::getpid()), level_name(level), category);
  va_list args;
  va_start(args, format);
  int m = std::vsnprintf(buffer + n, sizeof buffer - n - 1, format, args);
  va_end(args);
  size_t length = static_cast<size_t>(n) + (m < 0 ? 0 : std::min<size_t>(m, sizeof buffer - n - 2));
  buffer[length++] = '\n';
  ssize_t ignored = ::write(state().fd, buffer, length);
  (void)ignored;
}

}  // namespace ferry
