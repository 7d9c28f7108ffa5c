#include "client/net/bulk_receiver.hpp"

#include <string>

#include "common/thread_name.hpp"
#include "protocol/bulk_head.hpp"

namespace ferry::client {

void bulk_receiver::expect_data(protocol::object_id id, void* destination, uint64_t size, event* e) {
  std::lock_guard lock(transfers_mutex_);
  if (link_.ended) return;  // track() fails the event
  link_.sink().hold(e);
  transfers_.emplace(id, transfer{static_cast<uint8_t*>(destination), size, 0, e});
}

event* bulk_receiver::abandon(protocol::object_id command) {
  std::lock_guard lock(transfers_mutex_);
  auto t = transfers_.find(command);
  if (t == transfers_.end()) return nullptr;
  event* owner = t->second.owner;
  transfers_.erase(t);
  return owner;
}

std::vector<event*> bulk_receiver::abandon_all() {
  std::vector<event*> owners;
  std::lock_guard lock(transfers_mutex_);
  for (auto& [id, t] : transfers_) owners.push_back(t.owner);
  transfers_.clear();
  return owners;
}

void bulk_receiver::start(stream* from, uint64_t generation) {
  reader_ = std::thread([this, from, generation] { read_loop(from, generation); });
}

void bulk_receiver::join() {
  if (reader_.joinable()) reader_.join();
}

void bulk_receiver::quiesce() const {
  while (busy_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

uint8_t* bulk_receiver::destination_of(const protocol::bulk_data& prefix, uint64_t chunk, std::string& why) {
  std::lock_guard lock(transfers_mutex_);
  auto it = transfers_.find(prefix.transfer);
  if (it == transfers_.end()) {
    why = "bulk data for unknown transfer " + std::to_string(prefix.transfer);
    return nullptr;
  }
  if (prefix.total > it->second.size) {
    // A content-size buffer's read may bring fewer bytes than were asked
    // for, never more.
    why = "bulk data of " + std::to_string(prefix.total) + " bytes for a read of " + std::to_string(it->second.size) +
          " (transfer " + std::to_string(prefix.transfer) + ")";
    return nullptr;
  }
  if (it->second.received > prefix.total || chunk > prefix.total - it->second.received) {
    why = "bulk data beyond the " + std::to_string(prefix.total) + " bytes of transfer " +
          std::to_string(prefix.transfer);
    return nullptr;
  }
  // load_bulk_head checked offset + chunk <= total without overflow.
  it->second.size = prefix.total;
  return it->second.destination + prefix.offset;
}

event* bulk_receiver::arrived(const protocol::bulk_data& prefix, uint64_t chunk) {
  std::lock_guard lock(transfers_mutex_);
  link_.received_bulk.fetch_add(1, std::memory_order_release);
  auto it = transfers_.find(prefix.transfer);
  if (it == transfers_.end() || (it->second.received += chunk) != it->second.size) return nullptr;
  event* done = it->second.owner;
  transfers_.erase(it);
  return done;
}

void bulk_receiver::read_loop(stream* from, uint64_t generation) {
  name_this_thread(thread_name("bulk", link_.name()));
  for (;;) {
    uint8_t head[protocol::bulk_head_size];
    if (!read_exact(from, head, sizeof head)) break;
    busy_.store(1, std::memory_order_release);
    struct not_busy {
      std::atomic<int>& flag;
      ~not_busy() { flag.store(0, std::memory_order_release); }
    } busy_until_done{busy_};
    // Decoded and checked as the daemon checks what clients send: a hostile
    // or broken server must not place a chunk outside its read.
    protocol::bulk_data prefix;
    uint64_t chunk = 0;
    std::string why;
    if (!protocol::load_bulk_head(head, prefix, chunk, why)) {
      link_.end_session("malformed bulk frame: " + why, CL_DEVICE_NOT_AVAILABLE);
      return;
    }
    uint8_t* destination = destination_of(prefix, chunk, why);
    if (destination == nullptr) {
      link_.end_session(why, CL_DEVICE_NOT_AVAILABLE);
      return;
    }
    // A chunk cut in the middle is not counted: it comes again whole.
    if (chunk != 0 && !read_exact(from, destination, chunk)) break;
    if (event* done = arrived(prefix, chunk)) {
      request_ack_();  // the server keeps the staging of the read until then
      link_.sink().part_done(done, CL_COMPLETE, nullptr);
      link_.sink().release(done);  // the reference expect_data() took
    }
  }
  if (!link_.stopping) link_.broken(generation, "bulk stream closed");
}

}  // namespace ferry::client
