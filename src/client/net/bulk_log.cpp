#include "client/net/bulk_log.hpp"

#include <algorithm>

namespace ferry::client {

const bulk_log::frame& bulk_log::append(protocol::object_id transfer, uint64_t offset, uint64_t total,
                                        const uint8_t* data, uint64_t size, bool copy) {
  frame& f = frames_.emplace_back();
  f.number = ++sent_;
  f.transfer = transfer;
  f.offset = offset;
  f.total = total;
  f.size = size;
  if (copy && size != 0) {
    f.copy.assign(data, data + size);
    f.data = f.copy.data();
  } else {
    f.data = data;
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
}

}  // namespace ferry::client
