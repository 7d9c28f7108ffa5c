// Waiting for MPI without holding a core. Open MPI's blocking calls poll the
// network at full speed; a transfer's thread that waits so for a peer still
// computing takes a core from the device's own threads (PoCL's CPU device,
// or the host side of a GPU). Himeno on a 2-core VM ran its exchanges four
// times slower than the host's own MPI_Sendrecv until these waits paused
// between polls: a few yields first, then sleeps that grow to 100 us.
#pragma once

#include <mpi.h>

#include <chrono>

namespace ferry::transfer {

/// Pauses that grow: yields while a peer answers at once, sleeps once it does not.
class backoff {
 public:
  void pause();

 private:
  static constexpr int most_yields = 32;
  static constexpr std::chrono::microseconds first_sleep{5};
  static constexpr std::chrono::microseconds most_sleep{100};
  int yields_ = 0;
  std::chrono::microseconds sleep_{0};
};

/// MPI_Mprobe that pauses between polls (MPI_Improbe).
int probe_patiently(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status);
/// MPI_Wait that pauses between polls (MPI_Test).
int wait_patiently(MPI_Request* request, MPI_Status* status);
/// Takes a matched message of `count` bytes off the queue without keeping it
/// (so that it cannot meet a later receive).
void discard_message(MPI_Message& message, int count);
/// MPI_Send as MPI_Isend and wait_patiently.
int send_patiently(const void* data, int count, int dest, int tag, MPI_Comm comm);

}  // namespace ferry::transfer
