// file_to_buffer and buffer_to_file: a file below the daemon's --file-root
// and a buffer, as a command of the client's queue (docs/transfer.md, "Files
// on the server").
//
// On the client's queue the command is two markers, as a migrate_in whose
// bytes come later: `before` behind the wait list, and the command's event
// behind `gate`, a user event. When `before` has ended, the control writer
// hands the job to the session's file thread (file_copier), which moves the
// bytes on a queue of its own and then sets `gate`. The gate never fails: the
// job's outcome reaches the client as the command's completion status, so a
// missing file fails that command and nothing behind it.
#include <cstdint>

#include "common/log.hpp"
#include "server/commands/executor.hpp"
#include "server/files/file_copier.hpp"
#include "server/files/file_start.hpp"

namespace ferry::server {

namespace p = protocol;

bool executor::on(const p::file_to_buffer& m) {
  return file_command(m.header, m.buffer, m.offset, m.size, m.path, m.file_offset, true);
}

bool executor::on(const p::buffer_to_file& m) {
  return file_command(m.header, m.buffer, m.offset, m.size, m.path, m.file_offset, false);
}

bool executor::file_command(const p::command_header& h, p::object_id buffer_id, uint64_t offset, uint64_t size,
                            const std::string& path, uint64_t file_offset, bool to_buffer) {
  const object_entry* queue;
  if (step s = prepare(h, queue); s != step::go) return s == step::failed;
  object_table::found buffer = objects_.find<object_kind::mem>(buffer_id);
  if (!buffer) return fail(h, buffer.error());
  if (buffer->element_size != 0) return fail(h, CL_INVALID_MEM_OBJECT);  // an image
  if (buffer->context != queue->context) return fail(h, CL_INVALID_CONTEXT);
  // CL_INVALID_VALUE for a range out of the buffer, or past the largest file offset.
  if (offset > buffer->size || size > buffer->size - offset) return fail(h, CL_INVALID_VALUE);
  if (file_offset > static_cast<uint64_t>(INT64_MAX) - size) return fail(h, CL_INVALID_VALUE);
  std::string why;
  if (!file_root::acceptable(path, why)) {
    FERRY_INFO("files", "session %s: command %llu names %s; failing it with CL_INVALID_VALUE", core_->label.c_str(),
               static_cast<unsigned long long>(h.command), why.c_str());
    return fail(h, CL_INVALID_VALUE);
  }
  if (!core_->files || !core_->files->configured()) {
    FERRY_INFO("files", "session %s: command %llu names the file '%s', but this server serves no files "
               "(ferryd --file-root); failing it with CL_INVALID_OPERATION",
               core_->label.c_str(), static_cast<unsigned long long>(h.command), path.c_str());
    return fail(h, CL_INVALID_OPERATION);
  }
  cl_int error = CL_SUCCESS;
  cl_event gate = api_.clCreateUserEvent(queue->context, &error);
  if (gate == nullptr) return fail(h, error);
  cl_event before = nullptr, event = nullptr;
  cl_int rc = api_.clEnqueueMarkerWithWaitList(queue->as_queue(), wait_count(), wait_events(), &before);
  if (rc == CL_SUCCESS) {
    rc = api_.clEnqueueMarkerWithWaitList(queue->as_queue(), 1, &gate, &event);
    if (rc != CL_SUCCESS) api_.clReleaseEvent(before);
  }
  if (rc != CL_SUCCESS) {
    api_.clSetUserEventStatus(gate, CL_COMPLETE);
    api_.clReleaseEvent(gate);
    return fail(h, rc);
  }
  hold_for_imports(before);
  if (!files_) files_ = std::make_shared<file_copier>(api_, core_->files, core_->label);
  file_job job;
  job.direction = to_buffer ? file_job::way::file_to_buffer : file_job::way::buffer_to_file;
  job.command = h.command;
  job.path = path;
  job.file_offset = file_offset;
  job.offset = offset;
  job.size = size;
  job.context = queue->context;
  job.device = queue->device;
  api_.clRetainMemObject(buffer->as_mem());
  job.buffer = buffer->as_mem();
  job.gate = gate;  // the job's reference
  auto outcome = std::make_shared<std::atomic<cl_int>>(CL_COMPLETE);
  job.outcome = outcome;
  auto start = std::make_shared<file_start>(api_, std::move(job), files_);
  std::erase_if(file_starts_, [](const std::weak_ptr<file_start>& w) { return w.expired(); });
  file_starts_.push_back(start);
  callback_slot* slot = core_->callbacks.acquire();
  slot->core = core_;
  slot->command = h.command;
  slot->event = before;  // the slot's reference
  slot->kind = callback_kind::step;
  slot->then = std::move(start);
  slot->follow(queue->callbacks);
  callback_pool::arm(api_, slot);
  return finish({.header = h, .queue = *queue, .event = event, .outcome = std::move(outcome)});
}

}  // namespace ferry::server
