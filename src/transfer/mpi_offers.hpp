// The agreement that lets an MPI transfer between two ranks whose buffers
// live on Ferry servers go server to server (docs/transfer.md, "Halo
// exchanges between servers"). Only the receiver knows whether its buffer is
// on Ferry, and a host's plain MPI_Send must still reach a receive command, so:
//   - a send on a Ferry queue first *offers* its bytes on a tag of the
//     library's own and waits for the answer; every other sender sends data;
//   - every receive takes whichever comes first from its source, data on its
//     tag or an offer for it, and answers an offer with a ticket of the Ferry
//     driver (clEnqueueReceiveFromPeerFERRY) or a refusal, after which the
//     sender sends data as any other.
// Offers only come from senders that wait for the answer, so none is left
// unread; MPI keeps one pair's messages of one tag in order, so each offer
// meets the receive it was meant for.
//
// The tags and sizes it uses are offer_rules.hpp's.
#pragma once

#include <mpi.h>

#include <CL/cl_ext_ferry.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "transfer/offer_rules.hpp"

namespace ferry::transfer {

/// The tags for this job (MPI_TAG_UB of MPI_COMM_WORLD; the standard's least
/// bound, 32767, when MPI does not say).
offer_tags job_offer_tags();

/// The least size a send on a Ferry queue offers (FERRY_TRANSFER_PEER_MIN,
/// read once; 64 KiB when unset). Smaller sends go as data: their bytes cost
/// less than the agreement, and such a send ends without waiting for its
/// receive, as MPI's eager sends do.
size_t least_offered_size();

/// What a receiver answered.
struct offer_answer {
  bool accepted = false;
  cl_ferry_peer_ticket ticket{};
};

/// Offers `size` bytes to (dest, tag) and waits for the answer. Answers
/// that other threads of this process wait for, found on the way, are kept
/// for them. Returns an MPI error code.
int offer_and_wait(size_t size, int dest, int tag, MPI_Comm comm, offer_answer& answer, std::string& why);

/// The first message a receive from (source, tag) takes: data, or an offer.
struct arrival {
  bool is_offer = false;
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status{};
  int user_tag = 0;  // the data's tag, or the tag the offer is for
};

/// Waits for the first arrival (pausing between polls, as mpi_waits does).
/// `tag` may be MPI_ANY_TAG, `source` MPI_ANY_SOURCE.
int probe_arrival(int source, int tag, MPI_Comm comm, arrival& out);

/// An offer as it came.
struct received_offer {
  uint64_t sequence = 0;
  uint64_t size = 0;
  int source = 0;
  int user_tag = 0;
};

/// Receives the offer `found` holds. False, with `why`, when it is not one
/// (it is taken off the queue all the same).
bool receive_offer(arrival& found, received_offer& out, std::string& why);

/// Answers `offer`: with `ticket` (the receive migrates in), or a refusal
/// when `ticket` is null (the sender then sends data). Returns an MPI code.
int answer_offer(const received_offer& offer, MPI_Comm comm, const cl_ferry_peer_ticket* ticket);

}  // namespace ferry::transfer
