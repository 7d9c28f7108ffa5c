// Buffer contents on their way from the client's bulk stream to a native
// write (or a buffer's initial contents).
//
// The write command travels on the control stream and its bytes on the bulk
// stream, so either may arrive first. Both readers meet here, keyed by the
// transfer id (the command id, or the buffer id for initial contents):
//
//  - bytes first: the bulk reader creates the entry and its staging from the
//    bulk prefix; the command later finds the data complete (write from
//    staging at once) or still arriving (gate the write).
//  - command first: the control reader creates the entry and its staging,
//    enqueues the native write behind a gate and moves on.
//
// Bytes first are weighed against the session's in-flight quota as the
// command's own staging would be (session_quota::admit_transfer). A transfer
// refused there gets no staging: its entry is a tombstone whose bytes are
// read off the stream and dropped, and the command that claims it fails with
// the quota's error (CL_OUT_OF_RESOURCES). Otherwise a client could stage
// without bound for commands it never sends. Bytes that no one will read
// (their command failed, or abort_transfer came, before them) are dropped
// the same way instead of staged.
//
// Each byte of a transfer comes once: the table keeps the ranges whose
// chunks have begun and refuses a chunk that overlaps one of them (a
// protocol violation). Staging is recycled across sessions without being
// cleared (staging.cpp), so the bytes a chunk skipped hold another session's
// data; with no overlap, `received == total` proves that every byte was
// written, and a gate or a landing only ever reads bytes that chunks wrote.
//
// A gate is a native user event that opens once the first `bytes` of the
// transfer are written (attach_piece_gates; a chunk that has begun but is
// still being read does not count): one gate at the transfer's end for a
// whole write, or one per piece for a large write that goes to the device as
// its bytes land. The bulk reader opens gates as chunks end; a failure, an
// abort or teardown fails those still shut.
//
// A migration's destination (migrate_in) claims its transfer "at most": the
// bytes come from another server, and a content-size source may send fewer
// than the command names. When the bytes come after the command, the native
// write cannot be enqueued before their number is known, so the entry keeps a
// `landing` instead of a gate: it may take chunks straight into the
// destination (a mapped buffer) rather than staging, from a chunk that
// follows [0, offset) without a gap (the staged part is then whole), and it
// finishes the write on the thread that received the last byte.
// abort_transfer fails such a claim (or one still to come) with the source's
// status.
//
// Staging lives until the native write has finished with it (write_finished,
// called from the write's completion callback). Guarded by mutex_; gates are
// set outside it because that can run callbacks that come back here.
#pragma once

#include <CL/cl.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/native/api.hpp"
#include "server/session/session_quota.hpp"
#include "server/transport/staging.hpp"

namespace ferry::server {

class transfer_table {
 public:
  /// Staging is charged to the bytes in flight of `quota` (the session's),
  /// if any, which also admits transfers whose bytes come first.
  explicit transfer_table(const native::api& api, session_quota* quota = nullptr)
      : api_(api), quota_(quota), account_(quota ? &quota->in_flight() : nullptr) {}
  ~transfer_table() { clear(); }
  transfer_table(const transfer_table&) = delete;
  transfer_table& operator=(const transfer_table&) = delete;

  // --- bulk reader -------------------------------------------------------

  /// Refused bytes-first transfers whose command has not come yet that a
  /// session may have: each costs an entry, and a client that sends bulk
  /// data forever for commands it never sends must not grow the daemon.
  static constexpr size_t max_refused = 65536;
  /// Ranges apart from the one that starts at 0 that one transfer's chunks
  /// may form: honest senders send in order (one range); each range costs
  /// memory and time that its staging's charge does not cover.
  static constexpr size_t max_gaps = 1024;

  /// Makes room for a chunk of `size` bytes at `offset` of `transfer`
  /// (`total` bytes in all) and returns where to read them to: nullptr when
  /// the caller reads them off the stream and drops them (a transfer that
  /// the quota refused, or whose command failed before its bytes came).
  /// Creates the entry on first sight; bytes first, it weighs `total`
  /// against the quota and allocates staging if admitted. False, with a
  /// reason, when `total` differs from what is known for the transfer, the
  /// chunk runs past it or overlaps bytes already sent, the chunks scatter
  /// into more than max_gaps ranges, more than max_refused refused
  /// transfers wait for their command, or staging cannot be had.
  bool begin_chunk(uint64_t transfer, uint64_t offset, uint64_t size, uint64_t total, uint8_t*& destination,
                   std::string& why);
  /// The chunk at `offset` that begin_chunk reserved has its bytes in place:
  /// gates whose bytes are all in open (CL_COMPLETE). The last one completes
  /// the transfer and wakes waiters; true then.
  bool end_chunk(uint64_t transfer, uint64_t offset, uint64_t size);
  /// The connection broke inside the chunk at `offset` that begin_chunk
  /// reserved: its bytes will come again (a resumed session sends the whole
  /// frame again), so its range is free again.
  void abandon_chunk(uint64_t transfer, uint64_t offset, uint64_t size);

  // --- control reader ----------------------------------------------------

