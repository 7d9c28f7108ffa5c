#include "client/core/transfers/file_transfers.hpp"

#include "client/core/event_state.hpp"
#include "protocol/version.hpp"

namespace ferry::client {

namespace {

template <class Message>
cl_int file_command(queue* q, memory* m, cl_command_type type, access how, size_t offset, size_t size,
                    const std::string& path, cl_ulong file_offset, blocking mode, cl_uint count,
                    const cl_event* list, cl_event* event_out) {
  if (q->device->host->link->version() < protocol::files_version) return CL_INVALID_OPERATION;
  // A blocking call waits on the command's own event, so that it can return
  // the command's own failure.
  cl_event own = nullptr;
  cl_event* out = event_out != nullptr || mode == blocking::no ? event_out : &own;
  cl_int code;
  {
    command cmd(q, type, count, list, out, blocking::no);
    if (code = cmd.uses(m, how); code != CL_SUCCESS) return cmd.abandon(code);
    code = cmd.submit(Message{cmd.header, m->id, offset, size, path, file_offset});
  }
  if (code != CL_SUCCESS || mode == blocking::no) return code;
  cl_event e = *out;
  cl_int status = wait_for_events(&e, 1);
  if (status != CL_SUCCESS && e->status.load() < 0) status = e->status.load();
  if (own != nullptr) release_api(own);
  return status;
}

}  // namespace

cl_int enqueue_file_to_buffer(queue* q, memory* m, size_t offset, size_t size, const std::string& path,
                              cl_ulong file_offset, blocking mode, cl_uint count, const cl_event* list,
                              cl_event* event_out) {
  return file_command<protocol::file_to_buffer>(q, m, CL_COMMAND_WRITE_BUFFER, access::write, offset, size, path,
                                                file_offset, mode, count, list, event_out);
}

cl_int enqueue_buffer_to_file(queue* q, memory* m, size_t offset, size_t size, const std::string& path,
                              cl_ulong file_offset, blocking mode, cl_uint count, const cl_event* list,
                              cl_event* event_out) {
  return file_command<protocol::buffer_to_file>(q, m, CL_COMMAND_READ_BUFFER, access::read, offset, size, path,
                                                file_offset, mode, count, list, event_out);
}

}  // namespace ferry::client
