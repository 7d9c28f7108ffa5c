#include "server/peers/peer_reader.hpp"

#include <sys/ioctl.h>

#include <vector>

#include "common/log.hpp"
#include "common/socket.hpp"
#include "protocol/bulk_head.hpp"
#include "protocol/codec.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/frame.hpp"
#include "protocol/messages.hpp"
#include "server/session/session_core.hpp"
#include "server/transport/bulk_reader.hpp"

namespace ferry::server {

namespace p = protocol;

bool peer_reader::maybe_ack() {
  const uint64_t received = received_.load(std::memory_order_relaxed);
  if (received == acked_) return true;
  // Bytes already here: the ack can wait for them, unless many frames went unacknowledged.
  int waiting = 0;
  if (received - acked_ < ack_every && ::ioctl(fd_->fd(), FIONREAD, &waiting) == 0 && waiting > 0) return true;
  std::vector<uint8_t> frame;
  p::append_frame(frame, p::ack{received, 0});
  count_out(counter_, 1, frame.size());  // before the write (link_counter says why)
  if (!write_all(fd_, frame.data(), frame.size())) return false;
  acked_ = received;
  return true;
}

peer_reader::end peer_reader::run(std::string& why) {
  // Chunks count themselves into received_ once whole.
  bulk_reader chunks(fd_, core_.transfers, counter_, &received_);
  // A daemon on the same host may share a window on a plain Unix socket (peer_window.hpp).
  chunks.set_windows(bulk_reader::windows_for(*fd_), core_.label, "a peer");
  uint8_t head[bulk_reader::head_size];
  constexpr uint32_t status_limit = 64;  // the table's limit of peer_event_status
  uint8_t payload[status_limit];
  for (;;) {
    if (!read_exact(fd_, head, p::frame_header_size)) {
      why = "peer link closed";
      return end::closed;
    }
    p::frame_header h = p::load_header(head);
    if (h.message_id == static_cast<uint16_t>(p::message_id::bulk_data)) {
      // A header that can carry no chunk is refused before its prefix is read.
      if (!protocol::check_bulk_header(protocol::load_header(head), why)) return end::violation;
      if (!read_exact(fd_, head + p::frame_header_size, p::bulk_prefix_size)) {
        why = "peer link closed inside a frame";
        return end::closed;
      }
      bulk_reader::end how;
      if (!chunks.receive_chunk(head, how, why)) return how == bulk_reader::end::closed ? end::closed : end::violation;
      if (!maybe_ack()) {
        why = "peer link closed (cannot send an ack)";
        return end::closed;
      }
      continue;
    }
    if (bulk_reader::is_window_message(h)) {
      // Checked there: the stream must be a plain Unix socket, one offer
      // only, every slot number and size within the window.
      bulk_reader::end how;
      if (!chunks.receive_window_message(h, how, why))
        return how == bulk_reader::end::closed ? end::closed : end::violation;
      if (!maybe_ack()) {
        why = "peer link closed (cannot send an ack)";
        return end::closed;
      }
      continue;
    }
    if (h.message_id != static_cast<uint16_t>(p::message_id::peer_event_status)) {
      const char* name = p::message_name(h.message_id);
      why = std::string("message ") + (name ? name : std::to_string(h.message_id).c_str()) +
            " is not expected on a peer link";
      return end::violation;
    }
    if (h.flags != 0) {
      why = "frame flags " + std::to_string(h.flags) + " are reserved";
      return end::violation;
    }
    if (h.payload_size > status_limit || h.payload_size > p::message_limit(h.message_id)) {
      why = "peer_event_status of " + std::to_string(h.payload_size) + " bytes is over its limit";
      return end::violation;
    }
    if (h.payload_size && !read_exact(fd_, payload, h.payload_size)) {
      why = "peer link closed inside a frame";
      return end::closed;
    }
    count_in(counter_, 1, p::frame_header_size + h.payload_size);
    p::peer_event_status status;
    const char* error = "";
    if (!p::decode_payload(payload, h.payload_size, status, error)) {
      why = std::string("malformed peer_event_status: ") + error;
      return end::violation;
    }
    if (status.status > CL_COMPLETE) {
      why = "peer_event_status " + std::to_string(status.status) + " is neither CL_COMPLETE nor an error";
      return end::violation;
    }
    switch (core_.imports.deliver(status.event, status.status)) {
      case event_imports::delivery::overflow:
        why = "more than " + std::to_string(event_imports::max_early) + " statuses for events not imported";
        return end::violation;
      case event_imports::delivery::applied:
        // Commands behind a failed event fail; some platforms call back for none of them.
        if (status.status < 0) core_.callbacks.sweep_failures(core_.api);
        break;
      case event_imports::delivery::kept:
      case event_imports::delivery::ignored: break;
    }
    FERRY_TRACE("peer", "session %s: event %llu ended with %d", core_.label.c_str(),
                static_cast<unsigned long long>(status.event), status.status);
    received_.fetch_add(1, std::memory_order_release);
    if (!maybe_ack()) {
      why = "peer link closed (cannot send an ack)";
      return end::closed;
    }
  }
}

}  // namespace ferry::server