  enum class claim_result {
    complete,  ///< every byte is in staging
    pending,   ///< bytes still to come: gate the write on attach_piece_gates()
    conflict,  ///< claimed twice, or `total` differs from the bulk prefix (why says)
    no_memory, ///< staging could not be allocated
    aborted,   ///< abort_transfer named it first (claim_at_most only)
    refused,   ///< its bytes came first and the quota refused them: fail with `status`
  };
  /// The command that consumes `transfer` arrived, expecting `total` bytes.
  /// `data` points at the staging the native write reads from. `refused`:
  /// the command fails with `status` (CL_OUT_OF_RESOURCES, as for a command
  /// the quota refuses itself); the bytes are dropped.
  claim_result claim(uint64_t transfer, uint64_t total, uint8_t*& data, cl_int& status, std::string& why);
  /// A claim for a transfer of at most `limit` bytes (migrate_in). `complete`:
  /// `data` and `total` are the bytes; `pending`: attach_landing next;
  /// `aborted`, `refused`: `status` is the abort's or the quota's;
  /// `conflict`: claimed twice, or more than `limit` bytes announced. The
  /// bytes of a claim that fails are dropped.
  claim_result claim_at_most(uint64_t transfer, uint64_t limit, uint8_t*& data, uint64_t& total, cl_int& status,
                             std::string& why);
  /// Where a pending claim at most takes its bytes, and what ends it.
  class landing {
   public:
    virtual ~landing() = default;
    /// Where the chunk of `size` bytes at `offset` (of the transfer) may be
    /// received instead of staging, or nullptr. Asked first only when the
    /// chunks so far are exactly [0, offset), so that the staged part is
    /// whole; once it has answered, the rest of the transfer lands there
    /// too, chunk by chunk in any order (each past that part).
    /// Reader thread, table lock held: must not call back into the table.
    virtual uint8_t* direct(uint64_t offset, uint64_t size) = 0;
    /// Every byte is in: `total` in all, the first `staged` of them in
    /// `staging`, the rest where direct() said. On the thread of the last byte.
    virtual void landed(uint8_t* staging, uint64_t staged, uint64_t total) = 0;
    /// The bytes [0, prefix) are written, those below `staged` in
    /// `staging` and the rest where direct() said; for a landing that uses
    /// the bytes piece by piece while the rest is on its way (a CUDA copy to
    /// the device). Called as chunks end (and when it is attached), the
    /// prefix never smaller than before, never after landed() or failed()
    /// (nor for the chunk that completes the transfer). Reader thread,
    /// table lock held: must not call back into the table.
    virtual void progressed(uint8_t* staging, uint64_t staged, uint64_t prefix) {
      (void)staging, (void)staged, (void)prefix;
    }
    /// The transfer failed with `status` (negative); no chunk is being
    /// received into the direct destination any more.
    virtual void failed(cl_int status) = 0;
  };
  /// For a `pending` claim_at_most: `to` takes the bytes from now on.
  /// Returns false when the bytes completed meanwhile: then `data` and
  /// `total` are set, and the caller calls landed(data, total, total) itself.
  bool attach_landing(uint64_t transfer, std::shared_ptr<landing> to, uint8_t*& data, uint64_t& total);
  /// abort_transfer: a claim waiting for `transfer` fails with `status`
  /// (its gates, or landing, fail; returns true then, so that the
  /// caller can sweep for commands a platform does not call back for); a
  /// claim still to come fails at once; bytes of the transfer are dropped.
  bool fail(uint64_t transfer, cl_int status);

  /// A user event that opens once the first `bytes` of a transfer are in.
  struct piece_gate {
    uint64_t bytes;
    cl_event event;  // owned by the table until set
  };
  /// For a `pending` claim: gates that open in turn as the bytes arrive (in
  /// order of `bytes`), so that a large write goes to the device piece by
  /// piece while the rest is still on its way. The table sets and releases
  /// every one (CL_COMPLETE, or a failure's status); those whose bytes are
  /// here already are set before this returns.
  void attach_piece_gates(uint64_t transfer, std::vector<piece_gate> gates);

  /// The command that would consume `transfer` failed: forget the entry once
  /// its bytes stop arriving (bytes that have not started arriving yet are
  /// read off the stream and dropped, never staged, when they do).
  void abandon(uint64_t transfer);
  /// The native write finished (its completion callback): free the staging.
  void write_finished(uint64_t transfer);

  /// Blocks until `transfer` is complete (claiming it), or abort() is called
  /// or the connection is lost (false); used for a buffer's initial contents. `status` CL_SUCCESS: the
  /// caller reads `data` (`total` bytes) and then calls erase(). Otherwise
  /// the bytes were dropped (the quota refused them: CL_OUT_OF_RESOURCES)
  /// and the entry is gone: the creation fails with `status`.
  bool wait_complete(uint64_t transfer, uint8_t*& data, uint64_t& total, cl_int& status);
  void erase(uint64_t transfer);

