// Device copies in blocks, so that the host's side of a transfer (a file, an
// MPI peer) overlaps the copy between host and device: while the host writes
// block i to a file, the device already copies block i + 1 out (reads), or
// the device takes block i while the host reads block i + 1 from the file
// (writes). A ring of `depth` host blocks is reused.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ferry::transfer {

/// Waits for `event` and says how its command ended: CL_SUCCESS, its
/// negative status, or the wait's own error.
cl_int wait_until_ended(cl_event event);
/// Waits for a marker behind a wait list (null: nothing to wait for):
/// CL_SUCCESS, or CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST when the list failed.
cl_int wait_for_marker(cl_event marker);

/// The block size for a transfer of `size` bytes (docs/transfer.md, "Blocks"):
/// FERRY_TRANSFER_BLOCK when set, else the whole transfer up to 1 MiB, and
/// above that a quarter of it within [1 MiB, 4 MiB].
size_t block_size_for(size_t size);
/// FERRY_TRANSFER_BLOCK's value ("4194304", "512K", "4M", "1G"), or 0 when unset or
/// not a size (the reason goes to `why`).
size_t forced_block_size(const char* text, const char** why);

/// Host blocks of one ring, aligned for fast copies.
class block_ring {
 public:
  block_ring(size_t depth, size_t block_size);
  size_t depth() const { return slots_.size(); }
  uint8_t* slot(size_t i) const { return slots_[i % slots_.size()].get(); }
  size_t slot_size(size_t i) const { return sizes_[i % sizes_.size()]; }
  /// Grows slot i to hold at least `size` bytes (its bytes are not kept);
  /// false when the memory cannot be had.
  bool reserve(size_t i, size_t size);

 private:
  struct free_deleter {
    void operator()(uint8_t* p) const;
  };
  std::vector<std::unique_ptr<uint8_t, free_deleter>> slots_;
  std::vector<size_t> sizes_;
};

/// Reads [offset, +size) of `buffer` block by block on `queue`, keeping up
/// to `depth` reads in flight.
class device_reader {
 public:
  device_reader(cl_command_queue queue, cl_mem buffer, size_t offset, size_t size, size_t block, size_t depth = 3);
  ~device_reader();
  device_reader(const device_reader&) = delete;
  device_reader& operator=(const device_reader&) = delete;

  struct piece {
    const uint8_t* data = nullptr;
    size_t size = 0;
    size_t at = 0;  // from the start of the range
  };
  /// The next block once the device has copied it (its slot stays valid
  /// until the next call). False at the end or on an error (`error()`).
  bool next(piece& out);
  cl_int error() const { return error_; }

 private:
  void enqueue(size_t index);

  cl_command_queue queue_;
  cl_mem buffer_;
  size_t offset_, size_, block_;
  block_ring ring_;
  std::vector<cl_event> events_;  // per slot: the read in flight into it, or null
  size_t blocks_ = 0, next_ = 0, enqueued_ = 0;
  cl_int error_ = CL_SUCCESS;
};

/// Writes host blocks into [offset, +size) of `buffer` on `queue`, keeping
/// up to `depth` writes in flight.
class device_writer {
 public:
  device_writer(cl_command_queue queue, cl_mem buffer, size_t offset, size_t size, size_t block, size_t depth = 3);
  ~device_writer();
  device_writer(const device_writer&) = delete;
  device_writer& operator=(const device_writer&) = delete;

  /// A slot of at least `size` bytes for the next block, once the write that
  /// used it before has ended; null on an error (`error()`).
  uint8_t* next_slot(size_t size);
  /// The slot from next_slot holds `size` bytes for the next part of the
  /// range: enqueues their write.
  bool commit(size_t size);
  /// Waits for every write; the first error, or CL_SUCCESS.
  cl_int finish();
  /// Bytes committed so far.
  size_t written() const { return at_; }
  cl_int error() const { return error_; }

 private:
  cl_command_queue queue_;
  cl_mem buffer_;
  size_t offset_, size_;
  block_ring ring_;
  std::vector<cl_event> events_;
  size_t next_ = 0, at_ = 0;
  cl_int error_ = CL_SUCCESS;
};

}  // namespace ferry::transfer
