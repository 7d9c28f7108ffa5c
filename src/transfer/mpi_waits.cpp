#include "transfer/mpi_waits.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace ferry::transfer {

void backoff::pause() {
  if (yields_ < most_yields) {
    ++yields_;
    std::this_thread::yield();
    return;
  }
  sleep_ = std::min(most_sleep, sleep_ == std::chrono::microseconds{0} ? first_sleep : sleep_ * 2);
  std::this_thread::sleep_for(sleep_);
}

int probe_patiently(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  backoff pauses;
  for (;;) {
    int found = 0;
    if (int rc = MPI_Improbe(source, tag, comm, &found, message, status); rc != MPI_SUCCESS) return rc;
    if (found) return MPI_SUCCESS;
    pauses.pause();
  }
}

int wait_patiently(MPI_Request* request, MPI_Status* status) {
  backoff pauses;
  for (;;) {
    int done = 0;
    if (int rc = MPI_Test(request, &done, status); rc != MPI_SUCCESS) return rc;
    if (done) return MPI_SUCCESS;
    pauses.pause();
  }
}

void discard_message(MPI_Message& message, int count) {
  std::vector<char> bytes(static_cast<size_t>(count < 0 ? 0 : count));
  MPI_Mrecv(bytes.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE);
}

int send_patiently(const void* data, int count, int dest, int tag, MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  if (int rc = MPI_Isend(data, count, MPI_BYTE, dest, tag, comm, &request); rc != MPI_SUCCESS) return rc;
  return wait_patiently(&request, MPI_STATUS_IGNORE);
}

}  // namespace ferry::transfer
