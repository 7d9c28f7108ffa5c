// clEnqueueReadBufferToStdioFile and clEnqueueWriteBufferFromStdioFile: a
// buffer's bytes to or from a FILE at its position when the command runs,
// in blocks that overlap the file's side with the device's. The path
// variants (clEnqueueReadBufferToFileFERRY, clEnqueueWriteBufferFromFileFERRY)
// open a file on this host when the command runs, or, for a file on the
// server of a Ferry queue, become the Ferry driver's own command, whose bytes
// never leave that server.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>

#include <CL/cl_ext_ferry.h>

#include "common/file_io.hpp"
#include "ferry/cl_data_transfer.h"
#include "transfer/block_pipeline.hpp"
#include "transfer/ferry_functions.hpp"
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

/// Where a command's bytes go to or come from on the host: a FILE at its
/// position, or a descriptor at an offset that moves with the bytes.
struct file_side {
  FILE* stream = nullptr;
  int fd = -1;
  uint64_t at = 0;  // fd: the next byte's offset

  bool write(const uint8_t* data, size_t size) {
    if (stream) return std::fwrite(data, 1, size, stream) == size;
    if (!write_at(fd, data, size, at)) return false;
    at += size;
    return true;
  }
  /// Up to `size` bytes, fewer at the end of the file; -1 on an error.
  ssize_t read(uint8_t* data, size_t size) {
    if (stream) {
      size_t got = std::fread(data, 1, size, stream);
      return got < size && std::ferror(stream) ? -1 : static_cast<ssize_t>(got);
    }
    const ssize_t got = read_at(fd, data, size, at);
    if (got > 0) at += static_cast<uint64_t>(got);
    return got;
  }
  /// Errors such as a full disk show when a stream's buffer goes out.
  bool flush() { return stream == nullptr || std::fflush(stream) == 0; }
};

transfer_outcome buffer_to_file(const transfer_setting& setting, cl_mem buffer, size_t offset, size_t size,
                                file_side file) {
  device_reader reader(setting.copies, buffer, offset, size, block_size_for(size));
  device_reader::piece piece;
  while (reader.next(piece)) {
    if (!file.write(piece.data, piece.size)) return {CL_OUT_OF_RESOURCES, system_error("writing the file")};
  }
  if (reader.error() != CL_SUCCESS) return {reader.error(), "reading the buffer"};
  if (!file.flush()) return {CL_OUT_OF_RESOURCES, system_error("writing the file")};
  return {};
}

transfer_outcome file_to_buffer(const transfer_setting& setting, cl_mem buffer, size_t offset, size_t size,
                                file_side file) {
  const size_t block = block_size_for(size);
  device_writer writer(setting.copies, buffer, offset, size, block);
  while (writer.written() < size) {
    const size_t want = std::min(block, size - writer.written());
    uint8_t* slot = writer.next_slot(want);
    if (slot == nullptr) break;
    const ssize_t got = file.read(slot, want);
    // What was read is written even when the file ends early.
    if (got > 0 && !writer.commit(static_cast<size_t>(got))) break;
    if (got < static_cast<ssize_t>(want)) {
      const bool failed = got < 0;
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

/// A path variant's file, opened when the command runs: the bytes move at
/// `file_offset` whatever happens to the file meanwhile.
transfer_outcome with_path(const std::string& path, bool writing, uint64_t file_offset,
                           const std::function<transfer_outcome(file_side)>& move) {
  const int fd = ::open(path.c_str(), writing ? O_WRONLY | O_CREAT | O_CLOEXEC : O_RDONLY | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int error = errno;
    return {error == ENOENT || error == EACCES || error == EPERM || error == EISDIR || error == ENOTDIR
                ? CL_INVALID_VALUE
                : CL_OUT_OF_RESOURCES,
            "'" + path + "': " + std::strerror(error)};
  }
  // A directory opens for reading; what reads it fails (EISDIR). Told apart
  // here, as a server does: no file to move bytes to or from.
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    ::close(fd);
    return {CL_INVALID_VALUE, "'" + path + "' is a directory"};
  }
  file_side side;
  side.fd = fd;
  side.at = file_offset;
  transfer_outcome out = move(side);
  if (::close(fd) != 0 && out.status == CL_SUCCESS) out = {CL_OUT_OF_RESOURCES, system_error("closing the file")};
  return out;
}

bool path_acceptable(const char* path, cl_uint location) {
  return path != nullptr && path[0] != '\0' &&
         (location == CL_FERRY_FILE_ON_CLIENT || location == CL_FERRY_FILE_ON_SERVER);
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
    return buffer_to_file(s, buffer, offset, size, file_side{file});
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
    return file_to_buffer(s, buffer, offset, size, file_side{file});
  });
}

extern "C" cl_int clEnqueueReadBufferToFileFERRY(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                                 size_t offset, size_t size, const char* path, cl_ulong file_offset,
                                                 cl_uint location, cl_uint num_events, const cl_event* wait_list,
                                                 cl_event* event) {
  if (path_acceptable(path, location) && location == CL_FERRY_FILE_ON_SERVER) {
    if (auto on_server = ferry_function<clEnqueueReadBufferToServerFileFERRY_fn>(
            queue, "clEnqueueReadBufferToServerFileFERRY"))
      return on_server(queue, buffer, blocking, offset, size, path, file_offset, num_events, wait_list, event);
  }
  transfer_call call{"clEnqueueReadBufferToFileFERRY", queue, buffer, direction::from_device, {{offset, size}, {0, 0}},
                     1, blocking, num_events, wait_list, event};
  transfer_setting setting;
  if (cl_int rc = check_call(call, setting); rc != CL_SUCCESS) return rc;
  if (!path_acceptable(path, location)) return CL_INVALID_VALUE;
  return enqueue_transfer(call, setting, [=, name = std::string(path)](const transfer_setting& s) {
    return with_path(name, true, file_offset, [&](file_side side) { return buffer_to_file(s, buffer, offset, size, side); });
  });
}

extern "C" cl_int clEnqueueWriteBufferFromFileFERRY(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                                    size_t offset, size_t size, const char* path,
                                                    cl_ulong file_offset, cl_uint location, cl_uint num_events,
                                                    const cl_event* wait_list, cl_event* event) {
  if (path_acceptable(path, location) && location == CL_FERRY_FILE_ON_SERVER) {
    if (auto on_server = ferry_function<clEnqueueWriteBufferFromServerFileFERRY_fn>(
            queue, "clEnqueueWriteBufferFromServerFileFERRY"))
      return on_server(queue, buffer, blocking, offset, size, path, file_offset, num_events, wait_list, event);
  }
  transfer_call call{"clEnqueueWriteBufferFromFileFERRY", queue, buffer, direction::to_device,
                     {{offset, size}, {0, 0}}, 1, blocking, num_events, wait_list, event};
  transfer_setting setting;
  if (cl_int rc = check_call(call, setting); rc != CL_SUCCESS) return rc;
  if (!path_acceptable(path, location)) return CL_INVALID_VALUE;
  return enqueue_transfer(call, setting, [=, name = std::string(path)](const transfer_setting& s) {
    return with_path(name, false, file_offset, [&](file_side side) { return file_to_buffer(s, buffer, offset, size, side); });
  });
}
