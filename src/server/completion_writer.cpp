#include "server/completion_writer.hpp"

#include "common/socket.hpp"
#include "server/callback_pool.hpp"
#include "server/printf_capture.hpp"
#include "server/transfer_table.hpp"

namespace ferry::server {
namespace {

// Keeps one completions frame well inside max_array_elements and max_control_payload.
constexpr size_t max_completions_per_frame = 65536;

}  // namespace

cl_int true_status(const native::api& api, cl_event event, cl_int status, bool verify) {
  if (!verify || status != CL_COMPLETE || event == nullptr) return status;
  cl_int actual = CL_COMPLETE;
  if (api.clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof actual, &actual, nullptr) == CL_SUCCESS &&
      actual < 0)
    return actual;
  return status;
}

control_outbox::~control_outbox() {
  std::lock_guard lock(mutex_);
  for (record& r : pending_.records) {
    if (r.kind != record_kind::command) continue;
    if (r.command.event) api_.clReleaseEvent(r.command.event);
    if (r.command.gate) api_.clReleaseEvent(r.command.gate);
    native::unmap(api_, r.command.unmap, 0, nullptr, nullptr);
  }
}

void control_outbox::push_record_locked(const record& r) {
  bool was_idle = pending_.records.empty() && printf_frames_.empty();
  pending_.records.push_back(r);
  // The writer only sleeps on an empty queue; a non-empty one is taken whole.
  if (was_idle && !closed_) ready_.notify_one();
}

void control_outbox::push(const command_record& command) {
  record r;
  r.command = command;
  r.kind = record_kind::command;
  std::lock_guard lock(mutex_);
  push_record_locked(r);
}

void control_outbox::push_printf(const uint8_t* text, size_t size) {
  protocol::printf_output message;
  message.text.assign(text, text + size);
  std::lock_guard lock(mutex_);
  if (closed_) return;
  bool was_idle = pending_.records.empty() && printf_frames_.empty();
  protocol::append_frame(printf_frames_, message);
  if (was_idle) ready_.notify_one();
}

void control_outbox::take_printf(std::vector<uint8_t>& out) {
  std::lock_guard lock(mutex_);
  out.insert(out.end(), printf_frames_.begin(), printf_frames_.end());
  printf_frames_.clear();
}

void control_outbox::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  ready_.notify_all();
}

bool control_outbox::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

size_t control_outbox::pending() const {
  std::lock_guard lock(mutex_);
  return pending_.records.size();
}

void control_writer::flush_completions(std::vector<uint8_t>& out) {
  if (message_.entries.empty()) return;
  protocol::append_frame(out, message_);
  message_.entries.clear();
}

void control_writer::process(const command_record& r, std::vector<uint8_t>& out) {
  const native::api& api = outbox_.api_;
  cl_int status = true_status(api, r.event, r.status, r.verify);
  if (r.write) transfers_.write_finished(r.transfer);
  if (r.unmap) {
    // The map completed before the bytes were sent: nothing to wait for.
    native::mapping sent = r.unmap;
    native::unmap(api, sent, 0, nullptr, nullptr);
  }
  if (r.gate) {
    // Here, not in the native callback: setting a user event may run callbacks.
    api.clSetUserEventStatus(r.gate, status < 0 ? status : CL_COMPLETE);
    api.clReleaseEvent(r.gate);
    // Commands behind the gate fail; some platforms call back for none of them.
    if (status < 0 && sweeper_) sweeper_->sweep_failures(api);
  } else if (r.notify || status != CL_COMPLETE) {
    if (r.drain_printf && printf_) {
      // The kernel's output must reach the client before its completion.
      flush_completions(out);
      printf_->drain(&outbox_, out);
    }
    protocol::completion c{r.command, status, {}};
    if (r.profiling && r.event && status == CL_COMPLETE) {
      static constexpr cl_profiling_info counters[] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                                       CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
      for (size_t i = 0; i < 4; ++i) {
        cl_ulong value = 0;
        if (api.clGetEventProfilingInfo(r.event, counters[i], sizeof value, &value, nullptr) == CL_SUCCESS)
          c.profiling[i] = value;
      }
    }
    message_.entries.push_back(c);
    if (message_.entries.size() == max_completions_per_frame) flush_completions(out);
  }
  if (r.event) api.clReleaseEvent(r.event);
}

void control_writer::run() {
  control_outbox::batch work;
  work.records.reserve(256);
  work.frames.reserve(4096);
  std::vector<uint8_t> out;
  out.reserve(64 * 1024);
  message_.entries.reserve(256);
  // Once the socket fails, records are still processed (their native
  // cleanup must happen) but nothing is sent, until the outbox closes.
  bool discarding = false;
  for (;;) {
    {
      std::unique_lock lock(outbox_.mutex_);
      auto has_work = [&] {
        return outbox_.closed_ || !outbox_.pending_.records.empty() || !outbox_.printf_frames_.empty();
      };
      if (sweeper_ && sweeper_->wants_follow_up()) {
        // Failures the platform propagates late have no callback: look again.
        if (!outbox_.ready_.wait_for(lock, callback_pool::follow_up_interval, has_work)) {
          lock.unlock();
          sweeper_->follow_up(outbox_.api_);
          continue;
        }
      } else {
        outbox_.ready_.wait(lock, has_work);
      }
      if (outbox_.closed_) return;
      std::swap(work, outbox_.pending_);
      // Printf text read so far goes first: it was printed before anything here completed.
      out.assign(outbox_.printf_frames_.begin(), outbox_.printf_frames_.end());
      outbox_.printf_frames_.clear();
    }
    for (const auto& r : work.records) {
      if (r.kind == control_outbox::record_kind::frame) {
        flush_completions(out);
        out.insert(out.end(), work.frames.begin() + r.frame_offset,
                   work.frames.begin() + r.frame_offset + r.frame_size);
      } else {
        process(r.command, out);
      }
    }
    flush_completions(out);
    work.records.clear();
    work.frames.clear();
    if (!discarding && !out.empty()) {
      if (!write_all(fd_, out.data(), out.size())) {
        discarding = true;
        broken_("control stream write failed");
      } else if (counter_) {
        counter_->count_out(count_frames(out.data(), out.size()), out.size());
      }
    }
  }
}

}  // namespace ferry::server
