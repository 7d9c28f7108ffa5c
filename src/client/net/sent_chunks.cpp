#include "client/net/sent_chunks.hpp"

#include "client/net/bulk_sender.hpp"
#include "client/net/wake_all.hpp"

namespace ferry::client {

const uint8_t* sent_chunks::append(protocol::object_id transfer, uint64_t offset, uint64_t total, const uint8_t* data,
                                   uint64_t size, bulk_log::hold how, const std::shared_ptr<const void>& keeper,
                                   protocol::object_id queue, uint64_t& number) {
  std::lock_guard lock(mutex_);
  const bulk_log::frame& f = log_.append(transfer, offset, total, data, size, how, keeper, queue);
  number = f.number;
  borrowing_.store(log_.borrowing(), std::memory_order_release);
  return f.data;
}

void sent_chunks::written(uint64_t number) {
  std::lock_guard lock(mutex_);
  log_.written(number);
}

void sent_chunks::end_transfer(protocol::object_id transfer) {
  std::lock_guard lock(mutex_);
  log_.end_transfer(transfer);
  borrowing_.store(log_.borrowing(), std::memory_order_release);
}

bool sent_chunks::acknowledge(uint64_t received) {
  {
    // Chunks enter the log before they are written.
    std::lock_guard lock(mutex_);
    if (!log_.acknowledge(received)) return false;
    borrowing_.store(log_.borrowing(), std::memory_order_release);
  }
  acked_cv_.notify_all();
  return true;
}

uint64_t sent_chunks::settle_borrowed(protocol::object_id queue, protocol::object_id command, cl_int status) {
  if (!borrowing_.load(std::memory_order_acquire)) return 0;
  std::lock_guard lock(mutex_);
  if (queue == 0) queue = log_.borrowed_queue(command);
  uint64_t copied = 0;
  if (status < 0)
    copied = log_.settle_all(command);
  else if (queue != 0)
    copied = log_.settle(queue, command);
  borrowing_.store(log_.borrowing(), std::memory_order_release);
  return copied;
}

void sent_chunks::wake_waiters() { wake_all(mutex_, acked_cv_); }

bool sent_chunks::replay_locked(uint64_t received, stream* to) const {
  return log_.replay(received, [&](const bulk_log::frame& f) {
    return write_bulk_frame(to, f.transfer, f.offset, f.total, f.data, f.size);
  });
}

void sent_chunks::reset_locked() {
  log_ = bulk_log{};
  borrowing_ = false;
}

}  // namespace ferry::client
