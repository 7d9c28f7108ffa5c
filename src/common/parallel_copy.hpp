// Large copies of bulk bytes split over a few threads.
//
// Bulk transfers between a client and a daemon on one host, and between two
// daemons on one host, pass through shared-memory windows: the sender copies
// each 8 MiB chunk into a slot, the receiver copies it out. One thread's
// memcpy moves 8.7-9.3 GB/s on the GPU hosts (issue 22), below what the GPU's
// own copies reach (13-15 GB/s for a read), so a window's copies set the pace
// of a large read. A host with cores to spare (common/spare_cores.hpp) splits
// each large copy between the calling thread and a few helpers; a small one
// copies on the calling thread alone, as memcpy would.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace ferry {

class parallel_copy {
 public:
  /// Copies below this size stay on the calling thread: waking a helper
  /// costs tens of microseconds, a 1 MiB copy about a hundred.
  static constexpr size_t split_from = size_t{1} << 20;

  /// `helpers` threads besides each caller; 0 copies on the caller alone.
  explicit parallel_copy(unsigned helpers);
  ~parallel_copy();
  parallel_copy(const parallel_copy&) = delete;
  parallel_copy& operator=(const parallel_copy&) = delete;

  /// memcpy(to, from, size), the ranges not overlapping; returns once every
  /// byte is copied. Safe from any number of threads at once.
  void copy(void* to, const void* from, size_t size);

  unsigned helpers() const { return static_cast<unsigned>(threads_.size()); }

  /// The process's copier: helpers from FERRY_COPY_THREADS (threads in all,
  /// caller included, 1 to 8), else 3 on a host with 16+ hardware threads, 1
  /// with 8+, none below.
  static parallel_copy& shared();
  /// The helpers `shared()` gets on a host with `hardware_threads`, unless
  /// FERRY_COPY_THREADS says otherwise (tests).
  static unsigned default_helpers(unsigned hardware_threads);

 private:
  struct job;
  struct part {
    uint8_t* to;
    const uint8_t* from;
    size_t size;
    job* owner;
  };

  void run();
  /// Takes one queued part of `owner` back (the helpers are busy); false
  /// when none is queued any more.
  bool take_back(job& owner, part& taken);

  std::mutex mutex_;  // guards parts_, stop_
  std::condition_variable ready_;
  std::deque<part> parts_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

/// parallel_copy::shared().copy(to, from, size).
void copy_bytes(void* to, const void* from, size_t size);

}  // namespace ferry
