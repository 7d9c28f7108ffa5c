#include "client/core/transfers/peer_transfers.hpp"

#include <cstring>
#include <string>

#include "client/core/servers/server.hpp"
#include "client/core/text_fields.hpp"

namespace ferry::client {

namespace {

template <size_t N>
bool ends_in_nul(const char (&field)[N]) {
  return std::memchr(field, '\0', N) != nullptr;
}

protocol::session_token token_of(const cl_uchar (&bytes)[16]) {
  protocol::session_token token{};
  std::memcpy(token.data(), bytes, token.size());
  return token;
}

}  // namespace

cl_int enqueue_receive_from_peer(queue* q, memory* m, size_t offset, size_t size, cl_uint count,
                                 const cl_event* list, cl_event* event_out, cl_ferry_peer_ticket& ticket) {
  server& host = *q->device->host;
  const protocol::object_id transfer = next_object_id();
  command cmd(q, CL_COMMAND_WRITE_BUFFER, count, list, event_out, blocking::no);
  if (cl_int code = cmd.uses(m, access::write); code != CL_SUCCESS) return cmd.abandon(code);
  ticket = cl_ferry_peer_ticket{};
  copy_truncated(ticket.address, host.peer_address);
  copy_truncated(ticket.unix_path, host.local_route.unix_path);
  copy_truncated(ticket.host, host.local_route.host);
  const protocol::session_token session = host.link->session(), key = host.link->peer_key();
  std::memcpy(ticket.session, session.data(), session.size());
  std::memcpy(ticket.peer_key, key.data(), key.size());
  ticket.transfer = transfer;
  ticket.size = size;
  return cmd.submit(protocol::migrate_in{cmd.header, m->id, offset, size, transfer});
}

bool ticket_usable(const cl_ferry_peer_ticket& ticket, std::string& why) {
  if (!ends_in_nul(ticket.address) || !ends_in_nul(ticket.unix_path) || !ends_in_nul(ticket.host)) {
    why = "a ticket whose strings do not end in their fields";
    return false;
  }
  if (ticket.address[0] == '\0') {
    why = "a ticket without an address";
    return false;
  }
  if (ticket.transfer == 0) {
    why = "a ticket without a transfer";
    return false;
  }
  return true;
}

cl_int enqueue_send_to_peer(queue* q, memory* m, size_t offset, const cl_ferry_peer_ticket& ticket, cl_uint count,
                            const cl_event* list, cl_event* event_out) {
  server& host = *q->device->host;
  const bool in_order = !(q->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  // The daemon reads a migration's range on a queue of its own, so on an
  // in-order queue a marker stands for the commands before it, and a second
  // one behind the send holds the commands after it.
  cl_event before = nullptr;
  if (in_order) {
    command marker(q, CL_COMMAND_MARKER, count, list, &before, blocking::no);
    if (cl_int code = marker.submit(protocol::enqueue_marker{marker.header}); code != CL_SUCCESS) return code;
    count = 1;
    list = &before;
  }
  protocol::local_route route;
  route.unix_path = ticket.unix_path;
  route.host = ticket.host;
  const uint32_t peer =
      introduce_foreign(host, ticket.address, token_of(ticket.session), token_of(ticket.peer_key), route);
  cl_event sent = nullptr;
  cl_event* out = event_out != nullptr ? event_out : (in_order ? &sent : nullptr);
  cl_int code;
  {
    command cmd(q, CL_COMMAND_READ_BUFFER, count, list, out, blocking::no);
    if (code = cmd.uses(m, access::read); code != CL_SUCCESS) {
      cmd.abandon(code);
    } else {
      code = cmd.submit(
          protocol::migrate_out{cmd.header, m->id, offset, ticket.size, peer, ticket.transfer, 0});
    }
  }
  if (before) release_api(before);
  if (code == CL_SUCCESS && in_order) {
    command hold(q, CL_COMMAND_MARKER, 1, out, nullptr, blocking::no);
    code = hold.submit(protocol::enqueue_marker{hold.header});
  }
  if (sent) release_api(sent);
  return code;
}

}  // namespace ferry::client
