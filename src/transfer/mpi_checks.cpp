#include "transfer/mpi_checks.hpp"

#include "common/log.hpp"
#include "transfer/mpi_offers.hpp"

namespace ferry::transfer {

cl_int check_mpi_running(const char* call) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    FERRY_WARN("transfer", "%s: MPI is %s", call, finalized ? "finalized" : "not initialized");
    return CL_INVALID_OPERATION;
  }
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    FERRY_WARN("transfer",
               "%s: MPI runs with thread level %d; transfer commands call MPI from their own threads and need "
               "MPI_THREAD_MULTIPLE (MPI_Init_thread)",
               call, provided);
    return CL_INVALID_OPERATION;
  }
  return CL_SUCCESS;
}

cl_int check_mpi(const char* call, MPI_Comm comm, std::initializer_list<mpi_peer> peers) {
  if (cl_int rc = check_mpi_running(call); rc != CL_SUCCESS) return rc;
  if (comm == MPI_COMM_NULL) {
    FERRY_WARN("transfer", "%s: the communicator is MPI_COMM_NULL", call);
    return CL_INVALID_VALUE;
  }
  // An inter-communicator's ranks are those of the remote group.
  int inter = 0, size = 0;
  MPI_Comm_test_inter(comm, &inter);
  if (inter) MPI_Comm_remote_size(comm, &size);
  else MPI_Comm_size(comm, &size);
  // The tags above a third of MPI_TAG_UB carry the offers of sends between
  // servers and their answers (mpi_offers.hpp).
  const int tag_ub = job_offer_tags().largest_user_tag();
  for (const mpi_peer& p : peers) {
    const bool receive = p.role == peer_role::receive;
    const bool rank_ok = p.rank == MPI_PROC_NULL || (receive && p.rank == MPI_ANY_SOURCE) ||
                         (p.rank >= 0 && p.rank < size);
    if (!rank_ok) {
      FERRY_WARN("transfer", "%s: rank %d is not in the communicator (%d ranks)", call, p.rank, size);
      return CL_INVALID_VALUE;
    }
    const bool tag_ok = (receive && p.tag == MPI_ANY_TAG) || (p.tag >= 0 && p.tag <= tag_ub);
    if (!tag_ok) {
      FERRY_WARN("transfer", "%s: tag %d is outside [0, %d]%s (the tags above, to MPI_TAG_UB, carry the library's own messages)", call, p.tag, tag_ub,
                 receive ? " (or MPI_ANY_TAG)" : "");
      return CL_INVALID_VALUE;
    }
  }
  return CL_SUCCESS;
}

}  // namespace ferry::transfer
