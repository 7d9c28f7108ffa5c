// What an MPI transfer command checks at the call, before anything is
// enqueued: that MPI is running with MPI_THREAD_MULTIPLE (transfers call MPI
// from the library's threads), and that ranks and tags are ones MPI would
// accept. Each refusal is logged with its reason.
#pragma once

#include <mpi.h>

#include <CL/cl.h>

#include <initializer_list>

namespace ferry::transfer {

enum class peer_role { send, receive };

struct mpi_peer {
  peer_role role;
  int rank;  // dest or source; MPI_PROC_NULL, and MPI_ANY_SOURCE for a receive
  int tag;   // MPI_ANY_TAG for a receive
};

/// CL_SUCCESS, CL_INVALID_OPERATION (MPI not initialized, finalized, or
/// below MPI_THREAD_MULTIPLE) or CL_INVALID_VALUE (a null communicator, a
/// rank outside it, a tag outside [0, job_offer_tags().largest_user_tag()]).
cl_int check_mpi(const char* call, MPI_Comm comm, std::initializer_list<mpi_peer> peers);

/// The MPI part of check_mpi alone (initialized, not finalized, threads).
cl_int check_mpi_running(const char* call);

}  // namespace ferry::transfer
