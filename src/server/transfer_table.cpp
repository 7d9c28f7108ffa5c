#include "server/transfer_table.hpp"

#include <new>
#include <utility>
#include <vector>

namespace ferry::server {

bool transfer_table::allocate(entry& e) {
  // Not value-initialised: every byte is overwritten by the bulk stream.
  e.staging.reset(acquire_staging(e.total, account_));
  return e.staging != nullptr;
}

void transfer_table::destroy(entry& e) {
  // Never left shut: a native write behind one would wait forever.
  std::vector<cl_event> shut;
  take_pieces(e, true, shut);
  set_gates(shut, CL_DEVICE_NOT_AVAILABLE);
}

void transfer_table::take_pieces(entry& e, bool all, std::vector<cl_event>& out) {
  // Out of order, the bytes received are no prefix: the gates wait for all
  // of them (staging before the last byte may hold anything).
  const uint64_t prefix = e.in_order || e.complete() ? e.received : 0;
  while (!e.pieces.empty() && (all || e.pieces.front().bytes <= prefix)) {
    out.push_back(e.pieces.front().event);
    e.pieces.pop_front();
  }
}

void transfer_table::set_gates(std::vector<cl_event>& gates, cl_int status) {
  for (cl_event gate : gates) {
    api_.clSetUserEventStatus(gate, status);
    api_.clReleaseEvent(gate);
  }
  gates.clear();
}

void transfer_table::attach_piece_gates(uint64_t transfer, std::vector<piece_gate> gates) {
  std::vector<cl_event> open, failed;
  cl_int failure = CL_DEVICE_NOT_AVAILABLE;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(transfer);
    if (it == entries_.end()) {
      for (const piece_gate& g : gates) failed.push_back(g.event);  // not claimed: a bug of ours; fail safe
    } else {
      entry& e = it->second;
      for (const piece_gate& g : gates) e.pieces.push_back(g);
      if (e.abandoned) {
        if (e.aborted != CL_SUCCESS) failure = e.aborted;
        take_pieces(e, true, failed);
      } else {
        take_pieces(e, false, open);
      }
    }
  }
  set_gates(open, CL_COMPLETE);
  set_gates(failed, failure);
}

bool transfer_table::begin_chunk(uint64_t transfer, uint64_t offset, uint64_t size, uint64_t total,
                                 uint8_t*& destination, std::string& why) {
  std::vector<cl_event> to_fail;
  std::shared_ptr<landing> dropped;
  {
    std::lock_guard lock(mutex_);
    if (begin_chunk_locked(transfer, offset, size, total, destination, why, to_fail, dropped)) return true;
  }
  // The command that waits for these bytes cannot take them all.
  set_gates(to_fail, CL_INVALID_VALUE);
  if (dropped) dropped->failed(CL_INVALID_VALUE);
  return false;
}

bool transfer_table::begin_chunk_locked(uint64_t transfer, uint64_t offset, uint64_t size, uint64_t total,
                                        uint8_t*& destination, std::string& why, std::vector<cl_event>& to_fail,
                                        std::shared_ptr<landing>& dropped) {
  auto [it, created] = entries_.try_emplace(transfer);
  entry& e = it->second;
  if (created || !e.sized) {
    auto give_up = [&] {
      // A claim at most waits for these bytes: it fails instead of waiting forever.
      if (!e.abandoned) take_pieces(e, true, to_fail);
      e.abandoned = true;
      dropped = std::move(e.to);
      return false;
    };
    if (e.at_most && total > e.limit) {
      why = "transfer " + std::to_string(transfer) + " announced " + std::to_string(total) +
            " bytes, more than the " + std::to_string(e.limit) + " its command takes";
      return give_up();
    }
    e.total = total;
    e.sized = true;
    if (!allocate(e)) {
      why = "cannot allocate " + std::to_string(total) + " bytes of staging for transfer " + std::to_string(transfer);
      if (e.at_most) {
        e.sized = false;
        return give_up();
      }
      entries_.erase(it);
      return false;
    }
  } else if (e.total != total) {
    why = "transfer " + std::to_string(transfer) + " announced " + std::to_string(total) + " bytes, earlier " +
          std::to_string(e.total);
    return false;
  }
  if (size > e.total - e.reserved) {
    why = "transfer " + std::to_string(transfer) + " carries more than its " + std::to_string(e.total) + " bytes";
    return false;
  }
  // offset + size <= total is checked by the caller against the prefix.
  // A landing takes chunks in order only; once it has, every later one.
  // (Abandoned bytes go to staging, to be dropped.)
  if (e.to && !e.abandoned && (e.direct || offset == e.reserved)) {
    if (offset != e.reserved) {
      why = "transfer " + std::to_string(transfer) + ": chunk at " + std::to_string(offset) +
            " arrived out of order (expected " + std::to_string(e.reserved) + ")";
      return false;
    }
    if (uint8_t* there = e.to->direct(offset, size)) {
      if (!e.direct) e.staged = e.reserved;
      e.direct = true;
      e.reserved += size;
      destination = there;
      return true;
    }
    if (e.direct) {
      why = "transfer " + std::to_string(transfer) + ": its destination stopped taking chunks";
      return false;
    }
  }
  if (offset != e.reserved) e.in_order = false;
  e.reserved += size;
  destination = e.staging.get() + offset;
  return true;
}

