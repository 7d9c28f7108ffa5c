// Why a call failed, for the log: nobody should need a shim to learn it.
//
// Code that fails for a reason the error code alone does not tell records it
// with explain() (on the calling thread, cheaply: a fixed buffer, written only
// on failure). Every entry point's wrapper (api/entry.hpp) forgets the
// reasons when the call begins and, when the call returns an error, logs at
// debug the entry point, the code's name and the reason recorded for that
// code ("checked by libferry" when there is none). A reason is kept with the
// code it explains, so one recorded for a failure the call recovered from, or
// turned into another code, is never shown for the wrong error.
//
// Errors that servers report (a reply's status, a command that failed) are
// logged at warn once per (code, request or command kind, object), naming the
// server and the session; repeats go to debug. The remembered keys are
// bounded (max_reported_failures), so a long-running program cannot grow
// them without end: past the bound, new ones go to debug only.
#pragma once

#include <CL/cl.h>

#include <cinttypes>  // PRIu64: reasons name object ids
#include <cstddef>
#include <string_view>

#include "protocol/messages.hpp"

namespace ferry::client {

/// Records why the current call on this thread fails with `code`; returns
/// `code`, so that a check reads `return explain(CL_INVALID_X, "...")`.
cl_int explain(cl_int code, const char* format, ...) noexcept __attribute__((format(printf, 2, 3)));

/// Forgets the reasons recorded on this thread (when an entry point begins).
void clear_explanations() noexcept;

/// The reason recorded on this thread for `code` (the latest), or nullptr.
const char* explanation_for(cl_int code) noexcept;

/// Logs at debug that entry point `entry` returns `code`, with its reason:
/// "clCreateKernel: CL_INVALID_KERNEL_NAME (no kernel "k" in program 12)".
void log_entry_failure(const char* entry, cl_int code) noexcept;

/// How many (code, kind, object) keys the warn-once log remembers at most.
inline constexpr size_t max_reported_failures = 4096;

/// Where a server-side failure happened: the server's address and the
/// session's label (protocol::session_label).
struct failure_origin {
  std::string_view server;
  std::string_view session;
};

/// A server answered request `request` ("build_program"), about `object_kind`
/// `object`, with the error `code`: warn once per (code, request, object).
/// True when this report was logged at warn (the first of its key).
bool report_failed_reply(const failure_origin& origin, cl_int code, std::string_view request,
                         std::string_view object_kind, protocol::object_id object) noexcept;

/// Command `command` of type `type` on queue `queue` failed on the server
/// with `code`: warn once per (code, type, queue). `type` 0: a command the
/// client keeps no event for (its type is unknown here). True when this
/// report was logged at warn.
bool report_failed_command(const failure_origin& origin, cl_int code, cl_command_type type,
                           protocol::object_id command, protocol::object_id queue) noexcept;

/// "CL_COMMAND_NDRANGE_KERNEL"; "command" for a type it does not know.
const char* command_type_name(cl_command_type type) noexcept;

/// Forgets the remembered warn-once keys (unit tests).
void forget_reported_failures() noexcept;

}  // namespace ferry::client
