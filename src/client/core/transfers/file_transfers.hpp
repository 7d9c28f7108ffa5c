// Files on the server that holds a buffer (cl_ext_ferry.h,
// clEnqueueWriteBufferFromServerFileFERRY and ...ReadBufferToServerFileFERRY),
// once the entry point's checks have passed: the command names the file, and
// its bytes never cross the client's link.
#pragma once

#include <cstddef>
#include <string>

#include "client/core/command.hpp"

namespace ferry::client {

/// The file `path` (below the server's --file-root) from `file_offset` into
/// [offset, offset + size) of `m`. CL_INVALID_OPERATION when the queue's
/// server predates protocol::files_version. A blocking call returns the
/// command's own failure (the file missing, short, ...), not
/// CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST.
cl_int enqueue_file_to_buffer(queue* q, memory* m, size_t offset, size_t size, const std::string& path,
                              cl_ulong file_offset, blocking mode, cl_uint count, const cl_event* list,
                              cl_event* event_out);

/// [offset, offset + size) of `m` into the file `path` at `file_offset`.
cl_int enqueue_buffer_to_file(queue* q, memory* m, size_t offset, size_t size, const std::string& path,
                              cl_ulong file_offset, blocking mode, cl_uint count, const cl_event* list,
                              cl_event* event_out);

}  // namespace ferry::client
