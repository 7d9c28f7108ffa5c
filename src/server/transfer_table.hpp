// Buffer contents on their way from the client's bulk stream to a native
// write (or a buffer's initial contents).
//
// The write command travels on the control stream and its bytes on the bulk
// stream, so either may arrive first. Both readers meet here, keyed by the
// transfer id (the command id, or the buffer id for initial contents):
//
//  - bytes first: the bulk reader creates the entry and its staging from the
//    bulk prefix; the command later finds the data complete (write from
//    staging at once) or still arriving (gate the write on a user event).
//  - command first: the control reader creates the entry and its staging,
//    enqueues the native write behind a user event and moves on; the bulk
//    reader completes that event when the last byte lands.
//
// Staging lives until the native write has finished with it (write_finished,
// called from the write's completion callback). Guarded by mutex_; the native
// user event is completed outside it because that can run callbacks that come
// back here.
#pragma once

#include <CL/cl.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <string>
#include <unordered_map>

#include "server/native/api.hpp"
#include "server/staging.hpp"

namespace ferry::server {

class transfer_table {
 public:
  explicit transfer_table(const native::api& api) : api_(api) {}
  ~transfer_table() { clear(); }
  transfer_table(const transfer_table&) = delete;
  transfer_table& operator=(const transfer_table&) = delete;

  // --- bulk reader -------------------------------------------------------

  /// Makes room for a chunk of `size` bytes at `offset` of `transfer`
  /// (`total` bytes in all) and returns where to read them to. Creates the
  /// entry and allocates its staging on first sight. False, with a reason, when
  /// `total` differs from what is known for the transfer, the chunk would
  /// carry more bytes than the transfer has left, or staging cannot be had.
  bool begin_chunk(uint64_t transfer, uint64_t offset, uint64_t size, uint64_t total, uint8_t*& destination,
                   std::string& why);
  /// The chunk's bytes are in place. The last one completes the transfer:
  /// its user event (if a write waits on it) is set CL_COMPLETE, waiters wake.
  void end_chunk(uint64_t transfer, uint64_t size);

  // --- control reader ----------------------------------------------------

  enum class claim_result {
    complete,  ///< every byte is in staging
    pending,   ///< bytes still to come: gate the write on attach_user_event()
    conflict,  ///< claimed twice, or `total` differs from the bulk prefix (why says)
    no_memory, ///< staging could not be allocated
  };
  /// The command that consumes `transfer` arrived, expecting `total` bytes.
  /// `data` points at the staging the native write reads from.
  claim_result claim(uint64_t transfer, uint64_t total, uint8_t*& data, std::string& why);
  /// Hands over a native user event for a `pending` claim; the entry owns it
  /// from now on. Returns false when the last byte landed meanwhile: then the
  /// caller keeps (and releases) the event and writes without waiting.
  bool attach_user_event(uint64_t transfer, cl_event event);
  /// The command that would consume `transfer` failed: forget the entry once
  /// its bytes stop arriving (bytes that have not started arriving yet are
  /// received and dropped when they do).
  void abandon(uint64_t transfer);
  /// The native write finished (its completion callback): free the staging.
  void write_finished(uint64_t transfer);

  /// Blocks until `transfer` is complete (claiming it) or abort() is called;
  /// used for a buffer's initial contents. On success the caller reads `data`
  /// (`total` bytes) and then calls erase().
  bool wait_complete(uint64_t transfer, uint8_t*& data, uint64_t& total);
  void erase(uint64_t transfer);

  /// The session is ending: wakes waiters and fails later waits.
  void abort();
  /// Sets the user events of writes still waiting for bytes to `status`
  /// (negative), so that no native command waits forever. Teardown only.
  void fail_pending_user_events(cl_int status);
  /// Frees every entry. Only when neither reader nor native write can touch
  /// staging any more (teardown, after the queues are finished).
  void clear();

  size_t size() const;

 private:
  struct entry {
    staging_ptr staging;
    uint64_t total = 0;
    uint64_t reserved = 0;  // bytes of chunks begun
    uint64_t received = 0;  // bytes of chunks ended
    bool claimed = false;
    bool write_done = false;
    bool abandoned = false;
    bool sized = true;  // false: abandoned before its bytes announced their size
    cl_event user_event = nullptr;  // owned
    bool complete() const { return received == total; }
  };
  static bool allocate(entry& e);
  void destroy(entry& e);  // releases the user event; staging goes with the entry

  const native::api& api_;
  mutable std::mutex mutex_;  // guards pool_, entries_ and aborted_
  std::condition_variable completed_;
  std::pmr::unsynchronized_pool_resource pool_;  // recycles map nodes
  std::pmr::unordered_map<uint64_t, entry> entries_{&pool_};
  bool aborted_ = false;
};

}  // namespace ferry::server
