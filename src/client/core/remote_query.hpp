// clGet*Info questions the client cannot answer itself: the server's native
// answer, passed through unchanged.
#pragma once

#include "client/core/objects.hpp"
#include "client/core/result.hpp"

namespace ferry::client {

/// One question about object `about` (its id) of the kind `kind`.
struct remote_question {
  protocol::query_kind kind;
  const object_base* about;
  /// Device-specific questions name the device, and go to its server.
  const device* on_device = nullptr;
  cl_uint param = 0;
  /// The argument index of kernel argument questions.
  uint32_t index = 0;
  /// The input value of questions that take one (sub-group info).
  protocol::bytes input;
};

/// Asks `question` on the device's server, else over `home` (the object's
/// first server); the native error code when the answer is one.
/// CL_DEVICE_NOT_AVAILABLE when there is no server to ask.
result<protocol::bytes> ask_server(connection* home, remote_question question);

}  // namespace ferry::client
