#include "cuda/server/registered_staging.hpp"

#include <sys/mman.h>

#include <chrono>

#include "common/elapsed.hpp"
#include "common/log.hpp"

namespace ferry::cuda {

namespace {

/// Blocks come in powers of two from 1 MiB, so that pieces of one size
/// reuse each other's blocks.
size_t capacity_for(size_t size) {
  size_t c = size_t{1} << 20;
  while (c < size) c <<= 1;
  return c;
}

}  // namespace

registered_staging::~registered_staging() {
  // Every block out holds the pool, so all are idle or surplus here; their
  // context may be gone, so they are unmapped without the driver.
  for (auto& [capacity, data] : spare_) unmap({data, capacity});
  for (block b : surplus_) unmap(b);
}

void registered_staging::unmap(block b) { munmap(b.data, b.capacity); }

std::shared_ptr<uint8_t> registered_staging::take(size_t size, CUresult& rc) {
  const size_t capacity = capacity_for(size);
  block b;
  std::vector<block> surplus;
  {
    std::lock_guard lock(mutex_);
    surplus.swap(surplus_);
    if (auto it = spare_.find(capacity); it != spare_.end()) {
      b = {it->second, capacity};
      spare_.erase(it);
      spare_bytes_ -= capacity;
    }
  }
  release(surplus);
  if (b.data == nullptr) {
    void* data = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data == MAP_FAILED) {
      rc = CUDA_ERROR_OUT_OF_MEMORY;
      return nullptr;
    }
    const auto start = std::chrono::steady_clock::now();
    rc = drv_.cuMemHostRegister(data, capacity, 0);
    FERRY_TRACE("timeline", "cuMemHostRegister of %zu bytes for copies back took %lld us", capacity,
                microseconds_since(start));
    if (rc != CUDA_SUCCESS) {
      munmap(data, capacity);
      return nullptr;
    }
    b = {data, capacity};
    std::lock_guard lock(mutex_);
    ++mapped_;
  }
  rc = CUDA_SUCCESS;
  auto self = shared_from_this();
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(b.data), [self, b](uint8_t*) { self->give_back(b); });
}

void registered_staging::give_back(block b) {
  std::lock_guard lock(mutex_);
  if (retired_) {
    // Its context is gone, and with it the pinning.
    unmap(b);
    --mapped_;
  } else if (spare_bytes_ + b.capacity <= spare_limit_) {
    spare_.emplace(b.capacity, b.data);
    spare_bytes_ += b.capacity;
  } else {
    surplus_.push_back(b);
  }
}

void registered_staging::release(std::vector<block>& blocks) {
  for (block b : blocks) {
    drv_.cuMemHostUnregister(b.data);
    unmap(b);
  }
  std::lock_guard lock(mutex_);
  mapped_ -= blocks.size();
  blocks.clear();
}

void registered_staging::retire() {
  std::vector<block> idle;
  {
    std::lock_guard lock(mutex_);
    retired_ = true;
    idle.swap(surplus_);
    for (auto& [capacity, data] : spare_) idle.push_back({data, capacity});
    spare_.clear();
    spare_bytes_ = 0;
  }
  release(idle);
}

size_t registered_staging::spare_bytes() const {
  std::lock_guard lock(mutex_);
  return spare_bytes_;
}

size_t registered_staging::blocks_mapped() const {
  std::lock_guard lock(mutex_);
  return mapped_;
}

}  // namespace ferry::cuda
