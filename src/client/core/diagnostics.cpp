#include "client/core/diagnostics.hpp"

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "common/cl_errors.hpp"
#include "common/log.hpp"

namespace ferry::client {
namespace {

// The reasons recorded on one thread since its current entry point began.
// Two, so that the reason for an error a call turns into another one (a
// failed event behind CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) does not
// push out the reason for the code it returns. Trivial, so the thread_local
// needs no initialisation guard.
struct explanation {
  cl_int code;
  char text[256];
};
struct explanations {
  explanation slots[2];
  unsigned next;   // the slot the next reason goes to
  unsigned count;  // how many slots hold a reason of the current call
};
thread_local explanations mine{};

// The keys already warned about; never destroyed, since reader threads may
// report failures while the process exits.
struct reported_failures {
  std::mutex mutex;  // guards keys
  std::set<std::tuple<cl_int, std::string, protocol::object_id>> keys;
};
reported_failures& reported() {
  static auto* instance = new reported_failures;
  return *instance;
}

enum class verdict { first, repeat, unrecorded };

// Whether this is the first report of `key` (then remembered), a repeat, or
// one the full set no longer records.
verdict note(cl_int code, std::string_view kind, protocol::object_id object) {
  reported_failures& r = reported();
  std::lock_guard lock(r.mutex);
  auto key = std::make_tuple(code, std::string(kind), object);
  if (r.keys.count(key)) return verdict::repeat;
  if (r.keys.size() >= max_reported_failures) return verdict::unrecorded;
  r.keys.insert(std::move(key));
  return verdict::first;
}

// The code's name without allocating (buffer for unknown codes).
const char* code_name(cl_int code, char (&buffer)[32]) {
  if (const char* name = known_cl_error_name(code)) return name;
  std::snprintf(buffer, sizeof buffer, "OpenCL error %d", code);
  return buffer;
}

}  // namespace

cl_int explain(cl_int code, const char* format, ...) noexcept {
  explanation& slot = mine.slots[mine.next % 2];
  mine.next = (mine.next + 1) % 2;
  if (mine.count < 2) ++mine.count;
  slot.code = code;
  va_list args;
  va_start(args, format);
  std::vsnprintf(slot.text, sizeof slot.text, format, args);
  va_end(args);
  return code;
}

void clear_explanations() noexcept { mine.count = 0; }

const char* explanation_for(cl_int code) noexcept {
  // Newest first.
  for (unsigned i = 0; i < mine.count; ++i) {
    const explanation& slot = mine.slots[(mine.next + 1 + i) % 2];
    if (slot.code == code) return slot.text;
  }
  return nullptr;
}

void log_entry_failure(const char* entry, cl_int code) noexcept {
  if (current_log_level() < log_level::debug) return;
  const char* why = explanation_for(code);
  char buffer[32];
  FERRY_DEBUG("api", "%s: %s (%s)", entry, code_name(code, buffer), why ? why : "checked by libferry");
}

bool report_failed_reply(const failure_origin& origin, cl_int code, std::string_view request,
                         std::string_view object_kind, protocol::object_id object) noexcept {
  try {
    const verdict v = note(code, request, object);
    const log_level level = v == verdict::first ? log_level::warn : log_level::debug;
    char buffer[32];
    FERRY_LOG_AT(level, "errors", "server %.*s (session %.*s) answered %.*s for %.*s %llu with %s%s",
                 static_cast<int>(origin.server.size()), origin.server.data(),
                 static_cast<int>(origin.session.size()), origin.session.data(), static_cast<int>(request.size()),
                 request.data(), static_cast<int>(object_kind.size()), object_kind.data(),
                 static_cast<unsigned long long>(object), code_name(code, buffer),
                 v == verdict::first ? "; later answers like it are logged at debug" : "");
    return v == verdict::first;
  } catch (...) {
    return false;  // out of memory for the key: the log is best effort
  }
}

bool report_failed_command(const failure_origin& origin, cl_int code, cl_command_type type,
                           protocol::object_id command, protocol::object_id queue) noexcept {
  try {
    const char* kind = type ? command_type_name(type) : "command without an event";
    const verdict v = note(code, kind, queue);
    const log_level level = v == verdict::first ? log_level::warn : log_level::debug;
    char buffer[32];
    char where[48] = "";
    if (queue) std::snprintf(where, sizeof where, " on queue %llu", static_cast<unsigned long long>(queue));
    FERRY_LOG_AT(level, "errors", "server %.*s (session %.*s): command %llu (%s)%s failed with %s%s",
                 static_cast<int>(origin.server.size()), origin.server.data(),
                 static_cast<int>(origin.session.size()), origin.session.data(),
                 static_cast<unsigned long long>(command), kind, where, code_name(code, buffer),
                 v == verdict::first ? "; later failures like it are logged at debug" : "");
    return v == verdict::first;
  } catch (...) {
    return false;
  }
}

const char* command_type_name(cl_command_type type) noexcept {
  switch (type) {
#define FERRY_COMMAND(name) \
  case name:                \
    return #name;
    FERRY_COMMAND(CL_COMMAND_NDRANGE_KERNEL)
    FERRY_COMMAND(CL_COMMAND_TASK)
    FERRY_COMMAND(CL_COMMAND_NATIVE_KERNEL)
    FERRY_COMMAND(CL_COMMAND_READ_BUFFER)
    FERRY_COMMAND(CL_COMMAND_WRITE_BUFFER)
    FERRY_COMMAND(CL_COMMAND_COPY_BUFFER)
    FERRY_COMMAND(CL_COMMAND_READ_IMAGE)
    FERRY_COMMAND(CL_COMMAND_WRITE_IMAGE)
    FERRY_COMMAND(CL_COMMAND_COPY_IMAGE)
    FERRY_COMMAND(CL_COMMAND_COPY_IMAGE_TO_BUFFER)
    FERRY_COMMAND(CL_COMMAND_COPY_BUFFER_TO_IMAGE)
    FERRY_COMMAND(CL_COMMAND_MAP_BUFFER)
    FERRY_COMMAND(CL_COMMAND_MAP_IMAGE)
    FERRY_COMMAND(CL_COMMAND_UNMAP_MEM_OBJECT)
    FERRY_COMMAND(CL_COMMAND_MARKER)
    FERRY_COMMAND(CL_COMMAND_ACQUIRE_GL_OBJECTS)
    FERRY_COMMAND(CL_COMMAND_RELEASE_GL_OBJECTS)
    FERRY_COMMAND(CL_COMMAND_READ_BUFFER_RECT)
    FERRY_COMMAND(CL_COMMAND_WRITE_BUFFER_RECT)
    FERRY_COMMAND(CL_COMMAND_COPY_BUFFER_RECT)
    FERRY_COMMAND(CL_COMMAND_USER)
    FERRY_COMMAND(CL_COMMAND_BARRIER)
    FERRY_COMMAND(CL_COMMAND_MIGRATE_MEM_OBJECTS)
    FERRY_COMMAND(CL_COMMAND_FILL_BUFFER)
    FERRY_COMMAND(CL_COMMAND_FILL_IMAGE)
    FERRY_COMMAND(CL_COMMAND_SVM_FREE)
    FERRY_COMMAND(CL_COMMAND_SVM_MEMCPY)
    FERRY_COMMAND(CL_COMMAND_SVM_MEMFILL)
    FERRY_COMMAND(CL_COMMAND_SVM_MAP)
    FERRY_COMMAND(CL_COMMAND_SVM_UNMAP)
    FERRY_COMMAND(CL_COMMAND_SVM_MIGRATE_MEM)
#undef FERRY_COMMAND
    default: return "command";
  }
}

void forget_reported_failures() noexcept {
  reported_failures& r = reported();
  std::lock_guard lock(r.mutex);
  r.keys.clear();
}

}  // namespace ferry::client
