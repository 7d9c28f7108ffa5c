#include "client/net/bulk_log.hpp"

#include <algorithm>

namespace ferry::client {

const bulk_log::frame& bulk_log::append(protocol::object_id transfer, uint64_t offset, uint64_t total,
                                        const uint8_t* data, uint64_t size, hold how,
                                        std::shared_ptr<const void> keeper, protocol::object_id queue) {
  if (how == hold::borrow && queue != 0) {
    borrowed& b = borrowed_[transfer];
    b.queue = queue;
    if (b.settled) how = hold::copy;  // its command ended already: nothing may point into the memory
  }
  frame& f = frames_.emplace_back();
  f.number = ++sent_;
  f.transfer = transfer;
  f.offset = offset;
  f.total = total;
  f.size = size;
  if (how == hold::copy && size != 0) {
    f.copy.assign(data, data + size);
    f.data = f.copy.data();
  } else {
    f.data = data;
    if (how == hold::keep) f.keeper = std::move(keeper);
  }
  if (auto it = borrowed_.find(transfer); it != borrowed_.end()) {
    it->second.last_frame = f.number;
    it->second.whole = size >= total - offset;
  }
  return f;
}

bool bulk_log::acknowledge(uint64_t received) {
  if (received > sent_) return false;
  if (received > acknowledged_) acknowledged_ = received;
  drop_done();
  return true;
}

void bulk_log::written(uint64_t number) {
  if (number > written_) written_ = number;
  drop_done();
}

void bulk_log::drop_done() {
  const uint64_t done = std::min(acknowledged_, written_);
  while (!frames_.empty() && frames_.front().number <= done) frames_.pop_front();
  // A whole borrowed transfer whose frames are all acknowledged borrows
  // nothing any more.
  if (!borrowed_.empty())
    std::erase_if(borrowed_, [&](const auto& entry) { return entry.second.whole && entry.second.last_frame <= done; });
}

void bulk_log::end_transfer(protocol::object_id transfer) {
  auto it = borrowed_.find(transfer);
  if (it == borrowed_.end()) return;
  it->second.whole = true;
  if (it->second.settled) {
    borrowed_.erase(it);  // every frame of it is a copy now, or acknowledged
    return;
  }
  drop_done();
}

protocol::object_id bulk_log::borrowed_queue(protocol::object_id transfer) const {
  auto it = borrowed_.find(transfer);
  return it == borrowed_.end() ? 0 : it->second.queue;
}

uint64_t bulk_log::settle(protocol::object_id queue, protocol::object_id command) {
  return settle_where([&](protocol::object_id transfer, const borrowed& b) {
    return b.queue == queue && transfer <= command;
  });
}

uint64_t bulk_log::settle_all(protocol::object_id command) {
  return settle_where([&](protocol::object_id transfer, const borrowed&) { return transfer <= command; });
}

template <class Which>
uint64_t bulk_log::settle_where(Which&& which) {
  bool any = false;
  for (auto& [transfer, b] : borrowed_) {
    if (!b.settled && which(transfer, b)) {
      b.settled = true;
      any = true;
    }
  }
  if (!any) return 0;
  uint64_t copied = 0;
  for (frame& f : frames_) {
    if (f.size == 0 || !f.copy.empty() || f.keeper) continue;
    auto it = borrowed_.find(f.transfer);
    if (it == borrowed_.end() || !it->second.settled) continue;
    f.copy.assign(f.data, f.data + f.size);
    f.data = f.copy.data();
    copied += f.size;
  }
  // Settled and whole: every frame is a copy now, or acknowledged.
  std::erase_if(borrowed_, [](const auto& entry) { return entry.second.settled && entry.second.whole; });
  return copied;
}

}  // namespace ferry::client
