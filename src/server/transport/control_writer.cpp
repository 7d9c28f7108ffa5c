#include "server/transport/control_writer.hpp"

#include <algorithm>

#include "common/log.hpp"
#include "common/socket.hpp"
#include "server/daemon/printf_capture.hpp"
#include "server/transport/callback_pool.hpp"
#include "server/transport/transfer_table.hpp"

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

void control_outbox::push_record_locked(const record& r, bool wake) {
  bool was_idle = pending_.records.empty() && printf_frames_.empty();
  pending_.records.push_back(r);
  // The writer only sleeps on an empty queue; a non-empty one is taken whole.
  if (wake && was_idle && !closed_) ready_.notify_one();
}

void control_outbox::push(const command_record& command) {
  record r;
  r.command = command;
  r.kind = record_kind::command;
  std::lock_guard lock(mutex_);
  push_record_locked(r);
}

void control_outbox::push_quietly(const command_record& command) {
  record r;
  r.command = command;
  r.kind = record_kind::command;
  std::lock_guard lock(mutex_);
  push_record_locked(r, false);
}

void control_outbox::wake() {
  std::lock_guard lock(mutex_);
  if (!closed_) ready_.notify_one();
}

void control_outbox::send_or_wake() {
  {
    // A writer that holds the lock is busy: it looks at the queue again
    // before it sleeps, so the wake-up below is only for an idle one that
    // cannot be spared (no connection, or TLS).
    std::unique_lock drain(drain_mutex_, std::try_to_lock);
    if (drain.owns_lock() && drainer_ != nullptr && drainer_->send_without_waiting()) return;
  }
  wake();
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

void control_outbox::request_ack() {
  std::lock_guard lock(mutex_);
  if (closed_ || ack_requested_) return;
  ack_requested_ = true;
  if (pending_.records.empty() && printf_frames_.empty()) ready_.notify_one();
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
  if (r.outcome && status == CL_COMPLETE) {
    const cl_int outcome = r.outcome->load(std::memory_order_acquire);
    if (outcome < 0) status = outcome;
  }
  if (r.write) transfers_.write_finished(r.transfer);
  if (r.unmap) {
    // The map completed before the bytes were sent: nothing to wait for.
    native::mapping sent = r.unmap;
    native::unmap(api, sent, 0, nullptr, nullptr);
  }
  if (r.then) {
    r.then->run(status < 0 ? status : CL_COMPLETE);
  } else if (r.gate) {
    // Here, not in the native callback: setting a user event may run callbacks.
    api.clSetUserEventStatus(r.gate, status < 0 ? status : CL_COMPLETE);
    api.clReleaseEvent(r.gate);
    FERRY_TRACE("timeline", "command %llu: gate set (%d)", static_cast<unsigned long long>(r.command), status);
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
    } else if (r.counters && status == CL_COMPLETE) {
      for (size_t i = 0; i < 4; ++i) c.profiling[i] = (*r.counters)[i];
    }
    message_.entries.push_back(c);
    if (message_.entries.size() == max_completions_per_frame) flush_completions(out);
  }
  if (r.event) api.clReleaseEvent(r.event);
}

