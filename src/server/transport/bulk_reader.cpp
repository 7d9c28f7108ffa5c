#include "server/transport/bulk_reader.hpp"

#include <sys/socket.h>

#include <cstring>

#include "common/log.hpp"
#include "common/parallel_copy.hpp"
#include "common/socket.hpp"
#include "protocol/bulk_head.hpp"
#include "protocol/codec.hpp"
#include "protocol/frame.hpp"
#include "protocol/messages.hpp"
#include "server/transport/control_writer.hpp"

namespace ferry::server {

namespace p = protocol;

namespace {

// Reads `size` bytes off the stream and drops them: a chunk of a transfer
// that has no staging (refused over the quota, or its command failed). The
// stream must still be read past them to reach the next frame.
bool skip_exact(stream* fd, uint64_t size) {
  uint8_t scratch[16 * 1024];
  while (size > 0) {
    const size_t n = size < sizeof scratch ? static_cast<size_t>(size) : sizeof scratch;
    if (!read_exact(fd, scratch, n)) return false;
    size -= n;
  }
  return true;
}

}  // namespace

bool bulk_reader::receive_chunk(const uint8_t* head, end& how, std::string& why) {
  how = end::violation;
  p::bulk_data prefix;
  uint64_t chunk = 0;
  if (!p::load_bulk_head(head, prefix, chunk, why)) return false;
  const auto [transfer, offset, total] = prefix;
  uint8_t* destination = nullptr;
  // A refusal (overlapping bytes, a wrong total, too many refused transfers)
  // is a violation: the session ends, and the reason is logged.
  if (!transfers_.begin_chunk(transfer, offset, chunk, total, destination, why)) return false;
  if (chunk && !(destination ? read_exact(fd_, destination, chunk) : skip_exact(fd_, chunk))) {
    transfers_.abandon_chunk(transfer, offset, chunk);
    why = "connection closed inside a chunk";
    how = end::closed;
    return false;
  }
  chunk_landed(transfer, offset, chunk, total, head_size + chunk);
  return true;
}

void bulk_reader::chunk_landed(uint64_t transfer, uint64_t offset, uint64_t chunk, uint64_t total,
                               uint64_t frame_bytes) {
  count_in(counter_, 1, frame_bytes);
  // Counted and acknowledged before the chunk ends in the table: ending it
  // may let the write run and complete, and every frame the control writer
  // sends from then on carries an ack that covers these bytes. So a client
  // hears that the server has a write's bytes before it hears that anything
  // they enabled completed, and its replay log can let go of the
  // application's memory first (client/net/bulk_log.hpp, "borrowed").
  if (received_) received_->fetch_add(1, std::memory_order_acq_rel);
  if (acks_ && (ack_each_chunk_ || offset + chunk == total)) acks_->request_ack();
  // The chunk that completes a transfer may come on any of the session's bulk
  // connections (bulk lanes): whichever it is, every connection's count covers
  // the transfer's chunks now, and the client waits to hear all of them. Asked
  // again even when this chunk asked above: that ack may have gone out before
  // another connection counted the transfer's other chunks (its reader then
  // found the transfer unfinished and asked for nothing).
  if (transfers_.end_chunk(transfer, offset, chunk) && acks_) acks_->request_ack();
}

bulk_reader::windows bulk_reader::windows_for(const stream& fd) {
  if (fd.encrypted()) return windows::refused;
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd.fd(), reinterpret_cast<sockaddr*>(&address), &length) != 0) return windows::refused;
  return address.ss_family == AF_UNIX ? windows::accepted : windows::refused;
}

bool bulk_reader::read_window_payload(const p::frame_header& h, uint8_t* payload, unique_fd* memory, end& how,
                                      std::string& why) {
  how = end::violation;
  const char* name = p::message_name(h.message_id);
  if (h.payload_size > p::message_limit(h.message_id) || h.payload_size > window_payload_limit) {
    why = std::string(name) + " of " + std::to_string(h.payload_size) + " bytes";
    return false;
  }
  bool extra = false;
  const bool read = memory ? read_with_fd(fd_->fd(), payload, h.payload_size, *memory, extra)
                           : read_exact(fd_, payload, h.payload_size);
  if (!read) {
    why = std::string("connection closed inside a ") + name;
    how = end::closed;
    return false;
  }
  if (extra) {
    why = std::string(name) + " came with more than one descriptor";
    return false;
  }
  return true;
}

std::unique_ptr<bulk_window> bulk_reader::adopt_offered_window(const p::frame_header& h, const char* what, end& how,
                                                               std::string& why) {
  uint8_t payload[window_payload_limit];
  unique_fd memory;
  if (!read_window_payload(h, payload, &memory, how, why)) return nullptr;
  how = end::violation;
  if (!memory.valid()) {
    why = std::string(what) + " came without its memfd";
    return nullptr;
  }
  // Both offers have the same fields: slots, then slot_size.
  p::window_offer offer;
  const char* error = "";
  if (!p::decode_payload(payload, h.payload_size, offer, error)) {
    why = std::string("malformed ") + what + ": " + error;
    return nullptr;
  }
  std::unique_ptr<bulk_window> window =
      bulk_window::adopt(std::move(memory), offer.slots, offer.slot_size, p::max_bulk_chunk, why);
  if (!window) return nullptr;
  FERRY_INFO("session", "session %s: %s shares a %s window of %u slots of %llu bytes", session_.c_str(), sharer_,
             h.message_id == static_cast<uint16_t>(p::message_id::read_window_offer) ? "read" : "bulk", offer.slots,
             static_cast<unsigned long long>(offer.slot_size));
  count_in(counter_, 1, p::frame_header_size + h.payload_size);
  return window;
}

