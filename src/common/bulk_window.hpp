// A bulk window: shared memory between a client and a daemon on the same
// host, so that a large write's bytes need not pass through a socket.
//
// One loopback stream moves 3-4 GB/s (TCP) or a little more (a Unix socket),
// well below what a host can copy or a GPU can take. A client whose bulk
// stream is a plain Unix socket therefore makes a memfd of a few slots, hands
// it over the socket (SCM_RIGHTS, message bulk_window), copies each large
// chunk into a free slot and sends only bulk_slot{transfer, offset, total,
// slot, size}. The daemon copies the slot into the transfer's staging, as it
// would have read the chunk from the socket, and counts the slot released.
//
// Slots are used round robin in the order their frames are sent, and the
// daemon's bulk reader handles frames in order, so one counter says which
// slots are free: `released`, in the header page, written only by the
// daemon. The client sleeps on it with a futex (the mapping is shared, so
// the futex is too). The daemon trusts nothing it reads from the window
// except the bytes it copies: slot numbers and sizes come from the frame,
// and the memfd must be sealed against shrinking, so the client cannot make
// a mapped page vanish under the daemon's copy (SIGBUS).
//
// Version 8 adds a second window for reads, the other way round: the client
// still makes and seals the memfd (read_window_offer), but the daemon fills
// the slots (wait_for_slot, slot_sent) and the client releases them
// (release_slot) once it has copied a chunk out. The daemon then reads the
// counter the client writes: it waits for it in bounded steps, and a count
// beyond what was sent (releases_in_range) is a client breaking the rules.
// "Client's side" and "daemon's side" below are those of the write window;
// a read window swaps them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/socket.hpp"

namespace ferry {

class bulk_window {
 public:
  /// What precedes the slots: the counter, on a page of its own.
  static constexpr uint64_t header_size = 4096;
  /// Chunks up to about this size go on the socket whichever way a window
  /// runs (client writes, daemon reads, peer migrations): one socket write
  /// costs less than a copy into a slot and the hand-off of the slot.
  static constexpr uint64_t small_chunk = 64 * 1024;
  /// How long a sender waits for a free slot before it asks whether its
  /// connection still lives (the other side may be gone and free none).
  static constexpr int slot_wait_ms = 100;
  /// The most slots a window may have, and the least and most bytes a slot may hold.
  static constexpr uint32_t max_slots = 16;
  static constexpr uint64_t min_slot_size = 4096;

  /// The client's side: a new sealed memfd of `slots` slots of `slot_size`
  /// bytes, mapped. Null with a reason when the system refuses.
  static std::unique_ptr<bulk_window> create(uint32_t slots, uint64_t slot_size, std::string& why);
  /// The daemon's side: maps a window the client handed over, after checking
  /// that `fd` is a memfd sealed against shrinking and large enough. Null
  /// with a reason otherwise (the client broke the protocol).
  static std::unique_ptr<bulk_window> adopt(unique_fd fd, uint32_t slots, uint64_t slot_size, uint64_t max_slot_size,
                                            std::string& why);
  ~bulk_window();
  bulk_window(const bulk_window&) = delete;
  bulk_window& operator=(const bulk_window&) = delete;

  uint32_t slots() const { return slots_; }
  uint64_t slot_size() const { return slot_size_; }
  uint8_t* slot(uint32_t index) const { return base_ + header_size + index * slot_size_; }
  /// The memfd (the client's side only; the daemon closes it once mapped).
  int fd() const { return fd_.get(); }

  // --- the client's side ---
  /// The slot for the next frame, once the daemon has released it; waits at
  /// most `timeout_ms` (false then: ask whether the connection still lives,
  /// and call again).
  bool wait_for_slot(int timeout_ms, uint32_t& index);
  /// The slot from wait_for_slot is filled and its frame sent.
  void slot_sent() { ++sent_; }
  /// What fill_next_slot did.
  enum class fill { filled, stopped, out_of_turn };
  /// Waits for the next free slot, in steps of slot_wait_ms, asking
  /// `go_on` between steps whether to wait longer (the other side may be
  /// gone and free none), and copies `size` bytes into it. `out_of_turn`:
  /// the other side released slots that were never filled (it wrote the
  /// shared counter out of turn). The caller then sends the slot's frame
  /// and calls slot_sent. Every sender of chunks through a window does this.
  fill fill_next_slot(const uint8_t* data, uint64_t size, const std::function<bool()>& go_on, uint32_t& index);
  /// Whether the other side has released no more slots than were sent: a
  /// count beyond means it wrote the shared counter out of turn.
  bool releases_in_range() const;

  // --- the daemon's side ---
  /// The oldest slot in use has been copied: it is the client's again.
  void release_slot();

 private:
  bulk_window(unique_fd fd, uint8_t* base, uint64_t mapped, uint32_t slots, uint64_t slot_size);
  std::atomic<uint32_t>& released() const;

  unique_fd fd_;
  uint8_t* base_;
  uint64_t mapped_;
  uint32_t slots_;
  uint64_t slot_size_;
  uint32_t sent_ = 0;  // frames the client has sent through the window (the client's side)
};

/// The most descriptors write_with_fds sends, and read_with_fd takes in at once.
inline constexpr size_t max_passed_fds = 4;
/// Writes `data` as one sendmsg that carries the `count` descriptors at
/// `passed` (SCM_RIGHTS, 1 to max_passed_fds) on a Unix socket. False when the
/// peer is gone.
bool write_with_fds(int socket, const void* data, size_t size, const int* passed, size_t count);
inline bool write_with_fd(int socket, const void* data, size_t size, int passed) {
  return write_with_fds(socket, data, size, &passed, 1);
}
/// Reads exactly `size` bytes and the descriptor that came with them (left
/// invalid when none came). False on EOF or error; when several descriptors
/// came, all are closed and `extra` is set.
bool read_with_fd(int socket, void* data, size_t size, unique_fd& received, bool& extra);

}  // namespace ferry
