// ferry_mpi_thread_level_test: the MPI transfer commands refuse, with
// CL_INVALID_OPERATION and nothing enqueued, while MPI cannot serve them: before MPI_Init,
// under a plain MPI_Init (no MPI_THREAD_MULTIPLE: transfers call MPI from the library's
// threads), and after MPI_Finalize. Run as `mpirun -n 1 ferry_mpi_thread_level_test`.
#include <mpi.h>

#include <ferry/cl_data_transfer.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "mpi_test_support.hpp"

namespace {

using namespace ferry::mpi_test;

/// Every MPI transfer command on `buffer`, each refused with CL_INVALID_OPERATION and
/// without an event.
void expect_all_refused(rank_device& device, cl_mem buffer) {
  cl_command_queue q = device.queue();
  cl_event event = nullptr;
  MPI_TEST_CL(CL_INVALID_OPERATION, clEnqueueSendBuffer(q, buffer, CL_FALSE, 0, 8, 0, 1, MPI_COMM_WORLD, 0, nullptr,
                                                        &event));
  MPI_TEST_CL(CL_INVALID_OPERATION, clEnqueueRecvBuffer(q, buffer, CL_FALSE, 0, 8, 0, 1, MPI_COMM_WORLD, 0, nullptr,
                                                        &event));
  MPI_TEST_CL(CL_INVALID_OPERATION, clEnqueueSendrecvBuffer(q, buffer, CL_FALSE, 0, 8, 8, 0, 1, 0, 1,
                                                            MPI_COMM_WORLD, 0, nullptr, &event));
  MPI_TEST_CHECK(event == nullptr, "a refused call returned an event");
  MPI_TEST_CL(CL_SUCCESS, clFinish(q));
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--help") {
      std::printf(
          "Usage: mpirun -n 1 ferry_mpi_thread_level_test\n"
          "\n"
          "Checks that libferry_transfer's MPI functions refuse (CL_INVALID_OPERATION)\n"
          "before MPI_Init, under MPI_Init without MPI_THREAD_MULTIPLE, and after\n"
          "MPI_Finalize. Exits 0 when they do.\n");
      return 0;
    }
    std::fprintf(stderr, "ferry_mpi_thread_level_test: unknown argument '%s' (see --help)\n", argv[i]);
    return 2;
  }
  rank_device device(0);
  cl_mem buffer = device.buffer_filled(16, 0);

  set_current_case("before MPI_Init");
  expect_all_refused(device, buffer);

  set_current_case("MPI_Init");
  MPI_Init(&argc, &argv);
  int provided = MPI_THREAD_MULTIPLE;
  MPI_Query_thread(&provided);
  MPI_TEST_CHECK(provided < MPI_THREAD_MULTIPLE,
                 "MPI_Init gave MPI_THREAD_MULTIPLE here: this case cannot be tested");
  expect_all_refused(device, buffer);
  // A request of this rank to itself, which the refused call must leave to the program.
  std::uint8_t byte = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Irecv(&byte, 1, MPI_BYTE, 0, 5, MPI_COMM_SELF, &request);
  cl_int rc = CL_SUCCESS;
  MPI_TEST_CHECK(clCreateEventFromMPIRequest(device.context(), &request, &rc) == nullptr, "an event came back");
  MPI_TEST_CL(CL_INVALID_OPERATION, rc);
  MPI_TEST_CHECK(request != MPI_REQUEST_NULL, "a refused call took the request");
  MPI_Cancel(&request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);

  set_current_case("after MPI_Finalize");
  MPI_Finalize();
  expect_all_refused(device, buffer);

  clReleaseMemObject(buffer);
  std::printf("ok thread levels\n");
  return 0;
}
