#include "transfer/block_pipeline.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <algorithm>
#include <limits>

namespace ferry::transfer {
namespace {

// Blocks of a few MiB stay in the CPU's cache between the two copies (the
// file's into the block, the block's into the device) and cost few page
// faults; larger ones lost up to four times the bandwidth on PoCL (256 MiB
// file -> buffer: 7.4 GB/s with 4 MiB blocks, 3.4 with 16, 1.7 with 64).
constexpr size_t whole_up_to = size_t{1} << 20;
constexpr size_t least_block = size_t{1} << 20;
constexpr size_t most_block = size_t{4} << 20;
constexpr size_t blocks_aimed_at = 4;

uint8_t* aligned_block(size_t size) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, std::max<size_t>(size, 1)) != 0) return nullptr;
  return static_cast<uint8_t*>(p);
}

}  // namespace

cl_int wait_until_ended(cl_event event) {
  cl_int status = CL_COMPLETE;
  const cl_int rc = clWaitForEvents(1, &event);
  if (rc == CL_SUCCESS) clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  return status < 0 ? status : rc;
}

cl_int wait_for_marker(cl_event marker) {
  if (marker == nullptr) return CL_SUCCESS;
  return wait_until_ended(marker) == CL_SUCCESS ? CL_SUCCESS : CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
}

size_t forced_block_size(const char* text, const char** why) {
  if (text == nullptr || *text == '\0') return 0;
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  unsigned long long scale = 1;
  if (end != nullptr && *end != '\0') {
    switch (*end) {
      case 'k': case 'K': scale = 1ull << 10; break;
      case 'm': case 'M': scale = 1ull << 20; break;
      case 'g': case 'G': scale = 1ull << 30; break;
      default: scale = 0;
    }
    if (scale != 0 && end[1] != '\0') scale = 0;
  }
  if (end == text || errno != 0 || scale == 0 || *text == '-' || value == 0 ||
      value > std::numeric_limits<size_t>::max() / scale) {
    if (why) *why = "FERRY_TRANSFER_BLOCK is not a size in bytes (e.g. 4194304, 512K, 4M); using the rule";
    return 0;
  }
  return static_cast<size_t>(value * scale);
}

size_t block_size_for(size_t size) {
  static const size_t forced = forced_block_size(std::getenv("FERRY_TRANSFER_BLOCK"), nullptr);
  if (forced != 0) return forced;
  if (size <= whole_up_to) return std::max<size_t>(size, 1);
  return std::clamp(size / blocks_aimed_at, least_block, most_block);
}

void block_ring::free_deleter::operator()(uint8_t* p) const { std::free(p); }

block_ring::block_ring(size_t depth, size_t block_size) : sizes_(depth, block_size) {
  slots_.reserve(depth);
  for (size_t i = 0; i < depth; ++i) slots_.emplace_back(aligned_block(block_size));
}

bool block_ring::reserve(size_t i, size_t size) {
  i %= slots_.size();
  if (size <= sizes_[i] && slots_[i]) return true;
  slots_[i].reset(aligned_block(size));
  sizes_[i] = slots_[i] ? size : 0;
  return slots_[i] != nullptr;
}

// ---------------------------------------------------------------------------

device_reader::device_reader(cl_command_queue queue, cl_mem buffer, size_t offset, size_t size, size_t block,
                             size_t depth)
    : queue_(queue), buffer_(buffer), offset_(offset), size_(size), block_(std::max<size_t>(block, 1)),
      ring_(std::min(depth, std::max<size_t>((size + block_ - 1) / block_, 1)), block_), events_(ring_.depth()) {
  blocks_ = (size_ + block_ - 1) / block_;
  for (size_t i = 0; i < ring_.depth(); ++i) {
    if (ring_.slot(i) == nullptr) error_ = CL_OUT_OF_HOST_MEMORY;
  }
  for (size_t i = 0; i < ring_.depth() && i < blocks_ && error_ == CL_SUCCESS; ++i) enqueue(i);
  clFlush(queue_);
}

