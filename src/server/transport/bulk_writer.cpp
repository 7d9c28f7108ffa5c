#include "server/transport/bulk_writer.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "common/elapsed.hpp"
#include "common/log.hpp"
#include "common/socket.hpp"
#include "protocol/bulk_head.hpp"
#include "protocol/frame.hpp"
#include "server/transport/control_writer.hpp"

namespace ferry::server {

bulk_outbox::~bulk_outbox() {
  for (bulk_job& job : jobs_) discard(job);
}

void bulk_outbox::discard(bulk_job& job) {
  if (job.event) api_.clReleaseEvent(std::exchange(job.event, nullptr));
  job.data.reset();
}

namespace {

/// Whether a bulk lane's writer may send `job`: a piece of a large read, or a
/// CUDA copy back (each a whole transfer that the client places by offset
/// and whose completion follows its last byte, on whichever connection).
/// The seal of a read in pieces and whole small reads stay with the bulk
/// stream's writer, in order.
bool goes_on_any_lane(const bulk_job& job) { return (job.whole && !job.seal) || job.after_sent; }

}  // namespace

void bulk_outbox::push(bulk_job&& job) {
  // Never calls OpenCL (native callbacks push here); after close() jobs wait
  // for the destructor.
  std::lock_guard lock(mutex_);
  const bool piece = goes_on_any_lane(job);
  jobs_.push_back(std::move(job));
  if (closed_) return;
  // The bulk stream's writer takes any job; a lane's writer only pieces.
  ready_.notify_one();
  if (piece) pieces_ready_.notify_one();
}

bool bulk_outbox::pop(bulk_job& job, uint64_t generation) {
  std::unique_lock lock(mutex_);
  ready_.wait(lock, [&] { return closed_ || generation != generation_ || !jobs_.empty(); });
  if (closed_ || generation != generation_) return false;
  job = std::move(jobs_.front());
  jobs_.pop_front();
  return true;
}

void bulk_outbox::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  ready_.notify_all();
  pieces_ready_.notify_all();
}

uint64_t bulk_outbox::writer_generation() {
  std::lock_guard lock(mutex_);
  return generation_;
}

void bulk_outbox::retire_writer() {
  std::lock_guard lock(mutex_);
  ++generation_;
  ready_.notify_all();
}

uint64_t bulk_frames(uint64_t size) {
  return size == 0 ? 1 : (size + protocol::max_bulk_chunk - 1) / protocol::max_bulk_chunk;
}

bool bulk_outbox::stopped(uint64_t generation) {
  std::lock_guard lock(mutex_);
  return closed_ || generation != generation_;
}

bool bulk_outbox::pop_piece(bulk_job& job, const std::atomic<bool>& stop) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (closed_ || stop.load(std::memory_order_acquire)) return false;
    auto piece = std::find_if(jobs_.begin(), jobs_.end(), goes_on_any_lane);
    if (piece != jobs_.end()) {
      job = std::move(*piece);
      jobs_.erase(piece);
      return true;
    }
    pieces_ready_.wait(lock);
  }
}

void bulk_outbox::wake_all() {
  std::lock_guard lock(mutex_);
  ready_.notify_all();
  pieces_ready_.notify_all();
}

bool write_bulk_frame(stream* fd, uint64_t transfer, uint64_t offset, uint64_t total, const uint8_t* bytes,
                      uint64_t chunk, link_counter* counter) {
  // Header and prefix go out in the same writev as the chunk they announce.
  uint8_t head[protocol::bulk_head_size];
  protocol::store_bulk_head(head, protocol::bulk_data{transfer, offset, total}, chunk);
  iovec pieces[2] = {{head, sizeof head}, {const_cast<uint8_t*>(bytes), static_cast<size_t>(chunk)}};
  count_out(counter, 1, sizeof head + chunk);  // before the write (link_counter says why)
  return writev_all(fd, pieces, chunk ? 2 : 1);
}

bool write_bulk_chunk(stream* fd, uint64_t transfer, const uint8_t* data, uint64_t size, uint64_t& offset,
                      link_counter* counter) {
  uint64_t chunk = std::min<uint64_t>(size - offset, protocol::max_bulk_chunk);
  if (!write_bulk_frame(fd, transfer, offset, size, data + offset, chunk, counter)) return false;
  offset += chunk;
  return true;
}

bool write_bulk(stream* fd, uint64_t transfer, const uint8_t* data, uint64_t size, link_counter* counter) {
  uint64_t offset = 0;
  do {
    if (!write_bulk_chunk(fd, transfer, data, size, offset, counter)) return false;
  } while (offset < size);
  return true;
}

bulk_window* bulk_writer::read_window() {
  if (!window_ && handoff_) window_ = handoff_->take();
  return window_.get();
}

bulk_writer::sent bulk_writer::send_chunk(uint64_t transfer, uint64_t offset, uint64_t total, const uint8_t* bytes,
                                          uint64_t chunk) {
  // Small chunks cost less on the socket than a slot's hand-off.
  bulk_window* window = chunk >= window_chunk_from ? read_window() : nullptr;
  if (window == nullptr || chunk > window->slot_size())
    return write_bulk_frame(fd_, transfer, offset, total, bytes, chunk, counter_) ? sent::ok : sent::broken;
  uint32_t slot = 0;
  // The client frees a slot as soon as it has copied it out. Waits are
  // bounded: a stream that was dropped meanwhile (the client went away)
  // retires this writer, and a counter beyond what was sent is a client
  // that wrote the shared page out of turn.
  switch (window->fill_next_slot(bytes, chunk, [&] { return !jobs_.stopped(generation_); }, slot)) {
    case bulk_window::fill::filled: break;
    case bulk_window::fill::stopped: return sent::broken;
    case bulk_window::fill::out_of_turn:
      violation_ = "the client released read window slots that were never filled";
      return sent::violation;
  }
  std::vector<uint8_t> frame;
  protocol::append_frame(frame, protocol::read_window_chunk{transfer, offset, total, slot, chunk});
  count_out(counter_, 1, frame.size() + chunk);
  if (!write_all(fd_, frame.data(), frame.size())) return sent::broken;
  window->slot_sent();
  return sent::ok;
}

