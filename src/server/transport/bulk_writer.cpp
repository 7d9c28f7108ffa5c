#include "server/transport/bulk_writer.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <cstring>
#include <vector>

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

void bulk_outbox::push(bulk_job&& job) {
  // Never calls OpenCL (native callbacks push here); after close() jobs wait
  // for the destructor.
  std::lock_guard lock(mutex_);
  jobs_.push_back(std::move(job));
  if (!closed_) ready_.notify_one();
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

uint64_t bulk_outbox::keep(uint64_t transfer, staging_ptr data, uint64_t size) {
  std::lock_guard lock(kept_mutex_);
  kept_transfer k;
  k.first_frame = frames_kept_ + 1;
  k.frames = bulk_frames(size);
  k.transfer = transfer;
  k.data = std::move(data);
  k.size = size;
  frames_kept_ += k.frames;
  kept_.push_back(std::move(k));
  return frames_kept_;
}

void bulk_outbox::take_done(std::deque<kept_transfer>& done) {
  const uint64_t through = std::min(frames_acknowledged_, frames_written_);
  while (!kept_.empty() && kept_.front().first_frame + kept_.front().frames - 1 <= through) {
    done.push_back(std::move(kept_.front()));
    kept_.pop_front();
  }
}

void bulk_outbox::written(uint64_t frame) {
  std::deque<kept_transfer> done;  // freed outside the lock
  std::lock_guard lock(kept_mutex_);
  frames_written_ = std::max(frames_written_, frame);
  take_done(done);
}

bool bulk_outbox::acknowledge(uint64_t received) {
  std::deque<kept_transfer> done;  // freed outside the lock
  std::lock_guard lock(kept_mutex_);
  if (received > frames_kept_) return false;
  frames_acknowledged_ = std::max(frames_acknowledged_, received);
  take_done(done);
  return true;
}

bool bulk_outbox::resend(stream* fd, uint64_t received, link_counter* counter) {
  std::lock_guard lock(kept_mutex_);
  // Frames acknowledged before are gone: a client cannot have lost them.
  if (received > frames_kept_ || received < frames_acknowledged_) return false;
  for (const kept_transfer& k : kept_) {
    const uint64_t last = k.first_frame + k.frames - 1;
    if (last <= received) continue;
    // Frames are max_bulk_chunk bytes each, so the frame says where it starts.
    uint64_t offset = received >= k.first_frame ? (received + 1 - k.first_frame) * protocol::max_bulk_chunk : 0;
    do {
      if (!write_bulk_chunk(fd, k.transfer, k.data.get(), k.size, offset, counter)) return false;
    } while (offset < k.size);
  }
  return true;
}

bool write_bulk_chunk(stream* fd, uint64_t transfer, const uint8_t* data, uint64_t size, uint64_t& offset,
                      link_counter* counter) {
  // Header and prefix go out in the same writev as the chunk they announce.
  uint8_t head[protocol::bulk_head_size];
  uint64_t chunk = std::min<uint64_t>(size - offset, protocol::max_bulk_chunk);
  protocol::store_bulk_head(head, protocol::bulk_data{transfer, offset, size}, chunk);
  iovec pieces[2] = {{head, sizeof head}, {const_cast<uint8_t*>(data) + offset, static_cast<size_t>(chunk)}};
  count_out(counter, 1, sizeof head + chunk);  // before the write (link_counter says why)
  if (!writev_all(fd, pieces, chunk ? 2 : 1)) return false;
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

void bulk_writer::run() {
  if (!jobs_.resend(fd_, resume_from_, counter_)) {
    broken_("bulk stream write failed while sending again what the client missed");
    return;
  }
  bulk_job job;
  while (jobs_.pop(job, generation_)) {
    job.status = true_status(api_, job.event, job.status, job.verify);
    bool sent = true;
    if (job.status == CL_COMPLETE) {
      // Kept until the client has it all: a connection may break on the way.
      const uint8_t* bytes = job.data.get();
      const uint64_t size = job.sent_size();
      const uint64_t last = jobs_.keep(job.command, std::move(job.data), size);
      sent = write_bulk(fd_, job.command, bytes, size, counter_);
      jobs_.written(last);
    }
    job.data.reset();
    command_record r;
    r.command = job.command;
    r.event = std::exchange(job.event, nullptr);
    r.status = job.status;
    r.profiling = job.profiling;
    // Only after the last byte is written: the completion tells the client the data went out first.
    control_.push(r);
    if (!sent) {
      broken_("bulk stream write failed");
      return;
    }
  }
}

}  // namespace ferry::server
