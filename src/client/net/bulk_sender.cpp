#include "client/net/bulk_sender.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/log.hpp"
#include "protocol/bulk_head.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/outgoing.hpp"
#include "protocol/version.hpp"

namespace ferry::client {

namespace {

/// Whether large writes to a daemon on a plain Unix socket go through a
/// shared-memory window (FERRY_BULK_WINDOW=0 sends them on the socket, to
/// compare).
bool bulk_windows_enabled() {
  static const bool value = [] {
    const char* text = std::getenv("FERRY_BULK_WINDOW");
    return !(text && std::string(text) == "0");
  }();
  return value;
}

// FERRY_WINDOW_SLOTS (1 to bulk_window::max_slots) overrides the default, for
// measuring; anything else keeps the default and says so once.
uint32_t window_slot_count() {
  static const uint32_t value = [] {
    const char* text = std::getenv("FERRY_WINDOW_SLOTS");
    if (text == nullptr || *text == '\0') return bulk_sender::default_window_slots;
    char* end = nullptr;
    unsigned long n = std::strtoul(text, &end, 10);
    if (*end != '\0' || n < 1 || n > bulk_window::max_slots) {
      FERRY_WARN("net", "FERRY_WINDOW_SLOTS=%s is not a slot count from 1 to %u; using %u", text,
                 bulk_window::max_slots, bulk_sender::default_window_slots);
      return bulk_sender::default_window_slots;
    }
    return static_cast<uint32_t>(n);
  }();
  return value;
}

}  // namespace

bulk_sender::bulk_sender(link_state& link) : link_(link) {
  for (uint32_t lane = 1; lane < protocol::max_bulk_lanes; ++lane)
    lanes_[lane] = std::make_unique<bulk_lane>(link, lane);
}

bool write_bulk_frame(stream* to, protocol::object_id transfer, uint64_t offset, uint64_t total, const uint8_t* data,
                      uint64_t size) {
  uint8_t head[protocol::bulk_head_size];
  protocol::store_bulk_head(head, protocol::bulk_data{transfer, offset, total}, size);
  iovec pieces[2] = {{head, sizeof head}, {const_cast<uint8_t*>(data), size}};
  return writev_all(to, pieces, size ? 2 : 1);
}

bulk_window* bulk_sender::window_for_chunk(uint64_t chunk) {
  if (chunk <= bulk_window::small_chunk) return nullptr;  // small: one socket write costs less than a hand-off
  if (window_decided_) return window_.get();
  // One offer per bulk stream: a resumed session gets a new stream, and a
  // new window with it (forget_window).
  window_decided_ = true;
  stream* s = link_.bulk();
  if (!windows_possible(5)) return nullptr;
  std::string why;
  std::unique_ptr<bulk_window> w = bulk_window::create(window_slot_count(), protocol::max_bulk_chunk, why);
  if (!w) {
    FERRY_WARN("net", "%s: no shared-memory window (%s); large writes go on the socket", link_.name().c_str(),
               why.c_str());
    return nullptr;
  }
  if (!protocol::send_window_offer(s->fd(), protocol::window_offer{window_slot_count(), protocol::max_bulk_chunk}, w->fd()))
    return nullptr;  // the next write finds the stream broken
  FERRY_DEBUG("net", "%s: large writes go through a shared-memory window of %u x %u bytes", link_.name().c_str(),
              window_slot_count(), protocol::max_bulk_chunk);
  window_ = std::move(w);
  return window_.get();
}

bool bulk_sender::windows_possible(uint16_t least) const {
  return bulk_windows_enabled() && link_.version.load(std::memory_order_acquire) >= least &&
         link_.where().type == endpoint::kind::unix_socket && !link_.bulk()->encrypted();
}

std::unique_ptr<bulk_window> bulk_sender::offer_read_window(uint64_t generation) {
  // Under the send mutex: the offer must not fall between a chunk's head and its bytes.
  std::lock_guard lock(send_mutex_);
  if (generation != link_.generation() || !windows_possible(protocol::read_window_version))
    return nullptr;
  std::string why;
  std::unique_ptr<bulk_window> w = bulk_window::create(window_slot_count(), protocol::max_bulk_chunk, why);
  if (!w) {
    FERRY_WARN("net", "%s: no shared-memory read window (%s); large reads come on the socket", link_.name().c_str(),
               why.c_str());
    return nullptr;
  }
  if (!protocol::send_read_window_offer(link_.bulk()->fd(),
                                        protocol::read_window_offer{window_slot_count(), protocol::max_bulk_chunk}, w->fd()))
    return nullptr;  // the stream broke; its reader sees that next
  FERRY_DEBUG("net", "%s: large reads come through a shared-memory window of %u x %u bytes", link_.name().c_str(),
              window_slot_count(), protocol::max_bulk_chunk);
  return w;
}

void bulk_sender::forget_window() {
  window_.reset();
  window_decided_ = false;
}

bool bulk_sender::send_chunk(uint64_t generation, protocol::object_id transfer, uint64_t offset, uint64_t total,
                             const uint8_t* data, uint64_t size) {
  bulk_window* window = window_for_chunk(size);
  if (!window) return write_bulk_frame(link_.bulk(), transfer, offset, total, data, size);
  uint32_t slot = 0;
  // The daemon frees a slot as soon as it has copied it; a daemon that has
  // gone never does, so keep asking whether the streams still live.
  switch (window->fill_next_slot(data, size,
                                 [&] { return !link_.stopping && !link_.ended && generation == link_.generation(); },
                                 slot)) {
    case bulk_window::fill::filled: break;
    case bulk_window::fill::stopped: return false;
    case bulk_window::fill::out_of_turn:
      link_.end_session("the server released bulk window slots that were never filled", CL_DEVICE_NOT_AVAILABLE);
      return false;
  }
  std::vector<uint8_t> frame;
  protocol::append_frame(frame, protocol::window_chunk{transfer, offset, total, slot, size});
  if (!write_all(link_.bulk(), frame.data(), frame.size())) return false;
  window->slot_sent();
  return true;
}

bool bulk_sender::send_logged_chunk(uint64_t generation, protocol::object_id transfer, const uint8_t* bytes,
                                    uint64_t offset, uint64_t chunk, uint64_t size, bulk_log::hold how,
                                    const std::shared_ptr<const void>& keeper, protocol::object_id queue, bool writing,
                                    uint64_t& last) {
  // The bytes stay put until written() says the write is over.
  const uint8_t* from = log_.append(transfer, offset, size, bytes + offset, chunk, how, keeper, queue, last);
  if (writing && !send_chunk(generation, transfer, offset, size, from, chunk)) {
    if (!link_.stopping) link_.broken(generation, "cannot send bulk data to server");
    writing = false;
  }
  log_.written(last);
  return writing;
}

bulk_sender::sent_frames bulk_sender::send_chunks(protocol::object_id transfer, const uint8_t* bytes, uint64_t size,
                                                  bulk_log::hold how, const std::shared_ptr<const void>& keeper,
                                                  protocol::object_id queue) {
  sent_frames last{};
  std::lock_guard lock(send_mutex_);
  // Offline (or once a write fails) the chunks go into the log only; the
  // resumption sends them.
  bool writing = link_.alive.load(std::memory_order_acquire);
  const uint64_t generation = link_.generation();
  const uint32_t lanes = writing ? link_.lane_count() : 1;
  if (lanes > 1 && size >= stripe_from) {
    stripe s;
    s.transfer = transfer;
    s.bytes = bytes;
    s.size = size;
    s.how = how;
    s.keeper = keeper;
    s.queue = queue;
    s.generation = generation;
    for (uint32_t lane = 1; lane < lanes; ++lane) lanes_[lane]->start(s);
    uint64_t offset = 0, chunk = 0;
    while (s.take(offset, chunk))
      writing = send_logged_chunk(generation, transfer, bytes, offset, chunk, size, how, keeper, queue, writing, last[0]);
    if (last[0] != 0) log_.end_transfer(transfer);  // the bulk stream's share may end before the transfer does
    for (uint32_t lane = 1; lane < lanes; ++lane) last[lane] = lanes_[lane]->finish();
    return last;
  }
  uint64_t offset = 0;
  do {
    const uint64_t chunk = std::min<uint64_t>(size - offset, protocol::max_bulk_chunk);
    writing = send_logged_chunk(generation, transfer, bytes, offset, chunk, size, how, keeper, queue, writing, last[0]);
    offset += chunk;
  } while (offset < size);
  return last;
}

bool bulk_sender::over(uint64_t epoch) const {
  return link_.ended || link_.stopping || link_.epoch.load(std::memory_order_acquire) != epoch;
}

bool bulk_sender::send_data(protocol::object_id transfer, const void* data, uint64_t size, bytes_lifetime lifetime,
                            protocol::object_id queue) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  const uint64_t epoch = link_.epoch.load(std::memory_order_acquire);
  if (size <= bulk_log::copy_limit) {
    send_chunks(transfer, bytes, size, bulk_log::hold::copy, nullptr, 0);
    return !over(epoch);
  }
  if (lifetime == bytes_lifetime::until_completion) {
    send_chunks(transfer, bytes, size, bulk_log::hold::borrow, nullptr, queue);
    return !over(epoch);
  }
  // The logs point into the caller's memory: keep it until the server has it.
  const sent_frames last = send_chunks(transfer, bytes, size, bulk_log::hold::borrow, nullptr, 0);
  log_.wait_acknowledged(last[0], [&] { return over(epoch); });
  for (uint32_t lane = 1; lane < protocol::max_bulk_lanes; ++lane)
    if (last[lane] != 0) lanes_[lane]->log().wait_acknowledged(last[lane], [&] { return over(epoch); });
  return !over(epoch);
}