bool bulk_reader::receive_offer(const p::frame_header& h, end& how, std::string& why) {
  how = end::violation;
  if (windows_ == windows::refused) {
    why = "window_offer on a stream that is not a plain Unix socket";
    return false;
  }
  if (window_) {
    why = "a second window_offer";
    return false;
  }
  window_ = adopt_offered_window(h, "window_offer", how, why);
  return window_ != nullptr;
}

bool bulk_reader::receive_read_window_offer(const p::frame_header& h, end& how, std::string& why) {
  how = end::violation;
  if (windows_ == windows::refused || !read_windows_) {
    why = "read_window_offer on a bulk stream that is not a plain Unix socket of version 8 or later";
    return false;
  }
  if (read_window_offered_) {
    why = "a second read_window_offer";
    return false;
  }
  std::unique_ptr<bulk_window> window = adopt_offered_window(h, "read_window_offer", how, why);
  if (!window) return false;
  read_window_offered_ = true;
  read_windows_->offer(std::move(window));
  return true;
}

bool bulk_reader::receive_window_chunk(const p::frame_header& h, end& how, std::string& why) {
  uint8_t payload[window_payload_limit];
  if (!read_window_payload(h, payload, nullptr, how, why)) return false;
  p::window_chunk c;
  const char* error = "";
  if (!p::decode_payload(payload, h.payload_size, c, error)) {
    why = std::string("malformed window_chunk: ") + error;
    return false;
  }
  if (!window_) {
    why = "window_chunk before any window_offer";
    return false;
  }
  if (c.slot >= window_->slots() || c.size > window_->slot_size()) {
    why = "window_chunk of " + std::to_string(c.size) + " bytes in slot " + std::to_string(c.slot) +
          " of a window of " + std::to_string(window_->slots()) + " slots of " +
          std::to_string(window_->slot_size()) + " bytes";
    return false;
  }
  if (!p::check_chunk_place(c.offset, c.size, c.total, why)) return false;
  uint8_t* destination = nullptr;
  if (!transfers_.begin_chunk(c.transfer, c.offset, c.size, c.total, destination, why)) return false;
  // No destination: the transfer's bytes are dropped, and the slot is free at once.
  if (destination) copy_bytes(destination, window_->slot(c.slot), c.size);
  // The slot is the client's again once copied, before the chunk is counted:
  // the client may be waiting for it to send the next one.
  window_->release_slot();
  chunk_landed(c.transfer, c.offset, c.size, c.total, p::frame_header_size + h.payload_size + c.size);
  return true;
}

bool bulk_reader::is_window_message(const p::frame_header& h) {
  return h.flags == 0 && (h.message_id == static_cast<uint16_t>(p::message_id::window_offer) ||
                          h.message_id == static_cast<uint16_t>(p::message_id::window_chunk));
}

bool bulk_reader::receive_window_message(const p::frame_header& h, end& how, std::string& why) {
  return h.message_id == static_cast<uint16_t>(p::message_id::window_offer) ? receive_offer(h, how, why)
                                                                            : receive_window_chunk(h, how, why);
}

bulk_reader::end bulk_reader::run(std::string& why) {
  static_assert(head_size == p::frame_header_size + p::bulk_prefix_size);
  uint8_t head[head_size];
  for (;;) {
    if (!read_exact(fd_, head, p::frame_header_size)) {
      why = "bulk connection closed";
      return end::closed;
    }
    const p::frame_header h = p::load_header(head);
    const bool read_window = h.flags == 0 && h.message_id == static_cast<uint16_t>(p::message_id::read_window_offer);
    if (is_window_message(h) || read_window) {
      end how;
      const bool taken = read_window ? receive_read_window_offer(h, how, why) : receive_window_message(h, how, why);
      if (!taken) return how;
      continue;
    }
    // The header alone tells a frame that can be no chunk (another message, a
    // payload too short for the prefix or too long for a chunk): refused now,
    // not after waiting for prefix bytes that need not come, or taking the
    // next frame's bytes for them.
    if (!p::check_bulk_header(h, why)) return end::violation;
    if (!read_exact(fd_, head + p::frame_header_size, p::bulk_prefix_size)) {
      why = "bulk connection closed inside a chunk's prefix";
      return end::closed;
    }
    end how;
    if (!receive_chunk(head, how, why)) {
      if (how == end::closed) why = "bulk " + why;
      return how;
    }
  }
}

}  // namespace ferry::server
