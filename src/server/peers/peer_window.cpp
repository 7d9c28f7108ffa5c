#include "server/peers/peer_window.hpp"

#include <cstring>
#include <vector>

#include "common/socket.hpp"
#include "protocol/dispatch.hpp"
#include "protocol/outgoing.hpp"
#include "protocol/version.hpp"
#include "server/transport/bulk_reader.hpp"

namespace ferry::server {

namespace p = protocol;

bool peer_window::possible(const stream& fd, uint16_t version) {
  return version >= p::local_route_version && bulk_reader::windows_for(fd) == bulk_reader::windows::accepted;
}

std::unique_ptr<peer_window> peer_window::offer(stream& fd, link_counter* counter, std::string& why) {
  std::unique_ptr<bulk_window> window = bulk_window::create(slots, p::max_bulk_chunk, why);
  if (!window) return nullptr;
  const p::window_offer offer{slots, p::max_bulk_chunk};
  std::vector<uint8_t> frame;
  p::append_frame(frame, offer);
  count_out(counter, 1, frame.size());  // before the write (link_counter says why)
  if (!p::send_window_offer(fd.fd(), offer, window->fd())) {
    why = "cannot send window_offer";
    return nullptr;
  }
  return std::unique_ptr<peer_window>(new peer_window(std::move(window)));
}

bool peer_window::send_chunk(stream* fd, p::object_id transfer, uint64_t offset, uint64_t total, const uint8_t* data,
                             uint64_t size, link_counter* counter, const std::function<bool()>& alive) {
  uint32_t slot = 0;
  // The destination frees a slot once it has copied it; one that died never
  // does, and one that frees slots never filled breaks the link (sent again
  // over a new connection, which offers a new window).
  if (window_->fill_next_slot(data, size, alive, slot) != bulk_window::fill::filled) return false;
  std::vector<uint8_t> frame;
  p::append_frame(frame, p::window_chunk{transfer, offset, total, slot, size});
  count_out(counter, 1, frame.size() + size);  // as the destination counts it: the slot's bytes too
  if (!write_all(fd, frame.data(), frame.size())) return false;
  window_->slot_sent();
  return true;
}

}  // namespace ferry::server
