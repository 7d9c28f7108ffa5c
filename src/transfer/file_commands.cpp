// clEnqueueReadBufferToStdioFile and clEnqueueWriteBufferFromStdioFile: a
// buffer's bytes to or from a FILE at its position when the command runs,
// in blocks that overlap the file's side with the device's.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "ferry/cl_data_transfer.h"
#include "transfer/block_pipeline.hpp"
#include "transfer/transfer_command.hpp"

namespace ferry::transfer {
namespace {

/// Whether `file` was opened for the access asked; true when it has no
/// descriptor to ask (fmemopen, fopencookie), which stdio checks itself.
bool opened_for(FILE* file, bool writing) {
  const int fd = ::fileno(file);
  if (fd < 0) return true;
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return false;  // no longer open
  const int mode = flags & O_ACCMODE;
  return mode == O_RDWR || mode == (writing ? O_WRONLY : O_RDONLY);
}

std::string system_error(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

transfer_outcome buffer_to_file(const transfer_setting& setting, cl_mem buffer, size_t offset, size_t size,
                                FILE* file) {
  device_reader reader(setting.copies, buffer, offset, size, block_size_for(size));
  device_reader::piece piece;
  while (reader.next(piece)) {
    if (std::fwrite(piece.data, 1, piece.size, file) != piece.size)
      return {CL_OUT_OF_RESOURCES, system_error("writing the file")};
  }
  if (reader.error() != CL_SUCCESS) return {reader.error(), "reading the buffer"};
  // Errors such as a full disk show when the stream's buffer goes out.
  if (std::fflush(file) != 0) return {CL_OUT_OF_RESOURCES, system_error("writing the file")};
  return {};
}

transfer_outcome file_to_buffer(const transfer_setting& setting, cl_mem buffer, size_t offset, size_t size,
                                FILE* file) {
  const size_t block = block_size_for(size);
  device_writer writer(setting.copies, buffer, offset, size, block);
  while (writer.written() < size) {
    const size_t want = std::min(block, size - writer.written());
    uint8_t* slot = writer.next_slot(want);
    if (slot == nullptr) break;
    const size_t got = std::fread(slot, 1, want, file);
    // What was read is written even when the file ends early.
    if (got > 0 && !writer.commit(got)) break;
    if (got < want) {
      const bool failed = std::ferror(file) != 0;
      const std::string cause = failed ? system_error("reading the file")
                                       : "the file ended after " + std::to_string(writer.written()) + " of " +
                                             std::to_string(size) + " bytes";
      writer.finish();
      return {failed ? CL_OUT_OF_RESOURCES : CL_INVALID_VALUE, cause};
    }
  }
  if (cl_int rc = writer.finish(); rc != CL_SUCCESS) return {rc, "writing the buffer"};
  return {};
}

}  // namespace
}  // namespace ferry::transfer

using namespace ferry::transfer;

extern "C" cl_int clEnqueueReadBufferToStdioFile(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                                 size_t offset, size_t size, FILE* file, cl_uint num_events,
                                                 const cl_event* wait_list, cl_event* event) {
  transfer_call call{"clEnqueueReadBufferToStdioFile", queue, buffer, direction::from_device, {{offset, size}, {0, 0}},
                     1, blocking, num_events, wait_list, event};
  transfer_setting setting;
  if (cl_int rc = check_call(call, setting); rc != CL_SUCCESS) return rc;
  if (file == nullptr || !opened_for(file, true)) return CL_INVALID_VALUE;
  return enqueue_transfer(call, setting, [=](const transfer_setting& s) {
    return buffer_to_file(s, buffer, offset, size, file);
  });
}

extern "C" cl_int clEnqueueWriteBufferFromStdioFile(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                                    size_t offset, size_t size, FILE* file, cl_uint num_events,
                                                    const cl_event* wait_list, cl_event* event) {
  transfer_call call{"clEnqueueWriteBufferFromStdioFile", queue, buffer, direction::to_device,
                     {{offset, size}, {0, 0}}, 1, blocking, num_events, wait_list, event};
  transfer_setting setting;
  if (cl_int rc = check_call(call, setting); rc != CL_SUCCESS) return rc;
  if (file == nullptr || !opened_for(file, false)) return CL_INVALID_VALUE;
  return enqueue_transfer(call, setting, [=](const transfer_setting& s) {
    return file_to_buffer(s, buffer, offset, size, file);
  });
}
