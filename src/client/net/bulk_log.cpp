#include "client/net/bulk_log.hpp"

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
  while (!frames_.empty() && frames_.front().number <= acknowledged_) frames_.pop_front();
  return true;
}

}  // namespace ferry::client
