// Buffer ranges between the sessions of two programs (cl_ext_ferry.h,
// clEnqueueReceiveFromPeerFERRY and clEnqueueSendToPeerFERRY), once the entry
// points' checks have passed: the receive is a migrate_in of the receiver's
// session whose transfer id and peer key its ticket carries, the send a
// migrate_out of the sender's session over a peer link into that session.
#pragma once

#include <CL/cl_ext_ferry.h>

#include <cstddef>

#include "client/core/command.hpp"

namespace ferry::client {

/// A migrate_in of `size` bytes into [offset, offset + size) of `m` in the
/// order of `q`, and the ticket that names it.
cl_int enqueue_receive_from_peer(queue* q, memory* m, size_t offset, size_t size, cl_uint count,
                                 const cl_event* list, cl_event* event_out, cl_ferry_peer_ticket& ticket);

/// Whether `ticket` is well formed (its strings end in their arrays, an
/// address); `why` says what is wrong.
bool ticket_usable(const cl_ferry_peer_ticket& ticket, std::string& why);

/// [offset, offset + ticket.size) of `m` to the receive `ticket` names, in the
/// order of `q` (on an in-order queue, behind its earlier commands and before
/// its later ones).
cl_int enqueue_send_to_peer(queue* q, memory* m, size_t offset, const cl_ferry_peer_ticket& ticket, cl_uint count,
                            const cl_event* list, cl_event* event_out);

}  // namespace ferry::client
