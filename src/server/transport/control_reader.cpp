#include "server/transport/control_reader.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace ferry::server {

pump_result pump_frames(protocol::frame_assembler& assembler, executor& handler, std::string& why,
                        link_counter* counter) {
  protocol::frame_view frame;
  for (;;) {
    switch (assembler.next(frame, why)) {
      case protocol::frame_assembler::result::need_more:
        handler.flush_touched();
        handler.ack_if_due();
        return pump_result::need_more;
      case protocol::frame_assembler::result::error: return pump_result::violation;
      case protocol::frame_assembler::result::frame:
        count_in(counter, 1, protocol::frame_header_size + frame.header.payload_size);
        // Counted before it runs: a resumed client sends again only what follows.
        if (protocol::counted_frame(frame.header.message_id)) handler.count_frame();
        if (!protocol::dispatch_frame(frame, protocol::receiver::server, handler, why)) {
          if (handler.stop_requested()) {
            why = handler.violation();
            return pump_result::stop;
          }
          if (!handler.violation().empty()) why += ": " + handler.violation();
          return pump_result::violation;
        }
        if (handler.stop_requested()) {
          handler.flush_touched();
          why = "goodbye";
          return pump_result::stop;
        }
        break;
    }
  }
}

pump_result run_control_reader(stream* fd, protocol::frame_assembler& assembler, executor& handler, std::string& why,
                               link_counter* counter, reader_wake* wake) {
  // A TLS stream may hold decrypted bytes its socket no longer shows.
  if (fd->tls() != nullptr) wake = nullptr;
  for (;;) {
    size_t available = 0;
    uint8_t* area = assembler.write_area(64 * 1024, available);
    if (wake != nullptr && !wake->wait_readable(fd->fd())) {
      why = std::string("receive failed: ") + std::strerror(errno);
      return pump_result::stop;
    }
    ssize_t n = fd->read_some(area, available);
    if (n == 0) {
      why = assembler.pending() ? "connection closed inside a frame" : "connection closed";
      return pump_result::stop;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      why = std::string("receive failed: ") + (fd->tls() ? fd->tls()->last_error() : std::strerror(errno));
      return pump_result::stop;
    }
    assembler.commit(static_cast<size_t>(n));
    pump_result r = pump_frames(assembler, handler, why, counter);
    if (r != pump_result::need_more) return r;
  }
}

}  // namespace ferry::server