bulk_writer::sent bulk_writer::send_range(uint64_t transfer, const uint8_t* data, uint64_t base, uint64_t size,
                                          uint64_t total) {
  uint64_t at = 0;
  do {
    const uint64_t chunk = std::min<uint64_t>(size - at, protocol::max_bulk_chunk);
    if (sent how = send_chunk(transfer, base + at, total, data + at, chunk); how != sent::ok) return how;
    at += chunk;
  } while (at < size);
  return sent::ok;
}

bulk_writer::sent bulk_writer::send_read(bulk_job& job) {
  job.status = true_status(api_, job.event, job.status, job.verify);
  sent how = sent::ok;
  if (job.status == CL_COMPLETE) {
    // Kept until the client has it all: a connection may break on the way.
    const uint64_t size = job.sent_size();
    const uint8_t* bytes = job.data.get();
    std::shared_ptr<const void> owner(job.data.release(), staging_deleter{});
    const uint64_t last = kept_->keep(job.command, std::move(owner), bytes, 0, size, size);
    how = send_range(job.command, bytes, 0, size, size);
    kept_->written(last);
  }
  job.data.reset();
  command_record r;
  r.command = job.command;
  r.event = std::exchange(job.event, nullptr);
  r.status = job.status;
  r.profiling = job.profiling;
  // Only after the last byte is written: the completion tells the client the data went out first.
  control_.push(r);
  return how;
}

bulk_writer::sent bulk_writer::send_piece(bulk_job& job) {
  pipelined_read& read = *job.whole;
  const cl_int status = true_status(api_, job.event, job.status, job.verify);
  bool send;
  {
    // The bulk stream's writer and the lanes' may each hold a piece of the read.
    std::lock_guard lock(read.mutex);
    if (job.seal) read.pieces_left -= std::min(job.never_enqueued, read.pieces_left - 1);
    // The first failure is the read's; pieces after it are not sent (the
    // client drops what it got of a read that failed).
    if (status != CL_COMPLETE && read.status == CL_COMPLETE) read.status = status < 0 ? status : CL_INVALID_VALUE;
    send = read.status == CL_COMPLETE && job.size > 0;
  }
  sent how = sent::ok;
  if (send) {
    if (read.profiling && job.event) {
      static constexpr cl_profiling_info names[] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                                    CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
      std::array<cl_ulong, 4> piece{};
      for (size_t i = 0; i < 4; ++i)
        api_.clGetEventProfilingInfo(job.event, names[i], sizeof(cl_ulong), &piece[i], nullptr);
      std::lock_guard lock(read.mutex);
      read.add_counters(piece);
    }
    const uint8_t* bytes = read.data.get() + job.piece_offset;
    // The frames keep the whole read's staging (shared with the other pieces) alive.
    const uint64_t last = kept_->keep(read.command, job.whole, bytes, job.piece_offset, job.size, read.size);
    how = send_range(read.command, bytes, job.piece_offset, job.size, read.size);
    kept_->written(last);
  }
  if (job.event) api_.clReleaseEvent(std::exchange(job.event, nullptr));
  command_record r;
  bool last_job;
  {
    std::lock_guard lock(read.mutex);
    last_job = --read.pieces_left == 0;
    if (last_job) {
      r.command = read.command;
      r.status = read.status;
      if (read.profiling && read.status == CL_COMPLETE) r.counters = read.counters;
    }
  }
  // Once, after the last piece, whoever sent it: the completion follows every byte sent.
  if (last_job) control_.push(r);
  job.whole.reset();
  return how;
}

bulk_writer::sent bulk_writer::send_foreign(bulk_job& job) {
  const auto start = std::chrono::steady_clock::now();
  // Kept until the client has it all, as a read's staging is.
  const uint64_t last = kept_->keep(job.command, std::move(job.keeper), job.bytes, 0, job.size, job.size);
  const sent how = send_range(job.command, job.bytes, 0, job.size, job.size);
  kept_->written(last);
  FERRY_TRACE("timeline", "transfer %llu: %llu bytes sent on %s in %lld us", static_cast<unsigned long long>(job.command),
              static_cast<unsigned long long>(job.size), lane_stop_ ? "a bulk lane" : "the bulk stream",
              microseconds_since(start));
  auto after = std::move(job.after_sent);
  job.after_sent = nullptr;
  after();
  return how;
}

void bulk_writer::report(sent how, const std::string& why) {
  if (how == sent::violation && violated_) {
    violated_(violation_);
    return;
  }
  broken_(why);
}

void bulk_writer::run() {
  if (!kept_->resend(fd_, resume_from_, counter_)) {
    broken_("bulk stream write failed while sending again what the client missed");
    return;
  }
  bulk_job job;
  while (lane_stop_ ? jobs_.pop_piece(job, *lane_stop_) : jobs_.pop(job, generation_)) {
    const sent how = job.after_sent ? send_foreign(job) : job.whole ? send_piece(job) : send_read(job);
    if (how != sent::ok) {
      report(how, "bulk stream write failed");
      return;
    }
  }
}

}  // namespace ferry::server
