#include "client/net/bulk_lane.hpp"

#include <algorithm>
#include <string>

#include "client/net/bulk_sender.hpp"
#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "protocol/limits.hpp"

namespace ferry::client {

bool stripe::take(uint64_t& offset, uint64_t& chunk) {
  const uint64_t index = next_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t chunks = (size + protocol::max_bulk_chunk - 1) / protocol::max_bulk_chunk;
  if (index >= chunks) return false;
  offset = index * protocol::max_bulk_chunk;
  chunk = std::min<uint64_t>(size - offset, protocol::max_bulk_chunk);
  return true;
}

bulk_lane::~bulk_lane() {
  {
    std::lock_guard lock(job_mutex_);
    stop_ = true;
  }
  job_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void bulk_lane::start(stripe& s) {
  {
    std::lock_guard lock(job_mutex_);
    job_ = &s;
    busy_ = true;
    last_ = 0;
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  job_cv_.notify_all();
}

uint64_t bulk_lane::finish() {
  std::unique_lock lock(job_mutex_);
  job_cv_.wait(lock, [&] { return !busy_; });
  job_ = nullptr;
  return last_;
}

void bulk_lane::run() {
  name_this_thread(thread_name("lane" + std::to_string(index_), link_.name()));
  std::unique_lock jobs(job_mutex_);
  for (;;) {
    job_cv_.wait(jobs, [&] { return stop_ || (busy_ && job_ != nullptr); });
    if (stop_) return;
    stripe& s = *job_;
    jobs.unlock();
    uint64_t last = 0;
    {
      std::lock_guard sending(send_mutex_);
      // Written only while these are the current streams and they have this
      // lane; otherwise kept for the resumption, which sends them on it.
      bool writing = link_.alive.load(std::memory_order_acquire) && s.generation == link_.generation() &&
                     index_ < link_.lane_count();
      uint64_t offset = 0, chunk = 0;
      while (s.take(offset, chunk)) writing = send_chunk(s, offset, chunk, writing, last);
    }
    if (last != 0) log_.end_transfer(s.transfer);  // this lane's share may end before the transfer does
    jobs.lock();
    last_ = last;
    busy_ = false;
    job_cv_.notify_all();
  }
}

bool bulk_lane::send_chunk(stripe& s, uint64_t offset, uint64_t chunk, bool writing, uint64_t& last) {
  const uint8_t* from = log_.append(s.transfer, offset, s.size, s.bytes + offset, chunk, s.how, s.keeper, s.queue, last);
  if (writing && !write_bulk_frame(link_.lane(index_), s.transfer, offset, s.size, from, chunk)) {
    if (!link_.stopping) link_.broken(s.generation, "cannot send bulk data to server on a bulk lane");
    writing = false;
  }
  log_.written(last);
  return writing;
}

}  // namespace ferry::client
