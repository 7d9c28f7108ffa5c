#include "server/transport/transfer_table.hpp"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <new>
#include <utility>
#include <vector>

#include "common/log.hpp"
#include "protocol/bulk_head.hpp"

namespace ferry::server {

bool transfer_table::byte_ranges::insert(uint64_t begin, uint64_t end) {
  if (begin == end) return true;  // an empty chunk covers nothing
  if (begin < prefix_) return false;
  // The first range after the gap that ends past `begin`: the only one `begin` may fall in or touch.
  auto next = std::upper_bound(rest_.begin(), rest_.end(), begin,
                               [](uint64_t at, const range& r) { return at < r.end; });
  if (next != rest_.end() && next->begin < end) return false;
  const bool joins_next = next != rest_.end() && next->begin == end;
  if (begin == prefix_) {
    // In order (every range after the gap starts past the prefix, so `next` is the first).
    prefix_ = joins_next ? next->end : end;
    if (joins_next) rest_.erase(next);
    return true;
  }
  if (next != rest_.begin() && std::prev(next)->end == begin) {
    auto before = std::prev(next);
    before->end = joins_next ? next->end : end;
    if (joins_next) rest_.erase(next);
    return true;
  }
  if (joins_next) {
    next->begin = begin;
    return true;
  }
  rest_.insert(next, range{begin, end});
  return true;
}

void transfer_table::byte_ranges::erase(uint64_t begin, uint64_t end) {
  if (begin == end) return;
  if (end <= prefix_) {
    if (end < prefix_) rest_.insert(rest_.begin(), range{end, prefix_});
    prefix_ = begin;
    return;
  }
  auto it = std::upper_bound(rest_.begin(), rest_.end(), begin, [](uint64_t at, const range& r) { return at < r.end; });
  if (it == rest_.end() || it->begin > begin || it->end < end) {
    assert(false && "erasing a range that was never inserted");
    return;
  }
  if (it->begin == begin && it->end == end) {
    rest_.erase(it);
  } else if (it->begin == begin) {
    it->begin = end;
  } else if (it->end == end) {
    it->end = begin;
  } else {
    const uint64_t tail = it->end;
    it->end = begin;
    rest_.insert(std::next(it), range{end, tail});
  }
}

uint64_t transfer_table::entry::written_prefix() const {
  if (complete()) return total;
  // A chunk still being read has begun but holds whatever staging held.
  if (in_flight.empty()) return begun.prefix();
  return std::min(begun.prefix(), *std::min_element(in_flight.begin(), in_flight.end()));
}

void transfer_table::report_progress(entry& e) {
  const uint64_t prefix = e.written_prefix();
  // Before the first direct chunk every byte written is in staging.
  if (prefix > 0 && e.staging) e.to->progressed(e.staging.get(), e.direct ? e.staged : prefix, prefix);
}

void transfer_table::settle_refusal(entry& e) {
  if (e.refused == CL_SUCCESS || e.refusal_settled) return;
  e.refusal_settled = true;
  --refused_waiting_;
}

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
  // Only bytes that chunks wrote: staging past them may hold anything
  // (another session's bytes, once recycled).
  const uint64_t prefix = e.written_prefix();
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
  // The readers check this against the prefix (protocol::check_chunk_place);
  // checked again here because the ranges rely on it.
  if (!protocol::chunk_within(offset, size, total)) {
    why = "transfer " + std::to_string(transfer) + ": chunk at " + std::to_string(offset) + " of " +
          std::to_string(size) + " bytes runs past its " + std::to_string(total) + " bytes";
    return false;
  }
  auto [it, created] = entries_.try_emplace(transfer);
  entry& e = it->second;
  if (created || !e.sized)
    FERRY_TRACE("timeline", "transfer %llu: first chunk of %llu bytes", static_cast<unsigned long long>(transfer),
                static_cast<unsigned long long>(total));
  if (created) {
    // Bytes before their command: weighed as the command's own staging would be
    // (executor::claim_bulk), or a client could stage without bound for
    // commands it never sends.
    const cl_int admitted = quota_ ? quota_->admit_transfer(total) : CL_SUCCESS;
    e.total = total;
    if (admitted != CL_SUCCESS) {
      if (refused_waiting_ >= max_refused) {
        why = "more than " + std::to_string(max_refused) +
              " transfers refused over the in-flight quota wait for their command";
        entries_.erase(it);
        return false;
      }
      // A tombstone: its bytes are dropped and its claim fails with the quota's error.
      e.refused = admitted;
      e.drop = true;
      ++refused_waiting_;
    } else if (!allocate(e)) {
      why = "cannot allocate " + std::to_string(total) + " bytes of staging for transfer " + std::to_string(transfer);
      entries_.erase(it);
      return false;
    }
  } else if (!e.sized) {
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
    if (e.abandoned || (e.aborted != CL_SUCCESS && !e.claimed)) {
      // Its command failed, or will fail at once: no one reads these bytes.
      e.drop = true;
    } else if (!allocate(e)) {
      why = "cannot allocate " + std::to_string(total) + " bytes of staging for transfer " + std::to_string(transfer);
      e.sized = false;
      return give_up();
    }
  } else if (e.total != total) {
    why = "transfer " + std::to_string(transfer) + " announced " + std::to_string(total) + " bytes, earlier " +
          std::to_string(e.total);
    return false;
  }
  // Whether the chunks so far are exactly [0, offset): then staging holds
  // every byte before this chunk once they end.
  const bool follows_prefix = e.begun.gaps() == 0 && e.begun.prefix() == offset;
  // Each byte comes once. A second chunk over the same bytes would let the
  // count reach `total` while other bytes were never written.
  if (!e.begun.insert(offset, offset + size)) {
    why = "transfer " + std::to_string(transfer) + ": chunk at " + std::to_string(offset) + " of " +
          std::to_string(size) + " bytes overlaps bytes already sent";
    return false;
  }
  if (e.begun.gaps() > max_gaps) {
    e.begun.erase(offset, offset + size);
    why = "transfer " + std::to_string(transfer) + ": chunks scattered over more than " + std::to_string(max_gaps) +
          " ranges";
    return false;
  }
  // A landing takes its first chunk when the chunks so far are exactly
  // [0, offset), so that staging holds a whole prefix; once it has, every
  // later one, in any order (bulk lanes bring them so): each lies past that
  // prefix, which every chunk before had begun. (Abandoned bytes go to
  // staging, or nowhere, to be dropped.)
  uint8_t* direct_to = nullptr;
  if (e.to && !e.abandoned && !e.drop && (e.direct || follows_prefix)) {
    direct_to = e.to->direct(offset, size);
    if (direct_to) {
      if (!e.direct) e.staged = offset;
      e.direct = true;
    } else if (e.direct) {
      e.begun.erase(offset, offset + size);
      why = "transfer " + std::to_string(transfer) + ": its destination stopped taking chunks";
      return false;
    }
  }
  if (size != 0) {
    e.in_flight.push_back(offset);
  }
  destination = direct_to ? direct_to : e.drop ? nullptr : e.staging.get() + offset;
  return true;
}

