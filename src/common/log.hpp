// Levelled logging shared by the client library, the daemon and the tools.
//
// The level comes from one variable (FERRY_LOG, e.g. "debug") parsed once; the
// daemon may override it from its command line. Lines go to stderr or to
// FERRY_LOG_FILE, never to stdout (stdout belongs to the application, and in
// the daemon to the READY line).
#pragma once

#include <atomic>
#include <cstdarg>
#include <string_view>

namespace ferry {

enum class log_level : int { error = 0, warn = 1, info = 2, debug = 3, trace = 4 };

/// Parses "error|warn|info|debug|trace"; returns false for anything else.
bool parse_log_level(std::string_view text, log_level& out);

/// Current threshold; messages above it are dropped before formatting.
log_level current_log_level();
void set_log_level(log_level level);

/// Sets the name written at the start of every line ("ferryd", "libferry").
void set_log_component(const char* name);

/// Writes one line (printf-style format). Thread-safe; one write(2) per line.
void log_line(log_level level, const char* category, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

}  // namespace ferry

#define FERRY_LOG_AT(level, category, ...)                              \
  do {                                                                  \
    if (static_cast<int>(level) <= static_cast<int>(::ferry::current_log_level())) \
      ::ferry::log_line(level, category, __VA_ARGS__);                 \
  } while (0)
#define FERRY_ERROR(cat, ...) FERRY_LOG_AT(::ferry::log_level::error, cat, __VA_ARGS__)
#define FERRY_WARN(cat, ...) FERRY_LOG_AT(::ferry::log_level::warn, cat, __VA_ARGS__)
#define FERRY_INFO(cat, ...) FERRY_LOG_AT(::ferry::log_level::info, cat, __VA_ARGS__)
#define FERRY_DEBUG(cat, ...) FERRY_LOG_AT(::ferry::log_level::debug, cat, __VA_ARGS__)
#define FERRY_TRACE(cat, ...) FERRY_LOG_AT(::ferry::log_level::trace, cat, __VA_ARGS__)