device_reader::~device_reader() {
  // Reads still in flight write into the ring: they end before it is freed.
  for (cl_event& e : events_) {
    if (e == nullptr) continue;
    clWaitForEvents(1, &e);
    clReleaseEvent(e);
  }
}

void device_reader::enqueue(size_t index) {
  const size_t at = index * block_;
  const size_t n = std::min(block_, size_ - at);
  cl_event& e = events_[index % events_.size()];
  const cl_int rc =
      clEnqueueReadBuffer(queue_, buffer_, CL_FALSE, offset_ + at, n, ring_.slot(index), 0, nullptr, &e);
  if (rc != CL_SUCCESS) {
    e = nullptr;
    error_ = rc;
    return;
  }
  ++enqueued_;
}

bool device_reader::next(piece& out) {
  if (error_ != CL_SUCCESS || next_ >= blocks_) return false;
  // The slot handed out last time is free again: refill it with the block one ring ahead.
  if (next_ > 0 && enqueued_ < blocks_) {
    enqueue(enqueued_);
    clFlush(queue_);
    if (error_ != CL_SUCCESS) return false;
  }
  cl_event& e = events_[next_ % events_.size()];
  const cl_int ended = wait_until_ended(e);
  clReleaseEvent(e);
  e = nullptr;
  if (ended != CL_SUCCESS) {
    error_ = ended;
    return false;
  }
  out.at = next_ * block_;
  out.size = std::min(block_, size_ - out.at);
  out.data = ring_.slot(next_);
  ++next_;
  return true;
}

// ---------------------------------------------------------------------------

device_writer::device_writer(cl_command_queue queue, cl_mem buffer, size_t offset, size_t size, size_t block,
                             size_t depth)
    : queue_(queue), buffer_(buffer), offset_(offset), size_(size),
      ring_(std::min(depth, std::max<size_t>((size + std::max<size_t>(block, 1) - 1) / std::max<size_t>(block, 1), 1)),
            std::max<size_t>(block, 1)),
      events_(ring_.depth()) {
  for (size_t i = 0; i < ring_.depth(); ++i)
    if (ring_.slot(i) == nullptr) error_ = CL_OUT_OF_HOST_MEMORY;
}

device_writer::~device_writer() { finish(); }

uint8_t* device_writer::next_slot(size_t size) {
  if (error_ != CL_SUCCESS) return nullptr;
  cl_event& e = events_[next_ % events_.size()];
  if (e != nullptr) {
    const cl_int ended = wait_until_ended(e);
    clReleaseEvent(e);
    e = nullptr;
    if (ended != CL_SUCCESS) {
      error_ = ended;
      return nullptr;
    }
  }
  // A piece larger than a block (a host's single MPI message) gets a slot
  // of its size; the write that used the slot before has ended.
  if (!ring_.reserve(next_, size)) {
    error_ = CL_OUT_OF_HOST_MEMORY;
    return nullptr;
  }
  return ring_.slot(next_);
}

bool device_writer::commit(size_t size) {
  if (error_ != CL_SUCCESS) return false;
  if (size > size_ - at_ || size > ring_.slot_size(next_)) {
    error_ = CL_INVALID_VALUE;
    return false;
  }
  if (size == 0) return true;
  cl_event& e = events_[next_ % events_.size()];
  const cl_int rc =
      clEnqueueWriteBuffer(queue_, buffer_, CL_FALSE, offset_ + at_, size, ring_.slot(next_), 0, nullptr, &e);
  if (rc != CL_SUCCESS) {
    e = nullptr;
    error_ = rc;
    return false;
  }
  clFlush(queue_);
  at_ += size;
  ++next_;
  return true;
}

cl_int device_writer::finish() {
  for (cl_event& e : events_) {
    if (e == nullptr) continue;
    const cl_int ended = wait_until_ended(e);
    clReleaseEvent(e);
    e = nullptr;
    if (error_ == CL_SUCCESS) error_ = ended;
  }
  return error_;
}

}  // namespace ferry::transfer