void control_writer::run() {
  for (;;) {
    {
      std::unique_lock lock(outbox_.mutex_);
      auto has_work = [&] {
        return outbox_.closed_ || !outbox_.pending_.records.empty() || !outbox_.printf_frames_.empty() ||
               outbox_.ack_requested_ || outbox_.send_requested_;
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
      if (outbox_.closed_) break;
    }
    std::lock_guard drain_lock(outbox_.drain_mutex_);
    drain(socket_wait::allowed);
  }
  std::lock_guard drain(outbox_.drain_mutex_);
  outbox_.drainer_ = nullptr;
}

control_writer::~control_writer() {
  std::lock_guard drain(outbox_.drain_mutex_);
  if (outbox_.drainer_ == this) outbox_.drainer_ = nullptr;
}

bool control_writer::send_without_waiting() {
  {
    std::lock_guard lock(link_mutex_);
    if (fd_ == nullptr || fd_->encrypted()) return false;
  }
  drain(socket_wait::never);
  return true;
}

void control_writer::drain(socket_wait wait) {
  ack_request ack;
  {
    std::lock_guard lock(outbox_.mutex_);
    ack = std::exchange(outbox_.ack_requested_, false) ? ack_request::asked : ack_request::not_asked;
    outbox_.send_requested_ = false;
    std::swap(work_, outbox_.pending_);
    // Printf text read so far goes first: it was printed before anything here completed.
    out_.assign(outbox_.printf_frames_.begin(), outbox_.printf_frames_.end());
    outbox_.printf_frames_.clear();
  }
  for (const auto& r : work_.records) {
    if (r.kind == control_outbox::record_kind::frame) {
      flush_completions(out_);
      out_.insert(out_.end(), work_.frames.begin() + r.frame_offset,
                  work_.frames.begin() + r.frame_offset + r.frame_size);
    } else {
      process(r.command, out_);
    }
  }
  flush_completions(out_);
  work_.records.clear();
  work_.frames.clear();
  std::lock_guard lock(link_mutex_);
  send_locked(out_, ack, wait);
}

void control_writer::send_locked(std::vector<uint8_t>& out, ack_request ack, socket_wait wait) {
  const uint64_t frames = count_frames(out.data(), out.size());
  std::vector<uint8_t> ack_frame;
  if (received_.control && fd_ != nullptr) {
    protocol::ack now{received_.control->load(std::memory_order_acquire),
                      received_.bulk ? received_.bulk->load(std::memory_order_acquire) : 0};
    // Ahead of the batch, so that the client hears of its bulk bytes before
    // the completions of the writes they fed.
    if (now != acked_ && (ack == ack_request::asked || !out.empty())) {
      protocol::append_frame(ack_frame, now);
      acked_ = now;
    }
    append_lane_ack(ack_frame, ack == ack_request::asked || !out.empty());
  }
  if (fd_ != nullptr && (!ack_frame.empty() || !out.empty() || !unsent_.empty())) {
    iovec pieces[2];
    int count = 0;
    if (!ack_frame.empty()) pieces[count++] = {ack_frame.data(), ack_frame.size()};
    if (!out.empty()) pieces[count++] = {out.data(), out.size()};
    // Counted before the write (link_counter says why).
    if (counter_)
      counter_->count_out(frames + count_frames(ack_frame.data(), ack_frame.size()), ack_frame.size() + out.size());
    if (!write_locked(pieces, count, wait)) {
      fd_ = nullptr;
      broken_("control stream write failed");
    }
    FERRY_TRACE("timeline", "%zu frames written (%s)", static_cast<size_t>(frames),
                wait == socket_wait::allowed ? "control writer" : "caller's thread");
    // The client may answer them with its next commands at once.
    if (reader_ != nullptr && frames > 0 && fd_ != nullptr) reader_->open_window();
  }
  log_.append(out, frames);
}

void control_writer::append_lane_ack(std::vector<uint8_t>& frames, bool due) {
  if (received_.lanes == nullptr || received_.lane_count < 2 || !due) return;
  // Compared in place: nothing is built for a batch where no lane's count moved.
  lanes_acked_.received.resize(received_.lane_count - 1);
  bool moved = false;
  for (uint32_t lane = 1; lane < received_.lane_count; ++lane) {
    const uint64_t now = received_.lanes[lane].load(std::memory_order_acquire);
    moved = moved || now != lanes_acked_.received[lane - 1];
    lanes_acked_.received[lane - 1] = now;
  }
  // Nothing came on a lane yet (a client without lanes) stays "not moved": no
  // frame it would not know.
  if (moved) protocol::append_frame(frames, lanes_acked_);
}

bool control_writer::write_locked(iovec* pieces, int count, socket_wait wait) {
  if (wait == socket_wait::allowed) {
    if (!unsent_.empty()) {
      if (!write_all(fd_, unsent_.data(), unsent_.size())) return false;
      unsent_.clear();
    }
    return count == 0 || writev_all(fd_, pieces, count);
  }
  size_t taken = 0;
  if (unsent_.empty()) {
    ssize_t n = fd_->try_writev(pieces, count);
    if (n < 0) return false;
    taken = static_cast<size_t>(n);
  }
  // The rest waits for the writer thread, behind what waits already.
  for (int i = 0; i < count; ++i) {
    const auto* p = static_cast<const uint8_t*>(pieces[i].iov_base);
    size_t skip = std::min(taken, pieces[i].iov_len);
    taken -= skip;
    unsent_.insert(unsent_.end(), p + skip, p + pieces[i].iov_len);
  }
  if (!unsent_.empty()) {
    std::lock_guard lock(outbox_.mutex_);
    outbox_.send_requested_ = true;
    if (!outbox_.closed_) outbox_.ready_.notify_one();
  }
  return true;
}

void control_writer::detach() {
  std::lock_guard lock(link_mutex_);
  fd_ = nullptr;
  unsent_.clear();  // in the replay log: a resumed connection gets them again
}

control_writer::attach_result control_writer::attach(stream* fd, uint64_t received) {
  std::lock_guard lock(link_mutex_);
  unsent_.clear();  // the replay below covers them
  if (!log_.acknowledge(received)) return attach_result::bad_ack;
  std::vector<uint8_t> again;
  if (!log_.replay(received, again)) return attach_result::bad_ack;
  if (counter_ && !again.empty()) counter_->count_out(count_frames(again.data(), again.size()), again.size());
  if (!again.empty() && !write_all(fd, again.data(), again.size())) return attach_result::broken;
  fd_ = fd;
  acked_ = {};
  lanes_acked_ = {};
  return attach_result::attached;
}

bool control_writer::acknowledge(uint64_t received) {
  std::lock_guard lock(link_mutex_);
  return log_.acknowledge(received);
}

}  // namespace ferry::server