void transfer_table::abandon_chunk(uint64_t transfer, uint64_t offset, uint64_t size) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(transfer);
  // (A chunk of no bytes was never in flight, nor is one not begun.)
  if (it == entries_.end() || size == 0 || !forget_in_flight(it->second, offset)) return;
  it->second.begun.erase(offset, offset + size);
}

bool transfer_table::forget_in_flight(entry& e, uint64_t offset) {
  auto at = std::find(e.in_flight.begin(), e.in_flight.end(), offset);
  if (at == e.in_flight.end()) return false;
  e.in_flight.erase(at);
  return true;
}

bool transfer_table::end_chunk(uint64_t transfer, uint64_t offset, uint64_t size) {
  entry finished;
  bool drop = false;
  std::shared_ptr<landing> landed, failed;
  cl_int failure = CL_SUCCESS;
  uint8_t* data = nullptr;
  uint64_t staged = 0, total = 0;
  std::vector<cl_event> open;
  bool complete = false;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(transfer);
    if (it == entries_.end()) return false;
    entry& e = it->second;
    e.received += size;
    if (size != 0) forget_in_flight(e, offset);
    take_pieces(e, false, open);
    if (e.to && !e.complete() && !e.abandoned) report_progress(e);
    if (e.fail_after_chunk && !e.direct_chunk_in_flight()) {
      // The abort that came during this chunk.
      e.fail_after_chunk = false;
      failed = std::move(e.to);
      failure = e.aborted;
    }
    complete = e.complete();
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
  if (landed) {
    FERRY_TRACE("timeline", "transfer %llu: every byte is here, %llu through staging",
                static_cast<unsigned long long>(transfer), static_cast<unsigned long long>(staged));
    landed->landed(data, staged, total);
  }
  if (drop) destroy(finished);
  return complete;
}