void transfer_table::abandon_chunk(uint64_t transfer, uint64_t size) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(transfer);
  if (it == entries_.end() || it->second.reserved < size) return;
  it->second.reserved -= size;
}

void transfer_table::end_chunk(uint64_t transfer, uint64_t size) {
  entry finished;
  bool drop = false;
  std::shared_ptr<landing> landed, failed;
  cl_int failure = CL_SUCCESS;
  uint8_t* data = nullptr;
  uint64_t staged = 0, total = 0;
  std::vector<cl_event> open;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(transfer);
    if (it == entries_.end()) return;
    entry& e = it->second;
    e.received += size;
    take_pieces(e, false, open);
    if (e.fail_after_chunk && !e.direct_chunk_in_flight()) {
      // The abort that came during this chunk.
      e.fail_after_chunk = false;
      failed = std::move(e.to);
      failure = e.aborted;
    }
    const bool complete = e.complete();
    if (complete) completed_.notify_all();
    if (!complete) {
      // Bytes still to come.
    } else if (e.abandoned || e.write_done) {
      finished = std::move(e);
      entries_.erase(it);
      drop = true;
    } else if (e.to) {
      // The claimant enqueues its write now that the size is known; the
      // entry (and its staging) stays until write_finished.
      landed = std::move(e.to);
      data = e.staging.get();
      staged = e.direct ? e.staged : e.total;
      total = e.total;
    }
  }
  set_gates(open, CL_COMPLETE);
  if (failed) failed->failed(failure);
  if (landed) landed->landed(data, staged, total);
  if (drop) destroy(finished);
}

transfer_table::claim_result transfer_table::claim(uint64_t transfer, uint64_t total, uint8_t*& data,
                                                   std::string& why) {
  std::lock_guard lock(mutex_);
  auto [it, created] = entries_.try_emplace(transfer);
  entry& e = it->second;
  if (created) {
    e.total = total;
    if (!allocate(e)) {
      entries_.erase(it);
      return claim_result::no_memory;
    }
  } else if (e.claimed || !e.sized) {
    why = "transfer " + std::to_string(transfer) + " is consumed twice";
    return claim_result::conflict;
  } else if (e.total != total) {
    why = "command expects " + std::to_string(total) + " bytes but transfer " + std::to_string(transfer) +
          " announced " + std::to_string(e.total);
    return claim_result::conflict;
  }
  e.claimed = true;
  data = e.staging.get();
  return e.complete() ? claim_result::complete : claim_result::pending;
}

transfer_table::claim_result transfer_table::claim_at_most(uint64_t transfer, uint64_t limit, uint8_t*& data,
                                                           uint64_t& total, cl_int& status, std::string& why) {
  entry finished;
  claim_result result;
  {
    std::lock_guard lock(mutex_);
    auto [it, created] = entries_.try_emplace(transfer);
    entry& e = it->second;
    if (created) {
      // The bytes have not started: their number is learnt from the first chunk.
      e.sized = false;
      e.at_most = true;
      e.limit = limit;
      e.claimed = true;
      return claim_result::pending;
    }
    if (e.aborted != CL_SUCCESS && !e.claimed) {
      status = e.aborted;
      result = claim_result::aborted;
    } else if (e.claimed || !e.sized) {
      why = "transfer " + std::to_string(transfer) + " is consumed twice";
      return claim_result::conflict;
    } else if (e.total > limit) {
      why = "transfer " + std::to_string(transfer) + " announced " + std::to_string(e.total) +
            " bytes, more than the " + std::to_string(limit) + " its command takes";
      result = claim_result::conflict;
    } else {
      e.claimed = true;
      e.at_most = true;
      e.limit = limit;
      data = e.staging.get();
      total = e.total;
      return e.complete() ? claim_result::complete : claim_result::pending;
    }
    // Refused: drop the bytes, now or once the rest has arrived.
    e.claimed = true;
    if (!e.complete()) {
      e.abandoned = true;
      return result;
    }
    finished = std::move(e);
    entries_.erase(it);
  }
  destroy(finished);
  return result;
}