bool bulk_sender::send_data(protocol::object_id transfer, std::vector<uint8_t> bytes) {
  const uint64_t epoch = link_.epoch.load(std::memory_order_acquire);
  auto keeper = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  send_chunks(transfer, keeper->data(), keeper->size(), bulk_log::hold::keep, keeper, 0);
  return !over(epoch);
}

bool bulk_sender::acknowledge(uint64_t received) { return log_.acknowledge(received); }

bool bulk_sender::acknowledge_lanes(const std::vector<uint64_t>& received) {
  if (received.size() >= protocol::max_bulk_lanes) return false;
  for (size_t i = 0; i < received.size(); ++i)
    if (!lanes_[i + 1]->log().acknowledge(received[i])) return false;
  return true;
}

void bulk_sender::settle_borrowed(protocol::object_id queue, protocol::object_id command, cl_int status) {
  uint64_t copied = log_.settle_borrowed(queue, command, status);
  for (uint32_t lane = 1; lane < protocol::max_bulk_lanes; ++lane)
    copied += lanes_[lane]->log().settle_borrowed(queue, command, status);
  if (copied)
    FERRY_DEBUG("net", "%s: command %llu completed before the server had %llu bytes of its queue's writes; copied them",
                link_.name().c_str(), static_cast<unsigned long long>(command),
                static_cast<unsigned long long>(copied));
}

void bulk_sender::wake_waiters() {
  log_.wake_waiters();
  for (uint32_t lane = 1; lane < protocol::max_bulk_lanes; ++lane) lanes_[lane]->log().wake_waiters();
}

}  // namespace ferry::client