  /// The session is ending: wakes waiters and fails later waits.
  void abort();
  /// Whether abort() was called (a thread that waits for a landing of its
  /// own looks, so that a session's end never leaves it waiting).
  bool aborted() const;
  /// The client's connection broke: once `deadline` (the end of the
  /// session's grace period) has passed without connection_back(), waits for
  /// bytes give up as abort() makes them (wait_complete returns false; a
  /// landing's waiter looks). Until then bytes already on their way may still
  /// land; after it, none can come before a resumption, which only the
  /// control reader, the thread that waits, could accept.
  void connection_lost_until(std::chrono::steady_clock::time_point deadline);
  /// The session resumed.
  void connection_back();
  /// Whether abort() was called, or the connection was lost past its deadline.
  bool waits_give_up() const;
  /// Fails the gates and landings of writes still waiting for bytes
  /// with `status` (negative), so that no native command waits forever.
  /// Teardown only, once no reader runs.
  void fail_pending(cl_int status);
  /// Frees every entry. Only when neither reader nor native write can touch
  /// staging any more (teardown, after the queues are finished).
  void clear();

  size_t size() const;
  /// Whether bytes or a claim for `transfer` are here already (its staging
  /// is then held, and charged, already, or the quota refused it already).
  bool known(uint64_t transfer) const;

 private:
  /// The byte ranges of a transfer whose chunks have begun: [0, prefix_) and
  /// the ranges after a gap (sorted, disjoint, none touching another or the
  /// prefix). Chunks in order only move prefix_: no allocation.
  class byte_ranges {
   public:
    /// Adds [begin, end); false, adding nothing, when it overlaps a range in.
    bool insert(uint64_t begin, uint64_t end);
    /// Removes [begin, end), which insert() added.
    void erase(uint64_t begin, uint64_t end);
    /// The bytes from 0 that are all in.
    uint64_t prefix() const { return prefix_; }
    /// Ranges after a gap.
    size_t gaps() const { return rest_.size(); }

   private:
    struct range {
      uint64_t begin, end;
    };
    uint64_t prefix_ = 0;
    std::vector<range> rest_;
  };

  struct entry {
    staging_ptr staging;  // null while unsized, and for bytes that are dropped
    uint64_t total = 0;
    uint64_t received = 0;  // bytes of chunks ended
    uint64_t staged = 0;    // with a landing: bytes before the first direct chunk
    byte_ranges begun;      // where the chunks begun lie
    // Where the chunks begun and not ended yet start (one per bulk
    // connection at most): the bytes below the lowest are written.
    std::vector<uint64_t> in_flight;
    bool claimed = false;
    bool write_done = false;
    bool abandoned = false;
    bool sized = true;  // false: abandoned, or claimed at most, before its bytes announced their size
    bool at_most = false;  // claim_at_most: `total` may be anything up to `limit`
    bool drop = false;     // no one will read the bytes: read off the stream, never staged
    uint64_t limit = 0;
    cl_int aborted = CL_SUCCESS;  // negative: abort_transfer's status
    cl_int refused = CL_SUCCESS;  // negative: the quota refused its bytes, which came first
    bool refusal_settled = false;  // a refused entry's claim came (or it was abandoned)
    std::deque<piece_gate> pieces;  // gates still shut, in order of bytes
    std::shared_ptr<landing> to;    // claim_at_most with the bytes still to come
    bool direct = false;            // chunks go where `to` said (since `staged` bytes)
    bool fail_after_chunk = false;  // aborted while a direct chunk was in flight
    bool complete() const { return sized && received == total; }
    bool direct_chunk_in_flight() const { return direct && !in_flight.empty(); }
    /// The bytes from 0 that chunks have written (not merely begun).
    uint64_t written_prefix() const;
  };
  bool allocate(entry& e);
  bool begin_chunk_locked(uint64_t transfer, uint64_t offset, uint64_t size, uint64_t total, uint8_t*& destination,
                          std::string& why, std::vector<cl_event>& to_fail, std::shared_ptr<landing>& dropped);
  /// The chunk at `offset` is no longer being read; false when none was.
  static bool forget_in_flight(entry& e, uint64_t offset);
  /// Tells `e.to` how many bytes from 0 are written (landing::progressed).
  static void report_progress(entry& e);
  /// A refused entry is no longer waiting for its command (claimed, or its
  /// command failed): it stops counting against max_refused.
  void settle_refusal(entry& e);
  void destroy(entry& e);  // fails gates still shut; staging goes with the entry
  /// Moves the gates whose bytes are in (or all of them) from `e` to `out`.
  static void take_pieces(entry& e, bool all, std::vector<cl_event>& out);
  /// Sets each of `gates` to `status` and releases it.
  void set_gates(std::vector<cl_event>& gates, cl_int status);

  const native::api& api_;
  session_quota* const quota_;
  staging_account* const account_;
  mutable std::mutex mutex_;  // guards pool_, entries_, refused_waiting_ and aborted_
  std::condition_variable completed_;
  std::pmr::unsynchronized_pool_resource pool_;  // recycles map nodes
  std::pmr::unordered_map<uint64_t, entry> entries_{&pool_};
  size_t refused_waiting_ = 0;  // refused entries whose command has not come
  bool aborted_ = false;
  bool connection_lost_ = false;
  std::chrono::steady_clock::time_point lost_deadline_{};
};

}  // namespace ferry::server