bool transfer_table::attach_landing(uint64_t transfer, std::shared_ptr<landing> to, uint8_t*& data,
                                    uint64_t& total) {
  cl_int refused = CL_SUCCESS;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(transfer);
    if (it == entries_.end()) return false;  // not claimed: a bug of ours (assert-worthy), caller copes
    entry& e = it->second;
    if (e.abandoned) {
      // Refused by the reader since the claim (more bytes than it takes), or aborted.
      refused = e.aborted != CL_SUCCESS ? e.aborted : CL_INVALID_VALUE;
    } else if (e.complete()) {
      data = e.staging.get();
      total = e.total;
      return false;
    } else {
      e.to = std::move(to);
      return true;
    }
  }
  to->failed(refused);
  return true;
}

bool transfer_table::fail(uint64_t transfer, cl_int status) {
  std::vector<cl_event> shut;
  std::shared_ptr<landing> dropped;
  {
    std::lock_guard lock(mutex_);
    auto [it, created] = entries_.try_emplace(transfer);
    entry& e = it->second;
    if (created) {
      // Its claim is still to come (it fails then); so may be its bytes.
      e.sized = false;
      e.aborted = status;
      return false;
    }
    if (!e.claimed) {
      e.aborted = status;
      return false;
    }
    if (e.complete() || e.abandoned) return false;  // too late, or failed already
    e.aborted = status;
    e.abandoned = true;
    if (e.direct_chunk_in_flight()) {
      // The reader is writing into the landing's memory: it fails it after the chunk.
      e.fail_after_chunk = true;
      return false;
    }
    dropped = std::move(e.to);
    take_pieces(e, true, shut);
  }
  const bool pieces_failed = !shut.empty();
  set_gates(shut, status);
  if (dropped) {
    dropped->failed(status);
    return true;
  }
  return pieces_failed;
}

void transfer_table::abandon(uint64_t transfer) {
  entry finished;
  {
    std::lock_guard lock(mutex_);
    auto [it, created] = entries_.try_emplace(transfer);
    if (created) {
      // A tombstone: its bytes are still to come and are dropped when complete.
      it->second.sized = false;
      it->second.total = 1;  // not complete until begin_chunk learns the size
      it->second.claimed = true;
      it->second.abandoned = true;
      return;
    }
    if (!it->second.complete()) {
      it->second.abandoned = true;
      return;
    }
    finished = std::move(it->second);
    entries_.erase(it);
  }
  destroy(finished);
}

void transfer_table::write_finished(uint64_t transfer) {
  entry finished;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(transfer);
    if (it == entries_.end()) return;
    if (!it->second.complete()) {
      // Failed before its bytes were all in (session teardown): the bulk reader
      // or clear() frees it.
      it->second.write_done = true;
      return;
    }
    finished = std::move(it->second);
    entries_.erase(it);
  }
  destroy(finished);
}

bool transfer_table::wait_complete(uint64_t transfer, uint8_t*& data, uint64_t& total) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (aborted_) return false;
    auto it = entries_.find(transfer);
    if (it != entries_.end() && it->second.complete() && !it->second.claimed) {
      it->second.claimed = true;
      data = it->second.staging.get();
      total = it->second.total;
      return true;
    }
    completed_.wait(lock);
  }
}

void transfer_table::erase(uint64_t transfer) {
  entry finished;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(transfer);
    if (it == entries_.end()) return;
    finished = std::move(it->second);
    entries_.erase(it);
  }
  destroy(finished);
}

void transfer_table::abort() {
  std::lock_guard lock(mutex_);
  aborted_ = true;
  completed_.notify_all();
}

void transfer_table::fail_pending(cl_int status) {
  std::vector<cl_event> shut;
  std::vector<std::shared_ptr<landing>> landings;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, e] : entries_) {
      if (e.complete()) continue;
      if (e.to) landings.push_back(std::move(e.to));
      take_pieces(e, true, shut);
    }
  }
  set_gates(shut, status);
  for (auto& to : landings) to->failed(status);
}

void transfer_table::clear() {
  std::vector<entry> all;
  {
    std::lock_guard lock(mutex_);
    all.reserve(entries_.size());
    for (auto& [id, e] : entries_) all.push_back(std::move(e));
    entries_.clear();
  }
  for (entry& e : all) destroy(e);
}

size_t transfer_table::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

bool transfer_table::known(uint64_t transfer) const {
  std::lock_guard lock(mutex_);
  return entries_.count(transfer) != 0;
}

}  // namespace ferry::server