transfer_table::claim_result transfer_table::claim(uint64_t transfer, uint64_t total, uint8_t*& data,
                                                   cl_int& status, std::string& why) {
  entry finished;
  {
    std::lock_guard lock(mutex_);
    auto [it, created] = entries_.try_emplace(transfer);
    entry& e = it->second;
    if (created || e.refused == CL_SUCCESS || e.claimed) {
      if (created) {
        e.total = total;
        if (!allocate(e)) {
          entries_.erase(it);
          return claim_result::no_memory;
        }
      } else if (e.claimed || !e.sized || e.drop) {
        // (Unclaimed bytes that are dropped belong to an aborted migration.)
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
    // Its bytes came first and the quota refused them: the command fails as
    // if the quota had refused it here. The tombstone goes once its bytes
    // stop arriving.
    status = e.refused;
    settle_refusal(e);
    e.claimed = true;
    if (!e.complete()) {
      e.abandoned = true;
      return claim_result::refused;
    }
    finished = std::move(e);
    entries_.erase(it);
  }
  destroy(finished);
  return claim_result::refused;
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
    } else if (e.refused != CL_SUCCESS && !e.claimed) {
      status = e.refused;
      result = claim_result::refused;
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
    settle_refusal(e);
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
      report_progress(e);
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
    // A refused transfer's command came and failed before claiming it.
    settle_refusal(it->second);
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

bool transfer_table::wait_complete(uint64_t transfer, uint8_t*& data, uint64_t& total, cl_int& status) {
  entry finished;
  {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (aborted_ || (connection_lost_ && std::chrono::steady_clock::now() >= lost_deadline_)) return false;
      auto it = entries_.find(transfer);
      if (it != entries_.end() && it->second.complete() && !it->second.claimed) {
        entry& e = it->second;
        if (!e.drop) {
          e.claimed = true;
          data = e.staging.get();
          total = e.total;
          status = CL_SUCCESS;
          return true;
        }
        // Refused by the quota (or aborted): there are no bytes to take.
        status = e.refused != CL_SUCCESS ? e.refused : e.aborted != CL_SUCCESS ? e.aborted : CL_INVALID_VALUE;
        settle_refusal(e);
        finished = std::move(e);
        entries_.erase(it);
        break;
      }
      if (connection_lost_) completed_.wait_until(lock, lost_deadline_);
      else completed_.wait(lock);
    }
  }
  destroy(finished);
  return true;
}

void transfer_table::erase(uint64_t transfer) {
  entry finished;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(transfer);
    if (it == entries_.end()) return;
    settle_refusal(it->second);
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

bool transfer_table::aborted() const {
  std::lock_guard lock(mutex_);
  return aborted_;
}

void transfer_table::connection_lost_until(std::chrono::steady_clock::time_point deadline) {
  std::lock_guard lock(mutex_);
  if (connection_lost_) return;  // the first break's deadline holds
  connection_lost_ = true;
  lost_deadline_ = deadline;
  completed_.notify_all();
}

void transfer_table::connection_back() {
  std::lock_guard lock(mutex_);
  connection_lost_ = false;
}

bool transfer_table::waits_give_up() const {
  std::lock_guard lock(mutex_);
  return aborted_ || (connection_lost_ && std::chrono::steady_clock::now() >= lost_deadline_);
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
    refused_waiting_ = 0;
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
