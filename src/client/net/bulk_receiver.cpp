#include "client/net/bulk_receiver.hpp"

#include <cstring>
#include <string>

#include "common/parallel_copy.hpp"
#include "common/thread_name.hpp"
#include "protocol/bulk_head.hpp"

namespace ferry::client {

void bulk_receiver::expect_data(protocol::object_id id, void* destination, uint64_t size, event* e) {
  std::lock_guard lock(transfers_mutex_);
  if (link_.ended) return;  // track() fails the event
  link_.sink().hold(e);
  transfers_.emplace(id, transfer{static_cast<uint8_t*>(destination), size, 0, e, nullptr});
}

bool bulk_receiver::expect_bytes(protocol::object_id id, void* destination, uint64_t size, bytes_done done) {
  std::lock_guard lock(transfers_mutex_);
  if (link_.ended) return false;
  transfers_.emplace(id, transfer{static_cast<uint8_t*>(destination), size, 0, nullptr, std::move(done)});
  return true;
}

bool bulk_receiver::forget_bytes(protocol::object_id id) {
  bytes_done dropped;  // let go of outside the lock
  std::lock_guard lock(transfers_mutex_);
  auto t = transfers_.find(id);
  if (t == transfers_.end() || t->second.owner != nullptr) return false;
  dropped = std::move(t->second.done);
  transfers_.erase(t);
  return true;
}

event* bulk_receiver::abandon(protocol::object_id command) {
  std::lock_guard lock(transfers_mutex_);
  auto t = transfers_.find(command);
  if (t == transfers_.end() || t->second.owner == nullptr) return nullptr;
  event* owner = t->second.owner;
  transfers_.erase(t);
  return owner;
}

std::vector<event*> bulk_receiver::abandon_all() {
  std::vector<event*> owners;
  std::vector<bytes_done> waiters;
  {
    std::lock_guard lock(transfers_mutex_);
    for (auto& [id, t] : transfers_) {
      if (t.owner) owners.push_back(t.owner);
      else waiters.push_back(std::move(t.done));
    }
    transfers_.clear();
  }
  for (auto& done : waiters) done(false);
  return owners;
}

void bulk_receiver::start(stream* from, uint64_t generation, uint32_t lane) {
  readers_.emplace_back([this, from, generation, lane] { read_loop(from, generation, lane); });
}

void bulk_receiver::join() {
  for (std::thread& reader : readers_)
    if (reader.joinable()) reader.join();
  readers_.clear();
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

bool bulk_receiver::arrived(const protocol::bulk_data& prefix, uint64_t chunk, uint32_t lane, event*& owner,
                            bytes_done& done) {
  std::lock_guard lock(transfers_mutex_);
  (lane == 0 ? link_.received_bulk : link_.received_lanes[lane]).fetch_add(1, std::memory_order_release);
  auto it = transfers_.find(prefix.transfer);
  if (it == transfers_.end() || (it->second.received += chunk) != it->second.size) return false;
  owner = it->second.owner;
  done = std::move(it->second.done);
  transfers_.erase(it);
  return true;
}

void bulk_receiver::landed(const protocol::bulk_data& prefix, uint64_t chunk, uint32_t lane) {
  event* owner = nullptr;
  bytes_done done;
  if (!arrived(prefix, chunk, lane, owner, done)) return;
  request_ack_();  // the server keeps the staging of the read until then
  if (owner) {
    link_.sink().part_done(owner, CL_COMPLETE, nullptr);
    link_.sink().release(owner);  // the reference expect_data() took
  } else if (done) {
    done(true);
  }
}

bool bulk_receiver::receive_chunk(stream* from, const protocol::frame_header& h, uint32_t lane, std::string& why) {
  // The header alone tells a frame that can be no chunk: refused before
  // waiting for prefix bytes that need not come.
  if (!protocol::check_bulk_header(h, why)) {
    why = "malformed bulk frame: " + why;
    return false;
  }
  uint8_t head[protocol::bulk_head_size];
  protocol::store_header(head, h);
  if (!read_exact(from, head + protocol::frame_header_size, protocol::bulk_prefix_size)) return false;
  // Decoded and checked as the daemon checks what clients send: a hostile
  // or broken server must not place a chunk outside its read.
  protocol::bulk_data prefix;
  uint64_t chunk = 0;
  if (!protocol::load_bulk_head(head, prefix, chunk, why)) {
    why = "malformed bulk frame: " + why;
    return false;
  }
  uint8_t* destination = destination_of(prefix, chunk, why);
  if (destination == nullptr) return false;
  // A chunk cut in the middle is not counted: it comes again whole.
  if (chunk != 0 && !read_exact(from, destination, chunk)) return false;
  landed(prefix, chunk, lane);
  // A full-size chunk: this stream carries large reads, which a shared window
  // moves faster than the socket (offered once per stream; never on a lane).
  if (lane == 0 && chunk == protocol::max_bulk_chunk && !read_window_decided_ && offer_read_window_) {
    read_window_decided_ = true;
    read_window_ = offer_read_window_(generation_);
  }
  return true;
}

bool bulk_receiver::receive_window_chunk(stream* from, const protocol::frame_header& h, std::string& why) {
  uint8_t payload[window_payload_limit];
  if (h.flags != 0 || h.payload_size > protocol::message_limit(h.message_id) || h.payload_size > sizeof payload) {
    why = "read_window_chunk of " + std::to_string(h.payload_size) + " bytes with flags " + std::to_string(h.flags);
    return false;
  }
  if (!read_exact(from, payload, h.payload_size)) return false;
  protocol::read_window_chunk c;
  const char* error = "";
  if (!protocol::decode_payload(payload, h.payload_size, c, error)) {
    why = std::string("malformed read_window_chunk: ") + error;
    return false;
  }
  if (!read_window_) {
    why = "read_window_chunk without a read window";
    return false;
  }
  if (c.slot >= read_window_->slots() || c.size > read_window_->slot_size()) {
    why = "read_window_chunk of " + std::to_string(c.size) + " bytes in slot " + std::to_string(c.slot) +
          " of a window of " + std::to_string(read_window_->slots()) + " slots of " +
          std::to_string(read_window_->slot_size()) + " bytes";
    return false;
  }
  if (!protocol::check_chunk_place(c.offset, c.size, c.total, why)) return false;
  const protocol::bulk_data prefix{c.transfer, c.offset, c.total};
  uint8_t* destination = destination_of(prefix, c.size, why);
  if (destination == nullptr) return false;
  copy_bytes(destination, read_window_->slot(c.slot), c.size);
  // The slot is the daemon's again once copied: it may be waiting for it.
  read_window_->release_slot();
  landed(prefix, c.size, 0);
  return true;
}

void bulk_receiver::read_loop(stream* from, uint64_t generation, uint32_t lane) {
  name_this_thread(thread_name(lane == 0 ? std::string("bulk") : "lane" + std::to_string(lane) + "-r", link_.name()));
  if (lane == 0) {
    // A new stream: the old one's read window went with it.
    read_window_.reset();
    read_window_decided_ = false;
    generation_ = generation;
  }
  for (;;) {
    uint8_t header[protocol::frame_header_size];
    if (!read_exact(from, header, sizeof header)) break;
    busy_.fetch_add(1, std::memory_order_acq_rel);
    struct not_busy {
      std::atomic<int>& count;
      ~not_busy() { count.fetch_sub(1, std::memory_order_acq_rel); }
    } busy_until_done{busy_};
    const protocol::frame_header h = protocol::load_header(header);
    std::string why;
    bool taken;
    if (h.message_id != static_cast<uint16_t>(protocol::message_id::read_window_chunk))
      taken = receive_chunk(from, h, lane, why);
    else if (lane == 0)
      taken = receive_window_chunk(from, h, why);
    else
      taken = false, why = "read_window_chunk on bulk lane " + std::to_string(lane);
    if (taken) continue;
    if (!why.empty()) {
      link_.end_session(why, CL_DEVICE_NOT_AVAILABLE);
      return;
    }
    break;  // the stream closed inside a frame
  }
  if (!link_.stopping) link_.broken(generation, "bulk stream closed");
}

}  // namespace ferry::client
